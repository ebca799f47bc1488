//! `mindgate check` with the real binary against a running `mindgate serve`: a run still
//! running is refused at once (no `--wait`) or after a bounded `--wait`, and waited for when
//! it ends within `--wait` — then checked; `--json` prints the result the run stores (an
//! annotation of kind `check`), against a stored run or an exported baseline file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::{bin, mindgate, text};
use mindgate_testkit::{ServeProcess, frames};
use serde_json::{Value, json};

/// Seconds the server keeps a disconnected app's unfinished run `running`: long enough for
/// the refusals below to see it running, short enough for the wait to see it end.
const GRACE_SECS: u64 = 8;

fn status(server: &ServeProcess, run: &str) -> String {
    let (_, v) = server.get(&format!("/api/runs/{run}")).unwrap();
    v["status"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn check_refuses_or_waits_for_a_running_run_and_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let grace = GRACE_SECS.to_string();
    let server = ServeProcess::start(bin(), &["--db", db_s, "--abandon-grace", &grace]);
    let home = server.home().path().to_path_buf();
    server.ingest("base", &frames::every_event("base"));
    // The same run without its `run.finished`: the app went away, the run is still running
    // until the grace ends (then `abandoned`).
    let mut partial = frames::every_event("live");
    partial.pop();
    let disconnected = Instant::now();
    server.ingest("live", &partial);
    assert_eq!(status(&server, "live"), "running");

    // No --wait: refused at once, exit 2, saying what to do.
    let out = mindgate(
        &["check", "live", "--baseline", "base", "--db", db_s],
        &home,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("run live is still running") && text(&out).contains("--wait"),
        "{}",
        text(&out)
    );
    // A bounded --wait that ends first: refused after it, not before.
    let asked = Instant::now();
    let out = mindgate(
        &[
            "check",
            "live",
            "--baseline",
            "base",
            "--wait",
            "1",
            "--db",
            db_s,
        ],
        &home,
    );
    let took = asked.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("still running"), "{}", text(&out));
    assert!(took >= Duration::from_secs(1), "waited {took:?}");
    assert!(
        disconnected.elapsed() < Duration::from_secs(GRACE_SECS),
        "the run must still have been running for the refusals to mean anything"
    );
    assert_eq!(status(&server, "live"), "running");

    // A --wait long enough: it returns once the run has ended, with the result as JSON.
    let asked = Instant::now();
    let out = mindgate(
        &[
            "check",
            "live",
            "--baseline",
            "base",
            "--wait",
            "60",
            "--json",
            "--db",
            db_s,
        ],
        &home,
    );
    let took = asked.elapsed();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "a result, not a refusal: {}",
        text(&out)
    );
    assert!(took < Duration::from_secs(60), "bounded: {took:?}");
    assert_eq!(
        status(&server, "live"),
        "abandoned",
        "it waited for the end"
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", text(&out));
    });
    assert_eq!(result["runId"], "live");
    assert_eq!(result["baseline"], json!({"runId": "base", "file": null}));
    assert_eq!(result["rulesFile"], Value::Null);
    assert_eq!(result["passed"], out.status.code() == Some(0), "{result}");
    let names: Vec<&str> = result["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "tools.sequence",
            "errors.no_new",
            "output.same_as_baseline(final)"
        ],
        "the default set: {result}"
    );
    for rule in result["rules"].as_array().unwrap() {
        assert!(rule["passed"].is_boolean(), "{rule}");
        assert!(rule["message"].is_string(), "{rule}");
    }
    assert!(
        result.as_object().unwrap().contains_key("firstDivergence"),
        "{result}"
    );
    // The run stores what was printed.
    let (_, stored) = server
        .get("/api/annotations?runId=live&kind=check")
        .unwrap();
    let stored = stored["annotations"].as_array().unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(
        stored[0]["check"], result,
        "the stored result is the printed one"
    );

    // Against an exported baseline file: the file named in the JSON.
    let file = dir.path().join("baseline.jsonl");
    let out = mindgate(
        &[
            "export",
            "base",
            "--jsonl",
            file.to_str().unwrap(),
            "--db",
            db_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = mindgate(
        &[
            "check",
            "base",
            "--baseline",
            file.to_str().unwrap(),
            "--json",
            "--db",
            db_s,
        ],
        &home,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a run against itself: {}",
        text(&out)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["passed"], true, "{result}");
    assert_eq!(result["baseline"]["file"], file.to_str().unwrap());
    assert_eq!(result["firstDivergence"], Value::Null, "{result}");
}
