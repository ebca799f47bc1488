//! Resume requests wait (bounded) for the app's `exec.resumed` / `exec.refused`.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use common::{frame, next_of, paused_app, resume_in_background};

#[tokio::test]
async fn refused_by_the_app_then_resumed_then_taken() {
    let t = common::start().await;
    let run = "rr-1";
    let mut app = paused_app(&t, run).await;

    // 1. The app refuses: the answer carries its message and the pause is held again.
    let pending = resume_in_background(&t, run, json!({"action": "inject", "output": 42}));
    let resume = next_of(&mut app, "exec.resume").await;
    assert_eq!(resume["payload"]["pauseId"], "p1");
    app.send(Message::text(frame(
        run,
        4,
        "exec.refused",
        json!({"pauseId": "p1", "code": "schema", "message": "output must be a string"}),
    )))
    .await
    .expect("refused");
    let (status, v) = pending.await.expect("task");
    assert_eq!(status, 200);
    assert_eq!(v["result"], "refused", "{v}");
    assert_eq!(v["message"], "output must be a string");
    let (_, pauses) = t.get(&format!("/api/pauses?runId={run}")).await;
    assert_eq!(pauses["pauses"][0]["pauseId"], "p1", "{pauses}");

    // 2. A second try is accepted by the app.
    let pending = resume_in_background(&t, run, json!({"action": "continue"}));
    next_of(&mut app, "exec.resume").await;
    app.send(Message::text(frame(
        run,
        5,
        "exec.resumed",
        json!({"pauseId": "p1", "action": "continue"}),
    )))
    .await
    .expect("resumed");
    let (status, v) = pending.await.expect("task");
    assert_eq!(
        (status, v["result"].clone()),
        (200, json!("resumed")),
        "{v}"
    );

    // 3. First wins: a later request is told it was taken.
    let (_, v) = t
        .send_json(
            reqwest::Method::POST,
            &format!("/api/runs/{run}/pauses/p1/resume"),
            json!({"action": "continue"}),
        )
        .await;
    assert_eq!(v["result"], "taken");
}

#[tokio::test]
async fn silent_app_counts_as_resumed_after_the_bounded_wait() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut config = mindgate_server::ServeConfig::for_tests(dir.path());
    config.resume_wait = Duration::from_millis(300);
    let server = mindgate_server::start(config).await.expect("server");
    let t = common::TestServer {
        dir,
        server,
        http: reqwest::Client::new(),
    };
    let run = "rr-2";
    let mut app = paused_app(&t, run).await;
    let started = Instant::now();
    let pending = resume_in_background(&t, run, json!({"action": "continue"}));
    next_of(&mut app, "exec.resume").await;
    let (status, v) = pending.await.expect("task");
    assert_eq!(
        (status, v["result"].clone()),
        (200, json!("resumed")),
        "{v}"
    );
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[tokio::test]
async fn viewer_feed_control_gets_the_apps_refusal() {
    let t = common::start().await;
    let run = "rr-3";
    let mut app = paused_app(&t, run).await;
    let mut ui = t.ui(true).await;
    ui.send(Message::text(
        json!({"type": "control", "requestId": "q1", "envelope": {
            "gm": 1, "seq": 0, "ts": 0, "runId": run, "type": "exec.resume",
            "payload": {"pauseId": "p1", "action": "retry"}
        }})
        .to_string(),
    ))
    .await
    .expect("control");
    next_of(&mut app, "exec.resume").await;
    app.send(Message::text(frame(
        run,
        4,
        "exec.refused",
        json!({"pauseId": "p1", "code": "disabled"}),
    )))
    .await
    .expect("refused");
    let v = next_of(&mut ui, "resume.result").await;
    assert_eq!(v["result"], "refused", "{v}");
    assert_eq!(v["requestId"], "q1");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("disabled")),
        "{v}"
    );
}
