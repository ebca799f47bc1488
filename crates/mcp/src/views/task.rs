//! `get_task_graph`'s structured answer: a session's summary, critical path, failures and
//! files (and, with `detail: full`, its nodes).

use mindgate_pricing::Cost;
use mindgate_taskgraph::graph::{
    Counts, FinalTurnReason, Headline, Node, NodeRef, NodeType, Status, TokenTotals, ToolCount,
};
use mindgate_taskgraph::report::node_error;
use mindgate_taskgraph::{NodeMeta, TaskGraph, TaskReport};
use serde::Serialize;
use serde_json::Value;

use crate::output_limits::{cut_str, preview};

/// Nodes listed by `get_task_graph` with `detail: full`.
pub const FULL_MAX_NODES: usize = 300;
/// Files listed by `get_task_graph`.
pub const MAX_FILES: usize = 200;

/// `get_task_graph`'s structured content.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskGraphView<'a> {
    /// The task id.
    pub task_id: &'a str,
    /// The session id.
    pub session_id: &'a str,
    /// The agent's own description of itself, when the session has one.
    pub agent: Value,
    /// The title, cut at 500 characters.
    pub title: String,
    /// The workspace.
    pub workspace: &'a str,
    /// The working directory.
    pub cwd: Option<&'a str>,
    /// The task's status.
    pub status: Status,
    /// First event.
    pub start_time: Option<i64>,
    /// Last event, once the task ended.
    pub end_time: Option<i64>,
    /// Wall time.
    pub duration_ms: i64,
    /// The session is still being written.
    pub live: bool,
    /// Node counts.
    pub counts: &'a Counts,
    /// The headline figures.
    pub headline: &'a Headline,
    /// Time waiting for the person.
    pub waiting_ms: i64,
    /// Token totals.
    pub tokens: &'a TokenTotals,
    /// The session's cost.
    pub cost: Cost,
    /// The critical path.
    pub critical_path: CriticalPathView<'a>,
    /// Failed steps, each with the message it (or its phase) recorded.
    pub failures: Vec<NodeRefView<'a>>,
    /// Retried steps (the first 20).
    pub retried: Vec<NodeRefView<'a>>,
    /// The slowest steps.
    pub slowest: Vec<NodeRefView<'a>>,
    /// The first [`MAX_FILES`] files changed.
    pub files_changed: &'a [String],
    /// Every file changed.
    pub files_changed_total: usize,
    /// The most used tools.
    pub most_used_tools: &'a [ToolCount],
    /// Why the last turn ended.
    pub final_turn_reason: &'a FinalTurnReason,
    /// Nodes in the graph.
    pub node_count: usize,
    /// The first [`FULL_MAX_NODES`] nodes (`detail: full` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<TaskNodeView<'a>>>,
    /// Nodes were left out (`detail: full` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes_truncated: Option<bool>,
}

/// The critical path: its weight, the task's duration and its steps.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriticalPathView<'a> {
    /// Agent work on the path.
    pub duration_ms: i64,
    /// The task's duration.
    pub total_ms: i64,
    /// The steps in order.
    pub nodes: Vec<CriticalStepView<'a>>,
}

/// One step of the critical path.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriticalStepView<'a> {
    /// The node id.
    pub id: &'a str,
    /// Its name, cut at 200 characters.
    pub name: String,
    /// Its type (none for a node the graph lacks).
    #[serde(rename = "type")]
    pub node_type: Option<NodeType>,
    /// Its status.
    pub status: Option<Status>,
    /// Its duration.
    pub duration_ms: Option<i64>,
    /// It carries weight on the path.
    pub hot: bool,
}

/// A step of the summary lists (failed, retried, slowest): the core's [`NodeRef`] with
/// its name cut at 200 characters and its error at 500, keyed in camelCase like every
/// MCP answer (the core's own serialization is the snake_case of the task-graph format).
#[derive(Debug)]
pub struct NodeRefView<'a> {
    node: &'a NodeRef,
    name: String,
    error: Option<String>,
}

impl Serialize for NodeRefView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let node = self.node;
        let mut out = serializer.serialize_struct("NodeRefView", 7)?;
        out.serialize_field("id", &*node.id)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("type", &node.node_type)?;
        out.serialize_field("status", &node.status)?;
        out.serialize_field("durationMs", &node.duration_ms)?;
        out.serialize_field("attempts", &node.attempts)?;
        out.serialize_field("error", &self.error)?;
        out.end()
    }
}

/// One node of the graph (`detail: full`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskNodeView<'a> {
    /// The node id.
    pub id: &'a str,
    /// Its type.
    #[serde(rename = "type")]
    pub node_type: NodeType,
    /// Its name, cut at 200 characters.
    pub name: String,
    /// Its status.
    pub status: Status,
    /// Its duration.
    pub duration_ms: i64,
    /// Its parent.
    pub parent_id: Option<&'a str>,
    /// Its error, cut at 300 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tool it called (tool nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<&'a str>,
    /// The tool's arguments, previewed (tool nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

impl<'a> NodeRefView<'a> {
    /// The view of `r`, its error cut at 500 characters.
    pub fn new(r: &'a NodeRef) -> Self {
        Self::with_error(r, r.error.as_deref().map(|e| cut_str(e, 500)))
    }

    fn with_error(node: &'a NodeRef, error: Option<String>) -> Self {
        NodeRefView {
            node,
            name: cut_str(&node.name, 200),
            error,
        }
    }
}

impl<'a> TaskNodeView<'a> {
    fn new(n: &'a Node) -> Self {
        let tool = match &n.meta {
            NodeMeta::Tool(t) => Some(t),
            _ => None,
        };
        TaskNodeView {
            id: &n.id,
            node_type: n.node_type,
            name: cut_str(&n.name, 200),
            status: n.status,
            duration_ms: n.duration_ms,
            parent_id: n.parent_id.as_deref(),
            error: node_error(&n.meta).map(|e| cut_str(&e, 300)),
            tool_name: tool.map(|t| t.tool_name.as_str()),
            arguments: tool.map(|t| preview(&t.arguments, 200).0),
        }
    }
}

impl<'a> TaskGraphView<'a> {
    /// The view of `g` (read through `report`), costed at `cost`; `full` lists the nodes.
    pub fn new(g: &'a TaskGraph, report: &TaskReport<'a>, cost: Cost, full: bool) -> Self {
        let s = &g.summary;
        let name_of = |id: &str| report.node(id).map(|n| n.name.clone()).unwrap_or_default();
        let critical = report
            .critical_path()
            .map(|step| CriticalStepView {
                id: step.id,
                name: cut_str(&name_of(step.id), 200),
                node_type: step.node.map(|n| n.node_type),
                status: step.node.map(|n| n.status),
                duration_ms: step.node.map(|n| n.duration_ms),
                hot: step.hot,
            })
            .collect();
        // A failed step without its own message borrows the one its node (or its phase's
        // end) recorded.
        let failures = s
            .failed_steps
            .iter()
            .map(|r| NodeRefView::with_error(r, report.failure_text(r).map(|e| cut_str(&e, 500))))
            .collect();
        let nodes = full.then(|| {
            g.nodes
                .iter()
                .take(FULL_MAX_NODES)
                .map(TaskNodeView::new)
                .collect()
        });
        TaskGraphView {
            task_id: &g.task_id,
            session_id: &g.session_id,
            agent: report.agent().cloned().unwrap_or(Value::Null),
            title: cut_str(&g.title, 500),
            workspace: &g.workspace,
            cwd: g.cwd.as_deref(),
            status: g.status,
            start_time: g.start_time,
            end_time: g.end_time,
            duration_ms: g.duration_ms,
            live: g.meta.live,
            counts: &s.counts,
            headline: &s.headline,
            waiting_ms: s.waiting_ms,
            tokens: &s.tokens,
            cost,
            critical_path: CriticalPathView {
                duration_ms: g.critical_path.duration_ms,
                total_ms: g.critical_path.total_ms,
                nodes: critical,
            },
            failures,
            retried: s
                .retried_steps
                .iter()
                .take(20)
                .map(NodeRefView::new)
                .collect(),
            slowest: s.slowest_steps.iter().map(NodeRefView::new).collect(),
            files_changed: &s.files_changed[..s.files_changed.len().min(MAX_FILES)],
            files_changed_total: s.files_changed.len(),
            most_used_tools: &s.most_used_tools,
            final_turn_reason: &g.meta.final_turn_reason,
            node_count: g.nodes.len(),
            nodes,
            nodes_truncated: full.then_some(g.nodes.len() > FULL_MAX_NODES),
        }
    }
}
