//! Shared sample frames and helpers for the protocol integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use mindgate_protocol::{Envelope, ParseResult, parse_envelope};
use serde_json::{Value, json};

/// One realistic frame of every message type (and a gap-marker `graph.hint`), as
/// JSON values, keyed by a short label.
pub fn samples() -> Vec<(&'static str, Value)> {
    vec![
        (
            "run.started",
            frame(
                "run.started",
                json!({
                    "app": "support-agent",
                    "sdk": {"name": "python", "version": "0.5.1"},
                    "meta": {"name": "handle-ticket", "tags": ["beta"]}
                }),
            ),
        ),
        (
            "run.finished",
            frame(
                "run.finished",
                json!({
                    "status": "error",
                    "error": {"name": "ValueError", "message": "boom", "stack": "Traceback (most recent call last):\n  ..."}
                }),
            ),
        ),
        (
            "graph.hint",
            frame(
                "graph.hint",
                json!({"nodes": [
                    {"nodeId": "agent:handle-ticket", "kind": "agent", "name": "handle-ticket"},
                    {"nodeId": "llm:step", "kind": "llm", "name": "step", "parentId": "agent:handle-ticket"},
                    {"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights", "parentId": "llm:step"}
                ]}),
            ),
        ),
        (
            "graph.hint/gap",
            frame(
                "graph.hint",
                json!({"nodes": [], "gap": {"droppedCount": 12, "fromSeq": 3, "toSeq": 14, "reason": "buffer-full"}}),
            ),
        ),
        (
            "node.started",
            frame(
                "node.started",
                json!({
                    "nodeId": "tool:search_flights",
                    "parentId": "llm:step",
                    "kind": "tool",
                    "name": "search_flights",
                    "instanceId": "call_1a2b3c_4",
                    "input": {"origin": "SFO", "destination": "JFK"},
                    "collapsed": false,
                    "redaction": {"count": 1, "keys": ["input"]}
                }),
            ),
        ),
        (
            "node.token",
            frame(
                "node.token",
                json!({"nodeId": "llm:step", "deltas": [
                    {"t": "text", "v": "Hel"},
                    {"t": "reasoning", "v": "thinking"},
                    {"t": "tool-args", "v": "{\"origin\":"}
                ]}),
            ),
        ),
        (
            "node.finished",
            frame(
                "node.finished",
                json!({
                    "nodeId": "llm:step",
                    "instanceId": "step_1a2b3c_2",
                    "output": {"text": "Hello"},
                    "usage": {"inputTokens": 120, "outputTokens": 42, "inclusive": false,
                              "cacheReadTokens": 100, "cacheWriteTokens": 0, "reasoningTokens": 7},
                    "durationMs": 812.37,
                    "status": "ok",
                    "heldMs": 500.25,
                    "finishReason": "tool-calls"
                }),
            ),
        ),
        (
            "node.error",
            frame(
                "node.error",
                json!({
                    "nodeId": "tool:flaky",
                    "instanceId": "call_1a2b3c_5",
                    "error": {"name": "RuntimeError", "message": "upstream 503"},
                    "heldMs": 0
                }),
            ),
        ),
        (
            "exec.paused",
            frame(
                "exec.paused",
                json!({
                    "pauseId": "pause_1a2b3c_1",
                    "nodeId": "tool:search_flights",
                    "point": "before",
                    "reason": "loop",
                    "loop": {"repeats": 3, "firstSeq": 10, "lastSeq": 14, "fingerprint": "fp:9f2c",
                             "kind": "cycle", "period": 2, "laps": 3},
                    "smart": {"rule": "cost-cap", "detail": {"usd": 1.5}},
                    "editable": true
                }),
            ),
        ),
        (
            "exec.resumed",
            frame(
                "exec.resumed",
                json!({
                    "pauseId": "pause_1a2b3c_1",
                    "action": "inject",
                    "edited": {"after": {"origin": "SFO"}},
                    "requestId": "req-1",
                    "principal": {"kind": "ui", "pid": 4242}
                }),
            ),
        ),
        (
            "exec.refused",
            frame(
                "exec.refused",
                json!({"pauseId": "pause_1a2b3c_1", "code": "schema", "message": "output does not match", "requestId": "req-2"}),
            ),
        ),
        (
            "exec.resume",
            frame(
                "exec.resume",
                json!({"pauseId": "pause_1a2b3c_1", "action": "inject", "output": {"flights": []},
                       "input": {"origin": "OAK"}, "requestId": "req-3"}),
            ),
        ),
        (
            "breakpoint.set",
            wildcard(
                "breakpoint.set",
                json!({"matcher": {"kind": "tool", "name": "search_flights", "point": "after"}}),
            ),
        ),
        (
            "breakpoint.clear",
            wildcard("breakpoint.clear", json!({"matcher": {}})),
        ),
        ("mode.set", wildcard("mode.set", json!({"mode": "step"}))),
        (
            "hello",
            wildcard(
                "hello",
                json!({
                    "versions": {"protocol": 1, "client": "0.5.1"},
                    "capabilities": ["pause", "step", "inject", "retry", "abort", "run-claim"],
                    "app": "support-agent",
                    "sdk": {"name": "python", "version": "0.5.1"},
                    "resumeToken": "tok_5f1e"
                }),
            ),
        ),
        (
            "hello.ack",
            wildcard(
                "hello.ack",
                json!({
                    "versions": {"protocol": 1, "viewer": "0.1.0"},
                    "capabilities": ["pause", "step", "inject", "retry", "abort"],
                    "breakpoints": [{"point": "error"}, {"kind": "tool", "name": "search_flights"}],
                    "mode": "run",
                    "sessionToken": "tok_5f1e",
                    "hubCapabilities": ["edit-input", "replay", "principal"]
                }),
            ),
        ),
    ]
}

/// The sample of one label.
pub fn sample(label: &str) -> Value {
    samples()
        .into_iter()
        .find(|(l, _)| *l == label)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no sample {label}"))
}

/// A run-bound envelope around `payload`.
pub fn frame(type_name: &str, payload: Value) -> Value {
    json!({"gm": 1, "seq": 42, "ts": 1_756_200_000_000_i64, "runId": "run_ab12cd34ef56",
           "type": type_name, "payload": payload})
}

/// A wildcard (`runId: "*"`) envelope around `payload`.
pub fn wildcard(type_name: &str, payload: Value) -> Value {
    json!({"gm": 1, "seq": 3, "ts": 1_756_200_000_000_i64, "runId": "*",
           "type": type_name, "payload": payload})
}

/// Parses `value`'s text and insists on `Ok`.
pub fn parse_ok(value: &Value) -> Envelope {
    let text = value.to_string();
    match parse_envelope(&text) {
        ParseResult::Ok(env) => env,
        other => panic!("expected ok for {text}, got {other:?}"),
    }
}

/// JSON equality where numbers compare by value (`12 == 12.0`), as JSON itself
/// (and every JavaScript peer) sees them. Objects compare regardless of key order.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}
