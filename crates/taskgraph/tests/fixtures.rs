//! Fixture sessions of every format: golden snapshots plus scenario checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{CLAUDE, CODEX, DSH, PI, check_critical_path};
use mindgate_taskgraph::{
    Agent, BuildOptions, EdgeType, GraphTree, IncrementalGraph, NodeMeta, NodeType, Session,
    Status, TaskGraph, build_graph, build_session_tree, build_session_tree_followable,
    read_session,
};

fn load(path: &str) -> Session {
    read_session(Path::new(path)).unwrap()
}

fn tree(path: &str, live: bool) -> (Session, GraphTree) {
    let s = load(path);
    let t = build_session_tree(
        &s,
        &BuildOptions {
            live,
            ..BuildOptions::default()
        },
    );
    (s, t)
}

fn node<'a>(g: &'a TaskGraph, id: &str) -> &'a mindgate_taskgraph::Node {
    g.node(id).unwrap_or_else(|| panic!("no node {id}"))
}

fn tool_meta<'a>(g: &'a TaskGraph, id: &str) -> &'a mindgate_taskgraph::graph::ToolMeta {
    match &node(g, id).meta {
        NodeMeta::Tool(m) => m,
        _ => panic!("{id} is not a tool"),
    }
}

fn agent_meta<'a>(g: &'a TaskGraph, id: &str) -> &'a mindgate_taskgraph::graph::AgentMeta {
    match &node(g, id).meta {
        NodeMeta::Agent(m) => m,
        _ => panic!("{id} is not a step"),
    }
}

fn has_edge(g: &TaskGraph, s: &str, t: &str, ty: EdgeType) -> bool {
    g.edges
        .iter()
        .any(|e| e.source == s && e.target == t && e.edge_type == ty)
}

fn check_all(t: &GraphTree) {
    check_critical_path(&t.graph).unwrap();
    for c in &t.children {
        check_all(c);
    }
}

/// Building incrementally in small chunks gives exactly the full build.
fn check_incremental(s: &Session, live: bool) {
    let opts = BuildOptions {
        live,
        agent: Some(s.agent),
        session_id: Some(s.id.clone()),
        ..BuildOptions::default()
    };
    let full = build_graph(&s.events, &opts);
    for chunk in [1, 3, 7] {
        let mut inc = IncrementalGraph::new(opts.clone());
        for part in s.events.chunks(chunk) {
            inc.append(part);
            check_critical_path(inc.graph()).unwrap();
        }
        assert_eq!(inc.finish(), full, "chunk size {chunk}");
    }
    // The tree built to be followed is the tree, and in live mode its graph as built (what a
    // follower goes on from) is the finished graph.
    let (followable, built) = build_session_tree_followable(s, &opts);
    assert_eq!(followable, build_session_tree(s, &opts));
    let in_order = s.events.windows(2).all(|w| w[0].seq <= w[1].seq);
    assert_eq!(built.is_some(), live && in_order);
    if let Some(b) = built {
        assert_eq!(b.graph(), &followable.graph);
    }
}

#[test]
fn dsh_main_recovered_success_with_subagent() {
    let (s, t) = tree(&format!("{DSH}/s-main"), false);
    assert_eq!(s.agent, Agent::Dsh);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let g = &t.graph;
    assert_eq!(g.status, Status::Success);
    assert_eq!(g.title, "NIS-11688 修复草稿保存崩溃");
    assert_eq!(g.workspace, "--Users-kevin-Desktop-Nothing-Napkin--");
    // Every node type.
    for ty in [
        NodeType::Task,
        NodeType::Phase,
        NodeType::Agent,
        NodeType::Tool,
        NodeType::Skill,
        NodeType::Subagent,
        NodeType::Code,
        NodeType::Test,
        NodeType::Plan,
    ] {
        assert!(g.nodes.iter().any(|n| n.node_type == ty), "missing {ty:?}");
    }
    // Parallel calls fork from step 1.1 and join into step 1.2.
    for tool in ["tool-call_plan", "tool-call_read", "tool-call_grep"] {
        assert!(has_edge(g, tool, "step-1-2", EdgeType::Consumes), "{tool}");
    }
    assert!(has_edge(
        g,
        "step-1-1",
        "tool-call_plan",
        EdgeType::Produces
    ));
    assert!(has_edge(
        g,
        "step-1-2",
        "tool-call_edit",
        EdgeType::Modifies
    ));
    assert!(has_edge(
        g,
        "step-1-2",
        "tool-call_skill",
        EdgeType::Invokes
    ));
    assert!(has_edge(
        g,
        "step-1-3",
        "tool-call_test1",
        EdgeType::Validates
    ));
    assert!(has_edge(
        g,
        "step-2-1",
        "tool-call_sub",
        EdgeType::Delegates
    ));
    // Failed then retried test: one node, two attempts, duration = sum of attempts.
    let test = node(g, "tool-call_test1");
    assert_eq!(test.node_type, NodeType::Test);
    assert_eq!(test.status, Status::Success);
    assert_eq!(test.duration_ms, 12_000 + 12_000);
    let m = tool_meta(g, "tool-call_test1");
    assert_eq!(m.attempts.len(), 2);
    assert_eq!(m.attempts[0].status, Status::Failed);
    assert!(m.retried);
    assert!(g.node("tool-call_test2").is_none());
    assert!(has_edge(
        g,
        "tool-call_test1",
        "tool-call_test1",
        EdgeType::Retries
    ));
    // LLM retry on step 1.4.
    let s14 = agent_meta(g, "step-1-4");
    assert_eq!(s14.attempts.len(), 1);
    assert_eq!(s14.attempts[0].failure.code.as_deref(), Some("529"));
    assert!(s14.retried);
    assert_eq!(node(g, "step-1-4").status, Status::Success);
    // Phase 1 recovered from the failing test.
    assert_eq!(node(g, "phase-1").status, Status::Success);
    // Plan todos, code file.
    assert_eq!(
        tool_meta(g, "tool-call_plan").todos.as_ref().map(Vec::len),
        Some(2)
    );
    assert_eq!(
        tool_meta(g, "tool-call_edit").file,
        Some(Some("src/draft.ts".into()))
    );
    assert_eq!(g.summary.files_changed, ["src/draft.ts"]);
    // Subagent linked to the child session (window match on parentSession + time).
    let child = tool_meta(g, "tool-call_sub")
        .child_session
        .clone()
        .flatten()
        .unwrap();
    assert_eq!(child.id, "dsh-child");
    assert_eq!(child.status, Status::Success);
    assert_eq!(t.children.len(), 1);
    assert_eq!(t.children[0].graph.task_id, "dsh-main");
    // Tokens.
    assert_eq!(
        g.summary.tokens.input,
        1200 + 2000 + 2500 + 2600 + 2700 + 3000 + 3100
    );
    assert_eq!(g.summary.counts.retries, 2);
    assert_eq!(g.summary.counts.errors, 0);
    check_all(&t);
    check_incremental(&s, false);
    insta::assert_json_snapshot!("dsh_main", t);
}

#[test]
fn dsh_child_v2_shapes() {
    let (s, t) = tree(&format!("{DSH}/s-child"), false);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let g = &t.graph;
    assert_eq!(s.header.parent_session.as_deref(), Some("dsh-main"));
    assert_eq!(g.summary.tokens.input, 1900);
    assert_eq!(g.summary.tokens.cache_read, 900);
    assert_eq!(
        agent_meta(g, "step-1-1").attempts[0].failure.message,
        "Rate limited"
    );
    check_incremental(&s, false);
}

#[test]
fn dsh_final_failure_and_aborted_turn() {
    let (s, t) = tree(&format!("{DSH}/s-fail"), false);
    let g = &t.graph;
    assert_eq!(g.status, Status::Failed);
    assert_eq!(node(g, "phase-1").status, Status::Cancelled);
    assert_eq!(node(g, "tool-f_build").status, Status::Cancelled);
    assert_eq!(node(g, "phase-2").status, Status::Failed);
    assert_eq!(node(g, "tool-f_test").status, Status::Failed);
    assert_eq!(node(g, "step-2-2").status, Status::Failed);
    assert_eq!(g.meta.final_turn_reason.kind.as_deref(), Some("error"));
    assert_eq!(g.summary.failed_steps.len(), 2);
    // The torn last line is a warning with file and line; the unknown type is ignored.
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].file.ends_with("session.v4.jsonl"));
    assert!(s.warnings[0].message.contains("truncated"));
    check_all(&t);
    check_incremental(&s, false);
    insta::assert_json_snapshot!("dsh_fail", t);
}

#[test]
fn dsh_unclosed_live_and_archived() {
    let (s, live) = tree(&format!("{DSH}/s-live"), true);
    let g = &live.graph;
    assert_eq!(g.status, Status::Running);
    assert_eq!(g.end_time, None);
    assert_eq!(node(g, "tool-l_tail").status, Status::Running);
    assert_eq!(node(g, "step-1-1").status, Status::Running);
    assert!(g.meta.live);
    let (_, arch) = tree(&format!("{DSH}/s-live"), false);
    let g = &arch.graph;
    assert_eq!(g.status, Status::Cancelled);
    // A call without output in an archived session never ran to a result: CANCELLED.
    assert_eq!(node(g, "tool-l_tail").status, Status::Cancelled);
    assert!(tool_meta(g, "tool-l_tail").unclosed);
    assert_eq!(g.summary.counts.errors, 0);
    assert_eq!(node(g, "step-1-1").status, Status::Cancelled);
    assert!(agent_meta(g, "step-1-1").unclosed);
    assert_eq!(node(g, "phase-1").status, Status::Cancelled);
    check_all(&live);
    check_all(&arch);
    check_incremental(&s, true);
    check_incremental(&s, false);
    insta::assert_json_snapshot!("dsh_live", live);
    insta::assert_json_snapshot!("dsh_archived_unclosed", arch);
}

#[test]
fn dsh_torn_zstd_frame_keeps_earlier_lines() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(format!("{DSH}/s-main/session.jsonl.zstd")).unwrap();
    let torn = &src[..src.len() - 40];
    let sdir = dir.path().join("s-main");
    std::fs::create_dir_all(&sdir).unwrap();
    std::fs::write(sdir.join("session.jsonl.zstd"), torn).unwrap();
    let s = read_session(&sdir).unwrap();
    assert!(!s.warnings.is_empty());
    assert!(
        s.warnings.iter().any(|w| w.message.contains("zstd")),
        "{:?}",
        s.warnings
    );
    let full = load(&format!("{DSH}/s-main"));
    assert!(s.events.len() > full.events.len() / 2);
    assert!(s.events.len() < full.events.len());
    assert_eq!(s.events[..], full.events[..s.events.len()]);
    let g = build_graph(&s.events, &BuildOptions::default());
    check_critical_path(&g).unwrap();
}

#[test]
fn pi_branches_retries_and_aborted_turn() {
    let (s, t) = tree(
        &format!("{PI}/2026-08-24T19-33-20-000Z_pi-main.jsonl"),
        false,
    );
    assert_eq!(s.agent, Agent::Pi);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let branches = s.meta["abandoned_branches"].as_array().unwrap();
    assert_eq!(branches.len(), 1);
    assert_eq!(branches[0]["fork_id"], "e13");
    assert_eq!(
        branches[0]["entry_ids"],
        serde_json::json!(["e14", "e15", "e15b"])
    );
    let g = &t.graph;
    assert_eq!(g.status, Status::Success);
    assert_eq!(g.title, "Uploader retry");
    assert_eq!(g.summary.counts.phases, 3);
    assert_eq!(node(g, "phase-2").status, Status::Cancelled);
    assert!(has_edge(g, "tool-p_read", "step-1-2", EdgeType::Consumes));
    assert!(has_edge(g, "tool-p_ls", "step-1-2", EdgeType::Consumes));
    // The error response and its retry are one step.
    assert_eq!(agent_meta(g, "step-1-2").attempts.len(), 1);
    assert_eq!(node(g, "step-1-2").status, Status::Success);
    // The failed edit and its identical re-send are one code node.
    assert_eq!(tool_meta(g, "tool-p_edit1").attempts.len(), 2);
    assert_eq!(node(g, "tool-p_edit1").status, Status::Success);
    assert_eq!(node(g, "tool-p_test").node_type, NodeType::Test);
    assert_eq!(node(g, "tool-p_todo").node_type, NodeType::Plan);
    check_all(&t);
    check_incremental(&s, false);
    insta::assert_json_snapshot!("pi_main", t);
}

#[test]
fn pi_live_session() {
    let (s, t) = tree(
        &format!("{PI}/2026-08-24T19-40-00-000Z_pi-live.jsonl"),
        true,
    );
    assert_eq!(s.warnings.len(), 1);
    assert_eq!(s.warnings[0].line, 4);
    assert_eq!(t.graph.status, Status::Running);
    assert_eq!(node(&t.graph, "tool-pl_deploy").status, Status::Running);
    check_incremental(&s, true);
}

#[test]
fn claude_split_responses_subagent_and_final_failure() {
    let (s, t) = tree(&format!("{CLAUDE}/c-main.jsonl"), false);
    assert_eq!(s.agent, Agent::ClaudeCode);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let g = &t.graph;
    assert_eq!(g.session_id, "c-main");
    assert_eq!(g.title, "Fix flaky upload test");
    assert_eq!(g.status, Status::Failed);
    // One step for the four lines of msg_1; usage counted once.
    let s11 = agent_meta(g, "step-1-1");
    assert_eq!(s11.tool_call_count, 3);
    assert_eq!((s11.tokens.input, s11.tokens.output), (510, 50));
    assert_eq!(s11.model.as_deref(), Some("claude-opus-4-1"));
    for tool in ["tool-t_todo", "tool-t_read", "tool-t_grep"] {
        assert!(has_edge(g, tool, "step-1-2", EdgeType::Consumes), "{tool}");
    }
    // api_error → retry on the next step.
    assert_eq!(agent_meta(g, "step-1-2").attempts.len(), 1);
    assert_eq!(
        agent_meta(g, "step-1-2").attempts[0].failure.message,
        "Overloaded"
    );
    assert_eq!(
        tool_meta(g, "tool-t_todo").todos.as_ref().map(Vec::len),
        Some(2)
    );
    assert_eq!(node(g, "tool-t_skill").name, "skill:commit");
    assert_eq!(node(g, "tool-t_edit").name, "upload.test.ts");
    assert_eq!(tool_meta(g, "tool-t_test1").attempts.len(), 2);
    let child = tool_meta(g, "tool-t_task")
        .child_session
        .clone()
        .flatten()
        .unwrap();
    assert_eq!(child.id, "agent-a1");
    assert_eq!(node(g, "phase-1").status, Status::Success);
    assert_eq!(node(g, "phase-2").status, Status::Cancelled);
    assert_eq!(node(g, "phase-3").status, Status::Failed);
    check_all(&t);
    check_incremental(&s, false);
    insta::assert_json_snapshot!("claude_main", t);
}

#[test]
fn claude_sidechain_child_matched_by_time() {
    let (s, t) = tree(&format!("{CLAUDE}/c-side.jsonl"), false);
    assert_eq!(s.children.len(), 1);
    let g = &t.graph;
    assert_eq!(g.status, Status::Success);
    let child = tool_meta(g, "tool-k_task")
        .child_session
        .clone()
        .flatten()
        .unwrap();
    assert_eq!(child.id, "c-side/sidechain-1");
    check_all(&t);
    insta::assert_json_snapshot!("claude_sidechain", t);
}

#[test]
fn codex_rollout() {
    let (s, t) = tree(
        &format!("{CODEX}/rollout-2026-08-24T19-33-20-cx-main.jsonl"),
        false,
    );
    assert_eq!(s.agent, Agent::Codex);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let g = &t.graph;
    assert_eq!(g.status, Status::Success);
    assert_eq!(g.title, "Make the parser lenient");
    assert!(has_edge(g, "tool-call_1", "step-1-2", EdgeType::Consumes));
    assert!(has_edge(g, "tool-call_2", "step-1-2", EdgeType::Consumes));
    assert_eq!(node(g, "tool-call_3").node_type, NodeType::Plan);
    assert_eq!(
        tool_meta(g, "tool-call_3").todos.as_ref().map(Vec::len),
        Some(2)
    );
    assert_eq!(node(g, "tool-call_4").node_type, NodeType::Code);
    assert_eq!(
        tool_meta(g, "tool-call_4").file,
        Some(Some("src/parser.rs".into()))
    );
    assert_eq!(node(g, "tool-call_5").node_type, NodeType::Test);
    assert_eq!(tool_meta(g, "tool-call_5").attempts.len(), 2);
    assert_eq!(node(g, "tool-call_5").status, Status::Success);
    assert_eq!(agent_meta(g, "step-2-1").attempts.len(), 1);
    assert_eq!(node(g, "phase-2").status, Status::Cancelled);
    assert_eq!(node(g, "tool-call_7").status, Status::Cancelled);
    assert_eq!(agent_meta(g, "step-1-1").tokens.cache_read, 3000);
    assert_eq!(agent_meta(g, "step-1-1").tokens.input, 2000);
    check_all(&t);
    check_incremental(&s, false);
    insta::assert_json_snapshot!("codex_main", t);
}

#[test]
fn codex_live_rollout() {
    let (s, t) = tree(
        &format!("{CODEX}/rollout-2026-08-24T19-40-00-cx-live.jsonl"),
        true,
    );
    assert_eq!(t.graph.status, Status::Running);
    assert_eq!(node(&t.graph, "tool-call_m").status, Status::Running);
    check_incremental(&s, true);
    let (_, a) = tree(
        &format!("{CODEX}/rollout-2026-08-24T19-40-00-cx-live.jsonl"),
        false,
    );
    assert_eq!(node(&a.graph, "tool-call_m").status, Status::Cancelled);
    assert_eq!(a.graph.status, Status::Cancelled);
}

#[test]
fn events_serialise_in_dsh_vocabulary() {
    let s = load(&format!("{DSH}/s-main"));
    let v = serde_json::to_value(&s.events[..6]).unwrap();
    insta::assert_json_snapshot!("dsh_main_events_head", v);
    let back: Vec<mindgate_taskgraph::Event> = serde_json::from_value(v).unwrap();
    assert_eq!(back, s.events[..6]);
}
