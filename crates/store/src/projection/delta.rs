//! A live projection for views that hold the graph: its snapshot written
//! without a copy of the graph ([`RunProjection::write_graph_json`]), and what
//! applying events changed — the nodes and instances it touched, as a
//! [`GraphDelta`] a view applies to the graph it holds.
//!
//! A projection tracks changes once [`RunProjection::track_changes`] turns it
//! on (a snapshot's [`RunProjection::graph`] is the state before the first
//! delta). [`RunProjection::take_delta`] then returns the summary of every node
//! whose fields, parent, state or instance count changed and every instance
//! whose fields or state changed — never a node's other instances — and starts
//! the next delta. Applying each delta in order to the snapshot (replace a node
//! summary by `nodeId`, an instance by `nodeId` + `instanceId`, append what is
//! new) gives [`RunProjection::graph`] again.

use std::collections::HashSet;

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::{GraphInstance, GraphNode, NodeState, RunProjection};

/// The nodes and instances touched since the last delta, in first-touch order.
#[derive(Debug, Clone, Default)]
pub(super) struct Changes {
    nodes: Vec<usize>,
    node_set: HashSet<usize>,
    instances: Vec<(usize, usize)>,
    instance_set: HashSet<(usize, usize)>,
}

/// One node's graph fields without its instances (`instanceCount` says how many it has).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeChange {
    /// Stable logical id.
    pub node_id: String,
    /// Kind (`agent`, `llm`, `tool`, …).
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Parent logical node.
    pub parent_id: Option<String>,
    /// Aggregate state (as in [`super::GraphNode::status`]).
    pub status: NodeState,
    /// Announced by `graph.hint` but never ran.
    pub hinted: bool,
    /// How many instances the node has now.
    pub instance_count: usize,
}

/// One instance of a node, as the graph shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceChange {
    /// The node it is an execution of.
    pub node_id: String,
    /// The instance's graph fields.
    #[serde(flatten)]
    pub instance: GraphInstance,
}

/// The changes of one or more applied events.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphDelta {
    /// Changed or new nodes, new ones in graph order.
    pub nodes: Vec<NodeChange>,
    /// Changed or new instances, new ones in start order.
    pub instances: Vec<InstanceChange>,
}

impl GraphDelta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.instances.is_empty()
    }
}

impl RunProjection {
    /// Starts tracking what each applied event changes (see [`RunProjection::take_delta`]).
    pub fn track_changes(&mut self) {
        self.changes.get_or_insert_with(Changes::default);
    }

    /// The nodes and instances changed since tracking started or the last
    /// delta; `None` when tracking is off or nothing changed.
    pub fn take_delta(&mut self) -> Option<GraphDelta> {
        let changes = std::mem::take(self.changes.as_mut()?);
        if changes.nodes.is_empty() && changes.instances.is_empty() {
            return None;
        }
        let run_open = !self.run_finished;
        let nodes = changes
            .nodes
            .iter()
            .map(|&ni| {
                let n = &self.nodes[ni];
                let states: Vec<NodeState> = n
                    .instances
                    .iter()
                    .map(|inst| Self::instance_state(inst, run_open))
                    .collect();
                NodeChange {
                    node_id: n.node_id.clone(),
                    kind: n.kind.clone(),
                    name: n.name.clone(),
                    parent_id: n.parent_id.clone(),
                    status: Self::aggregate(&states, n.hinted),
                    hinted: n.hinted && n.instances.is_empty(),
                    instance_count: n.instances.len(),
                }
            })
            .collect();
        let instances = changes
            .instances
            .iter()
            .map(|&(ni, ii)| {
                let inst = &self.nodes[ni].instances[ii];
                let mut instance = inst.detail.summary.clone();
                instance.status = Self::instance_state(inst, run_open);
                InstanceChange {
                    node_id: self.nodes[ni].node_id.clone(),
                    instance,
                }
            })
            .collect();
        Some(GraphDelta { nodes, instances })
    }

    /// Writes [`RunProjection::graph`] as JSON (the `GET /api/runs/:id/graph`
    /// body) to `out`, building one node at a time instead of a copy of the
    /// whole graph.
    pub fn write_graph_json<W: std::io::Write>(&self, out: W) -> serde_json::Result<()> {
        serde_json::to_writer(out, &GraphJson(self))
    }

    /// One node as the graph shows it (a copy of its instances' graph fields).
    fn graph_node(&self, ni: usize) -> GraphNode {
        let n = &self.nodes[ni];
        let run_open = !self.run_finished;
        let instances: Vec<GraphInstance> = n
            .instances
            .iter()
            .map(|inst| {
                let mut summary = inst.detail.summary.clone();
                summary.status = Self::instance_state(inst, run_open);
                summary
            })
            .collect();
        let states: Vec<NodeState> = instances.iter().map(|i| i.status).collect();
        GraphNode {
            node_id: n.node_id.clone(),
            kind: n.kind.clone(),
            name: n.name.clone(),
            parent_id: n.parent_id.clone(),
            status: Self::aggregate(&states, n.hinted),
            hinted: n.hinted && instances.is_empty(),
            instances,
        }
    }

    /// Marks a node changed (its fields, parent or instance count).
    pub(super) fn touch_node(&mut self, ni: usize) {
        if let Some(c) = self.changes.as_mut()
            && c.node_set.insert(ni)
        {
            c.nodes.push(ni);
        }
    }

    /// Marks an instance changed, and its node (whose state depends on it).
    pub(super) fn touch_instance(&mut self, ni: usize, ii: usize) {
        self.touch_node(ni);
        if let Some(c) = self.changes.as_mut()
            && c.instance_set.insert((ni, ii))
        {
            c.instances.push((ni, ii));
        }
    }
}

/// Serializes a projection's graph view node by node.
struct GraphJson<'a>(&'a RunProjection);

struct GraphNodesJson<'a>(&'a RunProjection);

impl Serialize for GraphJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let edges: Vec<_> = p
            .nodes
            .iter()
            .filter_map(|n| RunProjection::edge_of(&n.node_id, n.parent_id.as_ref(), &p.index))
            .collect();
        let mut graph = s.serialize_struct("RunGraph", 3)?;
        graph.serialize_field("runId", &p.run_id)?;
        graph.serialize_field("nodes", &GraphNodesJson(p))?;
        graph.serialize_field("edges", &edges)?;
        graph.end()
    }
}

impl Serialize for GraphNodesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut nodes = s.serialize_seq(Some(p.nodes.len()))?;
        for ni in 0..p.nodes.len() {
            nodes.serialize_element(&p.graph_node(ni))?;
        }
        nodes.end()
    }
}
