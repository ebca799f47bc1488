//! Gate bookkeeping: the viewer's debug state (breakpoints, mode) and the held gates.
//!
//! The [`crate::Client`] decides *whether* a gate holds; this module keeps the
//! state that decision reads and the registry that releases holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mindgate_protocol::{
    BreakpointMatcher, BreakpointSet, GateTarget, NodeKind, PausePoint, RefuseCode, ResumeAction,
    RunMode,
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

/// Checks that an edited input fits a node's input type; `Err` carries the reason.
pub(crate) type EditCheck = fn(&Value) -> Result<(), String>;

/// A `before` gate that takes an edited input (`exec.paused.editable`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EditGate {
    /// Does the edited value deserialise into the input type?
    pub(crate) check: EditCheck,
    /// The JSON type of the original input: an edit must keep it (else `shape`).
    pub(crate) json_type: &'static str,
}

impl EditGate {
    /// The edit gate of input type `I`, whose original input is `original`.
    pub(crate) fn of<I: serde::de::DeserializeOwned>(original: &Value) -> EditGate {
        EditGate {
            check: edit_check::<I>,
            json_type: json_type(original),
        }
    }
}

/// The JSON type name of a value.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn edit_check<I: serde::de::DeserializeOwned>(value: &Value) -> Result<(), String> {
    I::deserialize(value).map(|_| ()).map_err(|e| {
        format!(
            "the edited input does not fit the node's input type `{}`: {e}",
            std::any::type_name::<I>()
        )
    })
}

/// A gate's release: the decision and, with `continue` at an editable gate, the edited input.
pub(crate) type Release = (Decision, Option<Value>);

/// The viewer's desired debug state, from `hello.ack` and later controls.
#[derive(Debug, Default)]
pub(crate) struct Armed {
    pub(crate) breakpoints: BreakpointSet,
    pub(crate) mode: RunMode,
}

/// One held gate.
pub(crate) struct Held {
    pub(crate) tx: oneshot::Sender<Release>,
    pub(crate) run: RunRef,
    pub(crate) check: Option<InjectCheck>,
    pub(crate) edit: Option<EditGate>,
    pub(crate) since: Instant,
}

/// What settling a pause did.
#[derive(Debug)]
pub(crate) enum Settled {
    /// Released (with the edited input, if any): the caller emits
    /// `exec.resumed`, *then* wakes the waiter with [`Wake::wake`], so the
    /// release is on the wire before anything the released node does.
    Released(RunRef, Option<Value>, Wake),
    /// The inject value or edited input was refused (the gate stays held).
    Refused(RunRef, RefuseCode, String),
    /// No such pause (already released, or another process's).
    Unknown,
}

/// The waiter of a released gate, woken once `exec.resumed` is emitted.
#[must_use = "the held node waits until woken"]
pub(crate) struct Wake(oneshot::Sender<Release>, Release);

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Wake").field(&self.1).finish()
    }
}

impl Wake {
    /// Wakes the waiter (it may be gone: its future was dropped).
    pub(crate) fn wake(self) {
        let _ = self.0.send(self.1);
    }
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

    /// Releases one hold with `decision` unless an inject value or an edited
    /// `input` does not fit (then the gate keeps holding).
    pub(crate) fn settle(
        &self,
        pause_id: &str,
        decision: Decision,
        input: Option<Value>,
    ) -> Settled {
        let Ok(mut map) = self.held.lock() else {
            return Settled::Unknown;
        };
        let Some(held) = map.remove(pause_id) else {
            return Settled::Unknown;
        };
        let refusal = match (&input, held.edit) {
            (None, _) => None,
            (Some(_), None) => Some((
                RefuseCode::Unsupported,
                "this gate does not take an edited input".to_owned(),
            )),
            (Some(_), Some(_)) if decision != Decision::Continue => Some((
                RefuseCode::Unsupported,
                format!(
                    "an edited input goes with continue, not {}",
                    decision.action()
                ),
            )),
            (Some(edited), Some(gate)) if json_type(edited) != gate.json_type => Some((
                RefuseCode::Shape,
                format!(
                    "the edited input is {} but the node's input is {}",
                    json_type(edited),
                    gate.json_type
                ),
            )),
            (Some(edited), Some(gate)) => {
                (gate.check)(edited).err().map(|m| (RefuseCode::Schema, m))
            }
        };
        let refusal = refusal.or_else(|| match (&decision, held.check) {
            (Decision::Inject(value), Some(check)) => {
                check(value).err().map(|m| (RefuseCode::Schema, m))
            }
            _ => None,
        });
        if let Some((code, reason)) = refusal {
            let run = held.run.clone();
            map.insert(Arc::from(pause_id), held);
            return Settled::Refused(run, code, reason);
        }
        drop(map);
        if decision == Decision::Abort {
            held.run.cancel_token().cancel();
        }
        held.run.hold_closed(held.since);
        let run = held.run.clone();
        let edited = input.clone();
        Settled::Released(run, edited, Wake(held.tx, (decision, input)))
    }

    /// Releases every hold with `continue`; returns the released pause ids and
    /// runs, each with its waiter to wake once its `exec.resumed` is emitted.
    pub(crate) fn release_all(&self) -> Vec<(Arc<str>, RunRef, Wake)> {
        let drained: Vec<(Arc<str>, Held)> = match self.held.lock() {
            Ok(mut map) => map.drain().collect(),
            Err(_) => return Vec::new(),
        };
        let mut out = Vec::with_capacity(drained.len());
        for (id, held) in drained {
            held.run.hold_closed(held.since);
            out.push((id, held.run, Wake(held.tx, (Decision::Continue, None))));
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
