//! Which nodes, edges and critical-path entries belong to each turn, found in one pass over a
//! graph, so opening a turn ([`TurnIndex::detail`]) costs that turn's size, not the graph's.
//! [`super::overview::turn_detail`] is this index built and asked once.

use crate::fast_hash::FastMap as HashMap;

use super::model::{NodeMeta, NodeType, SharedStr, TaskGraph};
use super::node_index::{EdgeIndex, NodeIndex};
use super::overview::{TurnDetail, TurnPath, turn_of_nodes_with};

/// What one turn holds, as indices into its graph's lists, each in list order.
#[derive(Debug, Clone, Default)]
struct Members {
    nodes: Vec<usize>,
    edges: Vec<usize>,
    path_nodes: Vec<usize>,
    hot_nodes: Vec<usize>,
    path_edges: Vec<usize>,
}

/// The turns of one graph, indexed. Valid for the graph it was built from only: a grown or
/// rebuilt graph needs a new index.
#[derive(Debug, Clone, Default)]
pub struct TurnIndex {
    /// The phase node index of each turn id (`phase-3`) and turn number (`3`).
    by_name: HashMap<String, usize>,
    /// Each phase's members.
    turns: HashMap<usize, Members>,
    /// What every turn shows besides its own: the task node(s), edges between them, their
    /// path entries.
    shared: Members,
}

/// The turn a node belongs to: one phase's, or every turn's (the task node).
#[derive(Clone, Copy, PartialEq)]
enum Owner {
    Turn(usize),
    All,
}

impl TurnIndex {
    /// Indexes `g`'s turns (one pass over its nodes, edges and critical path).
    pub fn new(g: &TaskGraph) -> Self {
        let node_at = NodeIndex::new(g);
        let turn_of = turn_of_nodes_with(g, &node_at);
        let mut ix = TurnIndex::default();
        let mut owner: Vec<Option<Owner>> = Vec::with_capacity(g.nodes.len());
        for (i, n) in g.nodes.iter().enumerate() {
            if n.node_type == NodeType::Phase {
                ix.by_name.entry(n.id.to_string()).or_insert(i);
                if let NodeMeta::Phase(m) = &n.meta {
                    ix.by_name.entry(m.turn.to_string()).or_insert(i);
                }
            }
            let o = if n.node_type == NodeType::Task {
                Some(Owner::All)
            } else {
                turn_of[i].map(Owner::Turn)
            };
            owner.push(o);
            ix.push(o, i, |m| &mut m.nodes);
        }
        let owner_of = |id: &SharedStr| node_at.get(id).and_then(|i| owner[i]);
        let cp = &g.critical_path;
        let mut edge_owner: Vec<Option<Owner>> = Vec::with_capacity(g.edges.len());
        for (i, e) in g.edges.iter().enumerate() {
            let o = match (owner_of(&e.source), owner_of(&e.target)) {
                (Some(Owner::All), o) | (o, Some(Owner::All)) => o,
                (Some(a), Some(b)) if a == b => Some(a),
                _ => None,
            };
            edge_owner.push(o);
            ix.push(o, i, |m| &mut m.edges);
        }
        let edge_at = EdgeIndex::new(g);
        for (k, id) in cp.node_ids.iter().enumerate() {
            ix.push(owner_of(id), k, |m| &mut m.path_nodes);
        }
        for (k, id) in cp.hot_node_ids.iter().enumerate() {
            ix.push(owner_of(id), k, |m| &mut m.hot_nodes);
        }
        for (k, id) in cp.edge_ids.iter().enumerate() {
            let o = edge_at.get(id.as_str()).and_then(|i| edge_owner[i]);
            ix.push(o, k, |m| &mut m.path_edges);
        }
        ix
    }

    fn push(&mut self, owner: Option<Owner>, at: usize, list: fn(&mut Members) -> &mut Vec<usize>) {
        match owner {
            Some(Owner::All) => list(&mut self.shared).push(at),
            Some(Owner::Turn(p)) => list(self.turns.entry(p).or_default()).push(at),
            None => {}
        }
    }

    /// The detail of turn `turn` (a phase id such as `phase-3`, or its number) of `g`, the
    /// graph this index was built from; `None` when it has no such turn.
    pub fn detail<'g>(&self, g: &'g TaskGraph, turn: &str) -> Option<TurnDetail<'g>> {
        let phase = *self.by_name.get(turn.trim())?;
        let empty = Members::default();
        let own = self.turns.get(&phase).unwrap_or(&empty);
        let sh = &self.shared;
        let pick = |list: &'g [SharedStr], a: &[usize], b: &[usize]| -> Vec<&'g SharedStr> {
            merged(a, b).filter_map(|k| list.get(k)).collect()
        };
        let cp = &g.critical_path;
        Some(TurnDetail {
            task_id: &g.task_id,
            session_id: &g.session_id,
            turn_id: g.nodes.get(phase)?.id.as_str(),
            nodes: merged(&sh.nodes, &own.nodes)
                .filter_map(|i| g.nodes.get(i))
                .collect(),
            edges: merged(&sh.edges, &own.edges)
                .filter_map(|i| g.edges.get(i))
                .collect(),
            critical_path: TurnPath {
                node_ids: pick(&cp.node_ids, &sh.path_nodes, &own.path_nodes),
                hot_node_ids: pick(&cp.hot_node_ids, &sh.hot_nodes, &own.hot_nodes),
                edge_ids: pick(&cp.edge_ids, &sh.path_edges, &own.path_edges),
            },
        })
    }
}

/// Two ascending index lists merged into one ascending sequence.
fn merged<'a>(a: &'a [usize], b: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x <= y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => return None,
        };
        Some(next)
    })
}
