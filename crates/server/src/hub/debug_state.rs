//! The viewer debug state: breakpoints and the run mode, told to every app.

use mindgate_protocol::{
    BreakpointChange, BreakpointMatcher, Envelope, Message, ModeSet, RunMode, WILDCARD_RUN_ID,
};

use super::{Hub, Inner};

impl Hub {
    pub(super) fn debug_changed(&self, inner: &Inner) {
        if self.deltas.receiver_count() > 0 {
            self.delta(serde_json::json!({
                "type": "debug",
                "breakpoints": inner.breakpoints.as_slice(),
                "mode": inner.mode,
            }));
        }
    }

    /// Adds a breakpoint and tells every app. Returns whether it was new.
    pub fn set_breakpoint(&self, matcher: BreakpointMatcher) -> bool {
        let mut inner = self.lock();
        if !inner.breakpoints.add(matcher.clone()) {
            return false;
        }
        if let Some(c) = self.cluster.get() {
            c.change_debug(mindgate_cluster::DebugChange::Add(matcher.clone()));
        }
        let msg = Message::BreakpointSet(BreakpointChange {
            matcher,
            extra: Default::default(),
        });
        broadcast(&mut inner, msg);
        self.debug_changed(&inner);
        drop(inner);
        self.bump();
        true
    }

    /// Removes a breakpoint and tells every app. Returns whether it existed.
    pub fn clear_breakpoint(&self, matcher: BreakpointMatcher) -> bool {
        let mut inner = self.lock();
        if !inner.breakpoints.remove(&matcher) {
            return false;
        }
        if let Some(c) = self.cluster.get() {
            c.change_debug(mindgate_cluster::DebugChange::Remove(matcher.clone()));
        }
        let msg = Message::BreakpointClear(BreakpointChange {
            matcher,
            extra: Default::default(),
        });
        broadcast(&mut inner, msg);
        self.debug_changed(&inner);
        drop(inner);
        self.bump();
        true
    }

    /// Sets the mode and tells every app.
    pub fn set_mode(&self, mode: RunMode) {
        if let Some(c) = self.cluster.get() {
            c.change_debug(mindgate_cluster::DebugChange::Mode(mode));
        }
        let mut inner = self.lock();
        inner.mode = mode;
        broadcast(
            &mut inner,
            Message::ModeSet(ModeSet {
                mode,
                extra: Default::default(),
            }),
        );
        self.debug_changed(&inner);
        drop(inner);
        self.bump();
    }
}

pub(super) fn broadcast(inner: &mut Inner, msg: Message) {
    let seq = inner.next_seq;
    inner.next_seq += 1;
    let frame = Envelope::new(WILDCARD_RUN_ID, seq, msg).to_json();
    for app in inner.apps.values() {
        let _ = app.tx.send(frame.clone());
    }
}
