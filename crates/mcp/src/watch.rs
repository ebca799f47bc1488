//! `mindgate mcp --allow-control` as somebody watching: while the MCP session lives it
//! holds a `/ws/ui` connection with its agent token open to the running server, so
//! gates held only by pause on error keep holding (see `docs/http-api.md`, unwatched
//! gates). It reconnects (every [`WATCH_RETRY`]) when the server is not there yet or
//! restarts, and closes when the session ends.

use std::time::Duration;

use futures_util::StreamExt;

/// What `PauseControl::watch` gives: dropping it stops the watch.
pub type Watching = Box<dyn std::any::Any + Send + Sync>;

/// How long the watch waits before it looks for the server again.
pub const WATCH_RETRY: Duration = Duration::from_secs(2);

/// Stops the watch task when dropped.
struct WatchTask(tokio::task::AbortHandle);

impl Drop for WatchTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts watching the server `find_server` names (its port and agent token, looked up again
/// before each connection); `None` outside a Tokio runtime.
pub(crate) fn start(
    find_server: impl Fn() -> Option<(u16, String)> + Send + 'static,
) -> Option<Watching> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let task = runtime.spawn(async move {
        loop {
            if let Some((port, token)) = find_server() {
                let url = format!("ws://127.0.0.1:{port}/ws/ui?token={token}");
                match tokio_tungstenite::connect_async(url.as_str()).await {
                    Ok((mut socket, _)) => {
                        tracing::debug!(port, "watching the server's gates");
                        // Read (and drop) the feed until the server closes it.
                        while let Some(Ok(_)) = socket.next().await {}
                    }
                    Err(e) => tracing::debug!(error = %e, "cannot watch the server yet"),
                }
            }
            tokio::time::sleep(WATCH_RETRY).await;
        }
    });
    Some(Box::new(WatchTask(task.abort_handle())))
}
