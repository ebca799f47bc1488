//! `/ingest` over real sockets: handshake, events, dedupe, claims, abandon, bad frames.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::*;
use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn handshake_acks_versions_default_breakpoint_and_token() {
    let t = start().await;
    let (_ws, ack) = t.app(None).await;
    assert_eq!(ack["type"], "hello.ack");
    assert_eq!(ack["runId"], "*");
    let p = &ack["payload"];
    assert_eq!(p["versions"]["protocol"], 1);
    assert!(p["versions"]["viewer"].is_string());
    assert_eq!(p["breakpoints"], json!([{"point": "error"}]));
    assert_eq!(p["mode"], "run");
    assert!(
        p["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("run-claim"))
    );
    assert_eq!(p["sessionToken"].as_str().map(str::len), Some(32));
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn a_client_that_never_says_hello_is_closed() {
    let t = start().await;
    let (mut ws, _) = connect_async(t.server.ingest_url()).await.expect("connect");
    assert_eq!(
        close_code(&mut ws).await,
        Some(mindgate_server::close_code::POLICY)
    );
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn first_frame_must_be_hello_and_version_mismatch_is_explained() {
    let t = start().await;
    let (mut ws, _) = connect_async(t.server.ingest_url()).await.expect("connect");
    ws.send(Message::text(frame(
        "r",
        1,
        "run.started",
        json!({"app": "a", "sdk": {"name": "x", "version": "1"}}),
    )))
    .await
    .expect("send");
    assert_eq!(
        close_code(&mut ws).await,
        Some(mindgate_server::close_code::POLICY)
    );

    let (mut ws, _) = connect_async(t.server.ingest_url()).await.expect("connect");
    let bad = hello(None).replace("\"gm\":1", "\"gm\":2");
    ws.send(Message::text(bad)).await.expect("send");
    let msg = tokio::time::timeout(
        Duration::from_secs(5),
        futures_util::StreamExt::next(&mut ws),
    )
    .await
    .expect("reply")
    .expect("frame")
    .expect("ok");
    match msg {
        Message::Close(Some(f)) => {
            assert_eq!(u16::from(f.code), mindgate_server::close_code::PROTOCOL);
            assert!(f.reason.contains("version"), "{}", f.reason);
        }
        other => panic!("expected close, got {other:?}"),
    }
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn every_event_type_is_stored_and_served_as_sent() {
    let t = start().await;
    let (mut ws, _) = t.app(None).await;
    let frames = every_event("all");
    send_all(&mut ws, &frames).await;
    let run = t.wait_events("all", frames.len() as u64).await;
    assert_eq!(run["status"], "error");
    assert_eq!(run["name"], "all");
    assert_eq!(run["counts"]["errors"], 1);
    assert_eq!(run["counts"]["nodes"], 2);
    assert_eq!(run["usage"]["inputTokens"], 3);
    let (status, page) = t.get("/api/runs/all/events").await;
    assert_eq!(status, 200);
    let events = page["events"].as_array().unwrap();
    assert_eq!(events.len(), frames.len());
    for (sent, got) in frames.iter().zip(events) {
        let mut sent: Value = serde_json::from_str(sent).unwrap();
        // The hub stamps who released a gate when the app did not say: here
        // the app released it itself (no resume of the hub waited).
        if sent["type"] == "exec.resumed" && sent["payload"].get("principal").is_none() {
            sent["payload"]["principal"] = json!({"kind": "fail-open"});
        }
        assert_eq!(&sent, got);
    }
    assert_eq!(page["nextAfterSeq"], 13);
    let (_, page) = t.get("/api/runs/all/events?afterSeq=10&limit=2").await;
    assert_eq!(page["events"].as_array().unwrap().len(), 2);
    assert_eq!(page["nextAfterSeq"], 12);
    let (status, graph) = t.get("/api/runs/all/graph").await;
    assert_eq!(status, 200);
    assert_eq!(graph["runId"], "all");
    assert_eq!(
        graph["edges"],
        json!([{"source": "agent:a", "target": "llm:m"}])
    );
    let llm = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nodeId"] == "llm:m")
        .unwrap();
    assert_eq!(llm["instances"][0]["tokens"], "hi");
    let (status, node) = t.get("/api/runs/all/nodes/llm:m").await;
    assert_eq!(status, 200);
    assert_eq!(node["instances"][0]["input"], json!({"p": 1}));
    let (status, _) = t.get("/api/runs/all/nodes/tool:nope").await;
    assert_eq!(status, 404);
    let (status, err) = t.get("/api/runs/missing").await;
    assert_eq!(status, 404);
    assert!(err["error"].as_str().unwrap().contains("missing"));
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn replays_after_reconnect_are_deduplicated() {
    let t = start().await;
    let (mut ws, ack) = t.app(None).await;
    let token = ack["payload"]["sessionToken"].as_str().unwrap().to_owned();
    let frames = every_event("rr");
    send_all(&mut ws, &frames[..8]).await;
    t.wait_events("rr", 8).await;
    drop(ws);
    // Reconnect with the session token and replay everything, old and new.
    let (mut ws, ack2) = t.app(Some(&token)).await;
    assert_eq!(ack2["payload"]["sessionToken"], token.as_str());
    send_all(&mut ws, &frames).await;
    send_all(&mut ws, &frames).await;
    let run = t.wait_events("rr", frames.len() as u64).await;
    assert_eq!(
        run["counts"]["errors"], 1,
        "a replayed error is not counted twice"
    );
    let (_, page) = t.get("/api/runs/rr/events").await;
    let seqs: Vec<u64> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=13).collect::<Vec<_>>());
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn run_claims_refuse_other_apps_unless_they_hold_the_token() {
    let t = start().await;
    let (mut owner, ack) = t.app(None).await;
    let token = ack["payload"]["sessionToken"].as_str().unwrap().to_owned();
    send_all(&mut owner, &every_event("mine")[..3]).await;
    t.wait_events("mine", 3).await;
    let (mut intruder, _) = t.app(None).await;
    send_all(
        &mut intruder,
        &[frame(
            "mine",
            100,
            "node.started",
            json!({"nodeId": "tool:evil", "kind": "tool", "name": "evil", "instanceId": "e"}),
        )],
    )
    .await;
    // A marker the intruder may write, to know its earlier frame was processed.
    send_all(
        &mut intruder,
        &[frame(
            "theirs",
            1,
            "run.started",
            json!({"app": "x", "sdk": {"name": "x", "version": "1"}}),
        )],
    )
    .await;
    t.wait_events("theirs", 1).await;
    let run = t.wait_events("mine", 3).await;
    assert_eq!(run["counts"]["events"], 3);
    let (_, health) = t.get("/health").await;
    assert_eq!(health["refusedEvents"], 1);
    // With the owner's token, a second connection may write.
    let (mut second, _) = t.app(Some(&token)).await;
    send_all(
        &mut second,
        &[frame(
            "mine",
            101,
            "node.started",
            json!({"nodeId": "tool:ok", "kind": "tool", "name": "ok", "instanceId": "o"}),
        )],
    )
    .await;
    t.wait_events("mine", 4).await;
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn a_disconnected_unfinished_run_is_abandoned_after_the_grace() {
    let t = start().await;
    let (mut ws, _) = t.app(None).await;
    send_all(&mut ws, &every_event("ab")[..4]).await;
    t.wait_events("ab", 4).await;
    let (mut done, _) = t.app(None).await;
    send_all(&mut done, &every_event("fin")).await;
    t.wait_events("fin", 13).await;
    drop(ws);
    drop(done);
    t.wait_status("ab", "abandoned").await;
    assert_eq!(t.get("/api/runs/fin").await.1["status"], "error");
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn a_reconnect_within_the_grace_keeps_the_run_running() {
    let t = start().await;
    let (mut ws, ack) = t.app(None).await;
    let token = ack["payload"]["sessionToken"].as_str().unwrap().to_owned();
    send_all(&mut ws, &every_event("back")[..4]).await;
    t.wait_events("back", 4).await;
    // A second app that leaves for good at the same moment is the clock: once its run is
    // abandoned, the grace has passed for "back" too.
    let (mut gone, _) = t.app(None).await;
    send_all(&mut gone, &every_event("gone")[..4]).await;
    t.wait_events("gone", 4).await;
    drop(ws);
    drop(gone);
    let (_ws2, _) = t.app(Some(&token)).await;
    t.wait_status("gone", "abandoned").await;
    assert_eq!(t.get("/api/runs/back").await.1["status"], "running");
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn bad_frames_are_dropped_and_the_connection_keeps_serving() {
    let t = start().await;
    let (mut ws, _) = t.app(None).await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_payload = format!(
        r#"{{"gm":1,"seq":5,"ts":0,"runId":"bad","type":"node.started","payload":{{"nodeId":"n","kind":"tool","name":"n","instanceId":"i","input":{}{}}}}}"#,
        "[".repeat(500),
        "]".repeat(500)
    );
    let corpus: Vec<String> = vec![
        "not json".into(),
        "".into(),
        "[]".into(),
        "null".into(),
        "{}".into(),
        deep,
        deep_payload,
        r#"{"gm":"1","seq":1,"ts":0,"runId":"bad","type":"run.finished","payload":{"status":"ok"}}"#.into(),
        r#"{"gm":1,"seq":-1,"ts":0,"runId":"bad","type":"run.finished","payload":{"status":"ok"}}"#.into(),
        r#"{"gm":1,"seq":1.5,"ts":0,"runId":"bad","type":"run.finished","payload":{"status":"ok"}}"#.into(),
        r#"{"gm":1,"seq":1,"ts":0,"runId":"","type":"run.finished","payload":{"status":"ok"}}"#.into(),
        r#"{"gm":1,"seq":1,"ts":0,"runId":"bad","type":"run.finished","payload":[]}"#.into(),
        r#"{"gm":1,"seq":1,"ts":0,"runId":"bad","type":"run.finished","payload":{"status":"maybe"}}"#.into(),
        r#"{"gm":1,"seq":1,"ts":0,"runId":"bad","type":"node.token","payload":{"nodeId":"n","deltas":[{"t":"smell","v":"x"}]}}"#.into(),
        r#"{"gm":1,"seq":1,"ts":"noon","runId":"bad","type":"run.finished","payload":{"status":"ok"}}"#.into(),
        "{\"gm\":1,\"seq\":1,\"ts\":0,\"runId\":\"bad\",\"type\":\"run.finished\",\"payload\":{\"status\":\"ok\"}".into(),
    ];
    for f in &corpus {
        ws.send(Message::text(f.clone())).await.expect("send");
    }
    ws.send(Message::binary(vec![0xff, 0xfe, 0x00]))
        .await
        .expect("send");
    // The connection still works.
    send_all(&mut ws, &every_event("good")).await;
    t.wait_events("good", 13).await;
    let (_, health) = t.get("/health").await;
    assert!(
        health["invalidFrames"].as_u64().unwrap() >= corpus.len() as u64 - 1,
        "{health}"
    );
    assert_eq!(t.get("/api/runs/bad").await.0, 404);
    // A frame over 16 MiB closes this connection with 1009 ...
    let huge = frame(
        "big",
        1,
        "node.token",
        json!({"nodeId": "n", "deltas": [{"t": "text", "v": "x".repeat(17 * 1024 * 1024)}]}),
    );
    let _ = ws.send(Message::text(huge)).await;
    assert_eq!(
        close_code(&mut ws).await,
        Some(mindgate_server::close_code::TOO_BIG)
    );
    // ... and the server keeps serving others.
    let (mut again, ack) = t.app(None).await;
    assert_eq!(ack["type"], "hello.ack");
    send_all(&mut again, &every_event("after")[..2]).await;
    t.wait_events("after", 2).await;
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn graceful_stop_flushes_every_event_and_restart_reconciles() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = mindgate_server::start_for_tests(dir.path())
        .await
        .expect("start");
    let (mut ws, _) = connect_async(server.ingest_url()).await.expect("connect");
    ws.send(Message::text(hello(None))).await.expect("hello");
    let _ack = next_json(&mut ws).await;
    let mut frames = vec![frame(
        "many",
        0,
        "run.started",
        json!({"app": "a", "sdk": {"name": "x", "version": "1"}}),
    )];
    for i in 1..5_000u64 {
        frames.push(frame(
            "many",
            i,
            "node.token",
            json!({"nodeId": "llm:x", "deltas": [{"t": "text", "v": "tok"}]}),
        ));
    }
    send_all(&mut ws, &frames).await;
    // Wait until the server has accepted them all (its /health counter), then stop it.
    ws.flush().await.expect("flush");
    let health = format!("{}/health", server.base_url());
    mindgate_testkit::wait::until_async("5,000 accepted events", Duration::from_secs(20), || {
        let health = health.clone();
        async move {
            let v: Value = reqwest::get(&health).await.ok()?.json().await.ok()?;
            (v["acceptedEvents"].as_u64() >= Some(5_000)).then_some(())
        }
    })
    .await;
    let db = server.db_path.clone();
    server.stop().await.expect("stop");
    let store = mindgate_store::RunStore::open(&db).expect("open");
    let run = store.get_run("many").expect("read").expect("run");
    assert_eq!(run.counts.events, 5_000);
    // The run was left running: a new server marks it abandoned at start-up.
    let again = mindgate_server::start_for_tests(dir.path())
        .await
        .expect("restart");
    assert_eq!(again.reconciled, vec!["many".to_owned()]);
    again.stop().await.expect("stop");
}
