//! Issue 26 item 4: one set of counts. For every fixture session and every genuine session in
//! `../shared/data/real-sessions` (when present), the headline counts (`summary.headline`,
//! computed once by `mindgate_taskgraph::headline`) are the same field by field in
//! `mindgate taskgraph --json`, the `mindgate taskgraph` summary, `GET /task-graph/api/task`
//! (whose summary the page's header reads) and MCP `get_task_graph`'s structured content;
//! and (item 5) the default summary fits in 40 lines and shows the recorded `cwd`. Subagent
//! sessions are listed on their own (item 3), so they are checked too.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

use mindgate_mcp::params::GetTaskGraphArgs;
use mindgate_mcp::tasks::{TaskCatalog, get_task_graph};
use mindgate_server::ServeConfig;
use mindgate_taskgraph::DiscoveryConfig;
use serde_json::Value;

const NOW: &str = "2026-08-24T19:34:00Z";
const NOW_S: u64 = 1_787_600_040;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures")
}

/// `$MINDGATE_REAL_SESSIONS`, else `../shared/data/real-sessions` beside the checkout.
fn real_sessions() -> Option<PathBuf> {
    let p = std::env::var_os("MINDGATE_REAL_SESSIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions")
        });
    p.is_dir().then_some(p)
}

fn cli(args: &[&str], home: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_mindgate"))
        .args(args)
        .env("MINDGATE_NOW", NOW)
        .env("MINDGATE_HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "mindgate {args:?}: {out:?}");
    out.stdout
}

/// The summary's counts line as the test reads the headline (written here, not by the CLI).
fn counts_line(h: &Value) -> String {
    format!(
        "  counts    {} turns, {} LLM steps, {} tool calls ({} code changes, {} tests, {} subagents), {} errors, {} retries",
        h["turns"],
        h["steps"],
        h["tool_calls"],
        h["code_changes"],
        h["tests"],
        h["subagents"],
        h["errors"],
        h["retries"]
    )
}

#[tokio::test]
async fn every_surface_shows_the_same_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut paths = vec![fixtures()];
    match real_sessions() {
        Some(p) => paths.push(p),
        None => println!("skipped: real sessions (../shared/data/real-sessions is absent)"),
    }
    let config = DiscoveryConfig {
        extra_paths: paths,
        now: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(NOW_S)),
        ..DiscoveryConfig::empty()
    };
    let tasks = mindgate_taskgraph::discover(&config);
    assert!(tasks.len() >= 10, "sessions found: {}", tasks.len());
    let serve = ServeConfig {
        task_graph: config.clone(),
        ..ServeConfig::for_tests(&tmp.path().join("home"))
    };
    let server = mindgate_server::start(serve).await.expect("server starts");
    let http = reqwest::Client::new();
    let catalog = TaskCatalog::new(config.clone());
    let prices = mindgate_pricing::PriceTable::builtin();
    let mut checked = 0;
    let mut children: Vec<&str> = Vec::new();
    for t in &tasks {
        if tasks.iter().filter(|o| o.id == t.id).count() > 1 {
            println!("skipped: {} (id shared by several files)", t.id);
            continue;
        }
        let path = t.path.to_str().unwrap();
        let json: Value = serde_json::from_slice(&cli(&["taskgraph", path, "--json"], tmp.path()))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let text = String::from_utf8(cli(&["taskgraph", path], tmp.path())).unwrap();
        let url = format!(
            "{}/task-graph/api/task?id={}",
            server.base_url(),
            t.id.replace('+', "%2B")
        );
        let body: Value = http.get(&url).send().await.unwrap().json().await.unwrap();
        let mcp = get_task_graph(
            &catalog,
            &GetTaskGraphArgs {
                id: t.id.clone(),
                detail: None,
            },
            &prices,
        )
        .unwrap_or_else(|e| panic!("{}: {e:?}", t.id));
        let h = &json["summary"]["headline"];
        assert!(h.is_object(), "{path}: no headline");
        for field in [
            "turns",
            "steps",
            "tool_calls",
            "code_changes",
            "tests",
            "subagents",
            "errors",
            "retries",
            "tokens",
            "waiting_ms",
        ] {
            assert_eq!(
                body["summary"]["headline"][field], h[field],
                "{path}: HTTP {field}"
            );
            assert_eq!(
                mcp.value["headline"][field], h[field],
                "{path}: MCP {field}"
            );
        }
        assert!(
            text.lines().any(|l| l == counts_line(h)),
            "{path}: summary lacks `{}`:\n{text}",
            counts_line(h)
        );
        // Item 5: the default summary fits in 40 lines, and names the real folder.
        assert!(
            text.lines().count() <= 40,
            "{path}: {} lines",
            text.lines().count()
        );
        if let Some(cwd) = json["cwd"].as_str() {
            assert!(
                text.contains(&format!("  workspace {cwd}\n")),
                "{path}: workspace is not {cwd}:\n{text}"
            );
        }
        // The headline is the summary's counts, not a recount elsewhere.
        let c = &json["summary"]["counts"];
        let sum: u64 = [
            "tools",
            "skills",
            "subagents",
            "plans",
            "code_changes",
            "tests",
        ]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .sum();
        assert_eq!(h["tool_calls"].as_u64(), Some(sum), "{path}");
        assert_eq!(h["tokens"], json["summary"]["tokens"]["total"], "{path}");
        checked += 1;
        if t.parent_session.is_some() {
            children.push(t.id.as_str());
        }
    }
    println!(
        "{checked} sessions agree on every surface, {} of them subagent sessions",
        children.len()
    );
    assert!(checked >= 10);
    // Subagent sessions are listed on their own and checked like any other: every fixture's.
    for id in ["agent-a1", "agent-sc1", "dsh-child", "fx-child"] {
        assert!(children.contains(&id), "subagent session {id} not checked");
    }
}
