//! The SDK against the real Mindgate server, in-process on a free loopback port:
//! the demo agent holds at the error gate, is released through the HTTP API, and
//! its run is stored complete.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mindgate_sdk::demo::{DemoOptions, RunEnd, run_demo_with};
use mindgate_sdk::{Client, Config};
use serde_json::{Value, json};

async fn get(http: &reqwest::Client, url: &str, token: &str) -> Value {
    http.get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_run_is_held_resumed_and_stored_by_the_real_server() {
    let home = tempfile::tempdir().unwrap();
    // This test is the person at the error gate (it resumes over HTTP with no page
    // open): keep the gate held as unwatched gates are not (`serve --hold-unwatched`).
    let mut config = mindgate_server::ServeConfig::for_tests(home.path());
    config.hold_unwatched = true;
    let server = mindgate_server::start(config).await.unwrap();
    let base = server.base_url();
    let client = Client::new(
        Config::default()
            .app("sdk-real-server-test")
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    let options = DemoOptions {
        runs: 1,
        token_delay: Duration::from_millis(1),
        ..DemoOptions::default()
    };
    let demo = {
        let client = client.clone();
        tokio::spawn(async move { run_demo_with(&client, &options, Arc::new(|_: &str| {})).await })
    };
    let http = reqwest::Client::new();
    // The server arms pause-on-error: the flaky booking holds at its error gate.
    let deadline = Instant::now() + Duration::from_secs(10);
    let pause = loop {
        let pauses = get(&http, &format!("{base}/api/pauses"), &server.token).await;
        if let Some(p) = pauses["pauses"].as_array().and_then(|a| a.first()).cloned() {
            break p;
        }
        assert!(Instant::now() < deadline, "no pause appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(pause["nodeId"], "tool:book_hotel");
    assert_eq!(pause["point"], "error");
    let run_id = pause["runId"].as_str().unwrap().to_owned();
    let pause_id = pause["pauseId"].as_str().unwrap().to_owned();
    let answer: Value = http
        .post(format!("{base}/api/runs/{run_id}/pauses/{pause_id}/resume"))
        .bearer_auth(&server.token)
        .json(&json!({"action": "retry"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"], "resumed");
    let report = tokio::time::timeout(Duration::from_secs(10), demo)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.runs, vec![RunEnd::Ok]);
    assert!(client.flush(Duration::from_secs(5)).await);
    // The stored run is complete and ok.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let runs = get(&http, &format!("{base}/api/runs"), &server.token).await;
        let run = runs["runs"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["id"] == run_id.as_str()))
            .cloned();
        if let Some(run) = run
            && run["status"] == "ok"
        {
            assert_eq!(run["sdk"]["name"], "mindgate-sdk");
            break;
        }
        assert!(Instant::now() < deadline, "run not stored as ok");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let events = get(
        &http,
        &format!("{base}/api/runs/{run_id}/events?limit=5000"),
        &server.token,
    )
    .await;
    let types: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    for t in [
        "run.started",
        "node.token",
        "exec.paused",
        "exec.resumed",
        "node.error",
        "run.finished",
    ] {
        assert!(types.contains(&t), "missing {t} in {types:?}");
    }
    client.shutdown(Duration::from_secs(1)).await;
    server.stop().await.unwrap();
}
