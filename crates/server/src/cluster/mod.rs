//! Cluster glue: what the server does when several instances share one PostgreSQL
//! database (`mindgate_cluster`). The hub's side of it (gates announced and refereed
//! across instances) is `crate::hub`'s `cluster` module; here are joining at start-up,
//! the listener that applies the other instances' news to the hub, the abandoning of
//! runs that stopped instances left `running`, and the feed relay ([`feed_relay`]),
//! which turns the other instances' commits into this server's commit feed.

pub(crate) mod feed_relay;

use std::net::SocketAddr;

use mindgate_cluster::{Cluster, ClusterConfig, ClusterEvent, Joined};
use mindgate_store::Database;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::error::ServerError;
use crate::state::AppState;

/// Joins the instances on `database` when it is PostgreSQL (they share gates,
/// breakpoints and the mode); `None` on SQLite, where one server has the file.
pub(crate) async fn join(
    database: &Database,
    addr: SocketAddr,
    timings: ClusterConfig,
) -> Result<Option<Joined>, ServerError> {
    let Database::Postgres(url) = database else {
        return Ok(None);
    };
    let url = (**url).clone();
    let label = addr.to_string();
    let joined = tokio::task::spawn_blocking(move || {
        Cluster::join(
            &url,
            &label,
            crate::hub::VIEWER_VERSION,
            timings,
            crate::hub::default_debug_state(),
        )
    })
    .await
    .map_err(|e| ServerError::Serve(std::io::Error::other(e.to_string())))??;
    tracing::info!(instance = %joined.cluster.instance_id(), "joined the instances on the PostgreSQL database");
    Ok(Some(joined))
}

/// Leaves the cluster if a start fails after joining it (so the other instances do not
/// wait for this one's heartbeat to go stale).
pub(crate) struct LeaveOnError(Option<Cluster>);

impl LeaveOnError {
    /// Guards the cluster `joined` holds, if any.
    pub(crate) fn new(joined: Option<&Joined>) -> Self {
        LeaveOnError(joined.map(|j| j.cluster.clone()))
    }

    /// The start failed: leave (on a thread of its own, the call blocks).
    pub(crate) fn leave(self) {
        if let Some(cluster) = self.0 {
            std::thread::spawn(move || cluster.leave());
        }
    }
}

/// Hands the joined cluster to the hub and applies the cluster listener's events to it
/// until the server stops.
pub(crate) fn attach(state: &AppState, joined: Joined) {
    state.hub.join_cluster(joined.cluster, joined.debug);
    spawn_listener(state, joined.events);
}

/// Applies the cluster listener's events to the hub until the server stops.
fn spawn_listener(state: &AppState, mut events: UnboundedReceiver<ClusterEvent>) {
    let orphans = state.clone();
    let state = state.clone();
    state.tasks.clone().spawn(async move {
        loop {
            let event = tokio::select! {
                _ = state.shutdown.cancelled() => return,
                e = events.recv() => e,
            };
            let Some(event) = event else { return };
            if let Some(live) = state.hub.on_cluster_event(event) {
                abandon_orphans(&state, live).await;
            }
        }
    });
    // The runs a stopped instance left `running` (and nobody took over) are abandoned now.
    let state = orphans;
    state.tasks.clone().spawn(async move {
        let Some(cluster) = state.hub.cluster().cloned() else {
            return;
        };
        match tokio::task::spawn_blocking(move || cluster.instances()).await {
            Ok(Ok(live)) => abandon_orphans(&state, live.into_iter().map(|i| i.id).collect()).await,
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot list the live instances"),
            Err(_) => {}
        }
    });
}

/// Marks `abandoned` the runs left `running` by instances not in `live`.
async fn abandon_orphans(state: &AppState, live: Vec<String>) {
    let writer = state.writer.clone();
    match tokio::task::spawn_blocking(move || writer.abandon_orphans(live)).await {
        Ok(Ok(runs)) if !runs.is_empty() => tracing::info!(
            count = runs.len(),
            "runs of instances that stopped marked abandoned"
        ),
        Ok(Err(e)) => {
            tracing::warn!(error = %mindgate_errors::error_chain(&e), "abandoning orphaned runs failed")
        }
        _ => {}
    }
}
