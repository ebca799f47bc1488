//! Shared test helpers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use mindgate_taskgraph::graph::node_weights;
use mindgate_taskgraph::{EdgeType, TaskGraph};

pub const DSH: &str = "tests/fixtures/dsh/--Users-kevin-Desktop-Nothing-Napkin--";
pub const PI: &str = "tests/fixtures/pi/--work-napkin--";
pub const CLAUDE: &str = "tests/fixtures/claude/-work-napkin";
pub const CODEX: &str = "tests/fixtures/codex/2026/08/24";

/// Checks the critical path: starts at the task, follows execution edges (forward in node
/// order), its weights sum to `duration_ms`, hot ids are its weight>0 nodes, and no path from
/// the root is heavier (independent longest-path DP).
pub fn check_critical_path(g: &TaskGraph) -> Result<(), String> {
    let cp = &g.critical_path;
    let index: HashMap<&str, usize> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let w = node_weights(g);
    if cp.total_ms != g.duration_ms {
        return Err("total_ms != task duration".into());
    }
    if cp.node_ids.first().map(|s| s.as_str()) != Some("task") {
        return Err(format!("path does not start at task: {:?}", cp.node_ids));
    }
    if cp.edge_ids.len() + 1 != cp.node_ids.len() {
        return Err("edge count mismatch".into());
    }
    for (k, eid) in cp.edge_ids.iter().enumerate() {
        let e = g.edge(eid).ok_or(format!("unknown edge {eid}"))?;
        if e.source != cp.node_ids[k] || e.target != cp.node_ids[k + 1] {
            return Err(format!(
                "edge {eid} does not join {} -> {}",
                cp.node_ids[k],
                cp.node_ids[k + 1]
            ));
        }
        if !e.edge_type.is_execution() || e.edge_type == EdgeType::Contains || e.source == e.target
        {
            return Err(format!("edge {eid} is not an execution edge"));
        }
    }
    let sum: i64 = cp.node_ids.iter().map(|id| w[index[id.as_str()]]).sum();
    if sum != cp.duration_ms {
        return Err(format!(
            "weights sum {sum} != duration_ms {}",
            cp.duration_ms
        ));
    }
    // Hot: longest first until 80 % of the path's agent time, at most 10 % of its nodes
    // (at least one), in path order — checked independently of the crate's implementation.
    let mut by_weight: Vec<(i64, usize)> = cp
        .node_ids
        .iter()
        .enumerate()
        .map(|(k, id)| (w[index[id.as_str()]], k))
        .filter(|(wt, _)| *wt > 0)
        .collect();
    by_weight.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let cap = std::cmp::max(1, cp.node_ids.len() / 10);
    let mut hot_pos = Vec::new();
    let mut covered = 0.0f64;
    for (wt, k) in by_weight {
        if hot_pos.len() == cap || covered >= 0.8 * sum as f64 {
            break;
        }
        covered += wt as f64;
        hot_pos.push(k);
    }
    hot_pos.sort_unstable();
    let hot: Vec<&mindgate_taskgraph::graph::SharedStr> =
        hot_pos.iter().map(|&k| &cp.node_ids[k]).collect();
    if hot != cp.hot_node_ids.iter().collect::<Vec<_>>() {
        return Err(format!(
            "hot ids mismatch: want {hot:?}, got {:?}",
            cp.hot_node_ids
        ));
    }
    if cp.waiting_ms != cp.waiting.iter().map(|s| s.duration_ms).sum::<i64>() {
        return Err("waiting_ms is not the sum of the path's waiting segments".into());
    }
    // Independent longest path.
    let n = g.nodes.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in &g.edges {
        if !e.edge_type.is_execution() || e.source == e.target {
            continue;
        }
        let (s, t) = (index[e.source.as_str()], index[e.target.as_str()]);
        if s >= t {
            return Err(format!("execution edge {} points backwards", e.id));
        }
        preds[t].push(s);
    }
    let mut dist = vec![-1i64; n];
    dist[0] = w[0];
    for i in 1..n {
        if let Some(best) = preds[i].iter().map(|&p| dist[p]).filter(|d| *d >= 0).max() {
            dist[i] = best + w[i];
        }
    }
    let best = dist.iter().copied().max().unwrap_or(0);
    if best != cp.duration_ms {
        return Err(format!(
            "longest path {best} != duration_ms {}",
            cp.duration_ms
        ));
    }
    Ok(())
}
