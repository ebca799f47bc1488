//! Connections that never say hello are bounded: beyond
//! `MAX_PENDING_HELLOS` a new one is closed with 1013 at once, counted, and
//! a slot frees as soon as a waiting connection goes (issue #10, item 7).
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{hello, next_json};
use futures_util::{SinkExt, StreamExt};
use mindgate_server::{MAX_PENDING_HELLOS, ServeConfig, start};
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn connections_waiting_for_hello_are_capped_and_the_extra_one_is_told_why() {
    let dir = tempfile::tempdir().expect("tmp");
    let config = ServeConfig {
        hello_timeout: Duration::from_secs(60),
        ..ServeConfig::for_tests(dir.path())
    };
    let server = start(config).await.expect("server");
    let url = server.ingest_url();
    let mut waiting = Vec::new();
    for _ in 0..MAX_PENDING_HELLOS {
        waiting.push(connect_async(&url).await.expect("connect").0);
    }
    // One more: closed right away with 1013 and a reason.
    let (mut extra, _) = connect_async(&url).await.expect("connect");
    let closed = tokio::time::timeout(Duration::from_secs(10), extra.next())
        .await
        .expect("closed before the hello timeout");
    match closed {
        Some(Ok(Message::Close(Some(frame)))) => {
            assert_eq!(u16::from(frame.code), 1013);
            assert!(frame.reason.contains("hello"), "{}", frame.reason);
        }
        other => panic!("expected a close frame, got {other:?}"),
    }
    let health: serde_json::Value = reqwest::get(format!("{}/health", server.base_url()))
        .await
        .expect("health")
        .json()
        .await
        .expect("json");
    assert_eq!(health["dropped"]["pendingHelloLimit"], 1);
    // A waiting connection that goes frees its slot: a new app attaches.
    let mut gone = waiting.pop().expect("one");
    gone.close(None).await.expect("close");
    drop(gone);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (mut app, _) = connect_async(&url).await.expect("connect");
        app.send(Message::text(hello(None))).await.expect("hello");
        match next_json(&mut app).await {
            Some(ack) if ack["type"] == "hello.ack" => break,
            _ if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => panic!("no slot freed: {other:?}"),
        }
    }
    // Waiting connections that do say hello attach normally.
    let mut first = waiting.pop().expect("one");
    first.send(Message::text(hello(None))).await.expect("hello");
    assert_eq!(
        next_json(&mut first).await.expect("ack")["type"],
        "hello.ack"
    );
    drop(waiting);
    server.stop().await.expect("stop");
}
