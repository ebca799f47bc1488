//! Discovery over fixture homes: task list, live flag, load by id / prefix / path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mindgate_taskgraph::discover::env;
use mindgate_taskgraph::{Agent, Catalog, DiscoveryConfig, Error, Status, discover, load};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else if p.extension().is_none_or(|x| x != "py") {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// Just after the fixtures' last events (2026-08-24T19:34:00Z).
fn fixture_now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_787_600_040)
}

/// Fixture homes copied into a temp folder laid out like the agents' own homes.
/// The session's own tokens (its graph's `summary.tokens.total`, children not included).
fn own_tokens(cfg: &DiscoveryConfig, id: &str) -> u64 {
    let mut c = Catalog::new(cfg.clone());
    c.refresh();
    c.tree(id).unwrap().1.graph.summary.tokens.total
}

fn homes() -> (tempfile::TempDir, DiscoveryConfig) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    copy_dir(Path::new("tests/fixtures/dsh"), &home.join(".dsh/sessions"));
    copy_dir(
        Path::new("tests/fixtures/pi"),
        &home.join(".pi/agent/sessions"),
    );
    copy_dir(
        Path::new("tests/fixtures/claude"),
        &home.join(".claude/projects"),
    );
    copy_dir(
        Path::new("tests/fixtures/codex"),
        &home.join(".codex/sessions"),
    );
    let mut cfg = DiscoveryConfig::from_lookup(|_| None, Some(home.to_path_buf()));
    // The fixtures were written on 2026-08-24 around 19:33 UTC: "now" is just after, so the
    // sessions that end open are live (a copy is live only if its events are recent).
    cfg.now = Some(fixture_now());
    (tmp, cfg)
}

#[test]
fn config_from_env_and_defaults() {
    let home = PathBuf::from("/home/u");
    let cfg = DiscoveryConfig::from_lookup(
        |k| (k == env::CODEX_HOME).then(|| PathBuf::from("/opt/codex")),
        Some(home.clone()),
    );
    assert_eq!(cfg.dsh_sessions, Some(home.join(".dsh/sessions")));
    assert_eq!(cfg.pi_sessions, Some(home.join(".pi/agent/sessions")));
    assert_eq!(cfg.claude_projects, Some(home.join(".claude/projects")));
    assert_eq!(
        cfg.codex_sessions,
        Some(PathBuf::from("/opt/codex/sessions"))
    );
    assert_eq!(cfg.live_window, Duration::from_secs(180));
}

#[test]
fn discovers_every_format_with_live_flags() {
    let (_tmp, cfg) = homes();
    let tasks = discover(&cfg);
    let mut rows: Vec<(String, Agent, String, Status, bool, Option<String>)> = tasks
        .iter()
        .map(|t| {
            (
                t.id.clone(),
                t.agent,
                t.workspace.clone(),
                t.status,
                t.live,
                t.parent_session.clone(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "agent-a1",
            "c-main",
            "c-side",
            "cx-live",
            "cx-main",
            "dsh-child",
            "dsh-fail",
            "dsh-live",
            "dsh-main",
            "pi-live",
            "pi-main"
        ]
    );
    insta::assert_json_snapshot!("discovered_tasks", rows);
    for t in &tasks {
        assert_eq!(t.live, t.id.ends_with("-live"), "{}", t.id);
        assert!(t.modified_ms > 0);
    }
    // Subagent sessions (Claude Code `<session>/subagents/agent-*.jsonl`, a DSH child folder)
    // are listed on their own, marked as their parent's child; the parent's totals count each
    // child's tokens once, beside its own.
    let by_id = |id: &str| tasks.iter().find(|t| t.id == id).unwrap();
    for (child, parent) in [("agent-a1", "c-main"), ("dsh-child", "dsh-main")] {
        let (c, p) = (by_id(child), by_id(parent));
        assert_eq!(c.parent_session.as_deref(), Some(parent));
        assert_eq!(c.totals.subagent_sessions, 0);
        assert_eq!(p.totals.subagent_sessions, 1, "{parent}");
        assert_eq!(c.totals.tokens.total, own_tokens(&cfg, child));
        assert_eq!(
            p.totals.tokens.total,
            own_tokens(&cfg, parent) + c.totals.tokens.total,
            "{parent}"
        );
    }
    assert!(
        by_id("agent-a1")
            .path
            .ends_with("c-main/subagents/agent-a1.jsonl")
    );
    // Sidechain records inside a transcript are a child session counted in its totals, but
    // have no file of their own to list.
    let inline = by_id("c-side");
    assert_eq!(inline.totals.subagent_sessions, 1);
    assert!(inline.totals.tokens.total > own_tokens(&cfg, "c-side"));
    assert!(tasks.iter().all(|t| !t.id.contains("sidechain")));
    let plain = by_id("cx-main");
    assert_eq!(plain.totals.subagent_sessions, 0);
    assert_eq!(plain.totals.tokens.total, own_tokens(&cfg, "cx-main"));
    assert_eq!(plain.parent_session, None);
}

#[test]
fn stale_sessions_are_not_live() {
    let (_tmp, mut cfg) = homes();
    cfg.now = Some(SystemTime::now() + Duration::from_secs(3600));
    let tasks = discover(&cfg);
    assert!(tasks.iter().all(|t| !t.live));
    let live = tasks.iter().find(|t| t.id == "dsh-live").unwrap();
    assert_eq!(live.status, Status::Cancelled);
}

#[test]
fn load_by_id_prefix_and_path() {
    let (_tmp, cfg) = homes();
    let s = load(&cfg, "dsh-main").unwrap();
    assert_eq!(s.agent, Agent::Dsh);
    assert_eq!(s.children.len(), 1);
    assert_eq!(load(&cfg, "pi-ma").unwrap().id, "pi-main");
    assert!(matches!(load(&cfg, "dsh-"), Err(Error::Ambiguous { .. })));
    assert!(matches!(load(&cfg, "nope"), Err(Error::NotFound { .. })));
    let p = cfg
        .claude_projects
        .clone()
        .unwrap()
        .join("-work-napkin/c-main.jsonl");
    let s = load(&cfg, p.to_str().unwrap()).unwrap();
    assert_eq!(s.agent, Agent::ClaudeCode);
    assert_eq!(s.children.len(), 1);

    let mut cat = Catalog::new(cfg);
    assert_eq!(cat.refresh().len(), 11);
    let g = cat.graph("cx-main").unwrap();
    assert_eq!(g.status, Status::Success);
    // A second refresh reuses the cached summaries.
    assert_eq!(cat.refresh().len(), 11);
}

#[test]
fn extra_paths_are_searched() {
    let mut cfg = DiscoveryConfig::empty();
    cfg.extra_paths = vec![
        PathBuf::from("tests/fixtures/claude"),
        PathBuf::from("tests/fixtures/dsh"),
    ];
    let mut ids: Vec<String> = discover(&cfg).into_iter().map(|t| t.id).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "agent-a1",
            "c-main",
            "c-side",
            "dsh-child",
            "dsh-fail",
            "dsh-live",
            "dsh-main"
        ]
    );
}

#[test]
fn multi_megabyte_lines_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let big = "x".repeat(3 * 1024 * 1024);
    let lines = [
        serde_json::json!({"type":"user","uuid":"u1","sessionId":"big","timestamp":"2026-08-24T19:33:20Z","message":{"role":"user","content":big}}),
        serde_json::json!({"type":"assistant","uuid":"u2","sessionId":"big","timestamp":"2026-08-24T19:33:21Z","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Read","input":{}}],"stop_reason":"tool_use"}}),
        serde_json::json!({"type":"user","uuid":"u3","sessionId":"big","timestamp":"2026-08-24T19:33:22Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":big}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let p = tmp.path().join("big.jsonl");
    std::fs::write(&p, text).unwrap();
    let s = mindgate_taskgraph::read_session(&p).unwrap();
    assert_eq!(s.agent, Agent::ClaudeCode);
    let g = mindgate_taskgraph::build_graph(&s.events, &Default::default());
    let out = match &g.node("tool-t").unwrap().meta {
        mindgate_taskgraph::NodeMeta::Tool(m) => m.output.clone().unwrap(),
        _ => unreachable!(),
    };
    assert!(out.chars().count() <= 4097);
}

#[test]
fn task_ids_match_exactly_first_then_by_unique_prefix() {
    use mindgate_taskgraph::{IdMatch, match_task_id};
    let ids = ["abc", "abcd", "abx", "zz"];
    let m = |id: &str| match match_task_id(&ids, id, |s| s) {
        IdMatch::One(s) => vec![*s],
        IdMatch::None => vec![],
        IdMatch::Many(v) => v.into_iter().copied().collect(),
    };
    // Exact beats the longer ids it is a prefix of.
    assert_eq!(m("abc"), ["abc"]);
    assert_eq!(m("abcd"), ["abcd"]);
    assert_eq!(m("z"), ["zz"]);
    // Several prefixes: all of them, in list order.
    assert_eq!(m("ab"), ["abc", "abcd", "abx"]);
    assert!(matches!(match_task_id(&ids, "ab", |s| s), IdMatch::Many(_)));
    assert_eq!(m("q"), Vec::<&str>::new());
    assert_eq!(m(""), Vec::<&str>::new());
}
