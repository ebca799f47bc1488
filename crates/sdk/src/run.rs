//! Runs: one top-level agent invocation, established through a tokio task-local.
//!
//! Every event emitted inside [`crate::run`] — however deep — belongs to that
//! run; concurrent runs stay separate; events outside any run go to one
//! implicit run per client. Task-locals do not cross `tokio::spawn`: wrap
//! spawned futures with [`in_current_run`] to keep them in the run.

use std::fmt::{Debug, Display};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mindgate_protocol::ErrorInfo;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
struct HeldClock {
    open: u32,
    since: Option<Instant>,
    total: Duration,
}

#[derive(Debug)]
pub(crate) struct RunState {
    id: Arc<str>,
    id_json: Box<str>,
    name: Arc<str>,
    cancel: CancellationToken,
    held: Mutex<HeldClock>,
    steps: AtomicU64,
}

/// A shared reference to a run's state (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) struct RunRef(Arc<RunState>);

impl RunRef {
    pub(crate) fn new(id: String, name: &str) -> Self {
        let id_json = serde_json::to_string(&id)
            .unwrap_or_else(|_| "\"run\"".to_owned())
            .into_boxed_str();
        RunRef(Arc::new(RunState {
            id: Arc::from(id),
            id_json,
            name: Arc::from(name),
            cancel: CancellationToken::new(),
            held: Mutex::new(HeldClock::default()),
            steps: AtomicU64::new(0),
        }))
    }

    pub(crate) fn id(&self) -> &Arc<str> {
        &self.0.id
    }

    /// The run id as a JSON string literal.
    pub(crate) fn id_json(&self) -> &str {
        &self.0.id_json
    }

    pub(crate) fn cancel_token(&self) -> &CancellationToken {
        &self.0.cancel
    }

    /// The next model-step index of this run (1-based).
    pub(crate) fn next_step(&self) -> u64 {
        self.0.steps.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A gate of this run started holding.
    pub(crate) fn hold_opened(&self) {
        if let Ok(mut h) = self.0.held.lock() {
            if h.open == 0 {
                h.since = Some(Instant::now());
            }
            h.open += 1;
        }
    }

    /// A gate of this run stopped holding (`since` is unused: the union of holds is kept).
    pub(crate) fn hold_closed(&self, _since: Instant) {
        if let Ok(mut h) = self.0.held.lock() {
            h.open = h.open.saturating_sub(1);
            if h.open == 0
                && let Some(since) = h.since.take()
            {
                h.total += since.elapsed();
            }
        }
    }

    /// Time during which at least one gate of this run was held.
    pub(crate) fn held(&self) -> Duration {
        self.0
            .held
            .lock()
            .map(|h| h.total + h.since.map(|s| s.elapsed()).unwrap_or_default())
            .unwrap_or_default()
    }
}

/// A handle on the current run: its id, and the cancellation token the debugger's
/// abort action cancels. Pass [`RunHandle::cancel_token`] into work the SDK does
/// not wrap so an abort reaches it too.
#[derive(Debug, Clone)]
pub struct RunHandle(pub(crate) RunRef);

impl RunHandle {
    /// The run id (`run_…`).
    pub fn id(&self) -> &str {
        &self.0.0.id
    }

    /// The run name given to [`crate::run`].
    pub fn name(&self) -> &str {
        &self.0.0.name
    }

    /// Cancelled when the run is aborted.
    pub fn cancel_token(&self) -> CancellationToken {
        self.0.0.cancel.clone()
    }

    /// Whether the run was aborted.
    pub fn is_aborted(&self) -> bool {
        self.0.0.cancel.is_cancelled()
    }

    /// Aborts the run from host code (same effect as the debugger's abort).
    pub fn abort(&self) {
        self.0.0.cancel.cancel();
    }
}

/// What a run's future produced, as far as `run.finished` is concerned.
pub trait Outcome {
    /// The error to report, when the run failed.
    fn failure(&self) -> Option<ErrorInfo>;
}

impl<T, E: Display + Debug> Outcome for Result<T, E> {
    fn failure(&self) -> Option<ErrorInfo> {
        self.as_ref().err().map(error_info)
    }
}

impl Outcome for () {
    fn failure(&self) -> Option<ErrorInfo> {
        None
    }
}

/// The wire form of a host error: short type name, `Display` message, `Debug` as stack.
pub fn error_info<E: Display + Debug + ?Sized>(error: &E) -> ErrorInfo {
    let message = error.to_string();
    let debug = format!("{error:?}");
    ErrorInfo {
        name: short_type_name(std::any::type_name::<E>()),
        stack: (debug != message).then_some(debug),
        message,
        extra: Default::default(),
    }
}

fn short_type_name(full: &str) -> String {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn error_info_uses_short_name_and_debug_stack() {
        let e = std::io::Error::other("boom");
        let info = error_info(&e);
        assert_eq!(info.name, "Error");
        assert_eq!(info.message, "boom");
        assert!(info.stack.is_some());
        assert_eq!(short_type_name("a::b::Thing<c::D>"), "Thing");
    }

    #[test]
    fn held_clock_keeps_the_union() {
        let r = RunRef::new("r".into(), "n");
        r.hold_opened();
        r.hold_opened();
        std::thread::sleep(Duration::from_millis(5));
        r.hold_closed(Instant::now());
        r.hold_closed(Instant::now());
        let held = r.held();
        assert!(held >= Duration::from_millis(5));
        assert!(held < Duration::from_secs(5));
    }
}
