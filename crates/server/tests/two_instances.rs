//! Two servers on one PostgreSQL run store: a run an app sends to instance A reaches the
//! viewers of instance B live — in B's run list, and as a graph (snapshot + deltas)
//! equal to the one A serves. Without `MINDGATE_TEST_POSTGRES_URL` the test prints the
//! usual "skipped" line and passes.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::folded::Folded;
use common::{PgSchema, TestServer, frame, next_json, send_all};
use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// A run with a root agent and `tools` tool calls (tokens, some errors), finished.
fn run_frames(run: &str, tools: u64) -> Vec<String> {
    let mut frames = vec![frame(
        run,
        0,
        "run.started",
        json!({"app": "relay", "sdk": {"name": "x", "version": "1"}}),
    )];
    let mut seq = 1;
    let mut push = |ty: &str, payload: Value| {
        frames.push(frame(run, seq, ty, payload));
        seq += 1;
    };
    push(
        "node.started",
        json!({"nodeId": "agent:root", "kind": "agent", "name": "root", "instanceId": "root#0"}),
    );
    for i in 0..tools {
        let id = format!("tool:t{}", i % 40);
        let instance = format!("i{i}");
        push(
            "node.started",
            json!({"nodeId": id, "kind": "tool", "name": id, "parentId": "agent:root", "instanceId": instance}),
        );
        push(
            "node.token",
            json!({"nodeId": id, "instanceId": instance, "deltas": [{"t": "text", "v": "ab"}]}),
        );
        if i % 9 == 0 {
            push(
                "node.error",
                json!({"nodeId": id, "instanceId": instance, "error": {"name": "E", "message": "m"}}),
            );
        } else {
            push(
                "node.finished",
                json!({"nodeId": id, "instanceId": instance, "status": "ok", "durationMs": 1}),
            );
        }
    }
    push("run.finished", json!({"status": "ok"}));
    frames
}

/// Reads B's run-list viewer until the run shows `events` events with `status`: in a
/// `run.update`, or in a fresh `runs` list (what a viewer that fell behind gets instead).
/// Returns `{"run": …}`.
async fn wait_run_update(ui: &mut common::Ws, run: &str, events: u64, status: &str) -> Value {
    let done =
        |r: &Value| r["id"] == run && r["counts"]["events"] == events && r["status"] == status;
    loop {
        let msg = next_json(ui).await.expect("run list feed ended");
        if msg["type"] == "run.update" && done(&msg["run"]) {
            return msg;
        }
        if msg["type"] == "runs"
            && let Some(r) = msg["runs"]
                .as_array()
                .and_then(|l| l.iter().find(|r| done(r)))
        {
            return json!({ "run": r });
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_sent_to_one_instance_is_live_on_the_other() {
    let Some(schema) = PgSchema::create("mg_two").await else {
        return;
    };
    let a = schema.server().await;
    let b = schema.server().await;

    // On B: one viewer follows the run list, one the graph of a run not sent yet.
    let mut list = b.ui(false).await;
    list.send(Message::text(
        json!({"type": "subscribe", "runId": "*"}).to_string(),
    ))
    .await
    .unwrap();
    let mut graph_ui = b.ui(false).await;
    graph_ui
        .send(Message::text(
            json!({"type": "subscribe", "runId": "cross", "projection": true}).to_string(),
        ))
        .await
        .unwrap();
    let mut graph = Folded::default();
    graph.read_snapshot(&mut graph_ui).await;
    assert!(graph.nodes.is_empty(), "nothing stored yet");
    loop {
        let msg = next_json(&mut list).await.expect("runs");
        if msg["type"] == "runs" {
            assert_eq!(msg["runs"], json!([]));
            break;
        }
    }

    // The app talks to A only.
    let frames = run_frames("cross", 120);
    let last_seq = frames.len() as u64 - 1;
    let (mut app, _) = a.app(None).await;
    for chunk in frames.chunks(50) {
        send_all(&mut app, chunk).await;
        app.flush().await.unwrap();
    }
    let stored = a.wait_status("cross", "ok").await;
    assert_eq!(stored["counts"]["events"], frames.len() as u64);

    // B's run list shows it finished, with every event counted.
    let update = wait_run_update(&mut list, "cross", frames.len() as u64, "ok").await;
    assert_eq!(update["run"]["app"], "relay");
    // B's graph viewer folds snapshot + deltas into the graph A serves.
    tokio::time::timeout(
        Duration::from_secs(20),
        graph.follow(&mut graph_ui, last_seq),
    )
    .await
    .expect("B's viewer got the whole graph");
    assert!(graph.deltas > 0, "the run came live, as deltas");
    let (status, want) = a.get("/api/runs/cross/graph").await;
    assert_eq!(status, 200);
    assert_eq!(&graph.nodes, want["nodes"].as_array().unwrap());
    // B serves the same graph from the shared store, and its run as A stored it.
    let (_, on_b) = b.get("/api/runs/cross/graph").await;
    assert_eq!(on_b["nodes"], want["nodes"]);

    drop(app);
    drop((list, graph_ui));
    for t in [a, b] {
        let TestServer { server, dir, .. } = t;
        server.stop().await.expect("stop");
        drop(dir);
    }
    drop(schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_re_read_the_run_list_after_the_relay_was_cut() {
    let Some(schema) = PgSchema::create("mg_two").await else {
        return;
    };
    let admin_url = schema.admin.clone();
    let a = schema.server().await;
    let b = schema.server().await;
    let mut list = b.ui(false).await;
    list.send(Message::text(
        json!({"type": "subscribe", "runId": "*"}).to_string(),
    ))
    .await
    .unwrap();
    loop {
        let msg = next_json(&mut list).await.expect("runs");
        if msg["type"] == "runs" {
            assert_eq!(msg["runs"], json!([]));
            break;
        }
    }
    let (mut app, _) = a.app(None).await;
    let before = run_frames("before-cut", 2);
    send_all(&mut app, &before).await;
    wait_run_update(&mut list, "before-cut", before.len() as u64, "ok").await;
    // Cut B's follower (its connection is named after B's instance, which is its
    // writer's id): once it listens again, B's viewers get the run list afresh.
    let (b_addr, schema_name) = (b.server.addr.to_string(), schema.name.clone());
    let cut: i64 = tokio::task::spawn_blocking(move || {
        let mut c = mindgate_testkit::pg_client(&admin_url);
        let b_id: String = c
            .query_one(
                &format!("SELECT id FROM {schema_name}.mindgate_instances WHERE addr = $1"),
                &[&b_addr],
            )
            .expect("B is a registered instance")
            .get(0);
        let name = mindgate_store::follower_application_name(&b_id);
        c.query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = left($1, 63)",
            &[&name],
        )
        .expect("terminate")
        .get(0)
    })
    .await
    .expect("cut");
    assert_eq!(cut, 1, "B's follower connection");
    let relisted = loop {
        let msg = next_json(&mut list).await.expect("the list again");
        if msg["type"] == "runs" {
            break msg;
        }
    };
    assert_eq!(relisted["runs"][0]["id"], "before-cut");
    // And the relay follows again.
    let after = run_frames("after-cut", 2);
    send_all(&mut app, &after).await;
    wait_run_update(&mut list, "after-cut", after.len() as u64, "ok").await;

    drop(app);
    drop(list);
    for t in [a, b] {
        let TestServer { server, dir, .. } = t;
        server.stop().await.expect("stop");
        drop(dir);
    }
    drop(schema);
}
