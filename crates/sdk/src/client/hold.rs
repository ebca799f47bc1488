//! Holding at gates: the decision whether a gate holds, the wait for a
//! person's resume (with its timeout), settling a hold and releasing all of
//! them when the debugger goes away.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mindgate_protocol::{
    EditInfo, ExecPaused, ExecRefused, ExecResumed, LoopInfo, Message, PausePoint, PauseReason,
};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::{Gated, Shared, Verdict};
use crate::gate::{Decision, EditGate, GateNode, Held, InjectCheck, Settled};
use crate::ids;
use crate::run::RunRef;

/// Releases a hold if its waiter goes away (the host dropped the node's future).
struct HoldGuard<'a> {
    shared: &'a Arc<Shared>,
    pause_id: Option<Arc<str>>,
}

impl Drop for HoldGuard<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.pause_id.take() {
            self.shared.settle(&id, Decision::Continue, None, None);
        }
    }
}

impl Shared {
    /// The gate engine: decides whether to hold and waits for the decision.
    pub(crate) async fn gate(
        self: &Arc<Self>,
        run: &RunRef,
        point: PausePoint,
        node: GateNode<'_>,
        check: Option<InjectCheck>,
        edit: Option<EditGate>,
    ) -> Gated {
        match self.decide(point, node, || run.clone()) {
            Verdict::Open => Gated::OPEN,
            Verdict::Abort => Gated {
                decision: Decision::Abort,
                held: Duration::ZERO,
                input: None,
            },
            Verdict::Hold(run, reason, loop_info) => {
                self.hold(&run, point, node, reason, loop_info, check, edit)
                    .await
            }
        }
    }

    /// Whether a gate holds, synchronously. `run` is called only when it is needed.
    pub(crate) fn decide(
        self: &Arc<Self>,
        point: PausePoint,
        node: GateNode<'_>,
        run: impl FnOnce() -> RunRef,
    ) -> Verdict {
        if !self.attached.load(Ordering::Acquire) {
            return Verdict::Open;
        }
        let mut run = Some(run);
        let mut resolved: Option<RunRef> = None;
        let loop_info = if point == PausePoint::Before
            && self.loop_guard.pending()
            && self
                .loop_guard
                .applies_to(node.kind, node.node_id, node.name)
        {
            let r = match run.take() {
                Some(f) => resolved.insert(f()),
                None => return Verdict::Open,
            };
            self.loop_guard.consult(r.id(), node.kind, node.node_id)
        } else {
            None
        };
        let reason = match &loop_info {
            Some(_) => PauseReason::Loop,
            None => match self
                .gates
                .reason(point, node.target(), self.config.step_pauses_after)
            {
                Some(r) => r,
                None => return Verdict::Open,
            },
        };
        let run = match (resolved, run) {
            (Some(r), _) => r,
            (None, Some(f)) => f(),
            (None, None) => return Verdict::Open,
        };
        if run.cancel_token().is_cancelled() {
            return Verdict::Abort;
        }
        Verdict::Hold(run, reason, loop_info)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn hold(
        self: &Arc<Self>,
        run: &RunRef,
        point: PausePoint,
        node: GateNode<'_>,
        reason: PauseReason,
        loop_info: Option<LoopInfo>,
        check: Option<InjectCheck>,
        edit: Option<EditGate>,
    ) -> Gated {
        let started = Instant::now();
        let (tx, rx) = oneshot::channel();
        let pause_id: Arc<str> = Arc::from(ids::next_id("pause"));
        run.hold_opened();
        self.gates.hold(
            pause_id.clone(),
            Held {
                tx,
                run: run.clone(),
                check,
                edit,
                since: started,
            },
        );
        let mut guard = HoldGuard {
            shared: self,
            pause_id: Some(pause_id.clone()),
        };
        // Registered first, announced second: a resume racing back finds the gate.
        self.emit(
            run,
            Message::ExecPaused(ExecPaused {
                pause_id: pause_id.to_string(),
                node_id: node.node_id.to_owned(),
                point,
                reason: Some(reason),
                loop_info,
                smart: None,
                editable: edit.map(|_| true),
                extra: Map::new(),
            }),
        );
        // The viewer may have gone between the check and the registration.
        if !self.attached.load(Ordering::Acquire) {
            self.settle(&pause_id, Decision::Continue, None, None);
        } else if let Some(timeout) = self.config.pause_timeout {
            self.schedule_timeout(pause_id.clone(), timeout);
        }
        let cancel = run.cancel_token().clone();
        let decision = tokio::select! {
            biased;
            d = rx => d.unwrap_or((Decision::Continue, None)),
            _ = cancel.cancelled() => {
                // Another gate of this run aborted it: this hold ends as an abort too.
                self.settle(&pause_id, Decision::Abort, None, None);
                (Decision::Abort, None)
            }
        };
        guard.pause_id = None;
        Gated {
            decision: decision.0,
            held: started.elapsed(),
            input: decision.1,
        }
    }

    fn schedule_timeout(self: &Arc<Self>, pause_id: Arc<str>, timeout: Duration) {
        let Some(rt) = self.runtime.get() else {
            return;
        };
        let weak = Arc::downgrade(self);
        rt.spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(s) = weak.upgrade() {
                s.settle(&pause_id, Decision::Continue, None, None);
            }
        });
    }

    /// Releases one hold and emits `exec.resumed` (or `exec.refused` when an
    /// inject value does not fit the node's output type, or an edited `input`
    /// its input type). Returns whether it released.
    pub(crate) fn settle(
        self: &Arc<Self>,
        pause_id: &str,
        decision: Decision,
        request_id: Option<String>,
        input: Option<Value>,
    ) -> bool {
        let action = decision.action();
        match self.gates.settle(pause_id, decision, input) {
            Settled::Released(run, edited, wake) => {
                self.emit(
                    &run,
                    Message::ExecResumed(ExecResumed {
                        pause_id: pause_id.to_owned(),
                        action,
                        edited: edited.map(|after| EditInfo {
                            after,
                            extra: Map::new(),
                        }),
                        request_id,
                        principal: None,
                        extra: Map::new(),
                    }),
                );
                wake.wake();
                true
            }
            Settled::Refused(run, code, message) => {
                self.emit(
                    &run,
                    Message::ExecRefused(ExecRefused {
                        pause_id: pause_id.to_owned(),
                        code,
                        message: Some(message),
                        request_id,
                        extra: Map::new(),
                    }),
                );
                false
            }
            Settled::Unknown => false,
        }
    }

    /// Fail-open: releases every held gate with `continue`, each with `exec.resumed`.
    pub(crate) fn release_all(self: &Arc<Self>) -> usize {
        let released = self.gates.release_all();
        let n = released.len();
        for (pause_id, run, wake) in released {
            self.emit(
                &run,
                Message::ExecResumed(ExecResumed {
                    pause_id: pause_id.to_string(),
                    action: mindgate_protocol::ResumeAction::Continue,
                    edited: None,
                    request_id: None,
                    principal: None,
                    extra: Map::new(),
                }),
            );
            wake.wake();
        }
        n
    }
}
