//! The sweeper of unwatched gates: releases the gates held only by pause on error once
//! nobody who can act has watched them for the grace (`crate::hub::UNWATCHED_GRACE`),
//! and prints one line for each (the run, the node, why).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::hub::{Hub, UNWATCHED_WHY, UnwatchedRelease};

/// The longest the sweeper sleeps without a hub change (a safety net; it wakes on every
/// change of gates and watchers, and at the next gate's deadline).
const SWEEP_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// Runs the sweeper of `hub` (gates unwatched for `grace` are released) on `tasks`
/// until `shutdown`.
pub(crate) fn spawn(
    hub: Arc<Hub>,
    grace: Duration,
    shutdown: &CancellationToken,
    tasks: &TaskTracker,
) {
    let shutdown = shutdown.clone();
    tasks.spawn(async move {
        let mut changes = hub.watch();
        loop {
            let (due, next) = hub.due_unwatched(Instant::now(), grace);
            if !due.is_empty() && !watched_elsewhere(&hub, grace).await {
                for gate in hub.release_unwatched(&due) {
                    log_release(&gate);
                }
            }
            let wake = next
                .unwrap_or_else(|| Instant::now() + SWEEP_AT_MOST_EVERY)
                .min(Instant::now() + SWEEP_AT_MOST_EVERY);
            tokio::select! {
                _ = shutdown.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    });
}

/// Whether somebody with control watches on another instance of the cluster (never
/// without one). An unreachable database counts as watched: a gate is kept rather
/// than released on a guess.
async fn watched_elsewhere(hub: &Hub, grace: Duration) -> bool {
    let Some(cluster) = hub.cluster().cloned() else {
        return false;
    };
    match tokio::task::spawn_blocking(move || cluster.others_watching(grace)).await {
        Ok(Ok(watched)) => watched,
        Ok(Err(e)) => {
            tracing::warn!(error = %mindgate_errors::error_chain(&e), "cannot tell whether another instance is watched; the gates stay held");
            true
        }
        Err(_) => true,
    }
}

fn log_release(gate: &UnwatchedRelease) {
    tracing::warn!(
        "continued the error gate of run {} at node {}: {UNWATCHED_WHY}",
        gate.run_id,
        gate.node_id
    );
}
