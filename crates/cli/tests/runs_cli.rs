//! A CLI that finds things, with the real binary: `mindgate runs` lists what `GET /api/runs`
//! serves (the same figures), filtered by status, app and start time; `diff` and `export`
//! take a unique run-id prefix (an ambiguous one lists the candidates); `taskgraph` on a
//! missing file says so; `diff --help` documents its exit codes; the serve log carries no
//! colour codes when standard error is not a terminal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{bin, mindgate};
use std::io::BufRead as _;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mindgate_testkit::{ServeProcess, frames};
use serde_json::Value;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `every_event` of run `run` by app `app`, finishing `status`.
fn run_frames(run: &str, app: &str, status: &str) -> Vec<String> {
    let mut frames = frames::every_event(run);
    for f in &mut frames {
        *f = f.replace("\"app\":\"test-app\"", &format!("\"app\":\"{app}\""));
    }
    if let Some(last) = frames.last_mut() {
        *last = last.replace("\"status\":\"error\"", &format!("\"status\":\"{status}\""));
    }
    frames
}

#[test]
fn runs_lists_the_run_list_figures_and_ids_resolve_by_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let server = ServeProcess::start(bin(), &["--db", db_s]);
    server.ingest("alpha-1", &run_frames("alpha-1", "test-app", "error"));
    server.ingest("alpha-2", &run_frames("alpha-2", "test-app", "ok"));
    server.ingest("beta-1", &run_frames("beta-1", "other-app", "error"));
    let (status, listed) = server.get("/api/runs").unwrap();
    assert_eq!(status, 200, "{listed}");
    assert!(server.stop().success());

    // --json: exactly the runs GET /api/runs serves, figure for figure.
    let out = mindgate(&["runs", "--json", "--db", db_s], &home);
    assert!(out.status.success(), "{}", stderr(&out));
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs, listed["runs"]);
    assert_eq!(runs.as_array().unwrap().len(), 3);

    // The table: one row per run with the same figures.
    let out = mindgate(&["runs", "--db", db_s], &home);
    let table = stdout(&out);
    let header = table.lines().next().unwrap();
    for column in [
        "ID", "APP", "NAME", "STATUS", "START", "DURATION", "HELD", "EVENTS", "ERRORS", "TOKENS",
        "COST",
    ] {
        assert!(header.contains(column), "{table}");
    }
    for run in listed["runs"].as_array().unwrap() {
        let id = run["id"].as_str().unwrap();
        let row = table
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("no row for {id}:\n{table}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        let events = run["counts"]["events"].to_string();
        let errors = run["counts"]["errors"].to_string();
        let tokens = (run["usage"]["inputTokens"].as_u64().unwrap()
            + run["usage"]["outputTokens"].as_u64().unwrap())
        .to_string();
        assert!(cells.contains(&run["status"].as_str().unwrap()), "{row}");
        // Held at its error gate from ts +8 to +9: 1 ms, the run row's held time.
        assert_eq!(run["heldMs"], 1, "{run}");
        assert_eq!(
            run["workMs"],
            run["durationMs"].as_i64().unwrap() - 1,
            "{run}"
        );
        assert_eq!(cells[cells.len() - 5], "1ms", "{row}");
        let tail = &cells[cells.len() - 4..];
        assert_eq!(
            tail[..3],
            [events.as_str(), errors.as_str(), tokens.as_str()],
            "{row}"
        );
    }

    // Filters.
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["runs", "--json", "--db", db_s];
        all.extend(args);
        let out = mindgate(&all, &home);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&["--status", "ok"]), ["alpha-2"]);
    assert_eq!(ids(&["--app", "other-app"]), ["beta-1"]);
    assert_eq!(ids(&["--limit", "1"]).len(), 1);
    // The frames are stamped 2023-11-14T22:13:20Z onwards.
    assert_eq!(ids(&["--since", "2023-11-14"]).len(), 3);
    assert!(ids(&["--since", "2023-11-15T00:00:00Z"]).is_empty());
    assert!(ids(&["--since", "1h"]).is_empty());
    let out = mindgate(&["runs", "--since", "soon", "--db", db_s], &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--since soon"), "{}", stderr(&out));
    let out = mindgate(&["runs", "--since", "1h", "--db", db_s], &home);
    assert!(
        stdout(&out).starts_with("No runs match"),
        "{}",
        stdout(&out)
    );

    // Run ids by unique prefix: diff and export.
    let out = mindgate(&["diff", "alpha-1", "beta", "--db", db_s], &home);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    assert!(stdout(&out).contains("beta-1"), "{}", stdout(&out));
    let out = mindgate(&["export", "bet", "--jsonl", "-", "--db", db_s], &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"id\":\"beta-1\""));
    let out = mindgate(&["export", "alpha", "--jsonl", "-", "--db", db_s], &home);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("several run ids") && err.contains("alpha-1, alpha-2"),
        "{err}"
    );
    let out = mindgate(&["diff", "alpha", "beta-1", "--db", db_s], &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("alpha-1, alpha-2"),
        "{}",
        stderr(&out)
    );
    let out = mindgate(&["export", "zz", "--jsonl", "-", "--db", db_s], &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run zz not found"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn taskgraph_names_a_missing_file_and_diff_documents_its_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["taskgraph", "nope.jsonl", "--no-default-homes"])
        .current_dir(dir.path())
        .env(mindgate_home::env::MINDGATE_HOME, dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no such file or folder: nope.jsonl"),
        "{}",
        stderr(&out)
    );
    let out = mindgate(&["diff", "--help"], dir.path());
    let help = stdout(&out);
    assert!(
        help.contains("Exit status: 0 when the runs did the same")
            && help.contains("1 when they diverge")
            && help.contains("2 on an error"),
        "{help}"
    );
}

#[test]
fn the_serve_log_has_no_colour_codes_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .args(["serve", "--port", "0", "--otlp-port", "0", "--no-open"])
        .env(mindgate_home::env::MINDGATE_HOME, dir.path())
        .env(mindgate_home::env::MINDGATE_LOG, "info")
        .env_remove(mindgate_home::env::NO_COLOR)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Its info line saying it serves: standard error is a pipe here, not a terminal.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut log = String::new();
    let serving = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                log.push_str(&line);
                log.push('\n');
                if line.contains("mindgate serving") {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        serving,
        "no `mindgate serving` log line within 30 s:\n{log}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "the serve log has ANSI codes off a terminal:\n{log}"
    );
}

/// `mindgate search` answers what `GET /api/search` does (the one search module), and
/// marks the match in its lines.
#[test]
fn search_finds_what_the_api_finds() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let server = ServeProcess::start(bin(), &["--db", db_s]);
    server.ingest("s-1", &run_frames("s-1", "test-app", "error"));
    let (status, found) = server.get("/api/search?q=bad").unwrap();
    assert_eq!(status, 200, "{found}");
    assert!(server.stop().success());
    assert_eq!(found["hits"].as_array().unwrap().len(), 2, "{found}");

    let out = mindgate(&["search", "bad", "--json", "--db", db_s], &home);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits, found["hits"]);
    let out = mindgate(&["search", "BAD", "--db", db_s], &home);
    let text = stdout(&out);
    assert!(text.contains("s-1  seq"), "{text}");
    assert!(text.contains("[bad]"), "{text}");
    let out = mindgate(&["search", "nowhere-to-be-found", "--db", db_s], &home);
    assert!(
        stdout(&out).starts_with("No stored event contains"),
        "{}",
        stdout(&out)
    );
    let out = mindgate(&["search", " ", "--db", db_s], &home);
    assert!(!out.status.success());
}
