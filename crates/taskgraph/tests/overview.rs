//! The turn-level overview (`graph::overview`): its turns add up to the headline, its critical
//! path segments keep waiting apart from work, a turn's detail holds exactly that turn, and a
//! subagent's tokens count once in the parent's totals. On every fixture and, when present,
//! every genuine session in `../shared/data/real-sessions`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use mindgate_pricing::PriceTable;
use mindgate_taskgraph::graph::overview::{SegmentKind, TaskOverview, TurnCounts};
use mindgate_taskgraph::{
    BuildOptions, GraphTree, NodeType, TaskGraph, build_session_tree, overview, read_session,
    timeline, turn_detail,
};

const FIXTURES: [&str; 12] = [
    "tests/fixtures/dsh/--Users-kevin-Desktop-Nothing-Napkin--/s-main",
    "tests/fixtures/dsh/--Users-kevin-Desktop-Nothing-Napkin--/s-fail",
    "tests/fixtures/dsh/--Users-kevin-Desktop-Nothing-Napkin--/s-live",
    "tests/fixtures/dsh/--Users-kevin-Desktop-Nothing-Napkin--/s-child",
    "tests/fixtures/pi/--work-napkin--/2026-08-24T19-33-20-000Z_pi-main.jsonl",
    "tests/fixtures/claude/-work-napkin/c-main.jsonl",
    "tests/fixtures/codex/2026/08/24/rollout-2026-08-24T19-33-20-cx-main.jsonl",
    "tests/fixtures/fidelity/codex/rollout-2026-09-01T10-00-00-fx-parent.jsonl",
    "tests/fixtures/fidelity/codex/rollout-2026-09-01T11-00-00-fx-cut.jsonl",
    "tests/fixtures/fidelity/pi/2026-09-01T10-00-00-000Z_fx-pi.jsonl",
    "tests/fixtures/fidelity/claude/-work-fx/cl-par.jsonl",
    "tests/fixtures/fidelity/waiting/claude-rejected-write.jsonl",
];

fn tree_of(path: &Path) -> GraphTree {
    let s = read_session(path).unwrap();
    build_session_tree(&s, &BuildOptions::default())
}

fn real_sessions() -> Vec<PathBuf> {
    let dir = std::env::var_os("MINDGATE_REAL_SESSIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions")
        });
    let mut out = Vec::new();
    for agent in ["pi", "claude", "codex"] {
        let Ok(rd) = std::fs::read_dir(dir.join(agent)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "jsonl")
                && !p.file_name().unwrap().to_string_lossy().contains("agent-")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn sum_turns(o: &TaskOverview) -> TurnCounts {
    let mut c = TurnCounts::default();
    for t in &o.turns {
        c.steps += t.counts.steps;
        c.tool_calls += t.counts.tool_calls;
        c.code_changes += t.counts.code_changes;
        c.tests += t.counts.tests;
        c.subagents += t.counts.subagents;
        c.errors += t.counts.errors;
        c.retries += t.counts.retries;
    }
    c
}

/// Every property the overview promises, on one session.
fn check(path: &Path) {
    let tree = tree_of(path);
    let g = &tree.graph;
    let o = overview(&tree.graph, &tree.children, &PriceTable::builtin());
    let name = path.display();
    let h = o.headline;
    assert_eq!(o.turns.len() as u64, h.turns, "{name}: turns");
    let c = sum_turns(&o);
    let want = TurnCounts {
        steps: h.steps,
        tool_calls: h.tool_calls,
        code_changes: h.code_changes,
        tests: h.tests,
        subagents: h.subagents,
        errors: h.errors,
        retries: h.retries,
    };
    assert_eq!(c, want, "{name}: the turns' counts add up to the headline");
    let tokens: u64 = o.turns.iter().map(|t| t.tokens.total).sum();
    assert_eq!(tokens, g.summary.tokens.total, "{name}: turn tokens");
    let path_ms: i64 = o.turns.iter().map(|t| t.path_ms).sum();
    assert_eq!(path_ms, g.critical_path.duration_ms, "{name}: path work");
    // Work never overlaps a waiting segment of the path.
    let segs = &o.critical_path.segments;
    for w in segs.iter().filter(|s| s.kind != SegmentKind::Work) {
        for s in segs.iter().filter(|s| s.kind == SegmentKind::Work) {
            assert!(
                s.end_time <= w.start_time || s.start_time >= w.end_time,
                "{name}: work {s:?} overlaps waiting {w:?}"
            );
        }
    }
    assert!(segs.windows(2).all(|p| p[0].start_time <= p[1].start_time));
    // Each turn's detail holds the task and exactly that turn's nodes; together they hold all.
    let mut seen: HashSet<&str> = HashSet::new();
    let index = mindgate_taskgraph::TurnIndex::new(g);
    for t in &o.turns {
        let d = turn_detail(g, &t.id).unwrap();
        // The index answers what a scan of the whole graph finds, turn by id and by number.
        let scanned = scan_turn(g, &t.id);
        assert_eq!(
            index.detail(g, &t.id).as_ref(),
            Some(&scanned),
            "{name}: {}",
            t.id
        );
        assert_eq!(
            index.detail(g, &t.turn.to_string()).as_ref(),
            Some(&scanned)
        );
        assert_eq!(d, scanned, "{name}: {}", t.id);
        assert_eq!(d.nodes[0].node_type, NodeType::Task);
        assert_eq!(
            d.nodes.len() as u64,
            t.node_count + 1,
            "{name}: {} nodes",
            t.id
        );
        for n in &d.nodes[1..] {
            assert!(seen.insert(n.id.as_str()), "{name}: {} in two turns", n.id);
        }
        let ids: HashSet<&str> = d.nodes.iter().map(|n| n.id.as_str()).collect();
        assert!(
            d.edges
                .iter()
                .all(|e| ids.contains(e.source.as_str()) && ids.contains(e.target.as_str()))
        );
        assert!(
            d.critical_path
                .node_ids
                .iter()
                .all(|id| ids.contains(id.as_str()))
        );
    }
    let in_turns = g
        .nodes
        .iter()
        .filter(|n| n.node_type != NodeType::Task)
        .count();
    assert_eq!(seen.len(), in_turns, "{name}: every node lies in a turn");
    // The waterfall: every step and call with a start time.
    let bars = timeline(g);
    let timed = g
        .nodes
        .iter()
        .filter(|n| !matches!(n.node_type, NodeType::Task | NodeType::Phase))
        .filter(|n| n.start_time.is_some())
        .count();
    assert_eq!(bars.len(), timed, "{name}: timeline bars");
    assert!(bars.iter().all(|b| b.end_time >= b.start_time));
    // The subagents' tokens count once, on top of the session's own.
    assert_eq!(
        o.totals.tokens.total,
        o.tokens.total + o.subagents.tokens.total,
        "{name}: totals"
    );
}

#[test]
fn overview_turns_add_up_on_every_fixture() {
    for f in FIXTURES {
        check(Path::new(f));
    }
}

#[test]
fn overview_turns_add_up_on_real_sessions() {
    let all = real_sessions();
    if all.is_empty() {
        println!("skipped: ../shared/data/real-sessions not present");
        return;
    }
    for p in all {
        check(&p);
    }
}

#[test]
fn overview_keeps_waiting_off_the_path_work() {
    let tree = tree_of(Path::new(
        "tests/fixtures/fidelity/waiting/claude-rejected-write.jsonl",
    ));
    let o = overview(&tree.graph, &tree.children, &PriceTable::builtin());
    assert_eq!(o.turns.len(), 2);
    let kinds: Vec<(SegmentKind, &str)> = o
        .critical_path
        .segments
        .iter()
        .filter(|s| s.kind != SegmentKind::Work)
        .map(|s| (s.kind, s.node_id.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (SegmentKind::Permission, "tool-w1"),
            (SegmentKind::UserReply, "phase-2")
        ]
    );
    let perm = o
        .critical_path
        .segments
        .iter()
        .find(|s| s.kind == SegmentKind::Permission)
        .unwrap();
    assert_eq!(perm.end_time - perm.start_time, 115_000);
    assert_eq!(o.turns[0].path_ms, 5_000, "3 + 2 + 0 s of turn 1's work");
    assert_eq!(o.turns[1].path_ms, 20_000);
    assert_eq!(o.turns[0].waiting_ms, 115_000, "the rejected Write");
    assert_eq!(o.turns[1].waiting_ms, 25_000, "the reply before turn 2");
    assert_eq!(
        o.turns[0].counts.errors, 1,
        "the rejected Write stays an error"
    );
    assert_eq!(o.critical_path.waiting_ms, 140_000);
}

#[test]
fn a_subagent_child_counts_once_in_the_parent_totals() {
    let tree = tree_of(Path::new("tests/fixtures/claude/-work-napkin/c-main.jsonl"));
    assert!(
        !tree.children.is_empty(),
        "the fixture has a subagent child"
    );
    let o = overview(&tree.graph, &tree.children, &PriceTable::builtin());
    let child_tokens: u64 = tree
        .children
        .iter()
        .map(|c| c.graph.summary.tokens.total)
        .sum();
    assert!(child_tokens > 0);
    assert_eq!(o.subagents.sessions, tree.children.len() as u64);
    assert_eq!(o.subagents.tokens.total, child_tokens);
    assert_eq!(o.totals.tokens.total, o.tokens.total + child_tokens);
    let linked: Vec<_> = o
        .turns
        .iter()
        .flat_map(|t| &t.subagents)
        .filter_map(|s| s.child_session.as_ref())
        .collect();
    assert!(!linked.is_empty(), "the Task call opens its child");
}

/// A turn's detail found the plain way (every node's turn, every edge, every path entry
/// scanned): what `TurnIndex` must answer.
fn scan_turn<'g>(
    g: &'g TaskGraph,
    turn: &str,
) -> mindgate_taskgraph::graph::overview::TurnDetail<'g> {
    use mindgate_taskgraph::graph::overview::{TurnPath, turn_of_nodes};
    let phase = g.nodes.iter().position(|n| n.id == *turn).unwrap();
    let turn_of = turn_of_nodes(g);
    let mut ids: HashSet<&str> = HashSet::new();
    let mut nodes = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if n.node_type == NodeType::Task || turn_of[i] == Some(phase) {
            ids.insert(n.id.as_str());
            nodes.push(n);
        }
    }
    let edges: Vec<_> = g
        .edges
        .iter()
        .filter(|e| ids.contains(e.source.as_str()) && ids.contains(e.target.as_str()))
        .collect();
    let edge_ids: HashSet<&str> = edges.iter().map(|e| e.id.as_str()).collect();
    let cp = &g.critical_path;
    mindgate_taskgraph::graph::overview::TurnDetail {
        task_id: &g.task_id,
        session_id: &g.session_id,
        turn_id: g.nodes[phase].id.as_str(),
        nodes,
        edges,
        critical_path: TurnPath {
            node_ids: cp
                .node_ids
                .iter()
                .filter(|i| ids.contains(i.as_str()))
                .collect(),
            hot_node_ids: cp
                .hot_node_ids
                .iter()
                .filter(|i| ids.contains(i.as_str()))
                .collect(),
            edge_ids: cp
                .edge_ids
                .iter()
                .filter(|i| edge_ids.contains(i.as_str()))
                .collect(),
        },
    }
}
