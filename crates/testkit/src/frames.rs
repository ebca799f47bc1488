//! GraphMind protocol v1 frames, as an instrumented app sends them.

use serde_json::{Value, json};

/// The `ts` of [`frame`]'s frames: a fixed time plus the `seq` in milliseconds.
pub const BASE_TS: i64 = 1_700_000_000_000;

/// The `hello` an app opens its connection with (`token`: the `sessionToken` of an earlier
/// `hello.ack`, to reclaim its runs).
pub fn hello(token: Option<&str>) -> String {
    let mut p = json!({
        "versions": {"protocol": 1, "client": "test"},
        "capabilities": ["pause", "step", "inject", "retry", "abort", "run-claim"],
        "app": "test-app",
        "sdk": {"name": "rust-test", "version": "0"}
    });
    if let Some(t) = token {
        p["resumeToken"] = json!(t);
    }
    json!({"gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "hello", "payload": p}).to_string()
}

/// One frame of run `run` (`ts` is [`BASE_TS`] + `seq`).
pub fn frame(run: &str, seq: u64, ty: &str, payload: Value) -> String {
    let ts = BASE_TS.saturating_add(i64::try_from(seq).unwrap_or(i64::MAX));
    json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload}).to_string()
}

/// One of each event type, as a run of 13 frames: an agent with an LLM step that streams
/// and finishes, an error held at the error gate and continued, a refused resume, a type from
/// a newer protocol, and the run finishing `error`.
pub fn every_event(run: &str) -> Vec<String> {
    vec![
        frame(
            run,
            1,
            "run.started",
            json!({"app": "test-app", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "all"}}),
        ),
        frame(
            run,
            2,
            "graph.hint",
            json!({"nodes": [{"nodeId": "tool:x", "kind": "tool", "name": "x"}]}),
        ),
        frame(
            run,
            3,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
        ),
        frame(
            run,
            4,
            "node.started",
            json!({"nodeId": "llm:m", "kind": "llm", "name": "m", "instanceId": "m1", "parentId": "agent:a", "input": {"p": 1}}),
        ),
        frame(
            run,
            5,
            "node.token",
            json!({"nodeId": "llm:m", "instanceId": "m1", "deltas": [{"t": "text", "v": "hi"}]}),
        ),
        frame(
            run,
            6,
            "node.finished",
            json!({"nodeId": "llm:m", "instanceId": "m1", "durationMs": 5, "status": "ok", "usage": {"inputTokens": 3, "outputTokens": 4}}),
        ),
        frame(
            run,
            7,
            "node.error",
            json!({"nodeId": "agent:a", "instanceId": "a1", "error": {"name": "E", "message": "bad"}}),
        ),
        frame(
            run,
            8,
            "exec.paused",
            json!({"pauseId": "p1", "nodeId": "agent:a", "point": "error", "reason": "error"}),
        ),
        frame(
            run,
            9,
            "exec.resumed",
            json!({"pauseId": "p1", "action": "continue"}),
        ),
        frame(
            run,
            10,
            "exec.refused",
            json!({"pauseId": "p1", "code": "disabled"}),
        ),
        frame(
            run,
            11,
            "future.kind",
            json!({"nodeId": "agent:a", "anything": [1]}),
        ),
        frame(
            run,
            12,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 9, "status": "error"}),
        ),
        frame(
            run,
            13,
            "run.finished",
            json!({"status": "error", "error": {"name": "E", "message": "bad"}}),
        ),
    ]
}
