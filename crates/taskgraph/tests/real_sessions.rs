//! Interop: every reader over the genuine transcripts in `../shared/data/real-sessions`
//! (relative to the repo root; `MINDGATE_REAL_SESSIONS` overrides the folder), compared with
//! the counts its README and `tools/compute.py` give. Skipped when the folder is absent.
//!
//! Token convention (the same for every agent): `input` = every input token that was not a
//! cache read (Claude: input + cache creation; pi: input + cacheWrite; Codex: input − cached),
//! `cache_read` separate, `total = input + output + cache_read`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use mindgate_taskgraph::{
    BuildOptions, NodeMeta, NodeType, Status, TaskGraph, build_session_tree, read_session,
};

fn folder() -> Option<PathBuf> {
    let dir = std::env::var_os("MINDGATE_REAL_SESSIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions")
        });
    dir.is_dir().then_some(dir)
}

/// What a user reads first, per session file.
#[derive(Debug, PartialEq)]
struct Figures {
    /// Tool calls (every attempt of every tool-like node).
    calls: usize,
    /// Failed attempts (a failure later retried with success still counts here).
    failed_attempts: usize,
    /// Edit calls that ran (code-change nodes not cancelled).
    edits: u64,
    /// input, output, cache_read.
    tokens: (u64, u64, u64),
}

fn figures(g: &TaskGraph) -> Figures {
    let mut calls = 0;
    let mut failed = 0;
    for n in &g.nodes {
        if let NodeMeta::Tool(m) = &n.meta {
            calls += m.attempts.len();
            failed += m
                .attempts
                .iter()
                .filter(|a| a.status == Status::Failed)
                .count();
        }
    }
    let t = g.summary.tokens;
    assert_eq!(t.total, t.input + t.output + t.cache_read);
    Figures {
        calls,
        failed_attempts: failed,
        edits: g.summary.counts.code_changes,
        tokens: (t.input, t.output, t.cache_read),
    }
}

/// Expected figures per file (name prefix): from the folder's README and `compute.py`
/// (`--recover` for pi, whose line 440 holds two objects). Edits exclude calls that never ran
/// (pi: those of an `error`/`aborted` message; compute.py counts them).
const EXPECTED: &[(&str, Figures)] = &[
    (
        "claude/apanloco__random__session",
        fig(12, 0, 5, (18_537, 6_911, 506_652)),
    ),
    (
        "claude/codemie-ai__codemie-code__4c2ddfdc",
        fig(6, 0, 4, (37_205, 806, 214_627)),
    ),
    (
        "claude/codemie-ai__codemie-code__agent-36541525",
        fig(0, 0, 0, (16_979, 3, 0)),
    ),
    (
        "claude/codemie-ai__codemie-code__agent-50243ee8",
        fig(0, 0, 0, (16_878, 237, 0)),
    ),
    (
        "claude/codemie-ai__codemie-code__session-196820da",
        fig(65, 2, 1, (1_480_593, 65_263, 2_560_506)),
    ),
    (
        "claude/codemie-ai__codemie-code__session-9eda1058",
        fig(3, 1, 1, (147_314, 4_509, 22_912)),
    ),
    (
        "codex/codemie-ai__codemie-code__rollout-2026-05-11",
        fig(105, 4, 3, (1_126_300, 9_118, 4_929_536)),
    ),
    (
        "codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-29-48",
        fig(5, 0, 0, (131_091, 1_425, 16_384)),
    ),
    (
        "codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-32-38-019ede26-ff03",
        fig(1, 0, 0, (48_597, 235, 0)),
    ),
    (
        "codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-32-38-019ede26-fff1",
        fig(1, 0, 0, (48_600, 247, 0)),
    ),
    (
        "codex/madshn__localpush__rollout-2026-02-23T12-40-23",
        fig(105, 0, 22, (367_673, 36_075, 6_836_352)),
    ),
    (
        "codex/madshn__localpush__rollout-2026-02-23T12-41-04",
        fig(118, 0, 0, (99_460, 14_600, 1_651_968)),
    ),
    (
        "codex/madshn__localpush__rollout-2026-02-23T13-19-38",
        fig(1, 0, 0, (31_013, 431, 3_456)),
    ),
    (
        "codex/madshn__localpush__rollout-2026-02-23T20-34-25",
        fig(5, 0, 0, (59_525, 1_123, 238_848)),
    ),
    (
        "pi/badlogic__pi-mono__large-session",
        fig(391, 19, 131, (4_297_281, 83_156, 43_229_469)),
    ),
    (
        "pi/badlogic__pi-mono__session",
        fig(189, 12, 44, (984_080, 46_995, 25_283_499)),
    ),
    (
        "pi/pinion05__agent-complex-task__01",
        fig(205, 35, 19, (782_661, 104_373, 40_535_104)),
    ),
];

const fn fig(calls: usize, failed_attempts: usize, edits: u64, tokens: (u64, u64, u64)) -> Figures {
    Figures {
        calls,
        failed_attempts,
        edits,
        tokens,
    }
}

fn graph_of(
    dir: &std::path::Path,
    prefix: &str,
) -> (mindgate_taskgraph::Session, mindgate_taskgraph::GraphTree) {
    let (sub, stem) = prefix.split_once('/').unwrap();
    let f = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(stem))
        .unwrap_or_else(|| panic!("no file {prefix}*"));
    let s = read_session(&f).unwrap();
    let t = build_session_tree(&s, &BuildOptions::default());
    (s, t)
}

#[test]
fn readers_match_the_real_sessions_counts() {
    let Some(dir) = folder() else {
        println!("skipped: ../shared/data/real-sessions not present");
        return;
    };
    for (prefix, want) in EXPECTED {
        let (_, t) = graph_of(&dir, prefix);
        let g = &t.graph;
        common::check_critical_path(g).unwrap();
        assert_eq!(&figures(g), want, "{prefix}");
        // Never an empty graph of 1970.
        assert!(
            g.start_time.is_some_and(|t| t > 1_000_000_000_000),
            "{prefix}"
        );
        assert_ne!(g.status, Status::Pending, "{prefix}");
        assert!(!g.title.starts_with('<'), "{prefix}: {}", g.title);
    }
}

#[test]
fn real_sessions_shapes() {
    let Some(dir) = folder() else {
        println!("skipped: ../shared/data/real-sessions not present");
        return;
    };
    // Codex Desktop unified exec: the failing `npm test` failed (then was retried), and the
    // three web searches are tools.
    let (_, t) = graph_of(&dir, "codex/codemie-ai__codemie-code__rollout-2026-05-11");
    let g = &t.graph;
    let failed_test = g.nodes.iter().any(|n| {
        n.node_type == NodeType::Test
            && matches!(&n.meta, NodeMeta::Tool(m) if m.attempts.iter().any(|a| a.status == Status::Failed))
    });
    assert!(failed_test);
    assert_eq!(g.meta.tool_name_counts.get("web_search"), Some(&3));
    // A trailing call without output in an archived rollout: CANCELLED, no error.
    let (_, t) = graph_of(&dir, "codex/madshn__localpush__rollout-2026-02-23T13-19-38");
    assert_eq!(t.graph.summary.counts.errors, 0);
    assert_eq!(t.graph.status, Status::Cancelled);
    // Codex subagents: both spawn calls link to the child rollouts, which name their parent.
    let (s, t) = graph_of(
        &dir,
        "codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-29-48",
    );
    assert_eq!(s.children.len(), 2);
    let linked: Vec<String> = t
        .graph
        .nodes
        .iter()
        .filter_map(|n| match &n.meta {
            NodeMeta::Tool(m) => m.child_session.clone().flatten().map(|c| c.id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(linked.len(), 2);
    for c in &s.children {
        assert!(linked.contains(&c.id));
        assert_eq!(c.header.parent_session.as_deref(), Some(s.id.as_str()));
    }
    assert_eq!(t.graph.meta.tool_name_counts.get("tool_search"), Some(&1));
    // Claude Code ≤ 2.0: the two sidechain files beside the main transcript are its children.
    let (s, _) = graph_of(&dir, "claude/codemie-ai__codemie-code__4c2ddfdc");
    assert_eq!(s.children.len(), 2);
    // The title is the first real prompt, not the /clear envelope.
    let (_, t) = graph_of(&dir, "claude/codemie-ai__codemie-code__session-196820da");
    assert!(t.graph.title.starts_with("ultrathink"), "{}", t.graph.title);
    // pi: line 440 holds two objects; the v3 tree keeps the entries before the bad line.
    let (s, _) = graph_of(&dir, "pi/badlogic__pi-mono__session");
    assert!(
        s.warnings
            .iter()
            .any(|w| w.line == 440 && w.message.contains("2 JSON objects"))
    );
    let (s, t) = graph_of(&dir, "pi/pinion05__agent-complex-task__01");
    assert!(s.warnings.iter().any(|w| w.message.contains("re-attached")));
    assert!(t.graph.summary.counts.phases >= 1);
}

/// Issue 26: the subagent sessions among the genuine transcripts (the Claude Code ≤ 2.0
/// `agent-*.jsonl` sidechain files, the two Codex child rollouts) are listed on their own,
/// each marked with its listed parent's id; the parent's totals hold its own tokens plus each
/// child's once.
#[test]
fn real_subagent_sessions_are_listed_as_children() {
    let Some(dir) = folder() else {
        println!("skipped: ../shared/data/real-sessions not present");
        return;
    };
    let cfg = mindgate_taskgraph::DiscoveryConfig {
        extra_paths: vec![dir.join("claude"), dir.join("codex")],
        ..mindgate_taskgraph::DiscoveryConfig::empty()
    };
    let tasks = mindgate_taskgraph::discover(&cfg);
    let children: Vec<_> = tasks
        .iter()
        .filter(|t| t.parent_session.is_some())
        .collect();
    let names: Vec<String> = children
        .iter()
        .map(|t| t.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(children.len(), 4, "{names:?}");
    for t in &children {
        let parent_id = t.parent_session.as_deref().unwrap();
        let parent = tasks
            .iter()
            .find(|p| p.id == parent_id)
            .unwrap_or_else(|| panic!("{}: parent {parent_id} not listed", t.id));
        let s = read_session(&parent.path).unwrap();
        let tree = build_session_tree(&s, &BuildOptions::default());
        assert!(
            s.children.iter().any(|c| c.path == t.path),
            "{} is not a child of {parent_id}",
            t.id
        );
        let own = tree.graph.summary.tokens.total;
        let kids: u64 = tree
            .children
            .iter()
            .map(|c| c.graph.summary.tokens.total)
            .sum();
        assert!(kids > 0);
        assert_eq!(parent.totals.tokens.total, own + kids, "{parent_id}");
        assert_eq!(parent.totals.subagent_sessions, s.children.len() as u64);
    }
    // The sidechain files and the Codex children, by shape.
    assert_eq!(names.iter().filter(|n| n.contains("__agent-")).count(), 2);
    assert_eq!(names.iter().filter(|n| n.contains("rollout-")).count(), 2);
}
