//! Serving until the stop, then the stop in its order: the sockets drained (at most the
//! shutdown deadline), the cluster left, the store flushed, the token files removed if
//! still this server's, and only then the database lock released.

use std::path::PathBuf;

use axum::Router;
use mindgate_home::token_file;
use mindgate_store::Follower;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::db_lock::DbLock;
use crate::error::ServerError;
use crate::state::AppState;

/// What the stop releases after the sockets are closed.
pub(super) struct Release {
    /// The follower of the other instances' commits (PostgreSQL).
    pub(super) follower: Option<Follower>,
    /// The token files written, each with what this server wrote into it.
    pub(super) token_files: [(Option<PathBuf>, token_file::TokenFile); 2],
    /// The database lock (SQLite), released last.
    pub(super) db_lock: Option<DbLock>,
}

/// Serves `app` on `listener` until the state's shutdown token is cancelled, then stops.
pub(super) fn spawn_serving(
    state: AppState,
    listener: TcpListener,
    app: Router,
    release: Release,
) -> JoinHandle<Result<(), ServerError>> {
    tokio::spawn(async move {
        let served = serve_until_stopped(&state, listener, app).await;
        let closed = release_all(&state, release).await;
        tracing::info!("server stopped; store flushed");
        served?;
        closed
    })
}

/// Serves until the stop, then waits for the open sockets (every event they received
/// reaches the writer) at most [`crate::ServeConfig::shutdown_deadline`].
async fn serve_until_stopped(
    state: &AppState,
    listener: TcpListener,
    app: Router,
) -> Result<(), ServerError> {
    let stop = state.shutdown.clone();
    let deadline = state.config.shutdown_deadline;
    let serving = super::listener::serve(listener, app, state.config.http, stop.clone());
    let tasks = state.tasks.clone();
    let drained = async move {
        let served = serving.await.map_err(ServerError::Serve);
        // Sockets are closing (they watch the same token); wait for them so
        // every event they received reaches the writer.
        tasks.close();
        tasks.wait().await;
        served
    };
    tokio::select! {
        served = drained => served,
        () = async {
            stop.cancelled().await;
            tokio::time::sleep(deadline).await;
        } => {
            // A half-sent request or a client that ignores the close frame
            // must not hold the stop forever: leave them behind.
            tracing::warn!(
                deadline_ms = deadline.as_millis() as u64,
                "connections still open at the shutdown deadline; closing them"
            );
            Ok(())
        }
    }
}

/// Leaves the cluster, flushes the store, removes the token files that are still this
/// server's and releases the database lock; the store's closing result.
async fn release_all(state: &AppState, release: Release) -> Result<(), ServerError> {
    // The other instances see this one leave: its gates are released there.
    if let Some(cluster) = state.hub.cluster().cloned() {
        let _ = tokio::task::spawn_blocking(move || cluster.leave()).await;
    }
    // Everything handed to the writer is committed before it stops; the follower
    // of the other instances' commits stops with it (off the async workers).
    let writer = state.writer.clone();
    let follower = release.follower;
    let closed = tokio::task::spawn_blocking(move || {
        if let Some(follower) = follower {
            follower.stop();
        }
        writer.close()
    })
    .await;
    for (path, owned) in &release.token_files {
        if let Some(path) = path
            && token_file::remove_if_owned(path, owned) == token_file::Removal::OwnedByAnother
        {
            tracing::info!(
                path = %path.display(),
                "token file now belongs to another server; left in place"
            );
        }
    }
    // Only now may another server have the database.
    drop(release.db_lock);
    match closed {
        Ok(r) => r.map_err(ServerError::from),
        Err(e) => Err(ServerError::Serve(std::io::Error::other(e.to_string()))),
    }
}
