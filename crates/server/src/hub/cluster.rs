//! The hub in a cluster of instances on one PostgreSQL (`mindgate_cluster`): this
//! instance's gates announced to the others, theirs shown here, resumes refereed once
//! across all of them, and breakpoints and the mode shared.
//!
//! Without a cluster every function here is a no-op and the hub behaves as it always did.

use std::time::Duration;

use mindgate_cluster::{Cluster, ClusterEvent, DebugState, Referee};
use mindgate_protocol::{BreakpointChange, BreakpointSet, Message, ModeSet, ResumeAction};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::debug_state::broadcast;
use super::pauses::{refusal, remember_taken};
use super::{
    Hub, PauseView, Principal, RemotePause, ResumeReply, ResumeRequest, ResumeResult, Waiter,
    resume_answer,
};

/// The request recorded with a resume won for another instance's gate.
fn request_json(req: &ResumeRequest) -> Value {
    let mut out = json!({
        "action": req.action,
        "principal": req.principal.to_value(),
    });
    if let Some(o) = &req.output {
        out["output"] = o.clone();
    }
    if let Some(i) = &req.input {
        out["input"] = i.clone();
    }
    if let Some(r) = &req.request_id {
        out["requestId"] = Value::String(r.clone());
    }
    out
}

/// Reads back [`request_json`]; `None` when it does not decode.
fn request_from_json(value: &Value) -> Option<ResumeRequest> {
    let action: ResumeAction = serde_json::from_value(value.get("action")?.clone()).ok()?;
    let principal: Principal = value
        .get("principal")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .unwrap_or(Principal::Http);
    Some(ResumeRequest {
        action,
        output: value.get("output").cloned(),
        input: value.get("input").cloned(),
        request_id: value
            .get("requestId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        principal,
    })
}

/// Reads an owner's answer (`{result, message?}`).
fn reply_from_json(value: &Value) -> ResumeReply {
    let result = match value.get("result").and_then(Value::as_str) {
        Some("taken") => ResumeResult::Taken,
        Some("no-such-pause") => ResumeResult::NoSuchPause,
        Some("refused") => ResumeResult::Refused,
        _ => ResumeResult::Resumed,
    };
    let message = value
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned);
    (result, message)
}

impl Hub {
    /// Joins this hub to a cluster: breakpoints and mode become the shared ones (told to
    /// the apps already attached), and from now on gates, resumes and debug changes go
    /// through `cluster`. Call once, before serving; a second call is ignored.
    pub fn join_cluster(&self, cluster: Cluster, debug: DebugState) {
        if self.cluster.set(cluster).is_ok() {
            self.apply_shared_debug(debug);
        }
    }

    /// The cluster this hub is part of.
    pub fn cluster(&self) -> Option<&Cluster> {
        self.cluster.get()
    }

    /// Handles one event of the cluster's listener. Returns the live instances when
    /// some were found dead (the caller abandons the runs nobody receives any more).
    pub fn on_cluster_event(&self, event: ClusterEvent) -> Option<Vec<String>> {
        match event {
            ClusterEvent::Resync { debug, pauses } => {
                self.apply_shared_debug(debug);
                self.replace_remote_pauses(pauses);
            }
            ClusterEvent::Debug(debug) => self.apply_shared_debug(debug),
            ClusterEvent::PauseHeld(p) => self.remote_held(p),
            ClusterEvent::PauseReleased { run_id, pause_id } => {
                self.remote_released(&run_id, &pause_id)
            }
            ClusterEvent::Resume {
                run_id,
                pause_id,
                request,
                ticket,
                requester,
            } => self.deliver_remote_resume(&run_id, &pause_id, &request, ticket, requester),
            ClusterEvent::ResumeAnswer { ticket, reply } => {
                let waiter = self.lock().remote_waits.remove(&ticket);
                if let Some(w) = waiter {
                    let _ = w.send(reply_from_json(&reply));
                }
            }
            ClusterEvent::InstancesGone { live, .. } => {
                let orphaned: Vec<(String, String)> = self
                    .lock()
                    .remote
                    .iter()
                    .filter(|(_, p)| !live.contains(&p.instance))
                    .map(|(k, _)| k.clone())
                    .collect();
                for (run, pause) in orphaned {
                    self.remote_released(&run, &pause);
                }
                return Some(live);
            }
            ClusterEvent::Rejoined => {
                let views: Vec<PauseView> = self
                    .lock()
                    .pauses
                    .values()
                    .map(|p| p.view.clone())
                    .collect();
                for view in &views {
                    self.announce_shared(view);
                }
            }
        }
        None
    }

    /// Tells the cluster this instance's app holds `view`.
    pub(super) fn announce_shared(&self, view: &PauseView) {
        if let Some(c) = self.cluster.get() {
            let value = serde_json::to_value(view).unwrap_or(Value::Null);
            c.announce_pause(&view.run_id, &view.pause_id, value);
        }
    }

    /// Tells the cluster a gate of this instance is no longer held.
    pub(super) fn retract_shared(&self, run_id: &str, pause_id: &str) {
        if let Some(c) = self.cluster.get() {
            c.retract_pause(run_id, pause_id);
        }
    }

    /// Tells the cluster a gate of this instance is held again (its app refused).
    pub(super) fn rehold_shared(&self, run_id: &str, pause_id: &str) {
        if let Some(c) = self.cluster.get() {
            c.rehold_pause(run_id, pause_id);
        }
    }

    /// Gives the app's answer to whoever waits for it, here or on another instance.
    pub(super) fn answer(&self, waiter: Waiter, reply: ResumeReply) {
        match waiter {
            Waiter::Nobody => {}
            Waiter::Local(tx) => {
                let _ = tx.send(reply);
            }
            Waiter::Remote { ticket, requester } => {
                if let Some(c) = self.cluster.get() {
                    c.answer_resume(&requester, &ticket, resume_answer(reply));
                }
            }
        }
    }

    /// The referee across the cluster, then the release: of this instance's gate
    /// directly, of another instance's gate through it (waiting up to `wait` for its app's
    /// answer, as for a gate here).
    pub(super) async fn resume_in_cluster(
        &self,
        cluster: Cluster,
        run_id: &str,
        pause_id: &str,
        req: ResumeRequest,
        wait: Duration,
    ) -> ResumeReply {
        let key = (run_id.to_owned(), pause_id.to_owned());
        let here = {
            let inner = self.lock();
            let view = inner
                .pauses
                .get(&key)
                .map(|p| &p.view)
                .or_else(|| inner.remote.get(&key).map(|p| &p.view));
            if let Some(refused) = view.and_then(|v| refusal(v, &req)) {
                return refused;
            }
            if view.is_none() && inner.taken.contains(&key) {
                return (
                    ResumeResult::Taken,
                    Some("this pause was already resolved".to_owned()),
                );
            }
            inner.pauses.contains_key(&key)
        };
        let request = (!here).then(|| request_json(&req));
        let (run, pause) = key.clone();
        let verdict =
            tokio::task::spawn_blocking(move || cluster.referee(&run, &pause, request)).await;
        let verdict = match verdict {
            Ok(Ok(v)) => v,
            Ok(Err(e)) if here => {
                // The database is away: this instance's own gates still answer here.
                tracing::warn!(error = %mindgate_errors::error_chain(&e), "cluster referee unavailable; resuming locally");
                return self.resume_here(run_id, pause_id, req, wait).await;
            }
            Ok(Err(e)) => {
                return (
                    ResumeResult::Refused,
                    Some(format!(
                        "the cluster database did not answer: {}",
                        mindgate_errors::error_chain(&e)
                    )),
                );
            }
            Err(e) => return (ResumeResult::Refused, Some(e.to_string())),
        };
        match verdict {
            Referee::Taken => (
                ResumeResult::Taken,
                Some("this pause was already resolved".to_owned()),
            ),
            // This instance's gate: it was announced later than asked, or the database
            // lost it; the hub's own state referees.
            Referee::Missing | Referee::OwnerGone | Referee::Won { .. } if here => {
                self.resume_here(run_id, pause_id, req, wait).await
            }
            Referee::Missing => {
                self.remote_released(run_id, pause_id);
                (
                    ResumeResult::NoSuchPause,
                    Some(format!("no pause {pause_id} is held in run {run_id}")),
                )
            }
            Referee::OwnerGone => {
                self.remote_released(run_id, pause_id);
                (
                    ResumeResult::Refused,
                    Some(
                        "the instance holding this pause stopped; its app released the gate \
                         (fail-open)"
                            .to_owned(),
                    ),
                )
            }
            Referee::Won { ticket, .. } => {
                let (tx, rx) = oneshot::channel();
                {
                    let mut inner = self.lock();
                    inner.remote_waits.insert(ticket.clone(), tx);
                    inner.remote.remove(&key);
                    remember_taken(&mut inner, key);
                }
                self.pause_released(run_id, pause_id);
                self.bump();
                let answer = tokio::time::timeout(wait, rx).await;
                self.lock().remote_waits.remove(&ticket);
                match answer {
                    Ok(Ok(reply)) => reply,
                    // Delivered to the owner; its app did not answer in time.
                    _ => (ResumeResult::Resumed, None),
                }
            }
        }
    }

    /// A resume another instance won for a gate of this instance's apps.
    fn deliver_remote_resume(
        &self,
        run_id: &str,
        pause_id: &str,
        request: &Value,
        ticket: String,
        requester: String,
    ) {
        let Some(req) = request_from_json(request) else {
            let waiter = Waiter::Remote { ticket, requester };
            self.answer(
                waiter,
                (
                    ResumeResult::Refused,
                    Some("the resume request did not decode".to_owned()),
                ),
            );
            self.rehold_shared(run_id, pause_id);
            return;
        };
        let waiter = Waiter::Remote {
            ticket: ticket.clone(),
            requester: requester.clone(),
        };
        let reply = self.resume_inner(run_id, pause_id, req, waiter);
        if reply.0 != ResumeResult::Resumed {
            // Not delivered (the app went away, or the gate is gone): say so now.
            self.answer(Waiter::Remote { ticket, requester }, reply);
            self.retract_shared(run_id, pause_id);
        }
    }

    fn remote_held(&self, p: mindgate_cluster::RemotePause) {
        let Ok(view) = serde_json::from_value::<PauseView>(p.view) else {
            tracing::debug!(run = %p.run_id, pause = %p.pause_id, "a remote gate's view did not decode");
            return;
        };
        let key = (p.run_id, p.pause_id);
        {
            let mut inner = self.lock();
            if inner.pauses.contains_key(&key) {
                return;
            }
            inner.taken.remove(&key);
            inner.remote.insert(
                key,
                RemotePause {
                    view: view.clone(),
                    instance: p.instance,
                },
            );
        }
        self.pause_held(&view);
        self.bump();
    }

    fn remote_released(&self, run_id: &str, pause_id: &str) {
        let gone = self
            .lock()
            .remote
            .remove(&(run_id.to_owned(), pause_id.to_owned()))
            .is_some();
        if gone {
            self.pause_released(run_id, pause_id);
            self.bump();
        }
    }

    fn replace_remote_pauses(&self, pauses: Vec<mindgate_cluster::RemotePause>) {
        let mut fresh = std::collections::BTreeMap::new();
        for p in pauses {
            if let Ok(view) = serde_json::from_value::<PauseView>(p.view) {
                fresh.insert(
                    (p.run_id, p.pause_id),
                    RemotePause {
                        view,
                        instance: p.instance,
                    },
                );
            }
        }
        let (released, held) = {
            let mut inner = self.lock();
            let released: Vec<(String, String)> = inner
                .remote
                .keys()
                .filter(|k| !fresh.contains_key(*k))
                .cloned()
                .collect();
            let held: Vec<PauseView> = fresh
                .iter()
                .filter(|(k, _)| !inner.remote.contains_key(*k))
                .map(|(_, p)| p.view.clone())
                .collect();
            inner.remote = fresh;
            (released, held)
        };
        for (run, pause) in &released {
            self.pause_released(run, pause);
        }
        for view in &held {
            self.pause_held(view);
        }
        if !released.is_empty() || !held.is_empty() {
            self.bump();
        }
    }

    /// Makes the shared breakpoints and mode this hub's, telling the attached apps
    /// what changed (and viewers, when anything did).
    fn apply_shared_debug(&self, debug: DebugState) {
        let mut inner = self.lock();
        let mut wanted = BreakpointSet::new();
        wanted.replace(debug.breakpoints);
        let cleared: Vec<_> = inner
            .breakpoints
            .as_slice()
            .iter()
            .filter(|m| !wanted.as_slice().contains(m))
            .cloned()
            .collect();
        let added: Vec<_> = wanted
            .as_slice()
            .iter()
            .filter(|m| !inner.breakpoints.as_slice().contains(m))
            .cloned()
            .collect();
        let mode_changed = inner.mode != debug.mode;
        if cleared.is_empty() && added.is_empty() && !mode_changed {
            return;
        }
        for matcher in cleared {
            inner.breakpoints.remove(&matcher);
            broadcast(
                &mut inner,
                Message::BreakpointClear(BreakpointChange {
                    matcher,
                    extra: Default::default(),
                }),
            );
        }
        for matcher in added {
            inner.breakpoints.add(matcher.clone());
            broadcast(
                &mut inner,
                Message::BreakpointSet(BreakpointChange {
                    matcher,
                    extra: Default::default(),
                }),
            );
        }
        if mode_changed {
            inner.mode = debug.mode;
            broadcast(
                &mut inner,
                Message::ModeSet(ModeSet {
                    mode: debug.mode,
                    extra: Default::default(),
                }),
            );
        }
        self.debug_changed(&inner);
        drop(inner);
        self.bump();
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_request_reads_back_as_it_was_made() {
        let req = ResumeRequest {
            action: ResumeAction::Inject,
            output: Some(json!({"price": 3})),
            input: Some(json!(["edited"])),
            request_id: Some("req-1".to_owned()),
            principal: Principal::Replay {
                replay_of: "run-0".to_owned(),
            },
        };
        assert_eq!(request_from_json(&request_json(&req)), Some(req));
        assert_eq!(request_from_json(&json!({"nope": 1})), None);
    }

    #[test]
    fn an_owners_answer_reads_back_as_the_verdict_it_gave() {
        for result in [
            ResumeResult::Resumed,
            ResumeResult::Taken,
            ResumeResult::NoSuchPause,
            ResumeResult::Refused,
        ] {
            let reply = (result, Some("why".to_owned()));
            assert_eq!(reply_from_json(&resume_answer(reply.clone())), reply);
        }
    }
}
