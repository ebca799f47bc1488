//! Incremental longest-path ("critical path") over execution edges.
//!
//! Nodes are numbered in creation order, and the builder only ever adds an execution edge from
//! an older node to a newer one, so creation order is a topological order. The longest weighted
//! distance from the root (`dist`) is therefore one forward pass; after an append only the nodes
//! from the lowest index whose weight or in-edges changed (`dirty_from`) are recomputed, and the
//! stored path is kept up to the last node that precedes `dirty_from` and is still on it. An
//! append that touches only the newest nodes costs O(new nodes + their in-edges + new path tail).

use super::model::{CriticalPath, Edge, Node};
use super::waiting::hot_positions;

const NONE: u32 = u32::MAX;

#[derive(Debug, Default, Clone)]
pub(crate) struct CritState {
    weight: Vec<i64>,
    /// Per node: head of its in-edge list (index into `links`), newest first.
    in_head: Vec<u32>,
    /// In-edge lists: (source node, edge index, next link).
    links: Vec<(u32, u32, u32)>,
    /// Longest distance from the root including the node's own weight; -1 = unreachable.
    dist: Vec<i64>,
    /// Best predecessor (node, edge).
    pred: Vec<Option<(u32, u32)>>,
    /// Best (dist, node) over nodes `0..=i` (earliest node wins ties).
    best: Vec<(i64, u32)>,
    dirty_from: usize,
    path: Vec<u32>,
    pos: Vec<u32>,
}

impl CritState {
    pub(crate) fn reserve(&mut self, n: usize) {
        self.weight.reserve(n);
        self.in_head.reserve(n);
        self.links.reserve(2 * n);
        self.dist.reserve(n);
        self.pred.reserve(n);
        self.best.reserve(n);
        self.pos.reserve(n);
    }

    pub(crate) fn add_node(&mut self, weight: i64) {
        let i = self.weight.len();
        self.weight.push(weight.max(0));
        self.in_head.push(NONE);
        self.dist.push(-1);
        self.pred.push(None);
        self.best.push((-1, 0));
        self.pos.push(NONE);
        self.dirty_from = self.dirty_from.min(i);
    }

    /// Records an execution edge; ignored unless it points forward (self-loops, back edges).
    pub(crate) fn add_edge(&mut self, src: usize, dst: usize, edge: usize) {
        if src < dst && dst < self.weight.len() {
            let link = self.links.len() as u32;
            self.links
                .push((src as u32, edge as u32, self.in_head[dst]));
            self.in_head[dst] = link;
            self.dirty_from = self.dirty_from.min(dst);
        }
    }

    pub(crate) fn set_weight(&mut self, i: usize, w: i64) {
        let w = w.max(0);
        if let Some(slot) = self.weight.get_mut(i)
            && *slot != w
        {
            *slot = w;
            self.dirty_from = self.dirty_from.min(i);
        }
    }

    /// Brings `out` up to date. Returns whether anything was recomputed.
    pub(crate) fn recompute(
        &mut self,
        nodes: &[Node],
        edges: &[Edge],
        out: &mut CriticalPath,
    ) -> bool {
        let n = self.weight.len();
        let start = self.dirty_from;
        if start >= n || n == 0 {
            return false;
        }
        for i in start..n {
            let (d, p) = if i == 0 {
                (self.weight[0], None)
            } else {
                // Newest edge first; `>=` keeps the oldest of equally long predecessors.
                let mut best: Option<(i64, (u32, u32))> = None;
                let mut link = self.in_head[i];
                while let Some(&(s, e, next)) = self.links.get(link as usize) {
                    let ds = self.dist[s as usize];
                    if ds >= 0 && best.is_none_or(|(b, _)| ds >= b) {
                        best = Some((ds, (s, e)));
                    }
                    link = next;
                }
                match best {
                    Some((b, pe)) => (b + self.weight[i], Some(pe)),
                    None => (-1, None),
                }
            };
            self.dist[i] = d;
            self.pred[i] = p;
            let prev = if i == 0 { (-1, 0) } else { self.best[i - 1] };
            self.best[i] = if d > prev.0 { (d, i as u32) } else { prev };
        }
        self.dirty_from = n;
        let (dist, end) = self.best[n - 1];
        // Walk back until the unchanged prefix of the old path.
        let mut tail = Vec::new();
        let mut keep = 0usize;
        let mut cur = (dist >= 0).then_some(end);
        while let Some(c) = cur {
            let ci = c as usize;
            if ci < start && self.pos[ci] != NONE {
                keep = self.pos[ci] as usize + 1;
                break;
            }
            tail.push(c);
            cur = self.pred[ci].map(|(s, _)| s);
        }
        for &c in &self.path[keep.min(self.path.len())..] {
            self.pos[c as usize] = NONE;
        }
        self.path.truncate(keep);
        out.node_ids.truncate(keep);
        out.edge_ids.truncate(keep.saturating_sub(1));
        for &c in tail.iter().rev() {
            let ci = c as usize;
            if !self.path.is_empty()
                && let Some((_, e)) = self.pred[ci]
                && let Some(edge) = edges.get(e as usize)
            {
                out.edge_ids.push(edge.id.clone());
            }
            self.pos[ci] = self.path.len() as u32;
            self.path.push(c);
            let id = nodes.get(ci).map(|n| n.id.clone()).unwrap_or_default();
            out.node_ids.push(id);
        }
        out.duration_ms = dist.max(0);
        // The hot rule depends on the whole path (its total and length): recomputed whole.
        let weights: Vec<i64> = self.path.iter().map(|&c| self.weight[c as usize]).collect();
        out.hot_node_ids = hot_positions(&weights)
            .into_iter()
            .map(|k| out.node_ids[k].clone())
            .collect();
        true
    }

    /// The path's node indices, from the root on.
    pub(crate) fn path(&self) -> &[u32] {
        &self.path
    }
}
