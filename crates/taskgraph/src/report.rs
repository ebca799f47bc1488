//! What a person reads first about one task graph — its critical path with the hot steps, the
//! failures with their messages — derived once from the typed graph, for every view (the
//! `mindgate taskgraph` summary, the MCP `get_task_graph` tool).
//!
//! The graph's [`Summary`](crate::Summary) already holds the lists (slowest, failed, retried
//! steps, files, tools); a [`TaskReport`] adds what needs the nodes: an id index (one hash
//! lookup per named node instead of a scan of every node), the path's steps with their hot
//! flag, and the failure text rule.

use std::collections::{HashMap, HashSet};

use mindgate_pricing::{Cost, PriceTable};
use serde_json::Value;

use crate::graph::{Node, NodeMeta, NodeRef, TaskGraph};

/// One task graph, indexed for reading.
#[derive(Debug)]
pub struct TaskReport<'g> {
    graph: &'g TaskGraph,
    by_id: HashMap<&'g str, &'g Node>,
    hot: HashSet<&'g str>,
}

/// One node of the critical path.
#[derive(Debug, Clone, Copy)]
pub struct PathStep<'g> {
    /// The node id as the path names it.
    pub id: &'g str,
    /// The node (`None` only for a path naming a node the graph lacks).
    pub node: Option<&'g Node>,
    /// Whether the node carries weight on the path (it is in `hot_node_ids`).
    pub hot: bool,
}

impl<'g> TaskReport<'g> {
    /// Indexes `graph`'s nodes.
    pub fn new(graph: &'g TaskGraph) -> Self {
        Self {
            graph,
            by_id: graph.nodes.iter().map(|n| (n.id.as_str(), n)).collect(),
            hot: graph
                .critical_path
                .hot_node_ids
                .iter()
                .map(|id| id.as_str())
                .collect(),
        }
    }

    /// The graph.
    pub fn graph(&self) -> &'g TaskGraph {
        self.graph
    }

    /// What the session's token usage cost at `prices` ([`crate::graph::graph_cost`]: each
    /// model's tokens priced by that model, cache reads and writes apart, the `unknown` ones
    /// unpriced).
    pub fn cost(&self, prices: &PriceTable) -> Cost {
        crate::graph::graph_cost(self.graph, prices)
    }

    /// A node by id (a hash lookup).
    pub fn node(&self, id: &str) -> Option<&'g Node> {
        self.by_id.get(id).copied()
    }

    /// The agent that wrote the session (`dsh`, `pi`, `claude_code`, `codex`), as its header
    /// names it.
    pub fn agent(&self) -> Option<&'g Value> {
        self.graph.meta.header.get("agent")
    }

    /// Every node of the critical path, from the task root on.
    pub fn critical_path(&self) -> impl Iterator<Item = PathStep<'g>> + '_ {
        self.graph.critical_path.node_ids.iter().map(|id| PathStep {
            id: id.as_str(),
            node: self.node(id),
            hot: self.hot.contains(id.as_str()),
        })
    }

    /// The hot steps of the critical path (the nodes that carry its weight), in path order.
    pub fn hot_steps(&self) -> impl Iterator<Item = &'g Node> + '_ {
        self.graph
            .critical_path
            .hot_node_ids
            .iter()
            .filter_map(|id| self.node(id))
    }

    /// Why a failed step failed: its own error, else the message its node (or its phase's
    /// end) recorded.
    pub fn failure_text(&self, r: &NodeRef) -> Option<String> {
        r.error.clone().or_else(|| {
            let n = self.node(&r.id)?;
            node_error(&n.meta).or_else(|| {
                let parent = self.node(n.parent_id.as_deref()?)?;
                node_error(&parent.meta)
            })
        })
    }
}

/// The error a node records: a tool's error, an LLM step's last failed attempt, a phase's end
/// message.
pub fn node_error(meta: &NodeMeta) -> Option<String> {
    match meta {
        NodeMeta::Tool(t) => t.error.clone(),
        NodeMeta::Agent(a) => a
            .attempts
            .last()
            .map(|at| at.failure.message.clone())
            .filter(|m| !m.is_empty()),
        NodeMeta::Phase(p) => p.reason_message.clone(),
        NodeMeta::Task(_) => None,
    }
}
