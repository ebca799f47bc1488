//! Held time and work time are computed once, in the projection: every instance that was
//! held has its holds (errored, aborted and just-resumed ones too), its held time from
//! them and its work time apart; the run's totals come from the same values.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_store::RunProjection;
use serde_json::{Value, json};

/// Applies `(type, ts, payload)` events in order.
fn projection(events: &[(&str, i64, Value)]) -> RunProjection {
    let mut p = RunProjection::for_graph("r");
    for (seq, (kind, ts, payload)) in events.iter().enumerate() {
        p.apply_event(kind, seq as u64, *ts, &payload.to_string());
    }
    p
}

fn instance(graph: &Value, node: &str, index: usize) -> Value {
    graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nodeId"] == node)
        .unwrap()["instances"][index]
        .clone()
}

#[test]
fn an_errored_instance_held_at_its_error_gate_has_held_and_work_time_apart() {
    let p = projection(&[
        ("run.started", 1_000, json!({"app": "a"})),
        (
            "node.started",
            1_000,
            json!({"nodeId": "tool:pay", "instanceId": "i1"}),
        ),
        (
            "exec.paused",
            1_200,
            json!({"pauseId": "p1", "nodeId": "tool:pay", "instanceId": "i1", "point": "error"}),
        ),
        (
            "exec.resumed",
            4_200,
            json!({"pauseId": "p1", "action": "continue", "principal": {"kind": "unwatched"}}),
        ),
        // graphmind reports no durationMs on node.error.
        (
            "node.error",
            4_250,
            json!({"nodeId": "tool:pay", "instanceId": "i1", "error": {"name": "E", "message": "declined"}}),
        ),
        ("run.finished", 4_300, json!({"status": "error"})),
    ]);
    let graph = serde_json::to_value(p.graph()).unwrap();
    let inst = instance(&graph, "tool:pay", 0);
    assert_eq!(inst["status"], "error");
    assert_eq!(inst["holds"], json!([{"since": 1_200, "until": 4_200}]));
    assert_eq!(inst["heldMs"], 3_000.0);
    assert_eq!(inst["workMs"], 250.0);
    assert_eq!(graph["heldMs"], 3_000.0);
    assert_eq!(graph["workMs"], 300.0);
}

#[test]
fn a_held_instance_shows_its_open_hold_then_the_resumed_one_its_held_time() {
    let mut p = projection(&[
        ("run.started", 0, json!({})),
        (
            "node.started",
            0,
            json!({"nodeId": "tool:a", "instanceId": "i1"}),
        ),
        (
            "exec.paused",
            100,
            json!({"pauseId": "p1", "nodeId": "tool:a", "instanceId": "i1", "point": "before"}),
        ),
    ]);
    let graph = serde_json::to_value(p.graph()).unwrap();
    let held = instance(&graph, "tool:a", 0);
    assert_eq!(held["status"], "paused");
    assert_eq!(held["holds"], json!([{"since": 100, "until": null}]));
    assert_eq!(held["workMs"], Value::Null);
    assert_eq!(
        graph["workMs"],
        Value::Null,
        "a running run has no work time yet"
    );
    p.apply_event(
        "exec.resumed",
        3,
        600,
        &json!({"pauseId": "p1", "action": "retry"}).to_string(),
    );
    // The app's own heldMs (a different clock reading) does not replace the hub's record.
    p.apply_event(
        "node.finished",
        4,
        900,
        &json!({"nodeId": "tool:a", "instanceId": "i1", "status": "ok", "durationMs": 880.0, "heldMs": 510.0}).to_string(),
    );
    let graph = serde_json::to_value(p.graph()).unwrap();
    let done = instance(&graph, "tool:a", 0);
    assert_eq!(done["holds"], json!([{"since": 100, "until": 600}]));
    assert_eq!(done["heldMs"], 500.0);
    assert_eq!(done["workMs"], 380.0);
}

#[test]
fn an_instance_never_held_keeps_the_apps_held_time_and_no_holds() {
    let p = projection(&[
        (
            "node.started",
            0,
            json!({"nodeId": "llm:x", "instanceId": "i1"}),
        ),
        (
            "node.finished",
            50,
            json!({"nodeId": "llm:x", "instanceId": "i1", "status": "ok", "durationMs": 40.0}),
        ),
    ]);
    let graph = serde_json::to_value(p.graph()).unwrap();
    let inst = instance(&graph, "llm:x", 0);
    assert!(inst.get("holds").is_none());
    assert_eq!(inst["heldMs"], Value::Null);
    assert_eq!(inst["workMs"], 40.0);
    assert_eq!(graph["heldMs"].to_string(), "0.0", "no hold: 0, not -0");
}
