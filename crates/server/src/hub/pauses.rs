//! The pause referee: held gates, and resumes routed to the owning app (first
//! wins, later ones are told `taken`).

use std::time::Duration;

use mindgate_protocol::{Envelope, ExecResume, Message, ResumeAction};
use tokio::sync::oneshot;

use super::{
    ConnId, Hub, InFlight, Inner, MAX_IN_FLIGHT, PauseView, ResumeReply, ResumeRequest,
    ResumeResult, TAKEN_MEMORY,
};

impl Hub {
    /// Current held gates, optionally of one run, oldest first.
    pub fn pauses(&self, run_id: Option<&str>) -> Vec<PauseView> {
        let inner = self.lock();
        let mut out: Vec<PauseView> = inner
            .pauses
            .values()
            .filter(|p| run_id.is_none_or(|r| p.view.run_id == r))
            .map(|p| p.view.clone())
            .collect();
        out.sort_by_key(|p| p.since);
        out
    }

    /// One held gate.
    pub fn pause(&self, run_id: &str, pause_id: &str) -> Option<PauseView> {
        self.lock()
            .pauses
            .get(&(run_id.to_owned(), pause_id.to_owned()))
            .map(|p| p.view.clone())
    }

    /// The referee: the first resume of a pause wins and is sent to the app that
    /// owns the run; later ones get [`ResumeResult::Taken`]. Answers as soon as
    /// the control is delivered (see [`Hub::resume_and_wait`] for the app's reply).
    pub fn resume(&self, run_id: &str, pause_id: &str, req: ResumeRequest) -> ResumeReply {
        self.resume_inner(run_id, pause_id, req, None)
    }

    /// [`Hub::resume`], then waits up to `wait` for the app's answer: its
    /// `exec.resumed` → `resumed`, its `exec.refused` → `refused` with the
    /// app's message (the gate is held again, so the pause reappears). A
    /// delivered resume the app does not answer in time counts as `resumed`.
    pub async fn resume_and_wait(
        &self,
        run_id: &str,
        pause_id: &str,
        req: ResumeRequest,
        wait: Duration,
    ) -> ResumeReply {
        let (tx, rx) = oneshot::channel();
        let reply = self.resume_inner(run_id, pause_id, req, Some(tx));
        if reply.0 != ResumeResult::Resumed {
            return reply;
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(answer)) => answer,
            // Timed out, or the app went away (its gates auto-continue).
            _ => reply,
        }
    }

    pub(super) fn resume_inner(
        &self,
        run_id: &str,
        pause_id: &str,
        req: ResumeRequest,
        waiter: Option<oneshot::Sender<ResumeReply>>,
    ) -> ResumeReply {
        let key = (run_id.to_owned(), pause_id.to_owned());
        let mut inner = self.lock();
        let Some(pause) = inner.pauses.get(&key) else {
            let result = if inner.taken.contains(&key) {
                (
                    ResumeResult::Taken,
                    Some("this pause was already resolved".to_owned()),
                )
            } else {
                (
                    ResumeResult::NoSuchPause,
                    Some(format!("no pause {pause_id} is held in run {run_id}")),
                )
            };
            return result;
        };
        if req.action == ResumeAction::Inject && req.output.is_none() {
            return (
                ResumeResult::Refused,
                Some("inject needs an `output` value".to_owned()),
            );
        }
        if req.input.is_some() && pause.view.editable != Some(true) {
            return (
                ResumeResult::Refused,
                Some(
                    "this gate does not take an edited input (the app did not mark it editable)"
                        .to_owned(),
                ),
            );
        }
        let conn = pause.conn;
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let frame = Envelope::new(
            run_id,
            seq,
            Message::ExecResume(ExecResume {
                pause_id: pause_id.to_owned(),
                action: req.action,
                output: req.output,
                input: req.input,
                request_id: req.request_id,
                extra: Default::default(),
            }),
        )
        .to_json();
        let delivered = inner
            .apps
            .get(&conn)
            .is_some_and(|app| app.tx.send(frame).is_ok());
        if !delivered {
            return (
                ResumeResult::Refused,
                Some("the app holding this pause is not connected".to_owned()),
            );
        }
        if let Some(pause) = inner.pauses.remove(&key) {
            adjust_held(&mut inner, pause.conn, -1);
            self.pause_released(&key.0, &key.1);
            if inner.in_flight.len() >= MAX_IN_FLIGHT {
                // Apps that never answer: forget waits nobody listens to, then
                // answer the rest `resumed` (their answer is overdue).
                inner
                    .in_flight
                    .retain(|_, f| f.waiter.as_ref().is_some_and(|w| !w.is_closed()));
                if inner.in_flight.len() >= MAX_IN_FLIGHT {
                    for (_, flight) in inner.in_flight.drain() {
                        if let Some(waiter) = flight.waiter {
                            let _ = waiter.send((ResumeResult::Resumed, None));
                        }
                    }
                }
            }
            inner.in_flight.insert(
                key.clone(),
                InFlight {
                    pause,
                    waiter,
                    principal: req.principal,
                },
            );
        }
        remember_taken(&mut inner, key);
        drop(inner);
        self.bump();
        (ResumeResult::Resumed, None)
    }
}

pub(super) fn adjust_held(inner: &mut Inner, conn: ConnId, by: isize) {
    if let Some(app) = inner.apps.get_mut(&conn) {
        app.held = app.held.saturating_add_signed(by);
    }
}

pub(super) fn remember_taken(inner: &mut Inner, key: (String, String)) {
    if inner.taken.insert(key.clone()) {
        inner.taken_order.push_back(key);
        while inner.taken_order.len() > TAKEN_MEMORY {
            if let Some(old) = inner.taken_order.pop_front() {
                inner.taken.remove(&old);
            }
        }
    }
}
