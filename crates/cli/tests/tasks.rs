//! Integration tests of `mindgate tasks` and `mindgate taskgraph` against copies of the
//! taskgraph fixture sessions (all four agents).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::{DiscoveryConfig, SessionLocation, detect_agent};
use mindgate_testkit::copy_fixture_tree;
use serde_json::Value;

fn mindgate() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mindgate"));
    // Just after the fixtures' last events: open sessions are live (liveness also needs
    // recent events, and the fixtures were written on 2026-08-24).
    c.env("MINDGATE_NOW", "2026-08-24T19:34:00Z");
    // No price file there: the summaries' costs come from the built-in table.
    c.env(
        "MINDGATE_HOME",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tasks-home-without-prices"),
    );
    c
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures")
}

/// Fresh copies of the fixture homes (so recently modified: open sessions are live).
fn homes(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mindgate-cli-tasks")
        .join(format!("{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for agent in ["dsh", "pi", "claude", "codex"] {
        copy_fixture_tree(&fixtures().join(agent), &root.join(agent));
    }
    root
}

fn home_args(root: &Path) -> Vec<String> {
    vec![
        "--no-default-homes".into(),
        "--dsh-sessions".into(),
        root.join("dsh").display().to_string(),
        "--pi-sessions".into(),
        root.join("pi").display().to_string(),
        "--claude-projects".into(),
        root.join("claude").display().to_string(),
        "--codex-sessions".into(),
        root.join("codex").display().to_string(),
    ]
}

fn run(args: &[String]) -> Output {
    mindgate().args(args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

const IDS: [&str; 11] = [
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
    "pi-main",
];

#[test]
fn tasks_json_lists_every_fixture_session() {
    let root = homes("json");
    let out = run(&[args(&["tasks", "--json"]), home_args(&root)].concat());
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v.as_array().unwrap();
    let mut ids: Vec<&str> = list.iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, IDS);
    let starts: Vec<i64> = list
        .iter()
        .map(|t| t["start_time"].as_i64().unwrap())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] >= w[1]), "newest first");
    let by_id = |id: &str| list.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(by_id("dsh-live")["live"], true);
    assert_eq!(by_id("dsh-live")["status"], "RUNNING");
    assert_eq!(by_id("dsh-main")["live"], false);
    assert_eq!(by_id("dsh-main")["status"], "SUCCESS");
    assert_eq!(by_id("c-main")["agent"], "claude_code");
    assert_eq!(by_id("cx-main")["agent"], "codex");
    assert_eq!(by_id("pi-main")["workspace"], "--work-napkin--");
    // --limit keeps the newest.
    let out = run(&[args(&["tasks", "--json", "--limit", "3"]), home_args(&root)].concat());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3);
    assert_eq!(v[0]["id"], list[0]["id"]);
}

#[test]
fn tasks_table_has_a_row_per_session() {
    let root = homes("table");
    let out = run(&[args(&["tasks"]), home_args(&root)].concat());
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + IDS.len(), "{text}");
    for col in [
        "ID",
        "AGENT",
        "STATUS",
        "START (UTC)",
        "DURATION",
        "LIVE",
        "WORKSPACE",
        "TITLE",
    ] {
        assert!(lines[0].contains(col), "{}", lines[0]);
    }
    let row = |id: &str| {
        *lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("{id} in {text}"))
    };
    let live = row("dsh-live");
    assert!(
        live.contains("RUNNING") && live.contains(" live "),
        "{live}"
    );
    let main = row("dsh-main");
    assert!(
        main.contains("SUCCESS")
            && main.contains("2026-08-24 19:33:20")
            && main.contains("1m 32s")
            && main.contains("NIS-11688"),
        "{main}"
    );
    assert!(row("c-main").contains("claude_code"));
    // A subagent session is a row of its own, right under its parent, marked as its child;
    // its tokens are in parentheses: the parent's TOKENS already hold them (36,450 = dsh-main's
    // own 33,400 + dsh-child's 3,050, counted once).
    assert!(lines[0].contains("TOKENS"), "{}", lines[0]);
    for (child, parent) in [("dsh-child", "dsh-main"), ("agent-a1", "c-main")] {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("↳ {child} ")))
            .unwrap_or_else(|| panic!("{child} not marked in {text}"));
        assert_eq!(
            lines[at - 1].split_whitespace().next(),
            Some(parent),
            "{text}"
        );
        assert!(
            lines[at].contains(&format!("[subagent of {parent}] ")),
            "{}",
            lines[at]
        );
    }
    assert!(main.contains(" 36,450 "), "{main}");
    let child = lines
        .iter()
        .find(|l| l.starts_with("↳ dsh-child "))
        .unwrap();
    assert!(child.contains(" (3,050) "), "{child}");
    // Nothing found: a clear sentence, exit 0.
    let empty = run(&args(&["tasks", "--no-default-homes"]));
    assert!(empty.status.success());
    assert!(stdout(&empty).starts_with("No coding-agent sessions found"));
}

fn library_graph(path: &Path) -> Value {
    let loc = SessionLocation {
        agent: detect_agent(path).unwrap(),
        path: path.to_path_buf(),
        workspace: None,
    };
    let config = DiscoveryConfig {
        // The instant `mindgate()` pins with MINDGATE_NOW.
        now: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_787_600_040)),
        ..DiscoveryConfig::empty()
    };
    let (_, tree) = load_tree(&loc, &config).unwrap();
    serde_json::to_value(&tree.graph).unwrap()
}

#[test]
fn taskgraph_json_is_the_library_graph_for_every_agent() {
    let root = homes("graphjson");
    let ws = "--Users-kevin-Desktop-Nothing-Napkin--";
    for path in [
        root.join("dsh").join(ws).join("s-main"),
        root.join("dsh").join(ws).join("s-fail/session.v4.jsonl"),
        root.join("pi/--work-napkin--/2026-08-24T19-33-20-000Z_pi-main.jsonl"),
        root.join("claude/-work-napkin/c-main.jsonl"),
        root.join("codex/2026/08/24/rollout-2026-08-24T19-33-20-cx-main.jsonl"),
    ] {
        let out = run(&[
            "taskgraph".to_owned(),
            path.display().to_string(),
            "--json".to_owned(),
            "--no-default-homes".to_owned(),
        ]);
        assert!(out.status.success(), "{}: {out:?}", path.display());
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got, library_graph(&path), "{}", path.display());
        assert_eq!(got["nodes"][0]["id"], "task");
    }
}

#[test]
fn taskgraph_by_id_prints_a_readable_summary() {
    let root = homes("summary");
    let out = run(&[args(&["taskgraph", "dsh-ma", "--full"]), home_args(&root)].concat());
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    for needle in [
        "NIS-11688",
        "status    SUCCESS",
        "duration  1m 32s",
        "tokens    33,400 total",
        "Critical path: ",
        "Slowest steps:",
        "Retries:",
        "(2 attempts)",
        "Files changed:",
        "src/draft.ts",
        "1 subagents),",
    ] {
        assert!(text.contains(needle), "{needle} missing in\n{text}");
    }
    // The hot steps listed are the graph's hot_node_ids.
    let json = run(&[args(&["taskgraph", "dsh-main", "--json"]), home_args(&root)].concat());
    let g: Value = serde_json::from_slice(&json.stdout).unwrap();
    let hot = g["critical_path"]["hot_node_ids"].as_array().unwrap();
    let section = text
        .split("Critical path: ")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert_eq!(section.lines().count(), 1 + hot.len(), "{section}");

    // A final failure lists its error.
    let out = run(&[args(&["taskgraph", "dsh-fail"]), home_args(&root)].concat());
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("status    FAILED"), "{text}");
    assert!(text.contains("Failures:"), "{text}");
}

#[test]
fn taskgraph_finds_sessions_under_sessions_paths() {
    let root = homes("extra");
    let out = run(&[
        "taskgraph".to_owned(),
        "cx-main".to_owned(),
        "--json".to_owned(),
        "--no-default-homes".to_owned(),
        "--sessions".to_owned(),
        root.join("codex").display().to_string(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let g: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(g["session_id"], "cx-main");
}

#[test]
fn taskgraph_errors_are_clear() {
    let root = homes("errors");
    let out = run(&[args(&["taskgraph", "nope"]), home_args(&root)].concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no session with id `nope`"), "{err}");
    let out = run(&[args(&["taskgraph", "pi-"]), home_args(&root)].concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("matches 2 sessions"), "{err}");
    // A file that is no session.
    let bogus = root.join("bogus.txt");
    std::fs::write(&bogus, b"hello").unwrap();
    let out = run(&[
        "taskgraph".to_owned(),
        bogus.display().to_string(),
        "--no-default-homes".to_owned(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

#[test]
fn taskgraph_of_a_folder_works_for_every_agent() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mindgate-cli-tasks")
        .join(format!("{}-folder", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let codex = fixtures().join("fidelity/codex");
    // A Codex parent rollout and its subagent's, nested: the folder means the parent.
    let day = root.join("one/codex/sessions/2026/09/01");
    std::fs::create_dir_all(&day).unwrap();
    for f in [
        "rollout-2026-09-01T10-00-00-fx-parent.jsonl",
        "rollout-2026-09-01T10-00-13-fx-child.jsonl",
    ] {
        std::fs::copy(codex.join(f), day.join(f)).unwrap();
    }
    let graph = |dir: &Path| {
        run(&[
            "taskgraph".to_owned(),
            dir.display().to_string(),
            "--json".to_owned(),
            "--no-default-homes".to_owned(),
        ])
    };
    let out = graph(&root.join("one"));
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["session_id"], "fx-parent");
    // A pi folder with one session.
    let out = graph(&fixtures().join("fidelity/pi"));
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["session_id"], "fx-pi");
    // Two unrelated sessions: a clear error naming both.
    let out = graph(&codex);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 sessions under"), "{err}");
    assert!(err.contains("fx-parent") && err.contains("fx-cut"), "{err}");
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    // `mindgate taskgraph … | head` closes the pipe early: the command must not panic.
    let root = homes("closedpipe");
    let session = root.join("claude/-work-napkin/c-main.jsonl");
    for extra in [&["--json"][..], &[][..]] {
        let mut cmd = mindgate();
        cmd.arg("taskgraph")
            .arg(&session)
            .arg("--no-default-homes")
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // Close our read end before the child writes: every write then fails with EPIPE.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{extra:?}: {stderr}");
        assert!(out.status.success(), "{extra:?}: {:?} {stderr}", out.status);
    }
}

/// The `mindgate: skipping …` lines of a command's stderr, sorted.
fn skipping_lines(out: &Output) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("mindgate: skipping "))
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

#[test]
fn skipped_files_are_reported_the_same_by_tasks_and_taskgraph() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mindgate-cli-tasks")
        .join(format!("{}-skipped", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("mixed");
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    let pi = "2026-09-01T10-00-00-000Z_fx-pi.jsonl";
    std::fs::copy(fixtures().join("fidelity/pi").join(pi), dir.join(pi)).unwrap();
    // In no agent's format.
    let log = dir.join("logs/server-log.jsonl");
    std::fs::copy(fixtures().join("fidelity/unknown/server-log.jsonl"), &log).unwrap();
    let mut expected = vec![format!(
        "mindgate: skipping {p}: {p} is not a DSH, pi, Claude Code, Codex, Gemini CLI or OpenCode session",
        p = log.display()
    )];
    // Unreadable: a pipe named like a Codex rollout (found by its name, refused when read).
    #[cfg(unix)]
    {
        let fifo = dir.join("rollout-2026-09-01T12-00-00-pipe.jsonl");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        expected.push(format!(
            "mindgate: skipping {p}: {p} is not a regular file (pipes, sockets and devices are never read)",
            p = fifo.display()
        ));
    }
    expected.sort();
    let dir_arg = dir.display().to_string();
    let tasks = run(&args(&[
        "tasks",
        "--json",
        "--no-default-homes",
        "--sessions",
        &dir_arg,
    ]));
    assert!(tasks.status.success(), "{tasks:?}");
    let listed: Value = serde_json::from_slice(&tasks.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(skipping_lines(&tasks), expected);
    // `taskgraph <folder>` finds the one session there and reports the same files.
    let graph = run(&args(&["taskgraph", &dir_arg, "--no-default-homes"]));
    assert!(graph.status.success(), "{graph:?}");
    assert!(stdout(&graph).contains("fx-pi"), "{}", stdout(&graph));
    assert_eq!(skipping_lines(&graph), expected);
    // By id, through `--sessions`: the same report again.
    let by_id = run(&args(&[
        "taskgraph",
        "fx-pi",
        "--no-default-homes",
        "--sessions",
        &dir_arg,
    ]));
    assert!(by_id.status.success(), "{by_id:?}");
    assert_eq!(skipping_lines(&by_id), expected);
    let _ = std::fs::remove_dir_all(&root);
}

/// The readable summary of every fixture session, pinned (the summary is rendered from the
/// typed graph's `TaskReport`; these snapshots were taken from the earlier JSON-walking
/// renderer and must not move).
#[test]
fn taskgraph_summaries_are_pinned() {
    let root = homes("summaries");
    for id in [
        "dsh-main",
        "dsh-fail",
        "dsh-child",
        "pi-main",
        "c-main",
        "c-side",
        "cx-main",
    ] {
        let mut a = args(&["taskgraph", id]);
        a.extend(home_args(&root));
        let out = run(&a);
        assert!(out.status.success(), "{id}: {out:?}");
        let text = stdout(&out).replace(&root.display().to_string(), "<homes>");
        insta::assert_snapshot!(format!("summary_{id}"), text);
    }
}

/// Issue 31 item 5 from the CLI: `tasks --search` indexes the sessions found into the home's
/// session index, then reads only what changed; hits name their session and node.
#[test]
fn tasks_search_finds_text_through_the_homes_index() {
    let root = homes("search");
    let home = root.join("mindgate-home");
    let search = |extra: &[&str]| {
        let mut c = mindgate();
        c.env("MINDGATE_HOME", &home);
        c.args(extra).args(home_args(&root)).output().unwrap()
    };
    let out = search(&["tasks", "--search", "upload", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["indexed"]["indexed"], IDS.len(), "{}", v["indexed"]);
    let hits = v["hits"].as_array().unwrap();
    assert!(
        hits.iter()
            .any(|h| h["session_id"] == "c-main" && h["kind"] == "tool_output"),
        "{hits:?}"
    );
    assert!(hits.iter().all(|h| {
        h["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("upload")
    }));
    assert!(home.join("session-search.db").is_file());
    // Again: nothing changed, nothing is read.
    let out = search(&["tasks", "--search", "upload"]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("hit(s) for \"upload\""), "{text}");
    assert!(text.contains("c-main [claude_code]"), "{text}");
    let again: Value =
        serde_json::from_slice(&search(&["tasks", "--search", "upload", "--json"]).stdout).unwrap();
    assert_eq!(again["indexed"]["unchanged"], IDS.len());
    assert_eq!(again["indexed"]["indexed"], 0);
    let none = search(&["tasks", "--search", "zz-nowhere-zz"]);
    assert!(stdout(&none).contains("No session text contains"));
    // Bad input is a clear usage error.
    let bad = search(&["tasks", "--search", " "]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--search"));
    let bad = search(&["tasks", "--search", "x", "--limit", "0"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--limit"));
}
