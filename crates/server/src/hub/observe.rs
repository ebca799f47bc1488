//! [`Hub::observe`]: what the hub learns from an app's event before it is stored — the
//! app's run list, held gates (and the replay or the default that answers them),
//! releases, refusals of a resume, finished runs.

use std::time::Instant;

use mindgate_protocol::{Envelope, ExecPaused, ExecRefused, ExecResumed, Message};
use serde_json::Value;

use super::pauses::{adjust_held, remember_taken};
use super::{
    APP_RUN_IDS, ConnId, Hub, HubRefusal, Inner, MAX_PAUSES, MAX_PAUSES_PER_CONNECTION,
    MAX_UNFINISHED_RUNS_PER_CONNECTION, Pause, PauseView, Principal, ResumeRequest, ResumeResult,
    replay, unwatched,
};

/// A gate to release right after the lock is dropped: the run, the pause, the resume.
type Release = (String, String, ResumeRequest);

/// What handling one event did: whether viewers need a new state, whether the envelope was
/// stamped, and a gate a replay answers at once.
#[derive(Default)]
struct Observed {
    changed: bool,
    stamped: bool,
    release: Option<Release>,
}

impl Hub {
    /// Bookkeeping for an event from `conn` before it is stored: run lists,
    /// pauses and replays. Refuses (and changes nothing) when the event would
    /// pass a per-connection limit: another unfinished run beyond
    /// [`MAX_UNFINISHED_RUNS_PER_CONNECTION`], another held gate beyond
    /// [`MAX_PAUSES_PER_CONNECTION`] / [`MAX_PAUSES`].
    ///
    /// Returns whether it stamped the event (store the changed envelope):
    /// `principal` on an `exec.resumed` that has none (the surface that
    /// released the gate, or `fail-open` when the app released it itself), and
    /// `meta.replayOf` / `meta.replayAt` on the `run.started` of a replay.
    /// A gate a replay answers is released here, right away.
    pub fn observe(&self, conn: ConnId, env: &mut Envelope) -> Result<bool, HubRefusal> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let listed = self.track_app_run(inner, conn, env)?;
        let mut seen = Observed {
            changed: listed,
            ..Observed::default()
        };
        match &mut env.message {
            Message::RunStarted(_) => {
                seen.stamped = self.replay_on_run_started(inner, conn, env);
            }
            Message::NodeStarted(_) => Self::replay_on_node_started(inner, conn, env),
            Message::ExecPaused(p) => {
                let (changed, release) = self.on_paused(inner, conn, &env.run_id, env.ts, p);
                seen.changed |= changed;
                seen.release = release;
            }
            Message::ExecResumed(p) => {
                let (changed, stamped) = self.on_resumed(inner, &env.run_id, p);
                seen.changed |= changed;
                seen.stamped = stamped;
            }
            Message::ExecRefused(p) => seen.changed |= self.on_refused(inner, &env.run_id, p),
            Message::RunFinished(_) => seen.changed |= self.on_run_finished(inner, &env.run_id),
            _ => {}
        }
        drop(guard);
        if let Some((run, pause, req)) = seen.release {
            self.resume(&run, &pause, req);
        } else if seen.changed {
            self.bump();
        }
        Ok(seen.stamped)
    }

    /// The app's run list and unfinished runs, within the per-connection limits; whether
    /// the run list changed.
    fn track_app_run(
        &self,
        inner: &mut Inner,
        conn: ConnId,
        env: &Envelope,
    ) -> Result<bool, HubRefusal> {
        let finishing = matches!(env.message, Message::RunFinished(_));
        let total_pauses = inner.pauses.len();
        let Some(app) = inner.apps.get_mut(&conn) else {
            return Ok(false);
        };
        let new_run = !finishing && !app.unfinished.contains(&env.run_id);
        if new_run && app.unfinished.len() >= MAX_UNFINISHED_RUNS_PER_CONNECTION {
            return Err(HubRefusal::RunLimit);
        }
        if let Message::ExecPaused(p) = &env.message {
            let key = (env.run_id.clone(), p.pause_id.clone());
            let fresh = !inner.pauses.contains_key(&key) && !inner.taken.contains(&key);
            if fresh && (app.held >= MAX_PAUSES_PER_CONNECTION || total_pauses >= MAX_PAUSES) {
                return Err(HubRefusal::PauseLimit);
            }
        }
        let mut changed = false;
        if !app.runs.iter().any(|r| r == &env.run_id) {
            app.runs.push_back(env.run_id.clone());
            if app.runs.len() > APP_RUN_IDS {
                app.runs.pop_front();
            }
            self.delta(serde_json::json!({"type": "app.run", "connId": conn, "runId": env.run_id}));
            changed = true;
        }
        if finishing {
            app.unfinished.remove(&env.run_id);
        } else if new_run {
            app.unfinished.insert(env.run_id.clone());
        }
        Ok(changed)
    }

    /// A gate held: recorded (unless already held or taken), shown and shared, or released
    /// at once when a replay answers it. Whether it changed anything, and that release.
    fn on_paused(
        &self,
        inner: &mut Inner,
        conn: ConnId,
        run_id: &str,
        since: i64,
        p: &ExecPaused,
    ) -> (bool, Option<Release>) {
        let key = (run_id.to_owned(), p.pause_id.clone());
        if inner.taken.contains(&key) || inner.pauses.contains_key(&key) {
            return (false, None);
        }
        // A replay the person armed: its gates are theirs.
        let replayed = inner.replay.owns(conn, run_id);
        let answer = self.replay_on_paused(inner, conn, run_id, &p.node_id, p.point, p.reason);
        let by_default = !replayed && unwatched::held_by_default(inner, p.point);
        let (note, auto) = match answer {
            replay::GateAnswer::Hold(note) => (note, None),
            replay::GateAnswer::Release(req) => (None, Some(req)),
        };
        let view = pause_view(run_id, since, p, note);
        if auto.is_none() {
            self.pause_held(&view);
            self.announce_shared(&view);
        }
        let release = auto.map(|req| (key.0.clone(), key.1.clone(), req));
        inner.pauses.insert(
            key,
            Pause {
                view,
                conn,
                held_at: Instant::now(),
                by_default,
            },
        );
        adjust_held(inner, conn, 1);
        (true, release)
    }

    /// A gate released by the app: forgotten, its resumer answered, the envelope stamped
    /// with who released it when it does not say. Whether it changed anything, whether it
    /// stamped.
    fn on_resumed(&self, inner: &mut Inner, run_id: &str, p: &mut ExecResumed) -> (bool, bool) {
        let key = (run_id.to_owned(), p.pause_id.clone());
        let mut changed = false;
        if let Some(pause) = inner.pauses.remove(&key) {
            adjust_held(inner, pause.conn, -1);
            self.pause_released(&key.0, &key.1);
            changed = true;
        }
        let flight = inner.in_flight.remove(&key);
        let mut stamped = false;
        if p.principal.is_none() {
            let principal = flight
                .as_ref()
                .map(|f| f.principal.clone())
                .or_else(|| inner.released_by.remove(&key))
                .unwrap_or(Principal::FailOpen);
            p.principal = Some(principal.to_value());
            stamped = true;
        }
        self.retract_shared(&key.0, &key.1);
        if let Some(flight) = flight {
            self.answer(flight.waiter, (ResumeResult::Resumed, None));
        }
        remember_taken(inner, key);
        (changed, stamped)
    }

    /// The app kept holding the gate it was told to release: it is a pause again, and
    /// the resumer is told why. Whether it changed anything.
    fn on_refused(&self, inner: &mut Inner, run_id: &str, p: &ExecRefused) -> bool {
        let key = (run_id.to_owned(), p.pause_id.clone());
        let Some(flight) = inner.in_flight.remove(&key) else {
            return false;
        };
        let message = p
            .message
            .clone()
            .unwrap_or_else(|| format!("the app refused the resume ({})", p.code.as_str()));
        self.answer(flight.waiter, (ResumeResult::Refused, Some(message)));
        inner.taken.remove(&key);
        inner.taken_order.retain(|k| *k != key);
        self.pause_held(&flight.pause.view);
        self.rehold_shared(&key.0, &key.1);
        adjust_held(inner, flight.pause.conn, 1);
        let mut pause = flight.pause;
        pause.held_at = Instant::now();
        inner.pauses.insert(key, pause);
        true
    }

    /// A run finished: its gates are gone, its waiting resumers answered `resumed`, its
    /// replay ended. Whether a held gate went.
    fn on_run_finished(&self, inner: &mut Inner, run: &str) -> bool {
        let mut released = Vec::new();
        inner.pauses.retain(|key, p| {
            let keep = key.0 != run;
            if !keep {
                released.push((key.1.clone(), p.conn));
            }
            keep
        });
        for (pause, owner) in &released {
            adjust_held(inner, *owner, -1);
            self.pause_released(run, pause);
            self.retract_shared(run, pause);
        }
        let answered: Vec<_> = inner.in_flight.extract_if(|(r, _), _| r == run).collect();
        for ((_, pause), flight) in answered {
            self.retract_shared(run, &pause);
            let key = (run.to_owned(), pause.clone());
            inner
                .released_by
                .insert(key.clone(), flight.principal.clone());
            remember_taken(inner, key);
            self.answer(flight.waiter, (ResumeResult::Resumed, None));
        }
        self.replay_on_run_finished(inner, run);
        !released.is_empty()
    }
}

/// The viewers' view of a gate held at `since`, with the replay's note.
fn pause_view(run_id: &str, since: i64, p: &ExecPaused, replay: Option<Value>) -> PauseView {
    PauseView {
        run_id: run_id.to_owned(),
        pause_id: p.pause_id.clone(),
        node_id: p.node_id.clone(),
        point: p.point.as_str().to_owned(),
        reason: p.reason.map(|r| r.as_str().to_owned()),
        since,
        instance_id: p
            .extra
            .get("instanceId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        loop_info: p
            .loop_info
            .as_ref()
            .and_then(|l| serde_json::to_value(l).ok()),
        editable: p.editable,
        replay,
    }
}
