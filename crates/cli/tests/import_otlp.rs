//! `mindgate import` of OTLP/JSON trace dumps (the crate's own fixtures).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::process::Command;

use mindgate_store::RunStore;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../otlp/tests/fixtures")
        .join(name)
}

fn import(
    file: &std::path::Path,
    db: &std::path::Path,
    home: &std::path::Path,
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mindgate"))
        .args(["import"])
        .arg(file)
        .arg("--db")
        .arg(db)
        .env("MINDGATE_HOME", home)
        .output()
        .unwrap()
}

#[test]
fn an_otlp_dump_becomes_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    for file in ["pydantic_ai.jsonl", "vercel_ai.json"] {
        let out = import(&fixture(file), &db, dir.path());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{file}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("imported 1 trace(s) as runs"), "{stdout}");
    }
    let store = RunStore::open(&db).unwrap();
    let run = store
        .get_run("otlp-0af7651916cd43dd8448eb211c80319c")
        .unwrap()
        .unwrap();
    let run = serde_json::to_value(run).unwrap();
    assert_eq!(
        (run["source"].as_str(), run["status"].as_str()),
        (Some("import"), Some("ok"))
    );
    assert_eq!(run["meta"]["source"], "otlp");
    let graph = store
        .graph("otlp-4bf92f3577b34da6a3ce929d0e0e4736")
        .unwrap()
        .unwrap();
    assert_eq!(graph.nodes.len(), 3);
    // Imported again: the same spans add nothing.
    let before = store.total_events().unwrap();
    let out = import(&fixture("vercel_ai.json"), &db, dir.path());
    assert!(out.status.success());
    assert_eq!(store.total_events().unwrap(), before);
}

#[test]
fn a_bad_export_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dump.jsonl");
    std::fs::write(&file, "{\"resourceSpans\": []}\n{\"resourceSpans\": 7}\n").unwrap();
    let out = import(&file, &dir.path().join("runs.db"), dir.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("export 2 is not an OTLP trace export"),
        "{stderr}"
    );
}
