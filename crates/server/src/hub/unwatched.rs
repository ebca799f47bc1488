//! Unwatched gates: a gate held only by a default (pause on error) holds while someone
//! who can act is watching — a viewer page with the control token, an MCP client with
//! control — and is released with `continue` after [`UNWATCHED_GRACE`] otherwise, so an
//! app nobody looks at never hangs. A gate a person asked for (a breakpoint, step mode,
//! a replay) holds as always.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mindgate_protocol::{BreakpointMatcher, PausePoint, ResumeAction, RunMode};

use super::{Hub, Inner, Principal, ResumeRequest, ResumeResult};

/// How long a default gate stays held once nobody who can act is watching (from the
/// hold, or from the moment the last watcher left): long enough that a page reload
/// does not release it.
pub const UNWATCHED_GRACE: Duration = Duration::from_secs(3);

/// Why an unwatched gate was released, in the serve log's line.
pub const UNWATCHED_WHY: &str = "held only by pause on error and nobody with control is watching \
     (no viewer page with the token, no MCP client with control); \
     `serve --hold-unwatched` keeps such gates";

/// One watcher: a viewer page with the control token or an MCP client with control.
/// The hub counts it while this value lives.
#[derive(Debug)]
pub struct Watcher {
    hub: Arc<Hub>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let mut inner = self.hub.lock();
        inner.watchers = inner.watchers.saturating_sub(1);
        if inner.watchers == 0 {
            inner.unwatched_since = Some(Instant::now());
            if let Some(cluster) = self.hub.cluster.get() {
                cluster.set_watched(false);
            }
        }
        drop(inner);
        self.hub.bump();
    }
}

/// A gate the hub released because nobody was watching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnwatchedRelease {
    /// The run.
    pub run_id: String,
    /// The gate.
    pub pause_id: String,
    /// The held node.
    pub node_id: String,
}

/// Whether a gate at `point` would hold only because of the default (pause on error):
/// not in step mode, and no breakpoint but the default `{point: "error"}` stops errors.
/// A replay's gates are decided by the caller (they are always a person's).
pub(super) fn held_by_default(inner: &Inner, point: PausePoint) -> bool {
    let default = BreakpointMatcher::on_error();
    point == PausePoint::Error
        && inner.mode != RunMode::Step
        && !inner
            .breakpoints
            .as_slice()
            .iter()
            .any(|m| m.point == Some(PausePoint::Error) && *m != default)
}

impl Hub {
    /// Counts a watcher until the returned value is dropped: a viewer page with the
    /// control token (`/ws/ui`), an MCP client with control.
    pub fn watch_control(self: &Arc<Self>) -> Watcher {
        let mut inner = self.lock();
        inner.watchers += 1;
        inner.unwatched_since = None;
        if let Some(cluster) = self.cluster.get() {
            cluster.set_watched(true);
        }
        drop(inner);
        self.bump();
        Watcher { hub: self.clone() }
    }

    /// How many watchers this instance counts now.
    pub fn watchers(&self) -> usize {
        self.lock().watchers
    }

    /// Keeps default gates held with nobody watching (`serve --hold-unwatched`, the
    /// viewer's toggle) or not.
    pub fn set_hold_unwatched(&self, hold: bool) {
        let mut inner = self.lock();
        let changed = inner.hold_unwatched != hold;
        inner.hold_unwatched = hold;
        drop(inner);
        if changed {
            self.delta(serde_json::json!({"type": "holdUnwatched", "hold": hold}));
            self.bump();
        }
    }

    /// Whether default gates are kept held with nobody watching.
    pub fn hold_unwatched(&self) -> bool {
        self.lock().hold_unwatched
    }

    /// The default gates of this instance's apps that nobody has watched for `grace`
    /// at `now` (none while somebody watches here or default gates are kept), and when
    /// the next one will be due.
    pub fn due_unwatched(
        &self,
        now: Instant,
        grace: Duration,
    ) -> (Vec<(String, String)>, Option<Instant>) {
        let inner = self.lock();
        let Some(since) = inner.unwatched_since.filter(|_| !inner.hold_unwatched) else {
            return (Vec::new(), None);
        };
        let mut due = Vec::new();
        let mut next: Option<Instant> = None;
        for (key, pause) in inner.pauses.iter().filter(|(_, p)| p.by_default) {
            let at = pause.held_at.max(since) + grace;
            if at <= now {
                due.push(key.clone());
            } else {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
        }
        (due, next)
    }

    /// Releases `gates` with `continue`, stamped `{kind: "unwatched"}`, if they are
    /// still held only by the default and still unwatched here. Returns those released.
    pub fn release_unwatched(&self, gates: &[(String, String)]) -> Vec<UnwatchedRelease> {
        let mut out = Vec::new();
        for (run_id, pause_id) in gates {
            let node_id = {
                let inner = self.lock();
                let still = inner.unwatched_since.is_some() && !inner.hold_unwatched;
                match inner.pauses.get(&(run_id.clone(), pause_id.clone())) {
                    Some(p) if still && p.by_default => p.view.node_id.clone(),
                    _ => continue,
                }
            };
            let request = ResumeRequest {
                action: ResumeAction::Continue,
                output: None,
                input: None,
                request_id: None,
                principal: Principal::Unwatched,
            };
            if self.resume(run_id, pause_id, request).0 == ResumeResult::Resumed {
                out.push(UnwatchedRelease {
                    run_id: run_id.clone(),
                    pause_id: pause_id.clone(),
                    node_id,
                });
            }
        }
        out
    }
}
