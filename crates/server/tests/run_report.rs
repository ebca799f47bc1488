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
        json!({
            "inputTokens": 30, "outputTokens": 7, "cacheReadTokens": 0, "cacheWriteTokens": 0,
            // Usage that names no model is not priced: the cost says so instead of guessing.
            "cost": {"usd": null, "pricedUsd": 0.0, "unpricedModels": ["(no model name)"]},
            "byNode": [{
                "nodeId": "llm:m", "inputTokens": 30, "outputTokens": 7, "cacheReadTokens": 0,
                "cacheWriteTokens": 0, "models": [], "inclusive": false,
                "cost": {"usd": null, "pricedUsd": 0.0, "unpricedModels": ["(no model name)"]},
            }],
        })
    );
    assert_eq!(report["paused"], json!([]));

    let (status, body) = t.get("/api/runs/no-such-run/report").await;
    assert_eq!(status, 404, "{body}");
}

/// A run of `app` with one model call of `model` using `usage`.
fn priced_run(run: &str, app: &str, model: &str, usage: serde_json::Value) -> Vec<String> {
    vec![
        frame(
            run,
            1,
            "run.started",
            json!({"app": app, "sdk": {"name": "t", "version": "1"}}),
        ),
        frame(
            run,
            2,
            "node.started",
            json!({"nodeId": "llm:m", "kind": "llm", "name": "m", "instanceId": "m1", "input": {"model": model, "messages": []}}),
        ),
        frame(
            run,
            3,
            "node.finished",
            json!({"nodeId": "llm:m", "instanceId": "m1", "durationMs": 4, "status": "ok", "usage": usage}),
        ),
        frame(run, 4, "run.finished", json!({"status": "ok"})),
    ]
}

#[tokio::test]
async fn runs_and_apps_are_costed_with_the_users_price_file() {
    let t = start_with(|c| {
        std::fs::create_dir_all(&c.home).unwrap();
        std::fs::write(
            c.home.join("prices.toml"),
            "[models.\"house-model\"]\ninput = 4.0\noutput = 8.0\ncache_read = 1.0\ncache_write = 5.0\n",
        )
        .unwrap();
    })
    .await;
    let (mut app, _) = t.app(None).await;
    send_all(
        &mut app,
        &priced_run(
            "p1",
            "shop",
            "acme/house-model",
            json!({"inputTokens": 1000, "outputTokens": 500, "cacheReadTokens": 2000, "cacheWriteTokens": 100}),
        ),
    )
    .await;
    t.wait_events("p1", 4).await;
    let (mut app2, _) = t.app(None).await;
    send_all(
        &mut app2,
        &priced_run(
            "p2",
            "shop",
            "mystery-9",
            json!({"inputTokens": 1, "outputTokens": 1}),
        ),
    )
    .await;
    t.wait_events("p2", 4).await;

    let usd = (1000.0 * 4.0 + 500.0 * 8.0 + 2000.0 * 1.0 + 100.0 * 5.0) / 1e6;
    let priced = json!({"usd": usd, "pricedUsd": usd, "unpricedModels": []});
    let unpriced = json!({"usd": null, "pricedUsd": 0.0, "unpricedModels": ["mystery-9"]});
    let (status, list) = t.get("/api/runs").await;
    assert_eq!(status, 200, "{list}");
    let cost_of = |id: &str| {
        list["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()["cost"]
            .clone()
    };
    assert_eq!(cost_of("p1"), priced);
    assert_eq!(cost_of("p2"), unpriced);
    let (_, run) = t.get("/api/runs/p1").await;
    assert_eq!(run["cost"], priced);
    let (_, report) = t.get("/api/runs/p1/report").await;
    assert_eq!(report["tokens"]["cost"], priced);
    assert_eq!(
        report["tokens"]["byNode"][0]["models"],
        json!(["acme/house-model"])
    );

    let (status, apps) = t.get("/api/apps").await;
    assert_eq!(status, 200, "{apps}");
    assert_eq!(
        apps,
        json!({"apps": [{
            "app": "shop", "runCount": 2,
            "tokens": {"input": 1001, "output": 501, "cacheRead": 2000, "cacheWrite": 100},
            "cost": {"usd": null, "pricedUsd": usd, "unpricedModels": ["mystery-9"]},
        }], "truncated": false})
    );
}

#[tokio::test]
async fn a_bad_price_file_stops_the_start_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prices.toml"),
        "[models.\"gpt-4o\"]\ninput = \"cheap\"\noutput = 1.0\n",
    )
    .unwrap();
    let config = mindgate_server::ServeConfig::for_tests(dir.path());
    let err = mindgate_server::start(config)
        .await
        .expect_err("a bad price file is refused");
    let message = err.to_string();
    assert!(message.contains("prices.toml, line 2"), "{message}");
    assert!(
        !dir.path().join("mindgate.db").exists(),
        "nothing is written before the price file is read"
    );
}
