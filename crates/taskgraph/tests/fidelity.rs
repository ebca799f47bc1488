//! Readers true to real sessions (issue #11): each test reads a small hand-written fixture
//! that reproduces one shape the agents really write.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::check_critical_path;
use mindgate_taskgraph::graph::ToolMeta;
use mindgate_taskgraph::{
    BuildOptions, GraphTree, NodeMeta, NodeType, Session, Status, TaskGraph, WaitKind,
    build_session_tree, read_session,
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

const PI_TREE: &str = "pi/2026-09-01T10-00-00-000Z_fx-pi.jsonl";

/// Item 7: pi `cacheWrite` counts as input (input = every non-cache-read input token).
#[test]
fn pi_cache_write_counts_as_input() {
    let (_, t) = tree(PI_TREE);
    assert_eq!(tokens(&t.graph), (1018, 31, 150, 1199));
}

/// Item 8: an unreadable line does not cut off the entries before it: the orphan that
/// follows is re-attached to the entry before it in file order, with a warning.
#[test]
fn pi_tree_keeps_the_prefix_of_an_unreadable_line() {
    let (s, t) = tree(PI_TREE);
    let g = &t.graph;
    assert_eq!(g.title, "tidy the docs");
    assert_eq!(node(g, "tool-t1").status, Status::Success);
    assert_eq!(g.summary.counts.phases, 2);
    let invalid = s.warnings.iter().find(|w| w.line == 5).unwrap();
    assert!(invalid.message.contains("invalid JSON"), "{invalid}");
    let orphan = s.warnings.iter().find(|w| w.line == 6).unwrap();
    assert!(orphan.message.contains("re-attached"), "{orphan}");
    assert!(orphan.message.contains("3 earlier entries"), "{orphan}");
}

/// Item 9: a line holding two JSON objects yields both, with a warning.
#[test]
fn several_objects_on_one_line_are_each_read() {
    let (s, t) = tree(PI_TREE);
    let w = s.warnings.iter().find(|w| w.line == 7).unwrap();
    assert!(w.message.contains("2 JSON objects"), "{w}");
    // The second object is the last assistant message: the task ends on it.
    assert_eq!(t.graph.status, Status::Success);
    assert_eq!(node(&t.graph, "phase-2").status, Status::Success);
}

/// Item 10: the edits of a message that errored never ran: CANCELLED, not code changes.
#[test]
fn pi_calls_of_an_errored_message_are_cancelled() {
    let (_, t) = tree(PI_TREE);
    let g = &t.graph;
    for id in ["tool-t2", "tool-t3"] {
        assert_eq!(node(g, id).node_type, NodeType::Code);
        assert_eq!(node(g, id).status, Status::Cancelled, "{id}");
    }
    assert_eq!(g.summary.counts.code_changes, 1);
    assert_eq!(g.summary.files_changed, ["/work/fx/a.md"]);
    // The one error is the model step that failed, not its calls.
    let failed: Vec<_> = g
        .summary
        .failed_steps
        .iter()
        .map(|r| r.id.to_string())
        .collect();
    assert_eq!(failed, ["step-1-2"]);
}

/// Item 10: a trailing call without output in an archived session is CANCELLED (and an edit
/// that never returned is no code change); the task is FAILED because its last work outcome
/// is a failed test with no later success.
#[test]
fn codex_trailing_call_is_cancelled_and_task_fails_on_its_last_outcome() {
    let (_, t) = tree("codex/rollout-2026-09-01T11-00-00-fx-cut.jsonl");
    let g = &t.graph;
    assert_eq!(node(g, "tool-c1").node_type, NodeType::Test);
    assert_eq!(node(g, "tool-c1").status, Status::Failed);
    let cut = node(g, "tool-c2");
    assert_eq!(cut.status, Status::Cancelled);
    assert!(tool(g, "tool-c2").unclosed);
    assert_eq!(g.summary.counts.code_changes, 0);
    assert_eq!(g.summary.counts.errors, 1);
    assert_eq!(g.status, Status::Failed);
    // Issue 26 item 2: a call that never ran was waiting (here for an answer that never
    // came), an `interrupted` segment, never agent work on the path.
    let waits: Vec<(WaitKind, &str, i64)> = g
        .critical_path
        .waiting
        .iter()
        .map(|w| (w.kind, w.node_id.as_str(), w.duration_ms))
        .collect();
    assert_eq!(waits, [(WaitKind::Interrupted, "tool-c2", 100)]);
    assert_eq!(g.summary.waiting_ms, 100);
    assert!(!g.critical_path.hot_node_ids.iter().any(|h| h == "tool-c2"));
}

const CLAUDE_PAR: &str = "claude/-work-fx/cl-par.jsonl";

/// Item 5: one `message.id` streamed over several lines with tool results in between is one
/// LLM step, and only its final usage counts (the first chunks carry placeholders).
#[test]
fn claude_parallel_calls_of_one_message_are_one_step() {
    let (_, t) = tree(CLAUDE_PAR);
    let g = &t.graph;
    let steps: Vec<&str> = g
        .nodes
        .iter()
        .filter(|n| n.node_type == NodeType::Agent)
        .map(|n| n.id.as_str())
        .collect();
    assert_eq!(steps, ["step-2-1", "step-2-2"]);
    for k in ["tool-k1", "tool-k2"] {
        assert_eq!(node(g, k).parent_id.as_deref(), Some("step-2-1"), "{k}");
        assert_eq!(node(g, k).status, Status::Success);
    }
    match &node(g, "step-2-1").meta {
        NodeMeta::Agent(m) => {
            assert_eq!(
                (m.tokens.input, m.tokens.output, m.tokens.cache_read),
                (103, 90, 1000)
            );
            assert_eq!(m.tool_call_count, 2);
        }
        _ => unreachable!(),
    }
    assert_eq!(tokens(g), (128, 100, 2100, 2328));
}

/// Item 12: the title is the first real request, not a slash-command envelope.
#[test]
fn titles_skip_command_envelopes_and_preambles() {
    let (_, t) = tree(CLAUDE_PAR);
    assert_eq!(t.graph.title, "read both config files");
    let (_, t) = tree(CODEX_PARENT);
    assert_eq!(t.graph.title, "fix the failing test");
}

/// Item 6: a sidechain transcript opened directly is a session with a parent (not an empty
/// PENDING graph of 1970); beside its parent it is also read as the parent's child, and listed as
/// a task marked as that child.
#[test]
fn claude_sidechain_transcripts_render_and_fold_into_their_parent() {
    let (s, t) = tree("claude/-work-fx/agent-sc1.jsonl");
    assert_eq!(s.id, "agent-sc1");
    assert_eq!(s.header.parent_session.as_deref(), Some("cl-par"));
    let g = &t.graph;
    assert_eq!(g.status, Status::Success);
    assert_eq!(g.start_time, Some(1_788_263_998_000));
    assert_eq!(tokens(g), (10, 3, 0, 13));
    assert_eq!(node(g, "tool-g1").status, Status::Success);
    // Read through its parent, it is a child.
    let (parent, pt) = tree(CLAUDE_PAR);
    let ids: Vec<&str> = parent.children.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["agent-sc1"]);
    assert_eq!(pt.children[0].graph.summary.tokens.total, 13);
    // Discovery lists both (issue 26: a subagent session is listed on its own, marked as its
    // parent's child), and the parent's totals count the child's tokens once.
    let cfg = mindgate_taskgraph::DiscoveryConfig {
        claude_projects: Some(Path::new(FX).join("claude")),
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    };
    let tasks = mindgate_taskgraph::discover(&cfg);
    let listed: Vec<(&str, Option<&str>)> = tasks
        .iter()
        .map(|t| (t.id.as_str(), t.parent_session.as_deref()))
        .collect();
    assert_eq!(listed, [("cl-par", None), ("agent-sc1", Some("cl-par"))]);
    assert_eq!(tasks[0].totals.subagent_sessions, 1);
    assert_eq!(
        tasks[0].totals.tokens.total,
        pt.graph.summary.tokens.total + 13
    );
    assert_eq!(tasks[1].totals.tokens.total, 13);
}

/// Item 11: liveness needs recent events as well as a recent file: a fresh copy of an old
/// session that ends open is not live.
#[test]
fn a_copied_old_session_is_not_live() {
    let tmp = tempfile::tempdir().unwrap();
    let day = tmp.path().join("2026/08/24");
    std::fs::create_dir_all(&day).unwrap();
    let name = "rollout-2026-08-24T19-40-00-cx-live.jsonl";
    std::fs::copy(Path::new(common::CODEX).join(name), day.join(name)).unwrap();
    let mut cfg = mindgate_taskgraph::DiscoveryConfig {
        codex_sessions: Some(tmp.path().to_path_buf()),
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    };
    cfg.now = Some(std::time::SystemTime::now());
    let tasks = mindgate_taskgraph::discover(&cfg);
    assert_eq!(tasks.len(), 1);
    assert!(!tasks[0].live);
    assert_eq!(tasks[0].status, Status::Cancelled);
    // The same file when its last event (19:33:23) is recent: live.
    cfg.now = Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_787_600_040));
    let tasks = mindgate_taskgraph::discover(&cfg);
    assert!(tasks[0].live);
    assert_eq!(tasks[0].status, Status::Running);
}

/// Item 14: the critical path crosses turns: it chains each turn's work into the next
/// (last step, and calls no step consumed, → next phase), so it explains the task's time.
#[test]
fn critical_path_crosses_turns() {
    let (_, t) = tree(PI_TREE);
    let cp = &t.graph.critical_path;
    let ids: Vec<&str> = cp.node_ids.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        ids,
        [
            "task", "phase-1", "step-1-1", "tool-t1", "step-1-2", "phase-2", "step-2-1"
        ]
    );
    // Turn 1: step 1.1 (4 s less its edit's 1 s), the edit (1 s), step 1.2 (4 s); turn 2:
    // step 2.1 (3 s). Without the cross-turn edges the path stopped at the end of one turn.
    assert_eq!(cp.duration_ms, 3_000 + 1_000 + 4_000 + 3_000);
    let (_, t) = tree(CODEX_PARENT);
    check_critical_path(&t.graph).unwrap();
}

/// Item 13: one workspace string whichever way a session was found (Claude Code's folder slug
/// `-work-fx` is not what a `--sessions` path gives), and sessions nested at any depth under
/// a `--sessions` folder are found (a Codex tree `codex/sessions/YYYY/MM/DD/` in a mixed
/// folder).
#[test]
fn one_workspace_string_and_discovery_at_any_depth() {
    let via_home = mindgate_taskgraph::discover(&mindgate_taskgraph::DiscoveryConfig {
        claude_projects: Some(Path::new(FX).join("claude")),
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    });
    let via_path = mindgate_taskgraph::discover(&mindgate_taskgraph::DiscoveryConfig {
        extra_paths: vec![Path::new(FX).join("claude/-work-fx/cl-par.jsonl")],
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    });
    assert_eq!(via_home[0].workspace, "--work-fx--");
    assert_eq!(via_path[0].workspace, via_home[0].workspace);

    let tmp = tempfile::tempdir().unwrap();
    let day = tmp
        .path()
        .join("mixed/backup/old/codex/sessions/2026/09/01");
    std::fs::create_dir_all(&day).unwrap();
    let name = "rollout-2026-09-01T11-00-00-fx-cut.jsonl";
    std::fs::copy(Path::new(FX).join("codex").join(name), day.join(name)).unwrap();
    let found = mindgate_taskgraph::find_sessions(&mindgate_taskgraph::DiscoveryConfig {
        extra_paths: vec![tmp.path().join("mixed")],
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    });
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].agent, mindgate_taskgraph::Agent::Codex);
}

/// Item 13: a `.jsonl` under `--sessions` that is in no agent's format is reported as skipped
/// (with the reason), by the scan and by the catalog, next to the sessions that are listed.
#[test]
fn files_in_no_agents_format_are_reported_as_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let mixed = tmp.path().join("mixed");
    std::fs::create_dir_all(mixed.join("logs")).unwrap();
    let pi = "2026-09-01T10-00-00-000Z_fx-pi.jsonl";
    std::fs::copy(Path::new(FX).join("pi").join(pi), mixed.join(pi)).unwrap();
    let log = mixed.join("logs/server-log.jsonl");
    std::fs::copy(Path::new(FX).join("unknown/server-log.jsonl"), &log).unwrap();
    // Not a `.jsonl`: never a candidate, never reported.
    std::fs::write(mixed.join("notes.txt"), "hello\n").unwrap();
    let config = mindgate_taskgraph::DiscoveryConfig {
        extra_paths: vec![mixed.clone()],
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    };
    let found = mindgate_taskgraph::scan_sessions(&config);
    assert_eq!(found.sessions.len(), 1);
    assert_eq!(found.sessions[0].agent, mindgate_taskgraph::Agent::Pi);
    assert_eq!(found.skipped.len(), 1, "{:?}", found.skipped);
    assert_eq!(found.skipped[0].path, log);
    assert!(
        found.skipped[0]
            .reason
            .contains("is not a DSH, pi, Claude Code, Codex, Gemini CLI or OpenCode session"),
        "{:?}",
        found.skipped[0]
    );
    assert_eq!(
        found.skipped[0].to_string(),
        format!("skipping {}: {}", log.display(), found.skipped[0].reason)
    );
    // The same file given directly as a session path is reported the same way.
    let direct = mindgate_taskgraph::scan_sessions(&mindgate_taskgraph::DiscoveryConfig {
        extra_paths: vec![log.clone()],
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    });
    assert_eq!(direct.skipped, found.skipped);
    // The catalog behind the HTTP and MCP task lists keeps the same report.
    let mut catalog = mindgate_taskgraph::Catalog::new(config);
    assert_eq!(catalog.refresh().len(), 1);
    assert_eq!(catalog.skipped(), &found.skipped[..]);
}

const CLAUDE_WAIT: &str = "waiting/claude-rejected-write.jsonl";

/// Issue 26 item 2: a Write the person rejected after 1m 55s at the permission prompt is
/// waiting, not work: it weighs nothing on the critical path, is never hot, and its time shows
/// as a `permission` segment beside the reply between the turns; the summary totals both.
#[test]
fn waiting_for_the_person_is_not_agent_work() {
    let (_, t) = tree(CLAUDE_WAIT);
    let g = &t.graph;
    let cp = &g.critical_path;
    // Still a failed call for the counts (the rejection is its outcome).
    assert_eq!(node(g, "tool-w1").status, Status::Failed);
    assert_eq!(node(g, "tool-w1").duration_ms, 115_000);
    assert!(!cp.hot_node_ids.iter().any(|h| h == "tool-w1"));
    // Agent work on the path: turn 1 (step 1.1's 5 s less its Read's 2 s, the Read; step 1.2's
    // 3 s less its Write is 0) and turn 2 (the 10 s call and the 10 s answer; step 2.1's own
    // time is its call's), never the 115 s prompt or the 25 s reply.
    assert_eq!(cp.duration_ms, 3_000 + 2_000 + 10_000 + 10_000);
    let waits: Vec<(WaitKind, &str, i64)> = cp
        .waiting
        .iter()
        .map(|w| (w.kind, w.node_id.as_str(), w.duration_ms))
        .collect();
    assert_eq!(
        waits,
        [
            (WaitKind::Permission, "tool-w1", 115_000),
            (WaitKind::UserReply, "phase-2", 25_000)
        ]
    );
    assert_eq!(cp.waiting_ms, 140_000);
    assert_eq!(g.summary.waiting_ms, 140_000);
    // Nine path nodes: the cap of 10 % leaves one hot node (the earliest of the 10 s ones).
    assert_eq!(cp.node_ids.len(), 9);
    assert_eq!(cp.hot_node_ids, ["tool-b1"]);
}
