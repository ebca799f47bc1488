//! Waits on observable conditions: poll a condition until it holds, bounded in time, and
//! fail with what was awaited. Tests never sleep to synchronise.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is polled.
pub const POLL: Duration = Duration::from_millis(20);

/// Polls `check` until it returns `Some`, for at most `timeout`.
///
/// # Panics
/// When the time runs out, naming `what`.
pub fn until<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check() {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(POLL);
    }
}

/// [`until`] for async conditions (a tokio runtime must be running).
///
/// # Panics
/// When the time runs out, naming `what`.
pub async fn until_async<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}
