//! The exported JSON Schema: pinned by a golden file, a valid draft 2020-12
//! schema, accepting every sample frame and rejecting broken ones.
//!
//! Regenerate the golden file after a reviewed contract change with
//! `UPDATE_GOLDEN=1 cargo test -p mindgate-protocol --test golden`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::{frame, sample, samples};
use mindgate_protocol::{json_schema, json_schema_string};
use serde_json::{Value, json};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema.golden.json")
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&json_schema()).expect("schema compiles")
}

#[test]
fn schema_matches_the_golden_file() {
    mindgate_testkit::golden::assert_golden(
        &golden_path(),
        &json_schema_string(),
        "the JSON Schema of the wire contract (a contract change)",
        "cargo test -p mindgate-protocol --test golden",
    );
}

#[test]
fn schema_is_a_valid_draft_2020_12_schema() {
    let schema = json_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
        panic!("not a valid draft 2020-12 schema: {e}");
    }
    // The string form is the same document.
    let parsed: Value = serde_json::from_str(&json_schema_string()).unwrap();
    assert_eq!(parsed, schema);
    assert!(json_schema_string().ends_with("}\n"));
}

#[test]
fn schema_names_every_message_type_once() {
    let schema = json_schema();
    let consts: Vec<&str> = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["properties"]["type"]["const"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = mindgate_protocol::Message::TYPES
        .iter()
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(consts, expected);
}

#[test]
fn every_sample_frame_validates() {
    let validator = validator();
    for (label, value) in samples() {
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{label}: {errors:?}");
    }
}

#[test]
fn unknown_fields_validate() {
    let validator = validator();
    let mut v = sample("node.finished");
    v["trace"] = json!({"id": 1});
    v["payload"]["costUsd"] = json!(0.1);
    v["payload"]["usage"]["audioTokens"] = json!(3);
    assert!(validator.is_valid(&v));
}

#[test]
fn broken_frames_do_not_validate() {
    let validator = validator();
    let broken: Vec<(&str, Value)> = vec![
        ("gm 2", {
            let mut v = sample("mode.set");
            v["gm"] = json!(2);
            v
        }),
        ("negative seq", {
            let mut v = sample("mode.set");
            v["seq"] = json!(-1);
            v
        }),
        ("empty runId", {
            let mut v = sample("mode.set");
            v["runId"] = json!("");
            v
        }),
        ("no payload", {
            let mut v = sample("mode.set");
            v.as_object_mut().unwrap().remove("payload");
            v
        }),
        ("bad mode", frame("mode.set", json!({"mode": "walk"}))),
        (
            "token without deltas",
            frame("node.token", json!({"nodeId": "n"})),
        ),
        (
            "bad channel",
            frame(
                "node.token",
                json!({"nodeId": "n", "deltas": [{"t": "audio", "v": "x"}]}),
            ),
        ),
        (
            "bad kind",
            frame(
                "node.started",
                json!({"nodeId": "n", "kind": "robot", "name": "n", "instanceId": "i"}),
            ),
        ),
        (
            "usage without outputTokens",
            frame(
                "node.finished",
                json!({"nodeId": "n", "durationMs": 1, "status": "ok", "usage": {"inputTokens": 1}}),
            ),
        ),
        (
            "resume with bad action",
            frame("exec.resume", json!({"pauseId": "p", "action": "skip"})),
        ),
        (
            "hello without versions",
            frame("hello", json!({"capabilities": []})),
        ),
        ("unknown type", frame("node.teleported", json!({}))),
        ("not an object", json!([1, 2])),
    ];
    for (label, value) in broken {
        assert!(!validator.is_valid(&value), "{label} validated: {value}");
    }
}
