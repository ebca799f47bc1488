//! The pause referee: held gates, and resumes routed to the owning app (first
//! wins, later ones are told `taken`).

use std::time::Duration;

use mindgate_protocol::{Envelope, ExecResume, Message, ResumeAction};
use tokio::sync::oneshot;

use super::{
    ConnId, Hub, InFlight, Inner, MAX_IN_FLIGHT, PauseView, ResumeReply, ResumeRequest,
    ResumeResult, TAKEN_MEMORY, Waiter,
};

impl Hub {
    /// Current held gates, optionally of one run, oldest first.
    pub fn pauses(&self, run_id: Option<&str>) -> Vec<PauseView> {
        let inner = self.lock();
        let mut out: Vec<PauseView> = inner
            .pauses
            .values()
            .map(|p| &p.view)
            .chain(inner.remote.values().map(|p| &p.view))
            .filter(|v| run_id.is_none_or(|r| v.run_id == r))
            .cloned()
            .collect();
        out.sort_by_key(|p| p.since);
        out
    }

    /// One held gate.
    pub fn pause(&self, run_id: &str, pause_id: &str) -> Option<PauseView> {
        let inner = self.lock();
        let key = (run_id.to_owned(), pause_id.to_owned());
        inner
            .pauses
            .get(&key)
            .map(|p| p.view.clone())
            .or_else(|| inner.remote.get(&key).map(|p| p.view.clone()))
    }

    /// The referee: the first resume of a pause wins and is sent to the app that
    /// owns the run; later ones get [`ResumeResult::Taken`]. Answers as soon as
    /// the control is delivered (see [`Hub::resume_and_wait`] for the app's reply).
    pub fn resume(&self, run_id: &str, pause_id: &str, req: ResumeRequest) -> ResumeReply {
        self.resume_inner(run_id, pause_id, req, Waiter::Nobody)
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
        if let Some(cluster) = self.cluster.get() {
            return self
                .resume_in_cluster(cluster.clone(), run_id, pause_id, req, wait)
                .await;
        }
        self.resume_here(run_id, pause_id, req, wait).await
    }

    /// Resumes a gate of this instance's apps and waits for the app's answer.
    pub(super) async fn resume_here(
        &self,
        run_id: &str,
        pause_id: &str,
        req: ResumeRequest,
        wait: Duration,
    ) -> ResumeReply {
        let (tx, rx) = oneshot::channel();
        let reply = self.resume_inner(run_id, pause_id, req, Waiter::Local(tx));
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
        waiter: Waiter,
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
        if let Some(refusal) = refusal(&pause.view, &req) {
            return refusal;
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
                inner.in_flight.retain(|_, f| f.waiter.listening());
                if inner.in_flight.len() >= MAX_IN_FLIGHT {
                    let overdue: Vec<_> = inner.in_flight.drain().collect();
                    for (_, flight) in overdue {
                        self.answer(flight.waiter, (ResumeResult::Resumed, None));
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

/// Why `req` cannot release the gate `view`, if it cannot (the same rules for a gate
/// of this instance and one of another instance of the cluster).
pub(super) fn refusal(view: &PauseView, req: &ResumeRequest) -> Option<ResumeReply> {
    if req.action == ResumeAction::Inject && req.output.is_none() {
        return Some((
            ResumeResult::Refused,
            Some("inject needs an `output` value".to_owned()),
        ));
    }
    if req.input.is_some() && view.editable != Some(true) {
        return Some((
            ResumeResult::Refused,
            Some(
                "this gate does not take an edited input (the app did not mark it editable)"
                    .to_owned(),
            ),
        ));
    }
    None
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
                inner.released_by.remove(&old);
                inner.taken.remove(&old);
            }
        }
    }
}
