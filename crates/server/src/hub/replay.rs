//! Replay a recorded run up to a step, without changing the app.
//!
//! A [`ReplayPlan`] is built from a finished run's events: for every logical
//! node, its recorded instances in order, each marked with what the hub does
//! at that instance's `before` gate in the next run — inject the recorded
//! output (it finished before the chosen step started), let it run live (an
//! enclosing node such as the agent), or hold (the chosen step). Arming a plan
//! sends `breakpoint.set {point: "before"}` to the matching apps so that every
//! node's `before` gate holds (the 0.5.1 client honours it); the hub answers
//! those gates itself until the chosen step, where it clears the matcher and
//! leaves the gate held for a person. Design: `docs/replay.md`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mindgate_protocol::{
    BreakpointChange, BreakpointMatcher, Envelope, Message, NodeKind, PausePoint, PauseReason,
    ResumeAction, RunMode, WILDCARD_RUN_ID,
};
use serde_json::{Value, json};

use super::{ConnId, Hub, Inner, Principal, ResumeRequest};

/// Largest recorded or new input shown whole in a mismatch, in bytes of JSON.
pub const MAX_SHOWN_INPUT_BYTES: usize = 16 * 1024;

/// Most node kinds/names remembered for the apps a replay armed.
const MAX_TARGETS: usize = 65_536;

/// How the next run is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayMatch {
    /// The next run of the same app with the same run name (`meta.name`).
    Name,
    /// The next run of the same app, whatever its name.
    App,
    /// The next run to start, from any app.
    Next,
}

/// What the hub does at one recorded instance's `before` gate.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// It finished before the chosen step: inject its output, if the input matches.
    Inject {
        input: Option<Value>,
        output: Option<Value>,
    },
    /// It was still running when the chosen step started (an ancestor): run it live.
    Live,
    /// The chosen step: hold for a person.
    Target,
    /// It finished before the chosen step but cannot be injected (it failed).
    Unreplayable(String),
}

/// Why a plan cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// The run has no such node.
    #[error("run {run} has no node {node}")]
    NoSuchNode {
        /// Run.
        run: String,
        /// Node.
        node: String,
    },
    /// The node has no such instance.
    #[error("node {node} of run {run} has no instance {instance}")]
    NoSuchInstance {
        /// Run.
        run: String,
        /// Node.
        node: String,
        /// Instance asked for.
        instance: String,
    },
}

/// A recorded run, turned into the hub's answers for the next one.
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    source_run: String,
    app: String,
    run_name: Option<String>,
    matching: ReplayMatch,
    target_node: String,
    target_instance: String,
    steps: HashMap<String, Vec<Step>>,
    injected: usize,
}

#[derive(Debug)]
struct Recorded {
    node_id: String,
    instance_id: String,
    started: u64,
    input: Option<Value>,
    finished: Option<(u64, bool, Option<Value>)>,
}

impl ReplayPlan {
    /// Builds the plan for replaying `run` (of `app`, named `run_name`) up to
    /// `node_id`'s instance `instance` (its instance id; the first one when
    /// `None`). `events` are the run's events in `seq` order: `(seq, type, payload)`.
    pub fn from_events<'a>(
        run: &str,
        app: &str,
        run_name: Option<&str>,
        events: impl IntoIterator<Item = (u64, &'a str, Value)>,
        node_id: &str,
        instance: Option<&str>,
        matching: ReplayMatch,
    ) -> Result<ReplayPlan, PlanError> {
        let mut recorded: Vec<Recorded> = Vec::new();
        let mut by_instance: HashMap<String, usize> = HashMap::new();
        for (seq, type_name, payload) in events {
            let text = |k: &str| payload.get(k).and_then(Value::as_str).map(str::to_owned);
            match type_name {
                "node.started" => {
                    let (Some(node), Some(inst)) = (text("nodeId"), text("instanceId")) else {
                        continue;
                    };
                    if by_instance.contains_key(&inst) {
                        continue; // a retry re-announces the same instance
                    }
                    by_instance.insert(inst.clone(), recorded.len());
                    recorded.push(Recorded {
                        node_id: node,
                        instance_id: inst,
                        started: seq,
                        input: payload.get("input").cloned(),
                        finished: None,
                    });
                }
                "node.finished" => {
                    let Some(i) = text("instanceId").and_then(|i| by_instance.get(&i).copied())
                    else {
                        continue;
                    };
                    let ok = payload.get("status").and_then(Value::as_str) == Some("ok");
                    if let Some(r) = recorded.get_mut(i) {
                        r.finished = Some((seq, ok, payload.get("output").cloned()));
                    }
                }
                _ => {}
            }
        }
        let target_at = match instance {
            None => recorded.iter().position(|r| r.node_id == node_id),
            Some(want) => recorded
                .iter()
                .position(|r| r.node_id == node_id && r.instance_id == want),
        };
        let Some(target_at) = target_at else {
            let node = node_id.to_owned();
            let run = run.to_owned();
            return Err(match instance {
                Some(want) if recorded.iter().any(|r| r.node_id == node_id) => {
                    PlanError::NoSuchInstance {
                        run,
                        node,
                        instance: want.to_owned(),
                    }
                }
                _ => PlanError::NoSuchNode { run, node },
            });
        };
        let target_instance = recorded
            .get(target_at)
            .map(|r| r.instance_id.clone())
            .unwrap_or_default();
        let target_started = recorded.get(target_at).map_or(0, |r| r.started);
        let mut steps: HashMap<String, Vec<Step>> = HashMap::new();
        let mut injected = 0;
        for (i, r) in recorded.into_iter().enumerate() {
            let step = if i == target_at {
                Step::Target
            } else if r.started > target_started {
                Step::Live
            } else {
                match r.finished {
                    Some((at, true, output)) if at < target_started => {
                        injected += 1;
                        Step::Inject {
                            input: r.input,
                            output,
                        }
                    }
                    Some((at, false, _)) if at < target_started => Step::Unreplayable(format!(
                        "the recorded {} did not finish ok, so its output cannot be injected",
                        r.node_id
                    )),
                    _ => Step::Live,
                }
            };
            steps.entry(r.node_id).or_default().push(step);
        }
        Ok(ReplayPlan {
            source_run: run.to_owned(),
            app: app.to_owned(),
            run_name: run_name.map(str::to_owned),
            matching,
            target_node: node_id.to_owned(),
            target_instance,
            steps,
            injected,
        })
    }

    /// What was armed: the answer of `POST /api/runs/:runId/replay`.
    pub fn summary(&self) -> Value {
        json!({
            "replayOf": self.source_run,
            "app": self.app,
            "runName": self.run_name,
            "match": self.matching,
            "nodeId": self.target_node,
            "instanceId": self.target_instance,
            "injectedSteps": self.injected,
        })
    }

    fn forked_at(&self) -> Value {
        json!({"nodeId": self.target_node, "instanceId": self.target_instance})
    }

    /// Whether an app that said `app` in its `hello` may start the next run.
    fn wants_app(&self, app: Option<&str>) -> bool {
        self.matching == ReplayMatch::Next || app.is_none_or(|a| a == self.app)
    }

    /// Whether a `run.started` is the next run this plan waits for.
    fn wants_run(&self, app: &str, name: Option<&str>) -> bool {
        match self.matching {
            ReplayMatch::Next => true,
            ReplayMatch::App => app == self.app,
            ReplayMatch::Name => app == self.app && name == self.run_name.as_deref(),
        }
    }
}

/// A replay bound to a run of the new app.
#[derive(Debug)]
struct Active {
    plan: Arc<ReplayPlan>,
    /// Instances of each node seen so far in the new run.
    next: HashMap<String, usize>,
    /// The latest instance of each node in the new run: its index and input.
    current: HashMap<String, (usize, Option<Value>)>,
    /// Reached the chosen step or departed from the recording: no more answers.
    stopped: bool,
}

/// The hub's replay bookkeeping.
#[derive(Debug, Default)]
pub(super) struct ReplayState {
    pending: Option<Arc<ReplayPlan>>,
    /// Connections sent `breakpoint.set {point: "before"}` by a replay.
    armed: HashSet<ConnId>,
    active: HashMap<String, Active>,
    /// Kind and name of nodes seen on armed connections, by (run, node).
    targets: HashMap<(String, String), (NodeKind, String)>,
}

/// What the hub decided for a gate that just held.
impl ReplayState {
    /// Whether a gate of `run_id` on `conn` belongs to a replay a person armed.
    pub(super) fn owns(&self, conn: ConnId, run_id: &str) -> bool {
        self.armed.contains(&conn) || self.active.contains_key(run_id)
    }
}

pub(super) enum GateAnswer {
    /// Leave it held for a person (with replay details to show, if any).
    Hold(Option<Value>),
    /// Release it now with this request.
    Release(ResumeRequest),
}

fn every_before() -> BreakpointMatcher {
    BreakpointMatcher::at(PausePoint::Before)
}

fn send_matcher(inner: &Inner, conn: ConnId, seq: u64, set: bool) {
    let change = BreakpointChange {
        matcher: every_before(),
        extra: Default::default(),
    };
    let msg = if set {
        Message::BreakpointSet(change)
    } else {
        Message::BreakpointClear(change)
    };
    if let Some(app) = inner.apps.get(&conn) {
        let _ = app
            .tx
            .send(Envelope::new(WILDCARD_RUN_ID, seq, msg).to_json());
    }
}

fn shown(value: &Option<Value>) -> Value {
    match value {
        None => Value::Null,
        Some(v) => {
            let len = v.to_string().len();
            if len <= MAX_SHOWN_INPUT_BYTES {
                v.clone()
            } else {
                Value::String(format!("({len} bytes of JSON, not shown)"))
            }
        }
    }
}

impl Hub {
    /// Arms `plan` for the next matching run (replacing an armed, unbound one)
    /// and tells the matching attached apps to hold before every node.
    pub fn arm_replay(&self, plan: ReplayPlan) -> Value {
        let summary = plan.summary();
        let plan = Arc::new(plan);
        let mut inner = self.lock();
        inner.replay.pending = Some(plan.clone());
        let conns: Vec<ConnId> = inner
            .apps
            .iter()
            .filter(|(_, a)| plan.wants_app(a.app.as_deref()))
            .map(|(c, _)| *c)
            .collect();
        for conn in conns {
            arm_conn(&mut inner, conn);
        }
        self.set_replay_watch(&inner);
        drop(inner);
        self.bump();
        summary
    }

    /// Whether ingest should show the hub every `node.started` (a replay is armed or running).
    pub fn replay_watching(&self) -> bool {
        self.replay_watch.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(super) fn set_replay_watch(&self, inner: &Inner) {
        let r = &inner.replay;
        let on = r.pending.is_some() || !r.armed.is_empty() || !r.active.is_empty();
        self.replay_watch
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// On attach: the matcher a pending replay adds to this app's `hello.ack`.
    pub(super) fn replay_on_attach(
        inner: &mut Inner,
        conn: ConnId,
        app: Option<&str>,
    ) -> Option<BreakpointMatcher> {
        let wants = inner
            .replay
            .pending
            .as_ref()
            .is_some_and(|p| p.wants_app(app));
        if !wants {
            return None;
        }
        inner.replay.armed.insert(conn);
        Some(every_before())
    }

    /// On detach: forget the connection and the replays it was running.
    pub(super) fn replay_on_detach(&self, inner: &mut Inner, conn: ConnId, runs: &[String]) {
        inner.replay.armed.remove(&conn);
        for run in runs {
            inner.replay.active.remove(run);
        }
        self.disarm_if_idle(inner);
    }

    /// A `run.started` from `conn`: binds the pending plan to it when it is
    /// the run the plan waits for, and stamps `meta.replayOf` / `meta.replayAt`.
    pub(super) fn replay_on_run_started(
        &self,
        inner: &mut Inner,
        conn: ConnId,
        env: &mut Envelope,
    ) -> bool {
        let Message::RunStarted(started) = &mut env.message else {
            return false;
        };
        if !inner.replay.armed.contains(&conn) {
            return false;
        }
        let Some(plan) = inner.replay.pending.clone() else {
            return false;
        };
        let name = started
            .meta
            .as_ref()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str);
        if !plan.wants_run(&started.app, name) || inner.replay.active.contains_key(&env.run_id) {
            return false;
        }
        inner.replay.pending = None;
        let meta = started.meta.get_or_insert_with(Default::default);
        meta.insert(
            "replayOf".to_owned(),
            Value::String(plan.source_run.clone()),
        );
        meta.insert("replayAt".to_owned(), plan.forked_at());
        inner.replay.active.insert(
            env.run_id.clone(),
            Active {
                plan,
                next: HashMap::new(),
                current: HashMap::new(),
                stopped: false,
            },
        );
        tracing::info!(run = %env.run_id, "replay bound to a new run");
        true
    }

    /// A `node.started` from an armed connection: counts the instance.
    pub(super) fn replay_on_node_started(inner: &mut Inner, conn: ConnId, env: &Envelope) {
        let Message::NodeStarted(n) = &env.message else {
            return;
        };
        if !inner.replay.armed.contains(&conn) {
            return;
        }
        let r = &mut inner.replay;
        if r.targets.len() >= MAX_TARGETS {
            r.targets.clear();
        }
        r.targets.insert(
            (env.run_id.clone(), n.node_id.clone()),
            (n.kind, n.name.clone()),
        );
        if let Some(active) = r.active.get_mut(&env.run_id)
            && !active.stopped
        {
            let counter = active.next.entry(n.node_id.clone()).or_insert(0);
            let index = *counter;
            *counter += 1;
            active
                .current
                .insert(n.node_id.clone(), (index, n.input.clone()));
        }
    }

    /// A gate held on `conn`: the hub's answer when a replay concerns it.
    pub(super) fn replay_on_paused(
        &self,
        inner: &mut Inner,
        conn: ConnId,
        run_id: &str,
        node_id: &str,
        point: PausePoint,
        reason: Option<PauseReason>,
    ) -> GateAnswer {
        if !inner.replay.armed.contains(&conn) {
            return GateAnswer::Hold(None);
        }
        let Some(active) = inner
            .replay
            .active
            .get_mut(run_id)
            .filter(|active| !active.stopped)
        else {
            return armed_gate_answer(inner, run_id, node_id, point, reason);
        };
        if point != PausePoint::Before {
            return GateAnswer::Hold(None);
        }
        let current = active.current.get(node_id).cloned();
        let (answer, stopped) = step_answer(&active.plan, node_id, current);
        if stopped {
            active.stopped = true;
            self.disarm_if_idle(inner);
        }
        answer
    }

    /// A run finished: its replay ends.
    pub(super) fn replay_on_run_finished(&self, inner: &mut Inner, run_id: &str) {
        if inner.replay.active.remove(run_id).is_some() {
            self.disarm_if_idle(inner);
        }
        inner.replay.targets.retain(|(r, _), _| r != run_id);
    }

    /// When no replay waits or runs: clears the matcher on every armed connection.
    fn disarm_if_idle(&self, inner: &mut Inner) {
        let r = &inner.replay;
        let busy = r.pending.is_some() || r.active.values().any(|a| !a.stopped);
        if busy {
            self.set_replay_watch(inner);
            return;
        }
        let conns: Vec<ConnId> = inner.replay.armed.drain().collect();
        // A person's own `{point: "before"}` stays armed.
        let keep = inner.breakpoints.as_slice().contains(&every_before());
        if !keep {
            for conn in conns {
                let seq = inner.next_seq;
                inner.next_seq += 1;
                send_matcher(inner, conn, seq, false);
            }
        }
        inner.replay.targets.clear();
        inner.replay.active.retain(|_, a| !a.stopped);
        self.set_replay_watch(inner);
    }
}

fn arm_conn(inner: &mut Inner, conn: ConnId) {
    if inner.replay.armed.insert(conn) {
        let seq = inner.next_seq;
        inner.next_seq += 1;
        send_matcher(inner, conn, seq, true);
    }
}

/// The answer a replay gives the gate before `node_id`'s instance `current` (its index and
/// input) in the new run, from the plan's step for it; `true` when the replay stops there
/// (the chosen step, or a departure from the recording).
fn step_answer(
    plan: &ReplayPlan,
    node_id: &str,
    current: Option<(usize, Option<Value>)>,
) -> (GateAnswer, bool) {
    let source = &plan.source_run;
    let step = current
        .as_ref()
        .and_then(|(i, _)| plan.steps.get(node_id).and_then(|s| s.get(*i)));
    let stop = |role: &str, message: String, extra: Value| {
        let mut note = json!({"role": role, "replayOf": source, "message": message});
        if let (Some(obj), Value::Object(more)) = (note.as_object_mut(), extra) {
            obj.extend(more);
        }
        GateAnswer::Hold(Some(note))
    };
    match (step, current) {
        (Some(Step::Inject { input, output }), current) => {
            let actual = current.and_then(|(_, v)| v);
            if *input == actual {
                let output = Some(output.clone().unwrap_or(Value::Null));
                (replay_release(ResumeAction::Inject, output, source), false)
            } else {
                let message = format!(
                    "the input of {node_id} differs from the recorded run: replay stopped here"
                );
                let seen = json!({"expected": shown(input), "actual": shown(&actual)});
                (stop("mismatch", message, seen), true)
            }
        }
        (Some(Step::Live), _) => (replay_release(ResumeAction::Continue, None, source), false),
        (Some(Step::Target), _) => {
            let message = format!("replayed up to {node_id}: it and everything after run live");
            (stop("target", message, json!({})), true)
        }
        (Some(Step::Unreplayable(why)), _) => (stop("mismatch", why.clone(), json!({})), true),
        (None, current) => {
            let seen = current.map_or(0, |(i, _)| i + 1);
            let recorded = plan.steps.get(node_id).map_or(0, Vec::len);
            let message = format!(
                "{node_id} ran {seen} time(s) here but {recorded} time(s) in the recorded run: replay stopped here"
            );
            (stop("mismatch", message, json!({})), true)
        }
    }
}

/// A resume the replay of `source` sends on its own.
fn replay_release(action: ResumeAction, output: Option<Value>, source: &str) -> GateAnswer {
    GateAnswer::Release(ResumeRequest {
        action,
        output,
        input: None,
        request_id: None,
        principal: Principal::Replay {
            replay_of: source.to_owned(),
        },
    })
}

/// A gate held only because a replay armed this connection (no active replay of its run):
/// released unless the person's own debug state wants it.
fn armed_gate_answer(
    inner: &Inner,
    run_id: &str,
    node_id: &str,
    point: PausePoint,
    reason: Option<PauseReason>,
) -> GateAnswer {
    let wanted_by_person = point != PausePoint::Before
        || matches!(
            reason,
            Some(PauseReason::Loop | PauseReason::Error | PauseReason::Step)
        )
        || inner.mode == RunMode::Step
        || match inner
            .replay
            .targets
            .get(&(run_id.to_owned(), node_id.to_owned()))
        {
            Some((kind, name)) => inner.breakpoints.matches(
                PausePoint::Before,
                mindgate_protocol::GateTarget { kind: *kind, name },
            ),
            None => inner
                .breakpoints
                .as_slice()
                .iter()
                .any(|m| m.effective_point() == PausePoint::Before),
        };
    if wanted_by_person {
        return GateAnswer::Hold(None);
    }
    let source = inner
        .replay
        .pending
        .as_ref()
        .or_else(|| inner.replay.active.values().next().map(|a| &a.plan))
        .map(|p| p.source_run.clone())
        .unwrap_or_default();
    replay_release(ResumeAction::Continue, None, &source)
}
