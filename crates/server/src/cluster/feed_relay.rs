//! The live feed across instances: on a PostgreSQL run store shared by several
//! servers, a [`Follower`] turns the commits the other instances' writers announce into
//! this server's commit feed, so its viewers (run list, run subscriptions, live graphs)
//! see every instance's runs as they happen.
//!
//! A follower that was disconnected sends [`Committed::resync_marker`] into the feed:
//! each subscriber then re-reads from the store what it shows, as it does when it lags.

use std::sync::Arc;

use mindgate_store::{Committed, Database, Followed, Follower, Writer};
use tokio::sync::broadcast;

/// Starts following the other instances' commits into `feed` when `database` is
/// PostgreSQL (`None` on SQLite: one server per file, nothing to follow). Blocking: call
/// it off async workers.
pub(crate) fn start(
    database: &Database,
    writer: &Writer,
    feed: &broadcast::Sender<Arc<Committed>>,
) -> mindgate_store::Result<Option<Follower>> {
    let Database::Postgres(url) = database else {
        return Ok(None);
    };
    let listeners = feed.clone();
    let sink = feed.clone();
    let own = writer.clone();
    let follower = Follower::start(
        url,
        writer.id(),
        // Events are read back only while some viewer listens; runs always are.
        Some(Arc::new(move || listeners.receiver_count() > 0)),
        Box::new(move |followed| {
            let committed = match followed {
                Followed::Commit(committed) => {
                    // This instance's writer re-reads what another one changed before it
                    // writes those runs again (an app may move back and forth).
                    own.forget_runs(
                        committed
                            .runs
                            .iter()
                            .map(|r| r.id.clone())
                            .chain(committed.deleted.iter().cloned()),
                    );
                    committed
                }
                Followed::Resync => {
                    own.forget_all_runs();
                    Committed::resync_marker()
                }
            };
            // No subscriber is fine: nobody watches.
            let _ = sink.send(Arc::new(committed));
        }),
    )?;
    tracing::info!("following the other instances' commits");
    Ok(Some(follower))
}
