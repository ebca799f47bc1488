//! `GET /api/threads`, `GET /api/threads/:id` and the run list's `thread`, `user` and
//! `tag` filters, through the HTTP API of a started server fed by an app.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::*;
use mindgate_testkit::frames::frame;
use serde_json::json;

fn thread_run(run: &str, meta: serde_json::Value) -> Vec<String> {
    vec![
        frame(
            run,
            1,
            "run.started",
            json!({"app": "chat", "sdk": {"name": "t", "version": "1"}, "meta": meta}),
        ),
        frame(run, 2, "run.finished", json!({"status": "ok"})),
    ]
}

#[tokio::test]
async fn threads_group_runs_and_the_run_list_filters_by_thread_user_and_tag() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    send_all(
        &mut app,
        &thread_run(
            "h1",
            json!({"threadId": "conv-1", "userId": "ada", "tags": ["beta"]}),
        ),
    )
    .await;
    send_all(
        &mut app,
        &thread_run("h2", json!({"sessionId": "conv-1", "userId": "ada"})),
    )
    .await;
    send_all(&mut app, &thread_run("h3", json!({"name": "alone"}))).await;
    for run in ["h1", "h2", "h3"] {
        t.wait_events(run, 2).await;
    }
    let (s, list) = t.get("/api/threads").await;
    assert_eq!(s, 200);
    let threads = list["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1, "{list}");
    assert_eq!(threads[0]["id"], "conv-1");
    assert_eq!(threads[0]["runCount"], 2);
    assert_eq!(threads[0]["userId"], "ada");
    for key in [
        "firstStartedAt",
        "lastStartedAt",
        "durationMs",
        "workMs",
        "tokens",
        "costUsd",
        "errors",
    ] {
        assert!(threads[0].get(key).is_some(), "{key} in {}", threads[0]);
    }
    let (s, detail) = t.get("/api/threads/conv-1").await;
    assert_eq!(s, 200);
    assert_eq!(detail["thread"]["runCount"], 2);
    let ids: Vec<&str> = detail["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["h1", "h2"]);
    let (s, missing) = t.get("/api/threads/nope").await;
    assert_eq!(s, 404);
    assert_eq!(missing["code"], "not_found");
    let (_, runs) = t.get("/api/runs?thread=conv-1").await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2);
    let (_, runs) = t.get("/api/runs?tag=beta").await;
    assert_eq!(runs["runs"][0]["id"], "h1");
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
    let (_, runs) = t.get("/api/runs?user=nobody").await;
    assert_eq!(runs["runs"], json!([]));
    t.server.stop().await.expect("stop");
}
