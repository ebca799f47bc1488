//! The data an exported page carries: an allow-list of what the viewer reads, built field
//! by field from the store's shapes with [`Redaction`] applied while building.
//!
//! Nothing of a stored event reaches the file unless a field below names it: run metadata,
//! the SDK, the other fields of `node.started` (for an OpenTelemetry run its
//! `otel.attributes`), an error's fields other than name, message and stack, a usage's
//! fields other than its token counts and a principal's other than its kind are never
//! written. A field the store gains later stays out of the file until it is added here.

use mindgate_pricing::Cost;
use mindgate_store::projection::{
    ErrorBrief, GraphInstance, GraphNode, HoldSpan, InstanceDetail, NodeState, PauseRecord,
};
use mindgate_store::report::{ReportError, SlowExecution, TokenReport};
use mindgate_store::{
    Counts, NodeDetail, RunReport, RunState, RunSummary, Transcript, UsageTotals, transcript_of,
};
use serde::Serialize;
use serde_json::{Map, Value};

use super::Redaction;
use super::tool_calls::scrub_tool_calls;

/// The run summary the run list and the run bar read.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageRun {
    id: String,
    app: String,
    name: String,
    status: RunState,
    started_at: i64,
    finished_at: Option<i64>,
    duration_ms: Option<i64>,
    held_ms: i64,
    work_ms: Option<i64>,
    counts: Counts,
    usage: UsageTotals,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<Cost>,
    source: String,
    last_seq: Option<u64>,
    last_event_at: i64,
}

impl PageRun {
    pub(super) fn new(run: &RunSummary) -> PageRun {
        PageRun {
            id: run.id.clone(),
            app: run.app.clone(),
            name: run.name.clone(),
            status: run.status,
            started_at: run.started_at,
            finished_at: run.finished_at,
            duration_ms: run.duration_ms,
            held_ms: run.held_ms,
            work_ms: run.work_ms,
            counts: run.counts,
            usage: run.usage,
            cost: run.cost.clone(),
            source: run.source.clone(),
            last_seq: run.last_seq,
            last_event_at: run.last_event_at,
        }
    }
}

/// One execution as the graph draws it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageInstance {
    instance_id: String,
    status: NodeState,
    started_at: Option<i64>,
    finished_at: Option<i64>,
    duration_ms: Option<f64>,
    held_ms: Option<f64>,
    work_ms: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    holds: Vec<HoldSpan>,
    usage: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    tokens: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    reasoning: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    injected: bool,
    error: Option<ErrorBrief>,
    first_seq: Option<u64>,
}

/// What the switches hide of one node, by its kind.
#[derive(Debug, Clone, Copy)]
struct Hidden {
    input: bool,
    output: bool,
    streamed_args: bool,
}

impl Hidden {
    fn of(kind: &str, hide: Redaction) -> Hidden {
        let tool = kind == "tool";
        Hidden {
            input: hide.inputs || (tool && hide.tool_args),
            output: hide.outputs || (tool && hide.tool_results),
            // A tool's streamed arguments are its input; an LLM's are part of its output.
            streamed_args: hide.tool_args || if tool { hide.inputs } else { hide.outputs },
        }
    }
}

impl PageInstance {
    /// Takes `inst` apart (its texts are moved, not copied).
    fn new(inst: GraphInstance, hidden: Hidden) -> PageInstance {
        PageInstance {
            instance_id: inst.instance_id,
            status: inst.status,
            started_at: inst.started_at,
            finished_at: inst.finished_at,
            duration_ms: inst.duration_ms,
            held_ms: inst.held_ms,
            work_ms: inst.work_ms,
            holds: inst.holds,
            usage: inst.usage.as_ref().and_then(usage_counts),
            model: inst.model,
            tool_call_id: inst.tool_call_id,
            tokens: if hidden.output {
                String::new()
            } else {
                inst.tokens
            },
            reasoning: if hidden.output {
                String::new()
            } else {
                inst.reasoning
            },
            injected: inst.injected,
            error: inst.error,
            first_seq: inst.first_seq,
        }
    }
}

/// A node of the graph snapshot.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageNode {
    node_id: String,
    kind: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    parent_id: Option<String>,
    status: NodeState,
    hinted: bool,
    instances: Vec<PageInstance>,
}

impl PageNode {
    /// Takes `node` apart (its texts are moved, not copied).
    pub(super) fn new(node: GraphNode, hide: Redaction) -> PageNode {
        let hidden = Hidden::of(&node.kind, hide);
        PageNode {
            node_id: node.node_id,
            kind: node.kind,
            name: node.name,
            label: node.label,
            parent_id: node.parent_id,
            status: node.status,
            hinted: node.hinted,
            instances: node
                .instances
                .into_iter()
                .map(|i| PageInstance::new(i, hidden))
                .collect(),
        }
    }
}

/// A gate hold of an execution.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PagePause {
    pause_id: String,
    point: String,
    reason: Option<String>,
    since: i64,
    resumed_at: Option<i64>,
    action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    principal: Option<Value>,
}

impl PagePause {
    fn new(pause: PauseRecord) -> PagePause {
        PagePause {
            principal: pause
                .principal
                .as_ref()
                .map(|p| pick(p, &["kind"], Value::is_string)),
            pause_id: pause.pause_id,
            point: pause.point,
            reason: pause.reason,
            since: pause.since,
            resumed_at: pause.resumed_at,
            action: pause.action,
        }
    }
}

/// One execution in full, as the inspector shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageInstanceDetail {
    #[serde(flatten)]
    summary: PageInstance,
    input: Option<Value>,
    output: Option<Value>,
    error_detail: Option<Value>,
    #[serde(skip_serializing_if = "String::is_empty")]
    tool_args: String,
    pauses: Vec<PagePause>,
    /// Of the `node.started` payload's other fields, only `redaction` (counts and key names).
    started: Option<Value>,
    /// The conversation read from what the page keeps (hidden values were never read).
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript: Option<Transcript>,
}

impl PageInstanceDetail {
    /// Takes `inst` apart (its values are moved, not copied).
    fn new(mut inst: InstanceDetail, kind: &str, hide: Redaction) -> PageInstanceDetail {
        let hidden = Hidden::of(kind, hide);
        let scrub = |value: Option<Value>, gone: bool| {
            let mut value = value.filter(|_| !gone)?;
            scrub_tool_calls(&mut value, hide);
            Some(value)
        };
        inst.input = scrub(inst.input.take(), hidden.input);
        inst.output = scrub(inst.output.take(), hidden.output);
        if hidden.output {
            inst.summary.tokens.clear();
            inst.summary.reasoning.clear();
        }
        // Read from the scrubbed values: what is hidden cannot reach the transcript.
        let mut transcript = transcript_of(kind, &inst);
        if let Some(t) = transcript.as_mut() {
            t.usage = t.usage.as_ref().and_then(usage_counts);
        }
        PageInstanceDetail {
            transcript,
            summary: PageInstance::new(inst.summary, hidden),
            input: inst.input,
            output: inst.output,
            error_detail: inst.error_detail.as_ref().map(error_fields),
            tool_args: if hidden.streamed_args {
                String::new()
            } else {
                inst.tool_args
            },
            pauses: inst.pauses.into_iter().map(PagePause::new).collect(),
            started: inst.started.as_ref().and_then(started_redaction),
        }
    }
}

/// `GET /api/runs/:id/nodes/:nodeId` as the page reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageNodeDetail {
    run_id: String,
    node_id: String,
    kind: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    parent_id: Option<String>,
    status: NodeState,
    hinted: bool,
    instances: Vec<PageInstanceDetail>,
}

impl PageNodeDetail {
    /// Takes `detail` apart (its values are moved, not copied).
    pub(super) fn new(detail: NodeDetail, hide: Redaction) -> PageNodeDetail {
        let kind = detail.kind;
        let instances = detail
            .instances
            .into_iter()
            .map(|i| PageInstanceDetail::new(i, &kind, hide))
            .collect();
        PageNodeDetail {
            run_id: detail.run_id,
            node_id: detail.node_id,
            kind,
            name: detail.name,
            label: detail.label,
            parent_id: detail.parent_id,
            status: detail.status,
            hinted: detail.hinted,
            instances,
        }
    }

    /// The node id.
    pub(super) fn node_id(&self) -> &str {
        &self.node_id
    }
}

/// The run report: figures the core computed, and the run's finish error cut to its fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageReport {
    run_id: String,
    run_error: Option<Value>,
    errors: Vec<ReportError>,
    error_count: usize,
    unrecovered_count: usize,
    slowest: Vec<SlowExecution>,
    tokens: TokenReport,
    paused: Vec<String>,
}

impl PageReport {
    pub(super) fn new(report: RunReport) -> PageReport {
        PageReport {
            run_id: report.run_id,
            run_error: report.run_error.as_ref().map(error_fields),
            errors: report.errors,
            error_count: report.error_count,
            unrecovered_count: report.unrecovered_count,
            slowest: report.slowest,
            tokens: report.tokens,
            paused: report.paused,
        }
    }
}

/// The fields of `value` named in `keys` whose values pass `keep`, as an object.
fn pick(value: &Value, keys: &[&str], keep: fn(&Value) -> bool) -> Value {
    let mut out = Map::new();
    for key in keys {
        if let Some(v) = value.get(*key).filter(|v| keep(v)) {
            out.insert((*key).to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

/// An error as the inspector shows it: name, message and stack (strings); a bare string
/// error is its message.
fn error_fields(error: &Value) -> Value {
    match error {
        Value::String(message) => serde_json::json!({ "message": message }),
        _ => pick(error, &["name", "message", "stack"], Value::is_string),
    }
}

/// A usage's token counts (numbers) and its `inclusive` flag.
fn usage_counts(usage: &Value) -> Option<Value> {
    let counts = pick(
        usage,
        &[
            "inputTokens",
            "outputTokens",
            "reasoningTokens",
            "cacheReadTokens",
            "cacheWriteTokens",
        ],
        Value::is_number,
    );
    let mut counts = counts;
    if let (Some(obj), Some(inclusive)) = (
        counts.as_object_mut(),
        usage.get("inclusive").filter(|v| v.is_boolean()),
    ) {
        obj.insert("inclusive".to_owned(), inclusive.clone());
    }
    counts
        .as_object()
        .is_some_and(|o| !o.is_empty())
        .then_some(counts)
}

/// `{redaction: {count, keys}}` of a `node.started` payload's other fields, when it has one.
fn started_redaction(started: &Value) -> Option<Value> {
    let redaction = started.get("redaction")?;
    let count = redaction.get("count").filter(|v| v.is_number());
    let keys: Vec<Value> = redaction
        .get("keys")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter(|k| k.is_string()).cloned().collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(count) = count {
        out.insert("count".to_owned(), count.clone());
    }
    out.insert("keys".to_owned(), Value::Array(keys));
    Some(serde_json::json!({ "redaction": out }))
}
