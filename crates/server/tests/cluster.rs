//! Two servers on one PostgreSQL database behave as one hub: a gate held by an app on
//! instance A is listed and released from instance B, breakpoints and the mode set on
//! one reach the apps of the other, and one resume wins across both. Each case uses a
//! schema of its own in `MINDGATE_TEST_POSTGRES_URL`; without it the cases say they were
//! skipped and pass.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use common::{PgSchema, TestServer, frame, next_of, paused_app, resume_in_background, wait_pauses};

async fn resume(t: &TestServer, run: &str, body: Value) -> (u16, Value) {
    t.send_json(
        reqwest::Method::POST,
        &format!("/api/runs/{run}/pauses/p1/resume"),
        body,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_held_on_a_is_released_from_b_and_only_once() {
    let Some(schema) = PgSchema::create("mg_server_cluster").await else {
        return;
    };
    let a = schema.server().await;
    let b = schema.server().await;
    let run = "cl-1";
    let mut app = paused_app(&a, run).await;

    // B lists A's gate, with everything A shows of it.
    let listed = wait_pauses(&b, run, 1).await;
    let (_, on_a) = a.get(&format!("/api/pauses?runId={run}")).await;
    assert_eq!(listed["pauses"], on_a["pauses"]);
    let (status, one) = b.get(&format!("/api/runs/{run}/pauses/p1")).await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["nodeId"], "tool:a");

    // Released through B: the app on A gets the resume, and B hears its answer.
    let pending =
        resume_in_background(&b, run, json!({"action": "inject", "output": {"ok": true}}));
    let got = next_of(&mut app, "exec.resume").await;
    assert_eq!(got["payload"]["pauseId"], "p1");
    assert_eq!(got["payload"]["action"], "inject");
    assert_eq!(got["payload"]["output"], json!({"ok": true}));
    // A second resume, from A this time, loses: B won.
    let (_, second) = resume(&a, run, json!({"action": "continue"})).await;
    assert_eq!(second["result"], "taken", "{second}");
    app.send(Message::text(frame(
        run,
        4,
        "exec.resumed",
        json!({"pauseId": "p1", "action": "inject"}),
    )))
    .await
    .expect("resumed");
    let (status, answer) = pending.await.expect("task");
    assert_eq!((status, answer["result"].clone()), (200, json!("resumed")));
    wait_pauses(&a, run, 0).await;
    wait_pauses(&b, run, 0).await;

    // The release is stored with who made it: the HTTP API, through B.
    a.wait_events(run, 4).await;
    let (_, events) = a.get(&format!("/api/runs/{run}/events")).await;
    let resumed = events["events"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["type"] == "exec.resumed"))
        .cloned()
        .expect("exec.resumed stored");
    assert_eq!(resumed["payload"]["principal"]["kind"], "http", "{resumed}");
    b.server.stop().await.expect("stop b");
    a.server.stop().await.expect("stop a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_refusal_on_a_reaches_the_resume_made_on_b() {
    let Some(schema) = PgSchema::create("mg_server_cluster").await else {
        return;
    };
    let a = schema.server().await;
    let b = schema.server().await;
    let run = "cl-2";
    let mut app = paused_app(&a, run).await;
    wait_pauses(&b, run, 1).await;
    let pending = resume_in_background(&b, run, json!({"action": "continue"}));
    next_of(&mut app, "exec.resume").await;
    app.send(Message::text(frame(
        run,
        4,
        "exec.refused",
        json!({"pauseId": "p1", "code": "schema", "message": "not now"}),
    )))
    .await
    .expect("refused");
    let (_, answer) = pending.await.expect("task");
    assert_eq!(answer["result"], "refused", "{answer}");
    assert_eq!(answer["message"], "not now");
    // Held again, on both.
    wait_pauses(&a, run, 1).await;
    wait_pauses(&b, run, 1).await;
    b.server.stop().await.expect("stop b");
    a.server.stop().await.expect("stop a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoints_and_mode_set_on_one_instance_reach_the_apps_of_the_other() {
    let Some(schema) = PgSchema::create("mg_server_cluster").await else {
        return;
    };
    let a = schema.server().await;
    let b = schema.server().await;
    let (mut app, _) = a.app(None).await;
    let matcher = json!({"kind": "tool", "name": "search"});
    let (status, _) = b
        .send_json(reqwest::Method::POST, "/api/breakpoints", matcher.clone())
        .await;
    assert!(status < 300, "{status}");
    let set = next_of(&mut app, "breakpoint.set").await;
    assert_eq!(set["payload"]["matcher"]["name"], "search", "{set}");
    let (status, _) = b
        .send_json(reqwest::Method::PUT, "/api/mode", json!({"mode": "step"}))
        .await;
    assert!(status < 300, "{status}");
    let mode = next_of(&mut app, "mode.set").await;
    assert_eq!(mode["payload"]["mode"], "step");

    // Both instances show the same debug state, and an app attaching to either is armed
    // with it.
    let wanted = mindgate_testkit::wait::until_async(
        "A's debug state to match B's",
        Duration::from_secs(10),
        || async {
            let (_, on_a) = a.get("/api/debug").await;
            let (_, on_b) = b.get("/api/debug").await;
            (on_a == on_b).then_some(on_a)
        },
    )
    .await;
    assert_eq!(wanted["mode"], "step", "{wanted}");
    let (_, ack) = a.app(None).await;
    assert_eq!(ack["payload"]["mode"], "step");
    assert!(
        ack["payload"]["breakpoints"]
            .as_array()
            .is_some_and(|b| b.iter().any(|m| m["name"] == "search")),
        "{ack}"
    );
    // Cleared on A: gone on B.
    let (status, _) = a
        .send_json(reqwest::Method::DELETE, "/api/breakpoints", matcher)
        .await;
    assert!(status < 300, "{status}");
    let cleared = next_of(&mut app, "breakpoint.clear").await;
    assert_eq!(cleared["payload"]["matcher"]["name"], "search");
    mindgate_testkit::wait::until_async(
        "B to drop the breakpoint",
        Duration::from_secs(10),
        || async {
            let (_, on_b) = b.get("/api/debug").await;
            on_b["breakpoints"]
                .as_array()
                .is_some_and(|b| !b.iter().any(|m| m["name"] == "search"))
                .then_some(())
        },
    )
    .await;
    b.server.stop().await.expect("stop b");
    a.server.stop().await.expect("stop a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_instances_gates_leave_the_others() {
    let Some(schema) = PgSchema::create("mg_server_cluster").await else {
        return;
    };
    let a = schema.server().await;
    let b = schema.server().await;
    let run = "cl-3";
    let _app = paused_app(&a, run).await;
    wait_pauses(&b, run, 1).await;
    a.server.stop().await.expect("stop a");
    wait_pauses(&b, run, 0).await;
    let (_, v) = resume(&b, run, json!({"action": "continue"})).await;
    assert_eq!(v["result"], "no-such-pause", "{v}");
    b.server.stop().await.expect("stop b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_keeps_writing_its_run_through_another_instance_with_its_session_token() {
    let Some(schema) = PgSchema::create("mg_server_cluster").await else {
        return;
    };
    let a = schema.server().await;
    let b = schema.server().await;
    let run = "cl-4";
    let (mut app, ack) = a.app(None).await;
    let token = ack["payload"]["sessionToken"]
        .as_str()
        .expect("session token")
        .to_owned();
    common::send_all(
        &mut app,
        &[frame(
            run,
            1,
            "run.started",
            json!({"app": "cluster-app", "sdk": {"name": "t", "version": "1"}}),
        )],
    )
    .await;
    a.wait_events(run, 1).await;
    drop(app);

    // The same app on B, with its token: its run goes on.
    let (mut again, _) = b.app(Some(&token)).await;
    common::send_all(
        &mut again,
        &[frame(
            run,
            2,
            "node.started",
            json!({"nodeId": "tool:a", "kind": "tool", "name": "a", "instanceId": "i1"}),
        )],
    )
    .await;
    b.wait_events(run, 2).await;
    // A's grace for the app that left runs out, but the run is B's now: it stays running
    // (checked for four graces; a negative can only be watched for a while).
    let until = std::time::Instant::now() + 4 * Duration::from_millis(300);
    while std::time::Instant::now() < until {
        let (_, v) = a.get(&format!("/api/runs/{run}")).await;
        assert_eq!(v["status"], "running", "{v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Another app on B may not write it.
    let (mut other, _) = b.app(None).await;
    common::send_all(
        &mut other,
        &[frame(
            run,
            3,
            "node.started",
            json!({"nodeId": "tool:evil", "kind": "tool", "name": "evil", "instanceId": "e"}),
        )],
    )
    .await;
    // A marker run it may write, to know its earlier frame was handled.
    common::send_all(
        &mut other,
        &[frame(
            "cl-4-marker",
            1,
            "run.started",
            json!({"app": "x", "sdk": {"name": "x", "version": "1"}}),
        )],
    )
    .await;
    b.wait_events("cl-4-marker", 1).await;
    let (_, health) = b.get("/health").await;
    assert_eq!(health["refusedEvents"], 1, "{health}");
    let (_, stored) = a.get(&format!("/api/runs/{run}")).await;
    assert_eq!(stored["counts"]["events"], 2, "{stored}");
    b.server.stop().await.expect("stop b");
    a.server.stop().await.expect("stop a");
}
