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

/// Issue 31 item 4: `mindgate usage --json`, `GET /task-graph/api/usage` and MCP `get_usage`
/// give the same report for every grouping, and its totals are the sum of the task list's
/// figures as `mindgate tasks --json` prints them: each top-level session's `totals` (its own
/// tokens plus each subagent session's once, listed or not), a listed child being inside
/// its parent's.
#[tokio::test]
async fn usage_is_the_same_everywhere_and_sums_the_task_graphs() {
    let tmp = tempfile::tempdir().unwrap();
    let config = DiscoveryConfig {
        extra_paths: vec![fixtures()],
        now: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(NOW_S)),
        ..DiscoveryConfig::empty()
    };
    let tasks = mindgate_taskgraph::discover(&config);
    let serve = ServeConfig {
        task_graph: config.clone(),
        ..ServeConfig::for_tests(&tmp.path().join("home"))
    };
    let server = mindgate_server::start(serve).await.expect("server starts");
    let http = reqwest::Client::new();
    let catalog = TaskCatalog::new(config.clone());
    let prices = mindgate_pricing::PriceTable::builtin();
    let fixtures_arg = fixtures().display().to_string();
    let mut total: Option<Value> = None;
    for by in [
        "day", "week", "month", "session", "agent", "model", "project",
    ] {
        let cli_report: Value = serde_json::from_slice(&cli(
            &[
                "usage",
                "--json",
                "--no-default-homes",
                "--sessions",
                &fixtures_arg,
                "--by",
                by,
                "--tz",
                "UTC",
            ],
            tmp.path(),
        ))
        .unwrap();
        let url = format!("{}/task-graph/api/usage?by={by}&tz=UTC", server.base_url());
        let body: Value = http.get(&url).send().await.unwrap().json().await.unwrap();
        let args: mindgate_mcp::params::GetUsageArgs =
            serde_json::from_value(serde_json::json!({"by": by, "tz": "UTC"})).unwrap();
        let mcp = mindgate_mcp::tasks::get_usage(&catalog, &args, &prices).unwrap();
        assert_eq!(body, cli_report, "HTTP = CLI, by {by}");
        assert_eq!(mcp.value, cli_report, "MCP = CLI, by {by}");
        assert_eq!(cli_report["by"], by);
        assert!(
            !cli_report["rows"].as_array().unwrap().is_empty(),
            "by {by}"
        );
        match &total {
            Some(t) => assert_eq!(&cli_report["total"]["tokens"], t, "by {by}"),
            None => total = Some(cli_report["total"]["tokens"].clone()),
        }
    }
    // The totals are the sum of the top-level tasks' totals (subagent sessions inside).
    let listed: Vec<Value> = serde_json::from_slice(&cli(
        &[
            "tasks",
            "--json",
            "--no-default-homes",
            "--sessions",
            &fixtures_arg,
        ],
        tmp.path(),
    ))
    .unwrap();
    assert_eq!(listed.len(), tasks.len());
    let ids: std::collections::HashSet<&str> =
        listed.iter().map(|t| t["id"].as_str().unwrap()).collect();
    let mut sum = [0u64; 5];
    for t in &listed {
        if t["parent_session"]
            .as_str()
            .is_some_and(|p| ids.contains(p))
        {
            continue;
        }
        let tok = &t["totals"]["tokens"];
        for (i, k) in ["input", "output", "cache_read", "cache_write", "total"]
            .iter()
            .enumerate()
        {
            sum[i] += tok[k].as_u64().unwrap();
        }
    }
    let total = total.unwrap();
    for (i, k) in ["input", "output", "cache_read", "cache_write", "total"]
        .iter()
        .enumerate()
    {
        assert_eq!(total[k].as_u64(), Some(sum[i]), "usage total {k}");
    }
    assert!(sum[3] > 0, "the fixtures have cache writes");
    // Bad parameters are a clear 400.
    for bad in ["by=year", "tz=Mars/Olympus", "since=yesterday-ish"] {
        let url = format!("{}/task-graph/api/usage?{bad}", server.base_url());
        let res = http.get(&url).send().await.unwrap();
        assert_eq!(res.status(), 400, "{bad}");
        let body: Value = res.json().await.unwrap();
        assert!(
            body["error"].as_str().unwrap().contains("query parameter"),
            "{bad}: {body}"
        );
    }
}
