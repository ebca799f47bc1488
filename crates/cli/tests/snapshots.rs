//! Snapshot tests (insta) of what users and clients read: a CLI output and the HTTP API's
//! bodies from the real `mindgate serve` binary. Times, ids, ports and tokens are redacted
//! (`mindgate_testkit::redact`), so a snapshot changes only when the code's answer does.
//! Review changes with `cargo insta review` or `INSTA_UPDATE=always`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use mindgate_testkit::{ServeProcess, frames, redact};
use serde_json::{Value, json};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mindgate"))
}

#[test]
fn check_frames_verdicts() {
    let capture = [
        frames::hello(None),
        frames::frame("r1", 1, "run.started", json!({"app": "a"})),
        frames::frame("r1", 2, "node.token", json!({"nodeId": "n"})),
        frames::frame("r1", 3, "node.teleported", json!({})),
        r#"{"gm":2,"seq":4,"ts":0,"runId":"r1","type":"mode.set","payload":{"mode":"step"}}"#
            .to_owned(),
        "not json".to_owned(),
    ]
    .join("\n");
    let mut child = Command::new(bin())
        .args(["check-frames", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(capture.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

/// Fields that change from run to run: wall-clock times, durations measured by the server,
/// per-start secrets and versions.
const VOLATILE: &[&str] = &[
    "startedAt",
    "finishedAt",
    "lastEventAt",
    "updatedAt",
    "uptimeMs",
    "version",
    "sessionToken",
];

fn snapshot_body(server: &ServeProcess, path: &str) -> (u16, Value) {
    let (status, mut body) = server.get(path).unwrap();
    redact::fields(&mut body, VOLATILE);
    redact::text(&mut body, &format!(":{}", server.port()), ":[port]");
    (status, body)
}

#[test]
fn serve_api_bodies() {
    let server = ServeProcess::start(bin(), &[]);
    server.ingest("snap-run", &frames::every_event("snap-run"));

    let (status, health) = snapshot_body(&server, "/health");
    assert_eq!(status, 200);
    let keys: Vec<&String> = health.as_object().unwrap().keys().collect();
    insta::assert_json_snapshot!("health_keys", keys);

    let (status, run) = snapshot_body(&server, "/api/runs/snap-run");
    assert_eq!(status, 200);
    insta::assert_json_snapshot!("run_summary", run);

    let (status, graph) = snapshot_body(&server, "/api/runs/snap-run/graph");
    assert_eq!(status, 200);
    insta::assert_json_snapshot!("run_graph", graph);

    let (status, report) = snapshot_body(&server, "/api/runs/snap-run/report");
    assert_eq!(status, 200);
    insta::assert_json_snapshot!("run_report", report);

    let (status, missing) = snapshot_body(&server, "/api/runs/nope");
    insta::assert_json_snapshot!(
        "error_not_found",
        json!({"status": status, "body": missing})
    );

    let (status, refused) = server
        .request("DELETE", "/api/runs/snap-run", None, false)
        .unwrap();
    insta::assert_json_snapshot!(
        "error_unauthorized",
        json!({"status": status, "body": refused})
    );

    let exit = server.stop();
    assert!(exit.success(), "serve exited with {exit}");
}
