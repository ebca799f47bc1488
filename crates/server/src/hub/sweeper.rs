//! The sweeper of unwatched gates: releases the gates held only by pause on error once
//! nobody who can act has watched them for the grace (`crate::hub::UNWATCHED_GRACE`),
//! and prints one line for each (the run, the node, why).

use std::time::{Duration, Instant};

use crate::hub::{UNWATCHED_WHY, UnwatchedRelease};
use crate::state::AppState;

/// The longest the sweeper sleeps without a hub change (a safety net; it wakes on every
/// change of gates and watchers, and at the next gate's deadline).
const SWEEP_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// Runs the sweeper until the server stops.
pub(crate) fn spawn(state: &AppState) {
    let state = state.clone();
    let grace = state.config.unwatched_grace;
    state.tasks.clone().spawn(async move {
        let mut changes = state.hub.watch();
        loop {
            let (due, next) = state.hub.due_unwatched(Instant::now(), grace);
            if !due.is_empty() && !watched_elsewhere(&state, grace).await {
                for gate in state.hub.release_unwatched(&due) {
                    log_release(&gate);
                }
            }
            let wake = next
                .unwrap_or_else(|| Instant::now() + SWEEP_AT_MOST_EVERY)
                .min(Instant::now() + SWEEP_AT_MOST_EVERY);
            tokio::select! {
                _ = state.shutdown.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    });
}

/// Whether somebody with control watches on another instance of the cluster (never
/// without one). An unreachable database counts as watched: a gate is kept rather
/// than released on a guess.
async fn watched_elsewhere(state: &AppState, grace: Duration) -> bool {
    let Some(cluster) = state.hub.cluster().cloned() else {
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
