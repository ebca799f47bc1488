//! `mindgate memory induce` against the built binary, on the task-graph fixture sessions,
//! each test in a fresh Mindgate home: a succeeded task becomes a quarantined induced
//! procedure, inducing it again finds it, and a failed task is refused naming why.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const DSH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../taskgraph/tests/fixtures/dsh"
);

fn memory(home: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mindgate"));
    cmd.arg("memory").args(args).env("MINDGATE_HOME", home);
    for var in [
        "MINDGATE_EMBEDDER",
        "MINDGATE_MINILM_DIR",
        "MINDGATE_EMBED_URL",
    ] {
        cmd.env_remove(var);
    }
    cmd.output().unwrap()
}

/// `memory induce <id>` over the DSH fixtures only (task ids resolved as `mindgate taskgraph`
/// resolves them).
fn induce(home: &Path, id: &str, json: bool) -> Output {
    let mut args = vec![
        "induce",
        id,
        "--user",
        "ana",
        "--sessions",
        DSH,
        "--no-default-homes",
    ];
    if json {
        args.push("--json");
    }
    memory(home, &args)
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_succeeded_task_is_induced_once_and_found_again() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let first = json_of(&induce(h, "dsh-main", true));
    assert_eq!(first["created"], true);
    assert_eq!(first["taskId"], "dsh-main");
    let p = &first["procedure"];
    let id = p["id"].as_str().unwrap().to_owned();
    assert_eq!(p["provenance"], "induction");
    assert_eq!(p["status"], "quarantined");
    assert_eq!(p["successCount"], 0);
    assert_eq!(p["steps"][0], "read {file}");
    assert_eq!(p["variableValues"]["test_command"][0], "npm test -- draft");
    assert_eq!(p["successCriteria"][0], "`npm test -- draft` passes");

    // By a unique id prefix, as `mindgate taskgraph` takes it: the same steps, not stored again.
    let again = induce(h, "dsh-ma", false);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(
        text.starts_with(&format!(
            "task dsh-main has the same steps as procedure {id}: not stored again"
        )),
        "{text}"
    );
    // It waits in quarantine, once.
    let queue: Value =
        serde_json::from_slice(&memory(h, &["quarantine", "--json"]).stdout).unwrap();
    let ids: Vec<&str> = queue
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()]);
}

#[test]
fn a_failed_task_is_refused_and_nothing_is_stored() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let out = induce(h, "dsh-fail", false);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "task dsh-fail induces no procedure: it failed at test `cargo test --workspace` (tool-f_test)"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let queue: Value =
        serde_json::from_slice(&memory(h, &["quarantine", "--json"]).stdout).unwrap();
    assert_eq!(queue.as_array().map(Vec::len), Some(0));
    // An unknown id is an error of the argument.
    let out = induce(h, "no-such-task", false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session with id `no-such-task`"));
}

/// An OpenCode session (the explore sub-session of the storage-tree fixture, found through
/// `--opencode-data`) induces a procedure tagged with its agent.
#[test]
fn an_opencode_session_is_induced() {
    let home = tempfile::tempdir().unwrap();
    let data = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../taskgraph/tests/fixtures/opencode"
    );
    let out = memory(
        home.path(),
        &[
            "induce",
            "ses_fixturechild",
            "--user",
            "ana",
            "--opencode-data",
            data,
            "--no-default-homes",
            "--json",
        ],
    );
    let v = json_of(&out);
    let p = &v["procedure"];
    assert_eq!(p["steps"], serde_json::json!(["search {pattern}"]));
    assert_eq!(
        p["variableValues"]["pattern"],
        serde_json::json!(["onSubmit"])
    );
    let tags: Vec<&str> = p["tags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tags.contains(&"agent:opencode"), "{tags:?}");
    assert!(tags.contains(&"task:ses_fixturechild00002"), "{tags:?}");
}
