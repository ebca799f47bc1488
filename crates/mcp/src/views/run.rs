//! `get_run`'s structured answer: the run, its errors, slowest executions, tokens and graph.

use mindgate_pricing::Cost;
use mindgate_store::RunReport;
use mindgate_store::projection::{GraphEdge, GraphNode, NodeState, RunGraph};
use mindgate_store::report::{NodeTokens, SlowExecution};
use serde::Serialize;
use serde_json::Value;

use crate::output::Links;
use crate::output_limits::cut_str;

/// Nodes listed by `get_run` (the rest are counted).
pub const GET_RUN_MAX_NODES: usize = 150;
/// Edges listed by `get_run`.
pub const GET_RUN_MAX_EDGES: usize = 300;
/// Errors listed by `get_run`.
pub const GET_RUN_MAX_ERRORS: usize = 20;
/// Nodes listed under "tokens by node" in `get_run`.
pub const GET_RUN_TOKEN_NODES: usize = 10;

/// `get_run`'s structured content.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView<'a> {
    /// The run summary (see `runs::run_value`).
    pub run: Value,
    /// The `error` of its `run.finished` event, previewed.
    pub run_error: Option<Value>,
    /// The first errors, newest last.
    pub errors: Vec<RunErrorView<'a>>,
    /// Every error of the run.
    pub error_count: usize,
    /// The slowest executions.
    pub slowest: Vec<SlowView<'a>>,
    /// Tokens and cost.
    pub tokens: TokensView<'a>,
    /// Nodes paused now.
    pub paused: Vec<&'a str>,
    /// Time held at gates.
    pub held_ms: f64,
    /// Time worked (the run's duration less the held time), once finished.
    pub work_ms: Option<f64>,
    /// The run graph, bounded.
    pub graph: RunGraphView<'a>,
}

/// One error of a run.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunErrorView<'a> {
    /// The node.
    pub node_id: &'a str,
    /// The instance.
    pub instance_id: &'a str,
    /// Error class.
    pub name: &'a str,
    /// The message, cut at 500 characters.
    pub message: String,
    /// A later execution of the node succeeded.
    pub recovered: bool,
    /// The node in the viewer.
    pub link: String,
}

/// One of the slowest executions, with its viewer link.
#[derive(Debug, Serialize)]
pub struct SlowView<'a> {
    /// The execution as the run report has it.
    #[serde(flatten)]
    pub execution: &'a SlowExecution,
    /// The node in the viewer.
    pub link: String,
}

/// The run's tokens and cost, with the first nodes' share.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokensView<'a> {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache-read tokens.
    pub cache_read_tokens: u64,
    /// Cache-write tokens.
    pub cache_write_tokens: u64,
    /// The run's cost.
    pub cost: &'a Cost,
    /// The first [`GET_RUN_TOKEN_NODES`] nodes by tokens.
    pub by_node: &'a [NodeTokens],
}

/// The run graph, bounded to [`GET_RUN_MAX_NODES`] nodes and [`GET_RUN_MAX_EDGES`] edges.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunGraphView<'a> {
    /// Nodes in the graph.
    pub node_count: usize,
    /// Nodes announced by a hint that never ran.
    pub announced_only_count: usize,
    /// Executions of all nodes.
    pub instance_count: usize,
    /// Edges in the graph.
    pub edge_count: usize,
    /// The first nodes.
    pub nodes: Vec<RunNodeView<'a>>,
    /// The first edges.
    pub edges: &'a [GraphEdge],
    /// Nodes were left out.
    pub nodes_truncated: bool,
    /// Edges were left out.
    pub edges_truncated: bool,
}

/// One node of the run graph.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunNodeView<'a> {
    /// The node.
    pub node_id: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// Its name, cut at 200 characters.
    pub name: String,
    /// Its parent.
    pub parent_id: Option<&'a str>,
    /// Its state.
    pub status: NodeState,
    /// Its executions.
    pub instances: usize,
    /// The sum of its executions' durations.
    pub duration_ms: Option<f64>,
    /// The node in the viewer.
    pub link: String,
    /// Its last error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorLine<'a>>,
}

/// An error's class and message (cut).
#[derive(Debug, Serialize)]
pub struct ErrorLine<'a> {
    /// Error class.
    pub name: &'a str,
    /// The message, cut.
    pub message: String,
}

impl<'a> RunView<'a> {
    /// The view of `report` and `graph` for the run summarised by `run`.
    pub fn new(
        run: Value,
        run_id: &str,
        report: &'a RunReport,
        graph: &'a RunGraph,
        links: &Links,
    ) -> Self {
        let link = |n: &str| links.node(run_id, n);
        let errors = report
            .errors
            .iter()
            .take(GET_RUN_MAX_ERRORS)
            .map(|e| RunErrorView {
                node_id: &e.node_id,
                instance_id: &e.instance_id,
                name: &e.name,
                message: cut_str(&e.message, 500),
                recovered: e.recovered,
                link: link(&e.node_id),
            })
            .collect();
        let slowest = report
            .slowest
            .iter()
            .map(|s| SlowView {
                execution: s,
                link: link(&s.node_id),
            })
            .collect();
        let tokens = &report.tokens;
        RunView {
            run,
            run_error: report.run_error.clone(),
            errors,
            error_count: report.error_count,
            slowest,
            tokens: TokensView {
                input_tokens: tokens.input_tokens,
                output_tokens: tokens.output_tokens,
                cache_read_tokens: tokens.cache_read_tokens,
                cache_write_tokens: tokens.cache_write_tokens,
                cost: &tokens.cost,
                by_node: &tokens.by_node[..tokens.by_node.len().min(GET_RUN_TOKEN_NODES)],
            },
            paused: report.paused.iter().map(String::as_str).collect(),
            held_ms: report.times.held_ms,
            work_ms: report.times.work_ms,
            graph: RunGraphView::new(graph, &link),
        }
    }
}

impl<'a> RunGraphView<'a> {
    fn new(graph: &'a RunGraph, link: &dyn Fn(&str) -> String) -> Self {
        let nodes = graph
            .nodes
            .iter()
            .take(GET_RUN_MAX_NODES)
            .map(|n| RunNodeView::new(n, link(&n.node_id)))
            .collect();
        RunGraphView {
            node_count: graph.nodes.len(),
            announced_only_count: graph.announced_only(),
            instance_count: graph.instance_count(),
            edge_count: graph.edges.len(),
            nodes,
            edges: &graph.edges[..graph.edges.len().min(GET_RUN_MAX_EDGES)],
            nodes_truncated: graph.nodes.len() > GET_RUN_MAX_NODES,
            edges_truncated: graph.edges.len() > GET_RUN_MAX_EDGES,
        }
    }
}

impl<'a> RunNodeView<'a> {
    fn new(n: &'a GraphNode, link: String) -> Self {
        let last_error = n.instances.iter().rev().find_map(|i| i.error.as_ref());
        RunNodeView {
            node_id: &n.node_id,
            kind: &n.kind,
            name: cut_str(&n.name, 200),
            parent_id: n.parent_id.as_deref(),
            status: n.status,
            instances: n.instances.len(),
            duration_ms: node_duration(n),
            link,
            error: last_error.map(|e| ErrorLine {
                name: &e.name,
                message: cut_str(&e.message, 300),
            }),
        }
    }
}

/// The sum of a node's executions' durations (none when no execution has one).
pub fn node_duration(n: &GraphNode) -> Option<f64> {
    let durations: Vec<f64> = n.instances.iter().filter_map(|i| i.duration_ms).collect();
    if durations.is_empty() {
        None
    } else {
        Some(durations.iter().sum())
    }
}
