//! `mindgate import` holds a run file's header to the ingest limits and never takes its
//! counters on trust, with the real binary: a 5,000-byte name or app is refused (nothing
//! written), and node, error, token and last-seq counters changed in the header are
//! counted again from the events.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{bin, mindgate};
use std::path::Path;

use mindgate_testkit::{ServeProcess, frames};
use serde_json::Value;

/// The export file with its header changed by `change`.
fn with_header(lines: &[String], change: impl Fn(&mut Value)) -> String {
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    change(&mut header);
    let mut out = vec![header.to_string()];
    out.extend(lines[1..].iter().cloned());
    out.join("\n") + "\n"
}

/// The runs in `db` (none when the file was never created).
fn runs_in(db: &Path, home: &Path) -> Vec<Value> {
    if !db.exists() {
        return Vec::new();
    }
    let out = mindgate(&["runs", "--json", "--db", db.to_str().unwrap()], home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_header_is_held_to_the_limits_and_its_counters_are_recounted() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let a_db = dir.path().join("a.db");
    let server = ServeProcess::start(bin(), &["--db", a_db.to_str().unwrap()]);
    server.ingest("r1", &frames::every_event("r1"));
    let (_, original) = server.get("/api/runs/r1").unwrap();
    assert!(server.stop().success());
    let export = dir.path().join("r1.jsonl");
    let out = mindgate(
        &[
            "export",
            "r1",
            "--jsonl",
            export.to_str().unwrap(),
            "--db",
            a_db.to_str().unwrap(),
        ],
        &home,
    );
    assert!(out.status.success());
    let lines: Vec<String> = std::fs::read_to_string(&export)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();

    // Names over the ingest limit: refused, naming the field, and nothing written.
    let long = "n".repeat(5_000);
    for (field, pointer) in [
        ("name", "/run/name"),
        ("app", "/run/app"),
        ("meta.name", "/run/meta/name"),
    ] {
        let file = dir.path().join(format!("long-{field}.jsonl"));
        std::fs::write(
            &file,
            with_header(&lines, |h| {
                *h.pointer_mut(pointer).unwrap() = Value::from(long.clone())
            }),
        )
        .unwrap();
        let db = dir.path().join(format!("long-{field}.db"));
        let out = mindgate(
            &[
                "import",
                file.to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
            ],
            &home,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(
            err.contains(&format!("{field} longer than 1024 bytes")),
            "{field}: {err}"
        );
        assert!(runs_in(&db, &home).is_empty(), "{field}: nothing imported");
    }
    let file = dir.path().join("long-sdk.jsonl");
    std::fs::write(
        &file,
        with_header(&lines, |h| {
            h["run"]["sdk"]["extra"] = Value::from("s".repeat(5_000))
        }),
    )
    .unwrap();
    let out = mindgate(
        &[
            "import",
            file.to_str().unwrap(),
            "--db",
            dir.path().join("sdk.db").to_str().unwrap(),
        ],
        &home,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sdk longer than 4096 bytes"));

    // Counters in the header are not believed: the imported run has its events' counts.
    let file = dir.path().join("counters.jsonl");
    std::fs::write(
        &file,
        with_header(&lines, |h| {
            h["run"]["counts"]["nodes"] = Value::from(999);
            h["run"]["counts"]["errors"] = Value::from(999);
            h["run"]["usage"]["inputTokens"] = Value::from(1_000_000);
            h["run"]["usage"]["outputTokens"] = Value::from(2_000_000);
            h["run"]["lastSeq"] = Value::from(123_456);
        }),
    )
    .unwrap();
    let b_db = dir.path().join("b.db");
    let out = mindgate(
        &[
            "import",
            file.to_str().unwrap(),
            "--db",
            b_db.to_str().unwrap(),
        ],
        &home,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = runs_in(&b_db, &home);
    assert_eq!(runs.len(), 1);
    for field in ["counts", "usage", "lastSeq", "cost"] {
        assert_eq!(runs[0][field], original[field], "{field}");
    }
    assert_eq!(runs[0]["counts"]["nodes"], 2);
    assert_eq!(runs[0]["counts"]["errors"], 1);
}
