//! Gate bookkeeping: the viewer's debug state (breakpoints, mode) and the held gates.
//!
//! The [`crate::Client`] decides *whether* a gate holds; this module keeps the
//! state that decision reads and the registry that releases holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mindgate_protocol::{
    BreakpointMatcher, BreakpointSet, GateTarget, NodeKind, PausePoint, ResumeAction, RunMode,
};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::run::RunRef;

/// How a gate was released.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Proceed (at an error gate: return the original error).
    Continue,
    /// Run the node's body again from the top (at `before`: same as continue).
    Retry,
    /// Skip the body (or swallow the error) and use this value as the output.
    Inject(Value),
    /// The run was aborted; terminal.
    Abort,
}

impl Decision {
    /// The wire action this decision corresponds to.
    pub fn action(&self) -> ResumeAction {
        match self {
            Decision::Continue => ResumeAction::Continue,
            Decision::Retry => ResumeAction::Retry,
            Decision::Inject(_) => ResumeAction::Inject,
            Decision::Abort => ResumeAction::Abort,
        }
    }
}

/// The logical node a gate belongs to.
#[derive(Debug, Clone, Copy)]
pub struct GateNode<'a> {
    /// Stable logical id (`tool:search`).
    pub node_id: &'a str,
    /// Node kind.
    pub kind: NodeKind,
    /// Display name (what breakpoints match on).
    pub name: &'a str,
}

impl<'a> GateNode<'a> {
    /// The matcher's view of this node.
    pub fn target(&self) -> GateTarget<'a> {
        GateTarget {
            kind: self.kind,
            name: self.name,
        }
    }
}

/// Checks that an injected value fits a node's output type; `Err` carries the reason.
pub type InjectCheck = fn(&Value) -> Result<(), String>;

/// The validator for output type `T`.
pub(crate) fn inject_check<T: serde::de::DeserializeOwned>(value: &Value) -> Result<(), String> {
    T::deserialize(value).map(|_| ()).map_err(|e| {
        format!(
            "the injected value does not fit the node's output type `{}`: {e}",
            std::any::type_name::<T>()
        )
    })
}

/// The viewer's desired debug state, from `hello.ack` and later controls.
#[derive(Debug, Default)]
pub(crate) struct Armed {
    pub(crate) breakpoints: BreakpointSet,
    pub(crate) mode: RunMode,
}

/// One held gate.
pub(crate) struct Held {
    pub(crate) tx: oneshot::Sender<Decision>,
    pub(crate) run: RunRef,
    pub(crate) check: Option<InjectCheck>,
    pub(crate) since: Instant,
}

/// What settling a pause did.
#[derive(Debug)]
pub(crate) enum Settled {
    /// Released; the caller emits `exec.resumed`.
    Released(RunRef),
    /// The inject value was refused (the gate stays held); carries the reason.
    Refused(RunRef, String),
    /// No such pause (already released, or another process's).
    Unknown,
}

/// Breakpoints, mode and held gates.
#[derive(Default)]
pub(crate) struct Gates {
    pub(crate) armed: Mutex<Armed>,
    held: Mutex<HashMap<Arc<str>, Held>>,
}

impl Gates {
    /// Adopts the viewer's whole state (on `hello.ack`).
    pub(crate) fn arm(&self, breakpoints: Vec<BreakpointMatcher>, mode: RunMode) {
        if let Ok(mut a) = self.armed.lock() {
            a.breakpoints.replace(breakpoints);
            a.mode = mode;
        }
    }

    /// Forgets the viewer's state (on disconnect).
    pub(crate) fn disarm(&self) {
        if let Ok(mut a) = self.armed.lock() {
            *a = Armed::default();
        }
    }

    /// How many breakpoints are armed.
    pub(crate) fn armed_count(&self) -> usize {
        self.armed.lock().map(|a| a.breakpoints.len()).unwrap_or(0)
    }

    /// `breakpoint.set`.
    pub(crate) fn add(&self, m: BreakpointMatcher) {
        if let Ok(mut a) = self.armed.lock() {
            a.breakpoints.add(m);
        }
    }

    /// `breakpoint.clear`.
    pub(crate) fn remove(&self, m: &BreakpointMatcher) {
        if let Ok(mut a) = self.armed.lock() {
            a.breakpoints.remove(m);
        }
    }

    /// `mode.set`.
    pub(crate) fn set_mode(&self, mode: RunMode) {
        if let Ok(mut a) = self.armed.lock() {
            a.mode = mode;
        }
    }

    /// Why a gate at `point` should hold, if it should (loop holds are decided elsewhere).
    pub(crate) fn reason(
        &self,
        point: PausePoint,
        target: GateTarget<'_>,
        step_pauses_after: bool,
    ) -> Option<mindgate_protocol::PauseReason> {
        use mindgate_protocol::PauseReason;
        let a = self.armed.lock().ok()?;
        if a.breakpoints.matches(point, target) {
            return Some(if point == PausePoint::Error {
                PauseReason::Error
            } else {
                PauseReason::Breakpoint
            });
        }
        if a.mode == RunMode::Step && (point != PausePoint::After || step_pauses_after) {
            return Some(PauseReason::Step);
        }
        None
    }

    /// Registers a hold.
    pub(crate) fn hold(&self, pause_id: Arc<str>, held: Held) {
        if let Ok(mut h) = self.held.lock() {
            h.insert(pause_id, held);
        }
    }

    /// Releases one hold with `decision` unless an inject value does not fit.
    pub(crate) fn settle(&self, pause_id: &str, decision: Decision) -> Settled {
        let Ok(mut map) = self.held.lock() else {
            return Settled::Unknown;
        };
        let Some(held) = map.remove(pause_id) else {
            return Settled::Unknown;
        };
        if let (Decision::Inject(value), Some(check)) = (&decision, held.check)
            && let Err(reason) = check(value)
        {
            let run = held.run.clone();
            map.insert(Arc::from(pause_id), held);
            return Settled::Refused(run, reason);
        }
        drop(map);
        if decision == Decision::Abort {
            held.run.cancel_token().cancel();
        }
        held.run.hold_closed(held.since);
        let run = held.run.clone();
        // The waiter may be gone (its future was dropped): nothing to wake.
        let _ = held.tx.send(decision);
        Settled::Released(run)
    }

    /// Releases every hold with `continue`; returns the released pause ids and runs.
    pub(crate) fn release_all(&self) -> Vec<(Arc<str>, RunRef)> {
        let drained: Vec<(Arc<str>, Held)> = match self.held.lock() {
            Ok(mut map) => map.drain().collect(),
            Err(_) => return Vec::new(),
        };
        let mut out = Vec::with_capacity(drained.len());
        for (id, held) in drained {
            held.run.hold_closed(held.since);
            let _ = held.tx.send(Decision::Continue);
            out.push((id, held.run));
        }
        out
    }

    /// Number of gates currently held.
    pub(crate) fn held_count(&self) -> usize {
        self.held.lock().map(|h| h.len()).unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use mindgate_protocol::PauseReason;

    fn target(kind: NodeKind, name: &str) -> GateTarget<'_> {
        GateTarget { kind, name }
    }

    #[test]
    fn reasons_follow_breakpoints_and_mode() {
        let g = Gates::default();
        let t = target(NodeKind::Tool, "search");
        assert_eq!(g.reason(PausePoint::Before, t, true), None);
        g.arm(vec![BreakpointMatcher::on_error()], RunMode::Run);
        assert_eq!(
            g.reason(PausePoint::Error, t, true),
            Some(PauseReason::Error)
        );
        assert_eq!(g.reason(PausePoint::Before, t, true), None);
        g.add(BreakpointMatcher::default().name("search"));
        assert_eq!(
            g.reason(PausePoint::Before, t, true),
            Some(PauseReason::Breakpoint)
        );
        g.remove(&BreakpointMatcher::default().name("search"));
        assert_eq!(g.reason(PausePoint::Before, t, true), None);
        g.set_mode(RunMode::Step);
        assert_eq!(
            g.reason(PausePoint::Before, t, true),
            Some(PauseReason::Step)
        );
        assert_eq!(
            g.reason(PausePoint::After, t, true),
            Some(PauseReason::Step)
        );
        assert_eq!(g.reason(PausePoint::After, t, false), None);
        g.disarm();
        assert_eq!(g.reason(PausePoint::Error, t, true), None);
    }

    #[test]
    fn inject_check_names_the_type() {
        assert!(inject_check::<u32>(&serde_json::json!(3)).is_ok());
        let err = inject_check::<u32>(&serde_json::json!("three"))
            .err()
            .unwrap_or_default();
        assert!(err.contains("`u32`"), "{err}");
    }
}
