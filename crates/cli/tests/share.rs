//! Sharing runs with the real binary: `mindgate export --jsonl` → `mindgate import` into
//! another database (the served graph, events and report are the same), refusals that
//! write nothing, `GET /api/diff` and `mindgate diff` (a snapshot of its table).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use mindgate_testkit::{ServeProcess, frames};
use serde_json::Value;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mindgate"))
}

fn mindgate(args: &[&str], home: &Path) -> Output {
    Command::new(bin())
        .args(args)
        .env(mindgate_home::env::MINDGATE_HOME, home)
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `every_event` with the LLM step's input changed: the runs part at `llm:m`.
fn changed_run(run: &str) -> Vec<String> {
    frames::every_event(run)
        .into_iter()
        .map(|f| f.replace(r#""input":{"p":1}"#, r#""input":{"p":2,"extra":true}"#))
        .collect()
}

/// What the server serves of run `run`: graph, events, report, node detail.
fn served(server: &ServeProcess, run: &str) -> Vec<Value> {
    [
        format!("/api/runs/{run}/graph"),
        format!("/api/runs/{run}/events"),
        format!("/api/runs/{run}/report"),
        format!("/api/runs/{run}/nodes/llm:m"),
    ]
    .iter()
    .map(|path| {
        let (status, body) = server.get(path).unwrap();
        assert_eq!(status, 200, "{path}: {body}");
        body
    })
    .collect()
}

#[test]
fn export_import_round_trip_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let a_db = dir.path().join("a.db");
    let b_db = dir.path().join("b.db");
    let a_db_s = a_db.to_str().unwrap();
    let b_db_s = b_db.to_str().unwrap();

    let server = ServeProcess::start(bin(), &["--db", a_db_s]);
    server.ingest("r1", &frames::every_event("r1"));
    server.ingest("r2", &changed_run("r2"));
    let original = served(&server, "r1");

    // GET /api/diff
    let (status, diff) = server.get("/api/diff?a=r1&b=r2").unwrap();
    assert_eq!(status, 200, "{diff}");
    assert_eq!(diff["firstDivergence"]["nodeId"], "llm:m");
    assert_eq!(diff["firstDivergence"]["difference"], "input");
    let (status, same) = server.get("/api/diff?a=r1&b=r1").unwrap();
    assert_eq!(status, 200);
    assert_eq!(same["firstDivergence"], Value::Null);
    let (status, missing) = server.get("/api/diff?a=r1&b=nope").unwrap();
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["error"], "no run nope", "{missing}");
    let (status, bad) = server.get("/api/diff?a=r1").unwrap();
    assert_eq!(status, 400, "{bad}");

    // Importing into the served database is refused while the server holds it.
    let export_path = dir.path().join("r1.jsonl");
    let export_s = export_path.to_str().unwrap();
    let out = mindgate(
        &["export", "r1", "--jsonl", export_s, "--db", a_db_s],
        &home,
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let out = mindgate(&["import", export_s, "--db", a_db_s, "--new-id"], &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("stop it or import into another --db"),
        "{:?}",
        text(&out)
    );
    assert!(server.stop().success());

    // mindgate diff: the table (exit 1: the runs diverge) and --json.
    let out = mindgate(&["diff", "r1", "r2", "--db", a_db_s], &home);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    insta::assert_snapshot!("diff_table", text(&out).0);
    let out = mindgate(&["diff", "r1", "r2", "--db", a_db_s, "--json"], &home);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["firstDivergence"], diff["firstDivergence"]);
    let out = mindgate(&["diff", "r1", "r1", "--db", a_db_s], &home);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = mindgate(&["diff", "r1", "zz", "--db", a_db_s], &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("run zz not found"),
        "{:?}",
        text(&out)
    );

    // Import into a new database, twice: the second is refused, --new-id copies.
    let out = mindgate(&["import", export_s, "--db", b_db_s], &home);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(
        text(&out).0.contains("imported run r1 (13 events)"),
        "{:?}",
        text(&out)
    );
    let out = mindgate(&["import", export_s, "--db", b_db_s], &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("run r1 already exists"),
        "{:?}",
        text(&out)
    );
    let out = mindgate(&["import", export_s, "--db", b_db_s, "--new-id"], &home);
    assert!(
        text(&out).0.contains("imported run r1-copy"),
        "{:?}",
        text(&out)
    );

    // A bad line: named, and nothing written.
    let mut lines: Vec<String> = std::fs::read_to_string(&export_path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines[4] = "{\"gm\":1,\"oops\"".to_owned();
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, lines.join("\n")).unwrap();
    let c_db = dir.path().join("c.db");
    let out = mindgate(
        &[
            "import",
            broken.to_str().unwrap(),
            "--db",
            c_db.to_str().unwrap(),
        ],
        &home,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("line 5: invalid event"),
        "{:?}",
        text(&out)
    );
    let out = mindgate(
        &[
            "export",
            "r1",
            "--jsonl",
            "-",
            "--db",
            c_db.to_str().unwrap(),
        ],
        &home,
    );
    assert!(
        text(&out).1.contains("run r1 not found"),
        "{:?}",
        text(&out)
    );

    // The imported run, served: the same graph, events, report and node detail.
    let server = ServeProcess::start(bin(), &["--db", b_db_s]);
    assert_eq!(served(&server, "r1"), original);
    let (_, run) = server.get("/api/runs/r1").unwrap();
    assert_eq!(run["source"], "import");
    let (_, copy) = server.get("/api/runs/r1-copy/graph").unwrap();
    assert_eq!(copy["nodes"], original[0]["nodes"]);
    assert!(server.stop().success());
}
