//! `GET /api/runs/:id/report`: the run analytics the MCP `get_run` shows, over HTTP.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::*;
use serde_json::json;

/// A run where `tool:s` fails once and its retry succeeds, `agent:a` fails for
/// good, and `llm:m` uses tokens.
fn report_run(run: &str) -> Vec<String> {
    vec![
        frame(
            run,
            1,
            "run.started",
            json!({"app": "test-app", "sdk": {"name": "t", "version": "1"}}),
        ),
        frame(
            run,
            2,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
        ),
        frame(
            run,
            3,
            "node.started",
            json!({"nodeId": "llm:m", "kind": "llm", "name": "m", "instanceId": "m1", "parentId": "agent:a"}),
        ),
        frame(
            run,
            4,
            "node.finished",
            json!({"nodeId": "llm:m", "instanceId": "m1", "durationMs": 40, "status": "ok", "usage": {"inputTokens": 30, "outputTokens": 7}}),
        ),
        frame(
            run,
            5,
            "node.started",
            json!({"nodeId": "tool:s", "kind": "tool", "name": "s", "instanceId": "s1", "parentId": "agent:a"}),
        ),
        frame(
            run,
            6,
            "node.error",
            json!({"nodeId": "tool:s", "instanceId": "s1", "error": {"name": "Timeout", "message": "slow upstream"}}),
        ),
        frame(
            run,
            7,
            "node.finished",
            json!({"nodeId": "tool:s", "instanceId": "s1", "durationMs": 12, "status": "error"}),
        ),
        frame(
            run,
            8,
            "node.started",
            json!({"nodeId": "tool:s", "kind": "tool", "name": "s", "instanceId": "s2", "parentId": "agent:a"}),
        ),
        frame(
            run,
            9,
            "node.finished",
            json!({"nodeId": "tool:s", "instanceId": "s2", "durationMs": 3, "status": "ok"}),
        ),
        frame(
            run,
            10,
            "node.error",
            json!({"nodeId": "agent:a", "instanceId": "a1", "error": {"name": "E", "message": "gave up"}}),
        ),
        frame(
            run,
            11,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 90, "status": "error"}),
        ),
        frame(
            run,
            12,
            "run.finished",
            json!({"status": "error", "error": {"name": "E", "message": "gave up"}}),
        ),
    ]
}

#[tokio::test]
async fn report_marks_recovered_errors_and_ranks_time_and_tokens() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    send_all(&mut app, &report_run("rep")).await;
    t.wait_events("rep", 12).await;

    let (status, report) = t.get("/api/runs/rep/report").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["runId"], "rep");
    assert_eq!(
        report["runError"],
        json!({"name": "E", "message": "gave up"})
    );
    assert_eq!(report["errorCount"], 2);
    assert_eq!(report["unrecoveredCount"], 1);
    let errors = report["errors"].as_array().unwrap();
    let by_node = |id: &str| errors.iter().find(|e| e["nodeId"] == id).unwrap().clone();
    assert_eq!(
        by_node("tool:s"),
        json!({"nodeId": "tool:s", "instanceId": "s1", "name": "Timeout", "message": "slow upstream", "recovered": true})
    );
    assert_eq!(by_node("agent:a")["recovered"], false);
    let slowest: Vec<&str> = report["slowest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["instanceId"].as_str().unwrap())
        .collect();
    assert_eq!(slowest, ["a1", "m1", "s1", "s2"]);
    assert_eq!(report["slowest"][0]["status"], "error");
    assert_eq!(
        report["tokens"],
        json!({"inputTokens": 30, "outputTokens": 7, "byNode": [{"nodeId": "llm:m", "inputTokens": 30, "outputTokens": 7}]})
    );
    assert_eq!(report["paused"], json!([]));

    let (status, body) = t.get("/api/runs/no-such-run/report").await;
    assert_eq!(status, 404, "{body}");
}
