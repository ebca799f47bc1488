//! The logical graph of a run: one pure function over its stored events.
//!
//! [`project`] folds a run's events into one entry per logical `nodeId`, each
//! with its instances (executions). [`RunProjection::graph`] is the shape of
//! `GET /api/runs/:id/graph`; [`RunProjection::node`] is the full detail of one
//! node (inputs, outputs, errors, pauses). The HTTP API, the MCP server and
//! the viewer (which is sent this graph and its deltas on `/ws/ui`) use this
//! code, the one implementation of the rules written out in
//! `docs/run-graph.md` and pinned by one corpus of event sequences
//! (`tests/fixtures/run_graph_corpus.json`).

use std::collections::HashMap;

use mindgate_transcript::{ModelCall, Transcript};
use serde::Serialize;
use serde_json::Value;

use crate::model::StoredEvent;

mod delta;

use delta::Changes;
pub use delta::{GraphDelta, InstanceChange, NodeChange};

/// The state of a node or of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    /// Announced by `graph.hint`, never ran.
    Hinted,
    /// Named only as another node's parent: none of its own events yet.
    Pending,
    /// Started, not finished.
    Running,
    /// Held at a gate right now.
    Paused,
    /// Finished normally.
    Ok,
    /// Failed (or is held at its error gate).
    Error,
    /// Aborted.
    Aborted,
}

impl NodeState {
    fn from_wire(s: &str) -> NodeState {
        match s {
            "ok" => NodeState::Ok,
            "error" => NodeState::Error,
            "aborted" => NodeState::Aborted,
            _ => NodeState::Running,
        }
    }
}

/// `{source, target}`: a parent → child edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEdge {
    /// Parent node id.
    pub source: String,
    /// Child node id.
    pub target: String,
}

/// A short error: class and message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorBrief {
    /// Error class.
    pub name: String,
    /// Message.
    pub message: String,
}

/// One execution of a node, as the graph shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphInstance {
    /// Instance id.
    pub instance_id: String,
    /// State.
    pub status: NodeState,
    /// Epoch ms of `node.started`.
    pub started_at: Option<i64>,
    /// Epoch ms of `node.finished`.
    pub finished_at: Option<i64>,
    /// Reported wall time (includes `heldMs`).
    pub duration_ms: Option<f64>,
    /// Time held at gates: the sum of [`GraphInstance::holds`] once one was released
    /// (the hub's record, errored and aborted instances too), else what the app reported.
    pub held_ms: Option<f64>,
    /// Work time: the wall time (`durationMs`, else the `node.finished` / `node.error`
    /// time less `startedAt`) less `heldMs`, never below 0; `null` until the instance
    /// finished or failed.
    pub work_ms: Option<f64>,
    /// Its holds at gates, from `exec.paused` (`since`) to `exec.resumed` (`until`,
    /// `null` while held); absent when it never held.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<HoldSpan>,
    /// Token usage as reported.
    pub usage: Option<Value>,
    /// The model the instance called ([`model_of_started`], [`model_of_finished`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's tool-call id a `tool` instance answers ([`tool_call_id_of`]): a model
    /// call's transcript links its calls and results to this instance by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Accumulated streamed text (`t: "text"`).
    pub tokens: String,
    /// Accumulated reasoning text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// The app substituted an injected value.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub injected: bool,
    /// The latest error of this instance.
    pub error: Option<ErrorBrief>,
    /// `seq` of `node.started`.
    pub first_seq: Option<u64>,
}

/// One hold of an instance at a gate (epoch ms, the app's clock).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HoldSpan {
    /// `exec.paused`.
    pub since: i64,
    /// `exec.resumed`; `None` while held (or when the run ended without one).
    pub until: Option<i64>,
}

/// Held time and work time of an instance: the one place they are computed (every view
/// reads [`GraphInstance::held_ms`] and [`GraphInstance::work_ms`]). `ended_at` = when
/// the instance finished or failed, `None` while it runs.
fn settle_times(summary: &mut GraphInstance, ended_at: Option<i64>) {
    if let Some(held) = released_hold_ms(&summary.holds) {
        summary.held_ms = Some(held);
    }
    let wall = summary.duration_ms.or_else(|| {
        let (start, end) = (summary.started_at?, ended_at?);
        Some((end - start).max(0) as f64)
    });
    summary.work_ms = match (wall, ended_at) {
        (Some(w), Some(_)) => Some((w - summary.held_ms.unwrap_or(0.0)).max(0.0)),
        _ => None,
    };
}

/// The time of the released holds among `holds`; `None` when none was released.
fn released_hold_ms(holds: &[HoldSpan]) -> Option<f64> {
    let mut released = holds
        .iter()
        .filter_map(|h| h.until.map(|u| (u - h.since).max(0)))
        .peekable();
    released.peek()?;
    Some(released.sum::<i64>() as f64)
}

/// One logical node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphNode {
    /// Stable logical id.
    pub node_id: String,
    /// Kind (`agent`, `llm`, `tool`, …).
    pub kind: String,
    /// Display name.
    pub name: String,
    /// What the box reads instead of the name: an `llm` node's model ([`node_label`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Parent logical node.
    pub parent_id: Option<String>,
    /// Aggregate state: `paused` if any instance is held, else `running` if any
    /// runs, else the latest instance's state; `hinted` when it never ran.
    pub status: NodeState,
    /// Announced by `graph.hint` but never ran.
    pub hinted: bool,
    /// The executions, in start order.
    pub instances: Vec<GraphInstance>,
}

/// What an `llm` node's box reads instead of its name (`step` and the like): the model
/// its instances called, in the order they first name one (`gpt-4o-mini`; several:
/// `gpt-4o-mini +1 model`). `None` for other kinds, when no instance names a model, or
/// when the name already names it (the model starts with the name: `gpt-4o-mini` for
/// `gpt-4o-mini-2024-07-18`). The one place this is decided: the graph, its deltas and
/// node detail carry it.
pub fn node_label<'a>(
    kind: &str,
    name: &str,
    models: impl Iterator<Item = Option<&'a str>>,
) -> Option<String> {
    if kind != "llm" {
        return None;
    }
    let mut distinct: Vec<&str> = Vec::new();
    for model in models.flatten() {
        if !distinct.contains(&model) {
            distinct.push(model);
        }
    }
    let first = *distinct.first()?;
    // `gpt-4o-mini` already names `gpt-4o-mini-2024-07-18` (an OTel span's node).
    if distinct.len() == 1 && !name.is_empty() && first.starts_with(name) {
        return None;
    }
    Some(match distinct.len() {
        1 => first.to_owned(),
        2 => format!("{first} +1 model"),
        n => format!("{first} +{} models", n - 1),
    })
}

/// [`node_label`] over a node's instances.
fn label_of(kind: &str, name: &str, instances: &[InstanceAcc]) -> Option<String> {
    node_label(
        kind,
        name,
        instances.iter().map(|i| i.detail.summary.model.as_deref()),
    )
}

/// `GET /api/runs/:id/graph`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunGraph {
    /// The run.
    pub run_id: String,
    /// Nodes in order of first appearance.
    pub nodes: Vec<GraphNode>,
    /// Parent → child edges between nodes present in `nodes`.
    pub edges: Vec<GraphEdge>,
    /// The run's held time and work time ([`RunProjection::times`]).
    #[serde(flatten)]
    pub times: RunTimes,
}

/// A run's held time and work time, computed once here ([`RunProjection::times`]) for
/// every view: the graph and its live deltas, the run report (MCP `get_run`), the viewer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTimes {
    /// The time of every released hold of its instances ([`GraphInstance::holds`];
    /// held gates in parallel branches count each).
    pub held_ms: f64,
    /// Its wall time (first event to `run.finished`) less `heldMs`, never below 0;
    /// `None` while it runs.
    pub work_ms: Option<f64>,
}

impl RunGraph {
    /// Nodes drawn that never ran: announced by a `graph.hint` or named only as another
    /// node's parent (status `hinted` or `pending`). The run's node count
    /// ([`crate::Counts::nodes`], `docs/glossary.md`) is `nodes.len()` minus these.
    pub fn announced_only(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n.status, NodeState::Hinted | NodeState::Pending))
            .count()
    }

    /// Executions of all nodes (the run's instance count, `docs/glossary.md`).
    pub fn instance_count(&self) -> usize {
        self.nodes.iter().map(|n| n.instances.len()).sum()
    }
}

/// A gate hold seen in the events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseRecord {
    /// Pause id.
    pub pause_id: String,
    /// Gate point.
    pub point: String,
    /// Why it held.
    pub reason: Option<String>,
    /// Epoch ms of `exec.paused`.
    pub since: i64,
    /// Epoch ms of `exec.resumed`, if released.
    pub resumed_at: Option<i64>,
    /// How it was released.
    pub action: Option<String>,
    /// Who released it (`exec.resumed.principal`, e.g. `{"kind": "viewer"}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<Value>,
}

/// One execution in full.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceDetail {
    /// The graph fields.
    #[serde(flatten)]
    pub summary: GraphInstance,
    /// Input as sent.
    pub input: Option<Value>,
    /// Output as sent.
    pub output: Option<Value>,
    /// Full error (`name`, `message`, `stack`, …) as sent.
    pub error_detail: Option<Value>,
    /// Streamed tool-call arguments.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_args: String,
    /// Holds of this instance.
    pub pauses: Vec<PauseRecord>,
    /// The `node.started` payload's other fields (redaction, collapsed, …).
    pub started: Option<Value>,
    /// Why the model stopped, when `node.finished` says it beside the output
    /// (`finishReason`: the TypeScript SDK's); the transcript's fallback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// An `llm` instance's input and output read as a conversation
    /// (`mindgate_transcript::recognise`, `docs/transcripts.md`); absent when they are
    /// no shape it knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Transcript>,
}

/// An instance of a node of `kind` read as a conversation: `llm` instances only, from
/// their input, output, streamed text, model and usage ([`InstanceDetail::transcript`]).
pub fn transcript_of(kind: &str, inst: &InstanceDetail) -> Option<Transcript> {
    if kind != "llm" {
        return None;
    }
    mindgate_transcript::recognise(&ModelCall {
        input: inst.input.as_ref(),
        output: inst.output.as_ref(),
        streamed_text: &inst.summary.tokens,
        streamed_reasoning: &inst.summary.reasoning,
        model: inst.summary.model.as_deref(),
        usage: inst.summary.usage.as_ref(),
        finish_reason: inst.finish_reason.as_deref(),
    })
}

/// Reads each instance of an `llm` node as a conversation ([`transcript_of`]).
fn attach_transcripts(kind: &str, instances: &mut [InstanceDetail]) {
    for inst in instances {
        inst.transcript = transcript_of(kind, inst);
    }
}

/// `GET /api/runs/:id/nodes/:nodeId`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDetail {
    /// The run.
    pub run_id: String,
    /// Node id.
    pub node_id: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// What the graph's box reads instead of the name ([`node_label`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Parent.
    pub parent_id: Option<String>,
    /// Aggregate state.
    pub status: NodeState,
    /// Hinted, never ran.
    pub hinted: bool,
    /// Every instance in full.
    pub instances: Vec<InstanceDetail>,
}

#[derive(Debug, Clone)]
struct InstanceAcc {
    detail: InstanceDetail,
    finished: bool,
    errored: bool,
    open_pauses: usize,
    /// Epoch ms of its latest `node.error`.
    error_at: Option<i64>,
}

#[derive(Debug, Clone)]
struct NodeAcc {
    node_id: String,
    kind: String,
    name: String,
    parent_id: Option<String>,
    /// Index of the parent in `RunProjection::nodes`.
    parent: Option<usize>,
    /// The parent was named by an event (not the root-agent default): it stays.
    explicit_parent: bool,
    hinted: bool,
    instances: Vec<InstanceAcc>,
}

/// The folded state of a run. Build it with [`project`] (everything, for node
/// detail) or event by event with [`RunProjection::for_graph`] and
/// [`RunProjection::apply_event`] (graph fields only, for big runs).
#[derive(Debug, Clone)]
pub struct RunProjection {
    run_id: String,
    nodes: Vec<NodeAcc>,
    index: HashMap<String, usize>,
    /// The run's root agent: the first `agent` node started without a parent;
    /// nodes created later without a parent go under it.
    root: Option<usize>,
    /// pause id → (node index, instance index)
    pauses: HashMap<String, (usize, usize)>,
    run_finished: bool,
    /// Keep what only node detail shows (inputs, outputs, error detail, tool
    /// arguments, pause records, `node.started` extras).
    detail: bool,
    /// What the events applied since the last [`RunProjection::take_delta`]
    /// touched, once [`RunProjection::track_changes`] turned tracking on.
    changes: Option<Changes>,
    /// Instances over all nodes.
    instance_total: usize,
    /// Epoch ms of the earliest event applied.
    first_ts: Option<i64>,
    /// Epoch ms of `run.finished`.
    finished_ts: Option<i64>,
}

/// The string field `key` of a JSON object, if it is one.
fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The string field `key` if it is present and not empty.
fn non_empty_field(v: &Value, key: &str) -> Option<String> {
    str_field(v, key).filter(|value| !value.is_empty())
}

/// The model a `node.started` payload names: its `model` field, else `input.model` (what
/// `graphmind-ai`'s OpenAI and Anthropic integrations send).
pub fn model_of_started(payload: &Value) -> Option<String> {
    non_empty_field(payload, "model").or_else(|| {
        payload
            .get("input")
            .and_then(|i| non_empty_field(i, "model"))
    })
}

/// The model a `node.finished` payload names: `usage.model`, else `output.model` (the
/// LangChain integration's), else its `model` field. It wins over the started one: a
/// response names the exact (dated) model that answered.
pub fn model_of_finished(payload: &Value) -> Option<String> {
    payload
        .get("usage")
        .and_then(|u| non_empty_field(u, "model"))
        .or_else(|| {
            payload
                .get("output")
                .and_then(|o| non_empty_field(o, "model"))
        })
        .or_else(|| non_empty_field(payload, "model"))
}

/// The tool-call id a `node.started` payload names: its `toolCallId`, else the span's
/// `gen_ai.tool.call.id` (an OpenTelemetry `execute_tool` span's attributes).
pub fn tool_call_id_of(payload: &Value) -> Option<String> {
    non_empty_field(payload, "toolCallId").or_else(|| {
        payload
            .get("otel")
            .and_then(|o| o.get("attributes"))
            .and_then(|a| non_empty_field(a, "gen_ai.tool.call.id"))
    })
}

/// Kind and name read from a `kind:name` node id, or `custom` and the whole id.
fn kind_and_name_of(node_id: &str) -> (String, String) {
    match node_id.split_once(':') {
        Some((kind, name)) if !kind.is_empty() => (kind.to_owned(), name.to_owned()),
        _ => ("custom".to_owned(), node_id.to_owned()),
    }
}

fn new_instance(id: String) -> InstanceAcc {
    InstanceAcc {
        detail: InstanceDetail {
            summary: GraphInstance {
                instance_id: id,
                status: NodeState::Running,
                started_at: None,
                finished_at: None,
                duration_ms: None,
                held_ms: None,
                work_ms: None,
                holds: Vec::new(),
                usage: None,
                model: None,
                tool_call_id: None,
                tokens: String::new(),
                reasoning: String::new(),
                injected: false,
                error: None,
                first_seq: None,
            },
            input: None,
            output: None,
            error_detail: None,
            tool_args: String::new(),
            pauses: Vec::new(),
            started: None,
            finish_reason: None,
            transcript: None,
        },
        finished: false,
        errored: false,
        open_pauses: 0,
        error_at: None,
    }
}

/// Pushes an instance, growing the vector by doubling from one: most nodes run
/// once, and a first plain `push` would reserve room for four instances of
/// ~600 bytes each — most of the memory of a big run's graph.
fn push_instance(total: &mut usize, instances: &mut Vec<InstanceAcc>, instance: InstanceAcc) {
    *total += 1;
    if instances.len() == instances.capacity() {
        instances.reserve_exact(instances.len().max(1));
    }
    instances.push(instance);
}

impl RunProjection {
    fn empty(run_id: &str, detail: bool) -> RunProjection {
        RunProjection {
            run_id: run_id.to_owned(),
            nodes: Vec::new(),
            index: HashMap::new(),
            root: None,
            pauses: HashMap::new(),
            run_finished: false,
            detail,
            changes: None,
            instance_total: 0,
            first_ts: None,
            finished_ts: None,
        }
    }

    /// An empty projection that keeps only what [`RunProjection::graph`] shows:
    /// feed it a run's events in `seq` order with [`RunProjection::apply_event`].
    /// Its [`RunProjection::node`] answers lack inputs, outputs and pauses.
    pub fn for_graph(run_id: &str) -> RunProjection {
        Self::empty(run_id, false)
    }

    /// An empty projection that keeps everything (what [`project`] builds): feed it a
    /// run's events in `seq` order with [`RunProjection::apply_event`].
    pub fn for_detail(run_id: &str) -> RunProjection {
        Self::empty(run_id, true)
    }

    /// Folds one stored event (`payload` = its payload JSON text) into the graph.
    /// Events must come in `seq` order; an unparseable payload is skipped.
    pub fn apply_event(&mut self, type_name: &str, seq: u64, ts: i64, payload: &str) {
        let Ok(payload) = serde_json::from_str::<Value>(payload) else {
            return;
        };
        self.apply_value(type_name, seq, ts, payload);
    }

    /// The run's held time and work time: the one place they are summed.
    pub fn times(&self) -> RunTimes {
        // The holds themselves, not the instances' `heldMs`: an app may count a child's
        // hold in its parents' too (graphmind-ai does).
        let held_ms: f64 = self
            .nodes
            .iter()
            .flat_map(|n| &n.instances)
            .filter_map(|i| released_hold_ms(&i.detail.summary.holds))
            // Not `sum`: an empty f64 sum is -0.0.
            .fold(0.0, |total, held| total + held);
        let work_ms = match (self.first_ts, self.finished_ts) {
            (Some(start), Some(end)) if self.run_finished => Some(crate::model::run_work_ms(
                crate::model::run_duration_ms(start, Some(end), end),
                held_ms as i64,
            ) as f64),
            _ => None,
        };
        RunTimes { held_ms, work_ms }
    }

    /// The node `node_id`, created (kind and name from its id, under the root
    /// agent if there is one) when no event named it before.
    fn node_mut(&mut self, node_id: &str) -> usize {
        if let Some(&i) = self.index.get(node_id) {
            return i;
        }
        let (kind, name) = kind_and_name_of(node_id);
        let parent = self.root;
        let i = self.nodes.len();
        self.nodes.push(NodeAcc {
            node_id: node_id.to_owned(),
            kind,
            name,
            parent_id: parent.map(|p| self.nodes[p].node_id.clone()),
            parent,
            explicit_parent: false,
            hinted: false,
            instances: Vec::new(),
        });
        self.index.insert(node_id.to_owned(), i);
        self.touch_node(i);
        i
    }

    /// Applies the `parentId` a `node.started` or a hint names: the first
    /// explicit parent wins (it replaces the root-agent default), a parent that
    /// would make a cycle is refused, and an unseen parent becomes a pending node.
    fn set_parent(&mut self, ni: usize, parent_id: Option<String>, hinted: bool) {
        let Some(parent_id) = parent_id.filter(|p| !p.is_empty() && *p != self.nodes[ni].node_id)
        else {
            return;
        };
        if self.nodes[ni].explicit_parent {
            return;
        }
        let known = self.index.contains_key(&parent_id);
        let pi = self.node_mut(&parent_id);
        if !known && hinted {
            self.nodes[pi].hinted = true;
        }
        if self.is_ancestor(ni, pi) {
            return;
        }
        let node = &mut self.nodes[ni];
        node.parent = Some(pi);
        node.parent_id = Some(parent_id);
        node.explicit_parent = true;
        self.touch_node(ni);
    }

    /// Whether `ancestor` is `node` or one of its ancestors.
    fn is_ancestor(&self, ancestor: usize, node: usize) -> bool {
        let mut at = Some(node);
        // A bounded walk: the parent links never form a cycle, but stay safe.
        for _ in 0..=self.nodes.len() {
            match at {
                Some(i) if i == ancestor => return true,
                Some(i) => at = self.nodes[i].parent,
                None => return false,
            }
        }
        true
    }

    /// The instance an event other than `node.started` refers to: the one with
    /// its `instanceId` (created if unknown), else the latest unfinished one,
    /// else the latest one, else a new one.
    fn instance_for(&mut self, node: usize, instance_id: Option<&str>) -> usize {
        let n = &mut self.nodes[node];
        if let Some(id) = instance_id {
            if let Some(i) = n
                .instances
                .iter()
                .rposition(|inst| inst.detail.summary.instance_id == id)
            {
                return i;
            }
            push_instance(
                &mut self.instance_total,
                &mut n.instances,
                new_instance(id.to_owned()),
            );
            return n.instances.len() - 1;
        }
        if let Some(i) = n.instances.iter().rposition(|inst| !inst.finished) {
            return i;
        }
        if !n.instances.is_empty() {
            return n.instances.len() - 1;
        }
        let id = format!("{}#1", n.node_id);
        push_instance(&mut self.instance_total, &mut n.instances, new_instance(id));
        0
    }

    fn apply_value(&mut self, type_name: &str, seq: u64, ts: i64, payload: Value) {
        self.first_ts = Some(self.first_ts.map_or(ts, |first| first.min(ts)));
        match type_name {
            "graph.hint" => self.on_graph_hint(&payload),
            "node.started" => self.on_node_started(seq, ts, payload),
            "node.token" => self.on_node_token(&payload),
            "node.finished" => self.on_node_finished(ts, payload),
            "node.error" => self.on_node_error(ts, payload),
            "exec.paused" => self.on_exec_paused(ts, &payload),
            "exec.resumed" => self.on_exec_resumed(ts, &payload),
            "run.finished" => self.on_run_finished(ts),
            _ => {}
        }
    }

    /// Applies one `graph.hint` event.
    fn on_graph_hint(&mut self, payload: &Value) {
        if let Some(nodes) = payload.get("nodes").and_then(Value::as_array) {
            for hint in nodes {
                let Some(id) = hint.get("nodeId").and_then(Value::as_str) else {
                    continue;
                };
                let i = self.node_mut(id);
                self.touch_node(i);
                let node = &mut self.nodes[i];
                node.hinted = true;
                if node.instances.is_empty() {
                    if let Some(kind) = non_empty_field(hint, "kind") {
                        node.kind = kind;
                    }
                    if let Some(name) = non_empty_field(hint, "name") {
                        node.name = name;
                    }
                }
                self.set_parent(i, str_field(hint, "parentId"), true);
            }
        }
    }

    /// Applies one `node.started` event.
    fn on_node_started(&mut self, seq: u64, ts: i64, mut payload: Value) {
        let detail = self.detail;
        let Some(id) = str_field(&payload, "nodeId") else {
            return;
        };
        let ni = self.node_mut(&id);
        self.set_parent(ni, str_field(&payload, "parentId"), false);
        let node = &mut self.nodes[ni];
        if let Some(kind) = non_empty_field(&payload, "kind") {
            node.kind = kind;
        }
        if let Some(name) = non_empty_field(&payload, "name") {
            node.name = name;
        }
        if self.root.is_none() && node.kind == "agent" && node.parent.is_none() {
            self.root = Some(ni);
        }
        let node = &mut self.nodes[ni];
        let inst_id = str_field(&payload, "instanceId")
            .unwrap_or_else(|| format!("{id}#{}", node.instances.len() + 1));
        // A second node.started for a live instance (a retry) reuses it.
        let ii = match node
            .instances
            .iter()
            .rposition(|i| i.detail.summary.instance_id == inst_id)
        {
            Some(i) => i,
            None => {
                push_instance(
                    &mut self.instance_total,
                    &mut node.instances,
                    new_instance(inst_id),
                );
                node.instances.len() - 1
            }
        };
        self.touch_instance(ni, ii);
        let inst = &mut self.nodes[ni].instances[ii];
        let d = &mut inst.detail;
        d.summary.started_at.get_or_insert(ts);
        d.summary.first_seq.get_or_insert(seq);
        if let Some(model) = model_of_started(&payload) {
            d.summary.model.get_or_insert(model);
        }
        if let Some(call) = tool_call_id_of(&payload) {
            d.summary.tool_call_id.get_or_insert(call);
        }
        if detail && let Some(obj) = payload.as_object_mut() {
            d.input = obj.remove("input");
            for key in ["nodeId", "kind", "name", "instanceId", "parentId"] {
                obj.remove(key);
            }
            if !obj.is_empty() {
                d.started = Some(payload);
            }
        }
    }

    /// The instance an event about node `node_id` names (`payload.instanceId`), created
    /// when new, marked as touched by this event: `(node index, instance index)`.
    fn touched_instance(&mut self, node_id: &str, payload: &Value) -> (usize, usize) {
        let ni = self.node_mut(node_id);
        let ii = self.instance_for(ni, payload.get("instanceId").and_then(Value::as_str));
        self.touch_instance(ni, ii);
        (ni, ii)
    }

    /// Applies one `node.token` event.
    fn on_node_token(&mut self, payload: &Value) {
        let detail = self.detail;
        let Some(id) = str_field(payload, "nodeId") else {
            return;
        };
        let (ni, ii) = self.touched_instance(&id, payload);
        let d = &mut self.nodes[ni].instances[ii].detail;
        if let Some(deltas) = payload.get("deltas").and_then(Value::as_array) {
            for delta in deltas {
                let v = delta.get("v").and_then(Value::as_str).unwrap_or_default();
                match delta.get("t").and_then(Value::as_str) {
                    Some("reasoning") => d.summary.reasoning.push_str(v),
                    Some("tool-args") => {
                        if detail {
                            d.tool_args.push_str(v);
                        }
                    }
                    _ => d.summary.tokens.push_str(v),
                }
            }
        }
    }

    /// Applies one `node.finished` event.
    fn on_node_finished(&mut self, ts: i64, mut payload: Value) {
        let detail = self.detail;
        let Some(id) = str_field(&payload, "nodeId") else {
            return;
        };
        let (ni, ii) = self.touched_instance(&id, &payload);
        let inst = &mut self.nodes[ni].instances[ii];
        inst.finished = true;
        let d = &mut inst.detail;
        let status = payload
            .get("status")
            .and_then(Value::as_str)
            .map_or(NodeState::Ok, NodeState::from_wire);
        d.summary.status = status;
        d.summary.finished_at = Some(ts);
        d.summary.duration_ms = payload.get("durationMs").and_then(Value::as_f64);
        if let Some(h) = payload.get("heldMs").and_then(Value::as_f64) {
            d.summary.held_ms = Some(h);
        }
        settle_times(&mut d.summary, Some(ts));
        d.summary.injected = payload.get("injected").and_then(Value::as_bool) == Some(true);
        if let Some(model) = model_of_finished(&payload) {
            d.summary.model = Some(model);
        }
        let obj = payload.as_object_mut();
        d.summary.usage = obj.as_ref().and_then(|o| o.get("usage")).cloned();
        if detail {
            d.finish_reason = obj
                .as_ref()
                .and_then(|o| o.get("finishReason"))
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if detail && let Some(output) = obj.and_then(|o| o.remove("output")) {
            d.output = Some(output);
        }
        if status == NodeState::Ok {
            // Recovered (retry succeeded or a value was injected).
            inst.errored = false;
        }
    }

    /// Applies one `node.error` event.
    fn on_node_error(&mut self, ts: i64, mut payload: Value) {
        let detail = self.detail;
        let Some(id) = str_field(&payload, "nodeId") else {
            return;
        };
        let (ni, ii) = self.touched_instance(&id, &payload);
        let inst = &mut self.nodes[ni].instances[ii];
        inst.errored = true;
        let d = &mut inst.detail;
        if let Some(h) = payload.get("heldMs").and_then(Value::as_f64) {
            d.summary.held_ms = Some(h);
        }
        let ended = if inst.finished {
            d.summary.finished_at
        } else {
            Some(ts)
        };
        settle_times(&mut d.summary, ended);
        inst.error_at = Some(ts);
        if let Some(err) = payload.as_object_mut().and_then(|o| o.remove("error")) {
            d.summary.error = Some(ErrorBrief {
                name: str_field(&err, "name").unwrap_or_default(),
                message: str_field(&err, "message").unwrap_or_default(),
            });
            if detail {
                d.error_detail = Some(err);
            }
        }
    }

    /// Applies one `exec.paused` event.
    fn on_exec_paused(&mut self, ts: i64, payload: &Value) {
        let detail = self.detail;
        let (Some(id), Some(pause_id)) =
            (str_field(payload, "nodeId"), str_field(payload, "pauseId"))
        else {
            return;
        };
        let (ni, ii) = self.touched_instance(&id, payload);
        let inst = &mut self.nodes[ni].instances[ii];
        inst.open_pauses += 1;
        inst.detail.summary.holds.push(HoldSpan {
            since: ts,
            until: None,
        });
        if detail {
            inst.detail.pauses.push(PauseRecord {
                pause_id: pause_id.clone(),
                point: str_field(payload, "point").unwrap_or_default(),
                reason: str_field(payload, "reason"),
                since: ts,
                resumed_at: None,
                action: None,
                principal: None,
            });
        }
        self.pauses.insert(pause_id, (ni, ii));
    }

    /// Applies one `exec.resumed` event.
    fn on_exec_resumed(&mut self, ts: i64, payload: &Value) {
        let Some(pause_id) = str_field(payload, "pauseId") else {
            return;
        };
        if let Some((ni, ii)) = self.pauses.remove(&pause_id) {
            self.touch_instance(ni, ii);
            let inst = &mut self.nodes[ni].instances[ii];
            inst.open_pauses = inst.open_pauses.saturating_sub(1);
            let holds = &mut inst.detail.summary.holds;
            if let Some(h) = holds.iter_mut().rev().find(|h| h.until.is_none()) {
                h.until = Some(ts);
            }
            let ended = inst.detail.summary.finished_at.or(inst.error_at);
            settle_times(&mut inst.detail.summary, ended);
            if let Some(p) = inst
                .detail
                .pauses
                .iter_mut()
                .rev()
                .find(|p| p.pause_id == pause_id)
            {
                p.resumed_at = Some(ts);
                p.action = str_field(payload, "action");
                p.principal = payload.get("principal").cloned();
            }
        }
    }

    /// Applies one `run.finished` event.
    fn on_run_finished(&mut self, ts: i64) {
        self.run_finished = true;
        self.finished_ts = Some(ts);
        // A held instance is no longer `paused` once its run finished.
        let held: Vec<(usize, usize)> = self.pauses.values().copied().collect();
        for (ni, ii) in held {
            self.touch_instance(ni, ii);
        }
    }

    fn instance_state(inst: &InstanceAcc, run_open: bool) -> NodeState {
        if inst.open_pauses > 0 && run_open && !inst.finished {
            NodeState::Paused
        } else if inst.finished {
            inst.detail.summary.status
        } else if inst.errored {
            NodeState::Error
        } else {
            NodeState::Running
        }
    }

    fn aggregate(states: &[NodeState], hinted: bool) -> NodeState {
        if states.is_empty() {
            return if hinted {
                NodeState::Hinted
            } else {
                NodeState::Pending
            };
        }
        if states.contains(&NodeState::Paused) {
            NodeState::Paused
        } else if states.contains(&NodeState::Running) {
            NodeState::Running
        } else {
            states.last().copied().unwrap_or(NodeState::Ok)
        }
    }

    fn finished_instances(&self, ni: usize) -> Vec<InstanceDetail> {
        self.nodes[ni]
            .instances
            .iter()
            .map(|inst| {
                let mut d = inst.detail.clone();
                d.summary.status = Self::instance_state(inst, !self.run_finished);
                d
            })
            .collect()
    }

    /// The graph view: every node with its instances, and parent → child edges.
    pub fn graph(&self) -> RunGraph {
        self.clone_graph_fields().into_graph()
    }

    /// A copy holding only the graph fields of every instance.
    fn clone_graph_fields(&self) -> RunProjection {
        let nodes = self
            .nodes
            .iter()
            .map(|n| NodeAcc {
                node_id: n.node_id.clone(),
                kind: n.kind.clone(),
                name: n.name.clone(),
                parent_id: n.parent_id.clone(),
                parent: n.parent,
                explicit_parent: n.explicit_parent,
                hinted: n.hinted,
                instances: n
                    .instances
                    .iter()
                    .map(|inst| {
                        let mut copy = new_instance(String::new());
                        copy.detail.summary = inst.detail.summary.clone();
                        copy.finished = inst.finished;
                        copy.errored = inst.errored;
                        copy.open_pauses = inst.open_pauses;
                        copy
                    })
                    .collect(),
            })
            .collect();
        RunProjection {
            run_id: self.run_id.clone(),
            nodes,
            index: self.index.clone(),
            root: self.root,
            pauses: HashMap::new(),
            run_finished: self.run_finished,
            detail: false,
            changes: None,
            instance_total: self.instance_total,
            first_ts: self.first_ts,
            finished_ts: self.finished_ts,
        }
    }

    /// The graph view, consuming the projection (no copies of its strings).
    pub fn into_graph(self) -> RunGraph {
        let run_open = !self.run_finished;
        let times = self.times();
        let index = self.index;
        let mut nodes = Vec::with_capacity(self.nodes.len());
        let mut edges = Vec::new();
        for n in self.nodes {
            let instances: Vec<GraphInstance> = n
                .instances
                .into_iter()
                .map(|inst| {
                    let status = Self::instance_state(&inst, run_open);
                    let mut summary = inst.detail.summary;
                    summary.status = status;
                    summary
                })
                .collect();
            let states: Vec<NodeState> = instances.iter().map(|i| i.status).collect();
            let hinted = n.hinted && instances.is_empty();
            if let Some(edge) = Self::edge_of(&n.node_id, n.parent_id.as_ref(), &index) {
                edges.push(edge);
            }
            let label = node_label(
                &n.kind,
                &n.name,
                instances.iter().map(|i| i.model.as_deref()),
            );
            nodes.push(GraphNode {
                label,
                node_id: n.node_id,
                kind: n.kind,
                name: n.name,
                parent_id: n.parent_id,
                status: Self::aggregate(&states, n.hinted),
                hinted,
                instances,
            });
        }
        RunGraph {
            run_id: self.run_id,
            nodes,
            edges,
            times,
        }
    }

    /// The graph view and every node's full detail (what [`RunProjection::node`] answers,
    /// in the graph's node order), consuming the projection: the details move out, only
    /// the graph fields are copied.
    pub fn into_details(self) -> (RunGraph, Vec<NodeDetail>) {
        let graph = self.graph();
        let run_open = !self.run_finished;
        let run_id = self.run_id;
        let details = self
            .nodes
            .into_iter()
            .map(|n| {
                let label = label_of(&n.kind, &n.name, &n.instances);
                let mut instances: Vec<InstanceDetail> = n
                    .instances
                    .into_iter()
                    .map(|inst| {
                        let status = Self::instance_state(&inst, run_open);
                        let mut detail = inst.detail;
                        detail.summary.status = status;
                        detail
                    })
                    .collect();
                attach_transcripts(&n.kind, &mut instances);
                let states: Vec<NodeState> = instances.iter().map(|i| i.summary.status).collect();
                NodeDetail {
                    label,
                    run_id: run_id.clone(),
                    status: Self::aggregate(&states, n.hinted),
                    hinted: n.hinted && instances.is_empty(),
                    node_id: n.node_id,
                    kind: n.kind,
                    name: n.name,
                    parent_id: n.parent_id,
                    instances,
                }
            })
            .collect();
        (graph, details)
    }

    /// The parent → child edge of a node whose parent is in the graph.
    fn edge_of(
        node_id: &str,
        parent_id: Option<&String>,
        index: &HashMap<String, usize>,
    ) -> Option<GraphEdge> {
        let parent = parent_id?;
        (index.contains_key(parent) && parent != node_id).then(|| GraphEdge {
            source: parent.clone(),
            target: node_id.to_owned(),
        })
    }

    /// Full detail of one node, or `None` if no event names it.
    pub fn node(&self, node_id: &str) -> Option<NodeDetail> {
        let &ni = self.index.get(node_id)?;
        let n = &self.nodes[ni];
        let mut instances = self.finished_instances(ni);
        attach_transcripts(&n.kind, &mut instances);
        let states: Vec<NodeState> = instances.iter().map(|i| i.summary.status).collect();
        Some(NodeDetail {
            label: label_of(&n.kind, &n.name, &n.instances),
            run_id: self.run_id.clone(),
            node_id: n.node_id.clone(),
            kind: n.kind.clone(),
            name: n.name.clone(),
            parent_id: n.parent_id.clone(),
            status: Self::aggregate(&states, n.hinted),
            hinted: n.hinted && instances.is_empty(),
            instances,
        })
    }
}

/// Folds a run's events (in `seq` order) into its logical graph. Pure; never fails.
pub fn project(run_id: &str, events: &[StoredEvent]) -> RunProjection {
    let mut p = RunProjection::empty(run_id, true);
    for ev in events {
        if let Ok(payload) = serde_json::from_str::<Value>(ev.payload.get()) {
            p.apply_value(&ev.type_name, ev.seq, ev.ts, payload);
        }
    }
    p
}
