//! A live projection for views that hold the graph: its snapshot written a
//! range of nodes at a time without a copy of the graph
//! ([`RunProjection::write_nodes_json`]), and what
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
//!
//! Streamed text goes as appended slices: a delta's instance carries no
//! `tokens` / `reasoning` but `tokensAdded` / `reasoningAdded`, the text
//! streamed since the last delta (or the snapshot), so a long stream costs each
//! delta only its new characters. A view appends them to the text it holds.

use std::collections::HashSet;

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use super::{GraphInstance, GraphNode, NodeState, RunProjection};

/// The nodes and instances touched since the last delta, in first-touch order.
#[derive(Debug, Clone, Default)]
pub(super) struct Changes {
    nodes: Vec<usize>,
    node_set: HashSet<usize>,
    instances: Vec<TouchedInstance>,
    instance_set: HashSet<(usize, usize)>,
}

/// An instance touched since the last delta, with the lengths (bytes) of its
/// streamed text when first touched: what the view already holds.
#[derive(Debug, Clone, Copy)]
struct TouchedInstance {
    node: usize,
    instance: usize,
    tokens_sent: usize,
    reasoning_sent: usize,
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
    /// What the box reads instead of the name (as in [`super::GraphNode::label`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Parent logical node.
    pub parent_id: Option<String>,
    /// Aggregate state (as in [`super::GraphNode::status`]).
    pub status: NodeState,
    /// Announced by `graph.hint` but never ran.
    pub hinted: bool,
    /// How many instances the node has now.
    pub instance_count: usize,
}

/// One instance of a node, as the graph shows it, its streamed text as the
/// slices added since the last delta.
///
/// Serialized as the graph's instance fields without `tokens` and `reasoning`,
/// plus `nodeId`, `tokensAdded` and `reasoningAdded` (each omitted when empty).
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceChange {
    /// The node it is an execution of.
    pub node_id: String,
    /// The instance's graph fields; its `tokens` and `reasoning` are empty
    /// (see `tokens_added` and `reasoning_added`).
    pub instance: GraphInstance,
    /// Text streamed since the last delta (`t: "text"`), to append.
    pub tokens_added: String,
    /// Reasoning streamed since the last delta, to append.
    pub reasoning_added: String,
}

impl Serialize for InstanceChange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut fields = serde_json::to_value(&self.instance).map_err(serde::ser::Error::custom)?;
        if let Some(object) = fields.as_object_mut() {
            object.remove("tokens");
            object.remove("reasoning");
            object.insert("nodeId".to_owned(), self.node_id.clone().into());
            if !self.tokens_added.is_empty() {
                object.insert("tokensAdded".to_owned(), self.tokens_added.clone().into());
            }
            if !self.reasoning_added.is_empty() {
                object.insert(
                    "reasoningAdded".to_owned(),
                    self.reasoning_added.clone().into(),
                );
            }
        }
        fields.serialize(s)
    }
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
                    label: super::label_of(&n.kind, &n.name, &n.instances),
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
            .map(|touched| {
                let inst = &mut self.nodes[touched.node].instances[touched.instance];
                let status = Self::instance_state(inst, run_open);
                let summary = &mut inst.detail.summary;
                // Clone the fields without the streamed text, then put it back.
                let tokens = std::mem::take(&mut summary.tokens);
                let reasoning = std::mem::take(&mut summary.reasoning);
                let mut instance = summary.clone();
                instance.status = status;
                let tokens_added = tail_from(&tokens, touched.tokens_sent);
                let reasoning_added = tail_from(&reasoning, touched.reasoning_sent);
                summary.tokens = tokens;
                summary.reasoning = reasoning;
                InstanceChange {
                    node_id: self.nodes[touched.node].node_id.clone(),
                    instance,
                    tokens_added,
                    reasoning_added,
                }
            })
            .collect();
        Some(GraphDelta { nodes, instances })
    }

    /// How many nodes the graph has.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// How many instances the graph's nodes have in all.
    pub fn instance_count(&self) -> usize {
        self.instance_total
    }

    /// Writes the nodes `range` of [`RunProjection::graph`] (clamped to the
    /// graph) as a JSON array to `out`, building one node at a time instead of
    /// a copy of the graph. Consecutive ranges give the graph's `nodes`.
    pub fn write_nodes_json<W: std::io::Write>(
        &self,
        range: std::ops::Range<usize>,
        out: W,
    ) -> serde_json::Result<()> {
        let end = range.end.min(self.nodes.len());
        let start = range.start.min(end);
        serde_json::to_writer(out, &GraphNodesJson(self, start..end))
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
            label: super::label_of(&n.kind, &n.name, &n.instances),
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
    /// Called before the event changes the instance: the lengths of its
    /// streamed text now are what the view holds.
    pub(super) fn touch_instance(&mut self, ni: usize, ii: usize) {
        self.touch_node(ni);
        if let Some(c) = self.changes.as_mut()
            && c.instance_set.insert((ni, ii))
        {
            let summary = &self.nodes[ni].instances[ii].detail.summary;
            c.instances.push(TouchedInstance {
                node: ni,
                instance: ii,
                tokens_sent: summary.tokens.len(),
                reasoning_sent: summary.reasoning.len(),
            });
        }
    }
}

/// The text appended to `text` after its first `sent` bytes (all of it if
/// `sent` is not a boundary of it, which appending cannot make).
fn tail_from(text: &str, sent: usize) -> String {
    text.get(sent..).unwrap_or(text).to_owned()
}

/// Serializes a range of a projection's graph nodes, one node at a time.
struct GraphNodesJson<'a>(&'a RunProjection, std::ops::Range<usize>);

impl Serialize for GraphNodesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut nodes = s.serialize_seq(Some(self.1.len()))?;
        for ni in self.1.clone() {
            nodes.serialize_element(&self.0.graph_node(ni))?;
        }
        nodes.end()
    }
}
