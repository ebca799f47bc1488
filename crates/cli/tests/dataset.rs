//! Datasets through every path, with the real binary: `mindgate dataset` writes through the
//! running server that holds the SQLite file and directly into a file nobody holds (the
//! rule of `annotate`); `/api/datasets` adds from a node instance, edits, removes and reads
//! older versions, refuses a write without the control token (the agent token too) and bad
//! input with a clear message; `dataset export` → `dataset import` → `dataset export` gives
//! the same bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{bin, json_of, mindgate, text};

use mindgate_home::{Home, token_file};
use mindgate_testkit::{ServeProcess, frames};
use serde_json::json;

#[test]
fn datasets_are_written_by_one_rule_versioned_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let server = ServeProcess::start(bin(), &["--db", db_s]);
    server.ingest("r1", &frames::every_event("r1"));
    let home = server.home().path().to_path_buf();

    // Through the server holding the file: an example from a node instance.
    let added = json_of(&mindgate(
        &[
            "dataset",
            "add",
            "golden",
            "--run",
            "r1",
            "--node",
            "llm:m",
            "--instance",
            "m1",
            "--metadata",
            r#"{"why":"good answer"}"#,
            "--json",
            "--db",
            db_s,
        ],
        &home,
    ));
    assert_eq!(added["dataset"]["version"], 1, "{added}");
    let first = added["examples"][0].clone();
    assert_eq!(first["input"], json!({"p": 1}), "the instance's input");
    assert_eq!(
        first["source"],
        json!({"runId": "r1", "nodeId": "llm:m", "instanceId": "m1"})
    );
    assert_eq!(first["metadata"], json!({"why": "good answer"}));
    assert_eq!(first["addedBy"]["kind"], "person");
    let (status, shown) = server.get("/api/datasets/golden").unwrap();
    assert_eq!(status, 200, "{shown}");
    assert_eq!(
        shown["examples"],
        json!([first]),
        "the server stored what the CLI printed"
    );

    // Written out, by hand; a bare word is a string.
    let out = mindgate(
        &[
            "dataset",
            "add",
            "golden",
            "--input",
            r#"{"q":"refund?"}"#,
            "--expected",
            "yes",
            "--db",
            db_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("golden version 2 (2 examples)"),
        "{}",
        text(&out)
    );

    // Bad input: a clear message, exit 2, nothing stored.
    for (args, says) in [
        (
            vec!["dataset", "add", "bad name", "--input", "1"],
            "dataset name",
        ),
        (
            vec!["dataset", "add", "golden", "--run", "nope"],
            "no run nope",
        ),
        (
            vec![
                "dataset",
                "add",
                "golden",
                "--run",
                "r1",
                "--node",
                "tool:none",
            ],
            "no node tool:none",
        ),
        (
            vec!["dataset", "add", "golden", "--input", "null"],
            "needs an input",
        ),
        (
            vec!["dataset", "show", "golden", "--version", "9"],
            "no version 9",
        ),
    ] {
        let mut args = args.clone();
        args.extend(["--db", db_s]);
        let out = mindgate(&args, &home);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
    let (_, list) = server.get("/api/datasets").unwrap();
    assert_eq!(list["datasets"][0]["version"], 2, "{list}");

    // The HTTP API: a token for writes, the person's only; unknown keys refused.
    let add = json!({"examples": [{"input": 3}]});
    let path = "/api/datasets/golden/examples";
    let (status, _) = server.request("POST", path, Some(&add), false).unwrap();
    assert_eq!(status, 401, "a write needs a token");
    let agent = token_file::read_agent(&Home::at(&home), server.port()).expect("agent token");
    let ua: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let resp = ua
        .post(&format!("{}{path}", server.base_url()))
        .header("Authorization", &format!("Bearer {}", agent.token))
        .content_type("application/json")
        .send(add.to_string())
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        403,
        "the agent token may not change a dataset"
    );
    let (status, body) = server
        .request("POST", path, Some(&json!({"exampels": []})), true)
        .unwrap();
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("exampels"),
        "{body}"
    );
    let id = first["id"].as_str().unwrap();
    let (status, edited) = server
        .request(
            "PATCH",
            &format!("{path}/{id}"),
            Some(&json!({"expected": {"text": "hi"}})),
            true,
        )
        .unwrap();
    assert_eq!(status, 200, "{edited}");
    assert_eq!(edited["dataset"]["version"], 3);
    let (_, v1) = server.get("/api/datasets/golden?version=1").unwrap();
    assert_eq!(v1["examples"], json!([first]), "version 1 as it was");
    let (_, versions) = server.get("/api/datasets/golden/versions").unwrap();
    let actions: Vec<&str> = versions["versions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["action"].as_str())
        .collect();
    assert_eq!(actions, vec!["add", "add", "update"]);

    // Several removed at once through the server: one version, as the direct write makes.
    let extra = json_of(&mindgate(
        &[
            "dataset", "add", "scratch", "--input", "1", "--json", "--db", db_s,
        ],
        &home,
    ));
    let more = json_of(&mindgate(
        &[
            "dataset", "add", "scratch", "--input", "2", "--json", "--db", db_s,
        ],
        &home,
    ));
    let (a, b) = (
        extra["examples"][0]["id"].as_str().unwrap(),
        more["examples"][0]["id"].as_str().unwrap(),
    );
    let out = json_of(&mindgate(
        &["dataset", "rm", "scratch", a, b, "--json", "--db", db_s],
        &home,
    ));
    assert_eq!(
        (
            out["dataset"]["version"].as_u64(),
            out["dataset"]["examples"].as_u64()
        ),
        (Some(3), Some(0))
    );
    let out = mindgate(&["dataset", "rm", "scratch", a, "--db", db_s], &home);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no example"), "{}", text(&out));

    // Export through the server, then nobody holds the file: direct, by the same rule.
    let first_export = dir.path().join("golden.jsonl");
    let out = mindgate(
        &[
            "dataset",
            "export",
            "golden",
            "-o",
            first_export.to_str().unwrap(),
            "--db",
            db_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("golden version 3 (2 examples)"),
        "{}",
        text(&out)
    );
    assert!(server.stop().success());
    let removed = json_of(&mindgate(
        &["dataset", "rm", "golden", id, "--json", "--db", db_s],
        &home,
    ));
    assert_eq!(
        (
            removed["dataset"]["version"].as_u64(),
            removed["dataset"]["examples"].as_u64()
        ),
        (Some(4), Some(1))
    );
    let out = mindgate(
        &["dataset", "show", "golden", "--version", "3", "--db", db_s],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(id),
        "an older version still has it: {}",
        text(&out)
    );

    // export → import → export: the same bytes.
    let other = dir.path().join("other.db");
    let other_s = other.to_str().unwrap();
    let out = mindgate(
        &[
            "dataset",
            "import",
            first_export.to_str().unwrap(),
            "--db",
            other_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("golden version 3 (2 examples)"),
        "{}",
        text(&out)
    );
    let out = mindgate(&["dataset", "export", "golden", "--db", other_s], &home);
    assert!(out.status.success(), "{}", text(&out));
    let before = std::fs::read(&first_export).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&before),
        "export → import → export is byte-identical"
    );
    let out = mindgate(&["dataset", "list", "--db", other_s], &home);
    assert_eq!(text(&out), "golden version 3 (2 examples)\n");
    let out = mindgate(&["dataset", "list", "--db", db_s], &home);
    assert_eq!(
        text(&out),
        "golden version 4 (1 examples)\nscratch version 3 (0 examples)\n"
    );

    // A file that is not a dataset export is refused, naming the line.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"run\": 1}\n").unwrap();
    let out = mindgate(
        &["dataset", "import", bad.to_str().unwrap(), "--db", other_s],
        &home,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("line 1: not a dataset export"),
        "{}",
        text(&out)
    );
    let out = mindgate(
        &["dataset", "rm", "golden", "--dataset", "--db", other_s],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = mindgate(&["dataset", "list", "--db", other_s], &home);
    assert_eq!(text(&out), "no datasets\n");
}

/// The `id` of the first example an answer of `dataset add --json` holds.
fn first_id(added: &serde_json::Value) -> String {
    added["examples"][0]["id"].as_str().unwrap().to_owned()
}

/// `mindgate dataset update` edits what `PATCH /api/datasets/NAME/examples/ID` takes — the
/// input, the expected output (or clears it), the metadata — through the running server
/// that holds the file and directly when nobody does, each edit a new version that leaves
/// the one before as it was; bad input is refused with exit 2 and nothing changed.
#[test]
fn dataset_update_edits_an_example_by_the_one_rule() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let server = ServeProcess::start(bin(), &["--db", db_s]);
    let home = server.home().path().to_path_buf();
    let added = json_of(&mindgate(
        &[
            "dataset",
            "add",
            "faq",
            "--input",
            r#"{"q":"refund?"}"#,
            "--expected",
            "no",
            "--json",
            "--db",
            db_s,
        ],
        &home,
    ));
    let id = first_id(&added);

    // Through the server: the expected output and the metadata.
    let out = json_of(&mindgate(
        &[
            "dataset",
            "update",
            "faq",
            &id,
            "--expected",
            "within 30 days",
            "--metadata",
            r#"{"fixed":"by hand"}"#,
            "--json",
            "--db",
            db_s,
        ],
        &home,
    ));
    assert_eq!(out["dataset"]["version"], 2, "{out}");
    assert_eq!(out["example"]["id"], id.as_str());
    assert_eq!(out["example"]["input"], json!({"q": "refund?"}), "kept");
    assert_eq!(out["example"]["expected"], "within 30 days");
    assert_eq!(out["example"]["metadata"], json!({"fixed": "by hand"}));
    let (_, shown) = server.get("/api/datasets/faq").unwrap();
    assert_eq!(
        shown["examples"],
        json!([out["example"]]),
        "the server stored it"
    );
    let (_, v1) = server.get("/api/datasets/faq?version=1").unwrap();
    assert_eq!(v1["examples"][0]["expected"], "no", "version 1 as it was");

    // Bad input: exit 2 with the problem named; nothing changed.
    for (args, says) in [
        (vec!["--input", "null"], "input"),
        (vec!["--metadata", "[1]"], "--metadata"),
        (
            vec!["--expected", "x", "--no-expected"],
            "cannot be used with",
        ),
        (vec![], "--input"),
    ] {
        let mut all = vec!["dataset", "update", "faq", id.as_str()];
        all.extend(args.iter().copied());
        all.extend(["--db", db_s]);
        let out = mindgate(&all, &home);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{all:?}: {}", text(&out));
    }
    let out = mindgate(
        &[
            "dataset", "update", "faq", "ex_nope", "--input", "1", "--db", db_s,
        ],
        &home,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("ex_nope"), "{}", text(&out));
    let (_, versions) = server.get("/api/datasets/faq/versions").unwrap();
    assert_eq!(versions["versions"].as_array().map(Vec::len), Some(2));

    // Nobody holds the file: directly, by the same rule; the expected output cleared.
    assert!(server.stop().success());
    let out = mindgate(
        &[
            "dataset",
            "update",
            "faq",
            &id,
            "--input",
            "refund policy?",
            "--no-expected",
            "--db",
            db_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("updated  {id}  input \"refund policy?\"")),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("faq version 3 (1 examples)"),
        "{}",
        text(&out)
    );
    let shown = json_of(&mindgate(
        &["dataset", "show", "faq", "--json", "--db", db_s],
        &home,
    ));
    let ex = &shown["examples"][0];
    assert_eq!(ex["input"], "refund policy?");
    assert_eq!(ex.get("expected"), None, "cleared: {ex}");
    assert_eq!(ex["metadata"], json!({"fixed": "by hand"}), "kept");
    let log = mindgate(
        &["dataset", "show", "faq", "--versions", "--db", db_s],
        &home,
    );
    assert!(
        text(&log).contains(&format!("version 3  update {id}")),
        "{}",
        text(&log)
    );
}

/// `POST /api/datasets` with a body that is not UTF-8 is refused as JSON (400, the problem
/// and the byte named), as every other refusal is — not with the framework's plain text.
#[test]
fn dataset_import_refuses_a_body_that_is_not_utf8_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let server = ServeProcess::start(bin(), &["--db", db.to_str().unwrap()]);
    let ua: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut body = b"{\"dataset\":{\"name\":\"x\",\"version\":1,\"examples\":0}}\n".to_vec();
    body.extend_from_slice(&[0xff, 0xfe, b'\n']);
    let mut resp = ua
        .post(&format!("{}/api/datasets", server.base_url()))
        .header("Authorization", &format!("Bearer {}", server.token()))
        .content_type("application/x-ndjson")
        .send(&body[..])
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let kind = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(kind.starts_with("application/json"), "{kind}");
    let answer: serde_json::Value =
        serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
    let message = answer["error"].as_str().unwrap_or_default();
    assert!(
        message.contains("not UTF-8") && message.contains("byte 50"),
        "{answer}"
    );
    let (_, list) = server.get("/api/datasets").unwrap();
    assert_eq!(list["datasets"], json!([]), "nothing stored");
}
