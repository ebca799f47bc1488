//! Finding a graph's nodes and edges by id without hashing their text: the builder copies a
//! node's id (a [`SharedStr`]) into parent ids, edge ends and the critical path, so a clone
//! is found by its address; an edge id is `e<n>` for the n-th edge. Ids that are not such
//! copies (a graph read back from JSON) are found by their text, through a map built the
//! first time one is asked for.

use std::cell::OnceCell;

use crate::fast_hash::FastMap;

use super::model::{SharedStr, TaskGraph};

/// The nodes of one graph by id.
pub(crate) struct NodeIndex<'g> {
    g: &'g TaskGraph,
    by_address: FastMap<usize, usize>,
    by_text: OnceCell<FastMap<&'g str, usize>>,
}

impl<'g> NodeIndex<'g> {
    /// Indexes `g`'s nodes by the address of their ids.
    pub(crate) fn new(g: &'g TaskGraph) -> Self {
        let mut by_address = FastMap::default();
        by_address.reserve(g.nodes.len());
        for (i, n) in g.nodes.iter().enumerate() {
            by_address.insert(n.id.address(), i);
        }
        NodeIndex {
            g,
            by_address,
            by_text: OnceCell::new(),
        }
    }

    /// The index of the node `id` names (ids are unique; were one repeated, its last node).
    pub(crate) fn get(&self, id: &SharedStr) -> Option<usize> {
        match self.by_address.get(&id.address()) {
            Some(&i) => Some(i),
            None => self.get_text(id.as_str()),
        }
    }

    /// The index of the node with id `id`.
    pub(crate) fn get_text(&self, id: &str) -> Option<usize> {
        let by_text = self.by_text.get_or_init(|| {
            let mut map = FastMap::default();
            map.reserve(self.g.nodes.len());
            for (i, n) in self.g.nodes.iter().enumerate() {
                map.insert(n.id.as_str(), i);
            }
            map
        });
        by_text.get(id).copied()
    }
}

/// The edges of one graph by id: the builder's `e<n>` is the n-th edge; other ids are found
/// by their text.
pub(crate) struct EdgeIndex<'g> {
    g: &'g TaskGraph,
    by_text: OnceCell<FastMap<&'g str, usize>>,
}

impl<'g> EdgeIndex<'g> {
    /// An index over `g`'s edges (nothing is built until an id is not the builder's).
    pub(crate) fn new(g: &'g TaskGraph) -> Self {
        EdgeIndex {
            g,
            by_text: OnceCell::new(),
        }
    }

    /// The index of the edge with id `id` (ids are unique; were one repeated, its last edge).
    pub(crate) fn get(&self, id: &str) -> Option<usize> {
        position(self.g, id).or_else(|| {
            let by_text = self.by_text.get_or_init(|| {
                let mut map = FastMap::default();
                map.reserve(self.g.edges.len());
                for (i, e) in self.g.edges.iter().enumerate() {
                    map.insert(e.id.as_str(), i);
                }
                map
            });
            by_text.get(id).copied()
        })
    }
}

/// The index of the edge `id` names when it is the builder's `e<n>` (the n-th edge).
fn position(g: &TaskGraph, id: &str) -> Option<usize> {
    let n: usize = id.strip_prefix('e')?.parse().ok()?;
    let i = n.checked_sub(1)?;
    (g.edges.get(i)?.id.as_str() == id).then_some(i)
}

#[cfg(test)]
mod tests {
    use crate::TaskGraph;
    use crate::graph::SharedStr;
    use crate::graph::{BuildOptions, TurnIndex, build_graph, overview, turn_detail};

    /// `g` with every id reference a separate copy of its text (as a graph read back from
    /// JSON has): nothing is found by address.
    fn unshared(g: &TaskGraph) -> TaskGraph {
        let copy = |s: &SharedStr| SharedStr::from(s.as_str());
        let mut out = g.clone();
        for n in &mut out.nodes {
            n.parent_id = n.parent_id.as_ref().map(copy);
        }
        for e in &mut out.edges {
            e.source = copy(&e.source);
            e.target = copy(&e.target);
            e.id = SharedStr::from(format!("x{}", e.id).as_str());
        }
        let cp = &mut out.critical_path;
        cp.node_ids = cp.node_ids.iter().map(copy).collect();
        cp.hot_node_ids = cp.hot_node_ids.iter().map(copy).collect();
        cp.edge_ids = cp
            .edge_ids
            .iter()
            .map(|id| SharedStr::from(format!("x{id}").as_str()))
            .collect();
        out
    }

    #[test]
    fn copies_of_ids_find_the_same_nodes_as_shared_ones() {
        let events = crate::synth::session_events(2_000);
        let g = build_graph(&events, &BuildOptions::default());
        let u = unshared(&g);
        let prices = mindgate_pricing::PriceTable::builtin();
        assert_eq!(overview(&g, &[], &prices), overview(&u, &[], &prices));
        let (shared_ix, copied_ix) = (TurnIndex::new(&g), TurnIndex::new(&u));
        for turn in ["phase-1", "2", "phase-5"] {
            let a = shared_ix
                .detail(&g, turn)
                .map(|d| serde_json::to_value(d).ok());
            let b = copied_ix
                .detail(&u, turn)
                .map(|d| serde_json::to_value(d).ok());
            let fresh = turn_detail(&u, turn).map(|d| serde_json::to_value(d).ok());
            assert!(a.is_some(), "turn {turn} exists");
            // Edge ids differ by construction; the rest is the same.
            let strip = |v: Option<Option<serde_json::Value>>| {
                v.flatten().map(|mut v| {
                    v["edges"] = serde_json::Value::Null;
                    v["critical_path"]["edge_ids"] =
                        serde_json::json!(v["critical_path"]["edge_ids"].as_array().map(Vec::len));
                    v
                })
            };
            assert_eq!(strip(a), strip(b.clone()), "turn {turn}");
            assert_eq!(b, fresh, "turn {turn}: the index = a fresh scan");
        }
    }
}
