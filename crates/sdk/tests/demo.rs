//! The scripted demo agent, against the fake viewer and with no viewer at all.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mindgate_protocol::{Message, PausePoint, PauseReason, ResumeAction, RunStatus};
use mindgate_sdk::Client;
use mindgate_sdk::demo::{DemoOptions, RunEnd, run_demo_with};
use support::FakeViewer;

fn fast(runs: usize) -> DemoOptions {
    DemoOptions {
        runs,
        token_delay: Duration::from_millis(1),
        attach_timeout: Duration::from_secs(2),
        ..DemoOptions::default()
    }
}

#[tokio::test]
async fn demo_pauses_on_the_tool_error_and_retry_recovers() {
    let viewer = FakeViewer::pause_on_error().await;
    let client = viewer.client().await;
    let demo = {
        let client = client.clone();
        tokio::spawn(async move { run_demo_with(&client, &fast(1), Arc::new(|_: &str| {})).await })
    };
    let (run, paused) = viewer.pause(1).await;
    assert_eq!(paused.node_id, "tool:book_hotel");
    assert_eq!(paused.point, PausePoint::Error);
    assert_eq!(paused.reason, Some(PauseReason::Error));
    viewer.resume(&run, &paused.pause_id, ResumeAction::Retry, None);
    let report = demo.await.unwrap();
    assert!(report.attached);
    assert_eq!(report.runs, vec![RunEnd::Ok]);
    viewer
        .wait_for(|e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let frames = viewer.run_frames(&run);
    let nodes: HashSet<String> = frames
        .iter()
        .filter_map(|e| match &e.message {
            Message::NodeStarted(n) => Some(n.node_id.clone()),
            _ => None,
        })
        .collect();
    for id in [
        "agent:plan-trip",
        "llm:step",
        "tool:search_flights",
        "tool:get_weather",
        "tool:find_hotels",
        "tool:book_hotel",
        "tool:send_confirmation",
    ] {
        assert!(nodes.contains(id), "missing {id}");
    }
    assert!(
        frames
            .iter()
            .any(|e| matches!(e.message, Message::NodeToken(_)))
    );
    assert!(
        frames
            .iter()
            .any(|e| matches!(e.message, Message::GraphHint(_)))
    );
    assert!(
        frames
            .iter()
            .any(|e| matches!(&e.message, Message::RunFinished(f) if f.status == RunStatus::Ok))
    );
}

#[tokio::test]
async fn demo_continue_at_the_error_gate_makes_the_agent_retry_itself() {
    let viewer = FakeViewer::pause_on_error().await;
    let client = viewer.client().await;
    let demo = {
        let client = client.clone();
        tokio::spawn(async move { run_demo_with(&client, &fast(2), Arc::new(|_: &str| {})).await })
    };
    for n in 1..=2 {
        let (run, paused) = viewer.pause(n).await;
        viewer.resume(&run, &paused.pause_id, ResumeAction::Continue, None);
    }
    let report = demo.await.unwrap();
    assert_eq!(report.runs, vec![RunEnd::Ok, RunEnd::Ok]);
    // Two book_hotel instances per run: the failed one and the agent's own retry.
    viewer
        .wait_n(2, |e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let frames = viewer.frames();
    let books = frames
        .iter()
        .filter(|e| matches!(&e.message, Message::NodeStarted(n) if n.node_id == "tool:book_hotel"))
        .count();
    assert_eq!(books, 4);
}

#[tokio::test]
async fn demo_abort_ends_the_run_aborted_and_the_demo_still_finishes() {
    let viewer = FakeViewer::pause_on_error().await;
    let client = viewer.client().await;
    let demo = {
        let client = client.clone();
        tokio::spawn(async move { run_demo_with(&client, &fast(1), Arc::new(|_: &str| {})).await })
    };
    let (run, paused) = viewer.pause(1).await;
    viewer.resume(&run, &paused.pause_id, ResumeAction::Abort, None);
    let report = demo.await.unwrap();
    assert_eq!(report.runs, vec![RunEnd::Aborted]);
}

#[tokio::test]
async fn demo_runs_to_completion_without_a_viewer() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/ingest", listener.local_addr().unwrap());
    drop(listener);
    let client = Client::new(
        mindgate_sdk::Config::default()
            .url(url)
            .env(std::iter::empty::<(String, String)>()),
    );
    let options = DemoOptions {
        attach_timeout: Duration::from_millis(100),
        ..fast(2)
    };
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let report = run_demo_with(
        &client,
        &options,
        Arc::new(move |l: &str| sink.lock().unwrap().push(l.to_owned())),
    )
    .await;
    assert!(!report.attached);
    assert_eq!(report.runs, vec![RunEnd::Ok, RunEnd::Ok]);
    assert!(lines.lock().unwrap()[0].contains("no viewer"));
}
