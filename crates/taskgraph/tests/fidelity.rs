//! Readers true to real sessions (issue #11): each test reads a small hand-written fixture
//! that reproduces one shape the agents really write.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::check_critical_path;
use mindgate_taskgraph::graph::ToolMeta;
use mindgate_taskgraph::{
    BuildOptions, GraphTree, NodeMeta, NodeType, Session, Status, TaskGraph, build_session_tree,
    read_session,
};

const FX: &str = "tests/fixtures/fidelity";

fn load(rel: &str) -> Session {
    read_session(&Path::new(FX).join(rel)).unwrap()
}

fn tree(rel: &str) -> (Session, GraphTree) {
    let s = load(rel);
    let t = build_session_tree(&s, &BuildOptions::default());
    check_critical_path(&t.graph).unwrap();
    (s, t)
}

fn node<'a>(g: &'a TaskGraph, id: &str) -> &'a mindgate_taskgraph::Node {
    g.node(id).unwrap_or_else(|| panic!("no node {id}"))
}

fn tool<'a>(g: &'a TaskGraph, id: &str) -> &'a ToolMeta {
    match &node(g, id).meta {
        NodeMeta::Tool(m) => m,
        _ => panic!("{id} is not a tool"),
    }
}

fn tokens(g: &TaskGraph) -> (u64, u64, u64, u64) {
    let t = g.summary.tokens;
    (t.input, t.output, t.cache_read, t.total)
}

const CODEX_PARENT: &str = "codex/rollout-2026-09-01T10-00-00-fx-parent.jsonl";

/// Item 1: each `token_count` is written twice with the same running total; it counts once.
#[test]
fn codex_token_count_repeats_count_once() {
    let (_, t) = tree(CODEX_PARENT);
    let g = &t.graph;
    // Sum of last_token_usage over distinct totals: input = input - cached.
    assert_eq!(tokens(g), (1300, 140, 3200, 4640));
    // Per step too: the first step's usage is its one token_count, not two.
    let step: u64 = g
        .nodes
        .iter()
        .filter_map(|n| match &n.meta {
            NodeMeta::Agent(m) => Some(m.tokens.input + m.tokens.output + m.tokens.cache_read),
            _ => None,
        })
        .sum();
    assert_eq!(step, 4640);
}

/// Item 2: unified exec — the exit code arrives after the call returned "Process running";
/// a non-zero exit fails the call that started the process (here a test).
#[test]
fn codex_unified_exec_exit_codes_fail_the_call() {
    let (_, t) = tree(CODEX_PARENT);
    let g = &t.graph;
    let test = node(g, "tool-c-test");
    assert_eq!(test.node_type, NodeType::Test);
    assert_eq!(test.status, Status::Failed);
    // The call spans the process run (02.000 → exec_command_end at 09.000).
    assert_eq!(test.duration_ms, 7000);
    assert!(
        tool(g, "tool-c-test")
            .error
            .as_deref()
            .unwrap()
            .contains("exited with code 1")
    );
    // The poll that saw the exit succeeded; the fast failing command failed.
    assert_eq!(node(g, "tool-c-poll").status, Status::Success);
    assert_eq!(node(g, "tool-c-rg").status, Status::Failed);
    assert_eq!(g.summary.counts.errors, 2);
    assert_eq!(g.summary.counts.tests, 1);
}

/// Item 3: `web_search_call` (no call id) and `tool_search_call` are tool nodes.
#[test]
fn codex_items_without_call_id_are_tools() {
    let (_, t) = tree(CODEX_PARENT);
    let g = &t.graph;
    let web: Vec<_> = g
        .nodes
        .iter()
        .filter(|n| matches!(&n.meta, NodeMeta::Tool(m) if m.tool_name == "web_search"))
        .collect();
    assert_eq!(web.len(), 1);
    assert_eq!(web[0].status, Status::Success);
    assert_eq!(node(g, "tool-c-search").status, Status::Success);
    assert_eq!(tool(g, "tool-c-search").tool_name, "tool_search");
}

/// Item 4: a child rollout names its parent thread; the spawn call links to it and the child
/// names its parent.
#[test]
fn codex_subagents_link_both_ways() {
    let (s, t) = tree(CODEX_PARENT);
    assert_eq!(s.children.len(), 1);
    let child = tool(&t.graph, "tool-c-spawn")
        .child_session
        .clone()
        .flatten()
        .expect("spawn_agent linked to its child");
    assert_eq!(child.id, "fx-child");
    assert_eq!(t.children.len(), 1);
    let c = &t.children[0].graph;
    assert_eq!(c.session_id, "fx-child");
    assert_eq!(
        c.meta.header.get("parent_session").and_then(|v| v.as_str()),
        Some("fx-parent")
    );
    let (cs, _) = tree("codex/rollout-2026-09-01T10-00-13-fx-child.jsonl");
    assert_eq!(cs.header.parent_session.as_deref(), Some("fx-parent"));
    assert_eq!(cs.header.delegation_depth, 1);
}
