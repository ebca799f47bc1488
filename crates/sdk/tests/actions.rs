//! Every release action at every gate point, against the scripted fake viewer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mindgate_protocol::{
    BreakpointMatcher, Message, NodeStatus, PausePoint, PauseReason, RefuseCode, ResumeAction,
    RunMode, RunStatus,
};
use mindgate_sdk::{Aborted, Client, tool};
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::FakeViewer;

#[derive(Debug, PartialEq, thiserror::Error)]
enum TestError {
    #[error(transparent)]
    Aborted(#[from] Aborted),
    #[error("boom {0}")]
    Boom(u32),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Forecast {
    city: String,
    temp: i32,
}

fn oslo() -> Forecast {
    Forecast {
        city: "Oslo".into(),
        temp: 4,
    }
}

/// Runs one `tool:weather` call in a run; the body fails while `fail_first` > 0.
async fn weather(
    client: &Client,
    calls: Arc<AtomicU32>,
    fail_first: u32,
) -> Result<Forecast, TestError> {
    client
        .run("weather-run", (), async {
            tool("weather")
                .input(&json!({"city": "Oslo"}))
                .call(|_ctx| {
                    let calls = calls.clone();
                    async move {
                        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                        if n <= fail_first {
                            Err(TestError::Boom(n))
                        } else {
                            Ok(oslo())
                        }
                    }
                })
                .await
        })
        .await
}

fn finished(viewer: &FakeViewer, run: &str) -> Vec<mindgate_protocol::NodeFinished> {
    viewer
        .run_frames(run)
        .into_iter()
        .filter_map(|e| match e.message {
            Message::NodeFinished(f) if f.node_id == "tool:weather" => Some(f),
            _ => None,
        })
        .collect()
}

fn run_status(viewer: &FakeViewer, run: &str) -> Option<RunStatus> {
    viewer
        .run_frames(run)
        .into_iter()
        .find_map(|e| match e.message {
            Message::RunFinished(f) => Some(f.status),
            _ => None,
        })
}

fn resumed_actions(viewer: &FakeViewer, run: &str) -> Vec<(String, ResumeAction, Option<String>)> {
    viewer
        .run_frames(run)
        .into_iter()
        .filter_map(|e| match e.message {
            Message::ExecResumed(r) => Some((r.pause_id, r.action, r.request_id)),
            _ => None,
        })
        .collect()
}

/// Holds at `point`, releases with `action`, returns (result, body calls, run id, viewer).
async fn scenario(
    point: PausePoint,
    action: ResumeAction,
    output: Option<serde_json::Value>,
    fail_first: u32,
) -> (Result<Forecast, TestError>, u32, String, FakeViewer) {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(point).name("weather")],
        RunMode::Run,
    )
    .await;
    let client = viewer.client().await;
    let calls = Arc::new(AtomicU32::new(0));
    let task = {
        let client = client.clone();
        let calls = calls.clone();
        tokio::spawn(async move { weather(&client, calls, fail_first).await })
    };
    let (run_id, paused) = viewer.pause(1).await;
    assert_eq!(paused.point, point);
    assert_eq!(paused.node_id, "tool:weather");
    viewer.resume(&run_id, &paused.pause_id, action, output);
    // A retry re-arms the same gate: release the second hold with continue.
    if action == ResumeAction::Retry && point == PausePoint::After {
        let (_, again) = viewer.pause(2).await;
        viewer.resume(&run_id, &again.pause_id, ResumeAction::Continue, None);
    }
    let result = task.await.unwrap();
    viewer
        .wait_for(|e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let resumed = resumed_actions(&viewer, &run_id);
    assert_eq!(resumed[0].0, paused.pause_id);
    assert_eq!(resumed[0].1, action);
    assert_eq!(
        resumed[0].2.as_deref(),
        Some(format!("req-{}", paused.pause_id).as_str())
    );
    (result, calls.load(Ordering::SeqCst), run_id, viewer)
}

#[tokio::test]
async fn before_continue_runs_the_body() {
    let (r, calls, run, v) = scenario(PausePoint::Before, ResumeAction::Continue, None, 0).await;
    assert_eq!(r, Ok(oslo()));
    assert_eq!(calls, 1);
    let f = finished(&v, &run);
    assert_eq!(f[0].status, NodeStatus::Ok);
    assert_eq!(f[0].output, Some(json!({"city": "Oslo", "temp": 4})));
    assert!(f[0].held_ms.is_some_and(|h| h > 0.0));
    assert!(f[0].duration_ms >= f[0].held_ms.unwrap_or(0.0));
    assert_eq!(run_status(&v, &run), Some(RunStatus::Ok));
}

#[tokio::test]
async fn before_retry_is_continue() {
    let (r, calls, _, _) = scenario(PausePoint::Before, ResumeAction::Retry, None, 0).await;
    assert_eq!((r, calls), (Ok(oslo()), 1));
}

#[tokio::test]
async fn before_inject_skips_the_body() {
    let injected = json!({"city": "Bergen", "temp": 9});
    let (r, calls, run, v) = scenario(
        PausePoint::Before,
        ResumeAction::Inject,
        Some(injected.clone()),
        0,
    )
    .await;
    assert_eq!(
        r,
        Ok(Forecast {
            city: "Bergen".into(),
            temp: 9
        })
    );
    assert_eq!(calls, 0);
    let f = finished(&v, &run);
    assert_eq!(f[0].output, Some(injected));
    assert_eq!(f[0].extra.get("injected"), Some(&json!(true)));
}

#[tokio::test]
async fn before_abort_never_runs_the_body() {
    let (r, calls, run, v) = scenario(PausePoint::Before, ResumeAction::Abort, None, 0).await;
    assert_eq!(r, Err(TestError::Aborted(Aborted)));
    assert_eq!(calls, 0);
    assert_eq!(finished(&v, &run)[0].status, NodeStatus::Aborted);
    assert_eq!(run_status(&v, &run), Some(RunStatus::Aborted));
}

#[tokio::test]
async fn after_continue_keeps_the_output() {
    let (r, calls, _, _) = scenario(PausePoint::After, ResumeAction::Continue, None, 0).await;
    assert_eq!((r, calls), (Ok(oslo()), 1));
}

#[tokio::test]
async fn after_retry_runs_the_body_again() {
    let (r, calls, run, v) = scenario(PausePoint::After, ResumeAction::Retry, None, 0).await;
    assert_eq!((r, calls), (Ok(oslo()), 2));
    // One instance, retried: one node.finished.
    assert_eq!(finished(&v, &run).len(), 1);
}

#[tokio::test]
async fn after_inject_replaces_the_output() {
    let (r, calls, _, _) = scenario(
        PausePoint::After,
        ResumeAction::Inject,
        Some(json!({"city": "Tromsø", "temp": -3})),
        0,
    )
    .await;
    assert_eq!(calls, 1);
    assert_eq!(r.map(|f| f.temp), Ok(-3));
}

#[tokio::test]
async fn after_abort_is_terminal() {
    let (r, calls, run, v) = scenario(PausePoint::After, ResumeAction::Abort, None, 0).await;
    assert_eq!((r, calls), (Err(TestError::Aborted(Aborted)), 1));
    assert_eq!(run_status(&v, &run), Some(RunStatus::Aborted));
}

#[tokio::test]
async fn error_continue_returns_the_original_error() {
    let (r, calls, run, v) = scenario(PausePoint::Error, ResumeAction::Continue, None, 5).await;
    assert_eq!((r, calls), (Err(TestError::Boom(1)), 1));
    let errors: Vec<_> = v
        .run_frames(&run)
        .into_iter()
        .filter_map(|e| match e.message {
            Message::NodeError(n) if n.node_id == "tool:weather" => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].error.message, "boom 1");
    assert_eq!(errors[0].error.name, "TestError");
    assert!(errors[0].instance_id.is_some());
    assert_eq!(finished(&v, &run)[0].status, NodeStatus::Error);
    assert_eq!(run_status(&v, &run), Some(RunStatus::Error));
}

#[tokio::test]
async fn error_retry_runs_the_body_from_the_top() {
    let (r, calls, run, v) = scenario(PausePoint::Error, ResumeAction::Retry, None, 1).await;
    assert_eq!((r, calls), (Ok(oslo()), 2));
    assert_eq!(finished(&v, &run)[0].status, NodeStatus::Ok);
}

#[tokio::test]
async fn error_inject_swallows_the_error() {
    let (r, calls, run, v) = scenario(
        PausePoint::Error,
        ResumeAction::Inject,
        Some(json!({"city": "Oslo", "temp": 0})),
        5,
    )
    .await;
    assert_eq!((r.map(|f| f.temp), calls), (Ok(0), 1));
    let f = finished(&v, &run);
    assert_eq!(f[0].status, NodeStatus::Ok);
    assert_eq!(f[0].extra.get("recoveredFromError"), Some(&json!(true)));
    assert_eq!(run_status(&v, &run), Some(RunStatus::Ok));
}

#[tokio::test]
async fn error_abort_is_terminal_and_never_retried() {
    let (r, calls, run, v) = scenario(PausePoint::Error, ResumeAction::Abort, None, 5).await;
    assert_eq!((r, calls), (Err(TestError::Aborted(Aborted)), 1));
    assert_eq!(run_status(&v, &run), Some(RunStatus::Aborted));
    let pauses = v
        .run_frames(&run)
        .into_iter()
        .filter(|e| matches!(e.message, Message::ExecPaused(_)))
        .count();
    assert_eq!(pauses, 1);
}

#[tokio::test]
async fn inject_that_does_not_fit_is_refused_and_the_gate_keeps_holding() {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before).name("weather")],
        RunMode::Run,
    )
    .await;
    let client = viewer.client().await;
    let calls = Arc::new(AtomicU32::new(0));
    let task = {
        let client = client.clone();
        let calls = calls.clone();
        tokio::spawn(async move { weather(&client, calls, 0).await })
    };
    let (run, paused) = viewer.pause(1).await;
    viewer.resume(
        &run,
        &paused.pause_id,
        ResumeAction::Inject,
        Some(json!({"city": "Oslo", "temp": "warm"})),
    );
    let refused = viewer
        .wait_for(|e| matches!(e.message, Message::ExecRefused(_)))
        .await;
    let Message::ExecRefused(refused) = refused.message else {
        unreachable!()
    };
    assert_eq!(refused.pause_id, paused.pause_id);
    assert_eq!(refused.code, RefuseCode::Schema);
    let message = refused.message.unwrap_or_default();
    assert!(message.contains("Forecast"), "{message}");
    assert!(
        message.contains("temp") || message.contains("i32"),
        "{message}"
    );
    assert_eq!(client.stats().held_gates, 1, "the gate keeps holding");
    assert!(!task.is_finished());
    // A value that fits is accepted.
    viewer.resume(
        &run,
        &paused.pause_id,
        ResumeAction::Inject,
        Some(json!({"city": "Oslo", "temp": 21})),
    );
    let result = task.await.unwrap();
    assert_eq!(result.map(|f| f.temp), Ok(21));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn step_mode_pauses_before_and_after_with_reason_step() {
    let viewer = FakeViewer::with(Vec::new(), RunMode::Step).await;
    let client = viewer.client().await;
    let task = {
        let client = client.clone();
        tokio::spawn(async move { weather(&client, Arc::new(AtomicU32::new(0)), 0).await })
    };
    let (run, p) = viewer.pause(1).await;
    assert_eq!(
        (p.reason, p.point),
        (Some(PauseReason::Step), PausePoint::Before)
    );
    viewer.resume(&run, &p.pause_id, ResumeAction::Continue, None);
    let (_, p) = viewer.pause(2).await;
    assert_eq!(
        (p.reason, p.point),
        (Some(PauseReason::Step), PausePoint::After)
    );
    viewer.set_mode(RunMode::Run);
    viewer.resume(&run, &p.pause_id, ResumeAction::Continue, None);
    assert_eq!(task.await.unwrap(), Ok(oslo()));
}

#[tokio::test]
async fn concurrent_gates_are_independent() {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before).kind(mindgate_protocol::NodeKind::Tool)],
        RunMode::Run,
    )
    .await;
    let client = viewer.client().await;
    let task = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .run("parallel", (), async {
                    let a = tool("a").call(|_| async { Ok::<_, TestError>(1) });
                    let b = tool("b").call(|_| async { Ok::<_, TestError>(2) });
                    let (a, b) = tokio::join!(a, b);
                    Ok::<_, TestError>((a?, b?))
                })
                .await
        })
    };
    let (run, p1) = viewer.pause(1).await;
    let (_, p2) = viewer.pause(2).await;
    assert_ne!(p1.pause_id, p2.pause_id);
    assert_eq!(client.stats().held_gates, 2);
    // Release only the second one: the first keeps holding.
    let (second, first) = (p2, p1);
    viewer.resume(
        &run,
        &second.pause_id,
        ResumeAction::Inject,
        Some(json!(20)),
    );
    viewer
        .wait_for(
            |e| matches!(&e.message, Message::ExecResumed(r) if r.pause_id == second.pause_id),
        )
        .await;
    assert_eq!(client.stats().held_gates, 1);
    assert!(!task.is_finished());
    viewer.resume(&run, &first.pause_id, ResumeAction::Continue, None);
    let (a, b) = task.await.unwrap().unwrap();
    let injected_into_b = second.node_id == "tool:b";
    assert_eq!((a, b), if injected_into_b { (1, 20) } else { (20, 2) });
}

#[tokio::test]
async fn abort_releases_sibling_holds_and_stops_the_run() {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before).kind(mindgate_protocol::NodeKind::Tool)],
        RunMode::Run,
    )
    .await;
    let client = viewer.client().await;
    let later = Arc::new(AtomicU32::new(0));
    let task = {
        let client = client.clone();
        let later = later.clone();
        tokio::spawn(async move {
            client
                .run("abort-me", (), async {
                    let a = tool("a").call(|_| async { Ok::<_, TestError>(1) });
                    let b = tool("b").call(|_| async { Ok::<_, TestError>(2) });
                    let (a, b) = tokio::join!(a, b);
                    let (a, b) = (a?, b?);
                    later.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, TestError>(a + b)
                })
                .await
        })
    };
    let (run, p1) = viewer.pause(1).await;
    let (_, p2) = viewer.pause(2).await;
    viewer.resume(&run, &p1.pause_id, ResumeAction::Abort, None);
    let result = task.await.unwrap();
    assert_eq!(result, Err(TestError::Aborted(Aborted)));
    assert_eq!(later.load(Ordering::SeqCst), 0);
    viewer
        .wait_for(|e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let resumed = resumed_actions(&viewer, &run);
    assert!(resumed.contains(&(
        p1.pause_id.clone(),
        ResumeAction::Abort,
        Some(format!("req-{}", p1.pause_id))
    )));
    assert!(
        resumed
            .iter()
            .any(|(id, a, _)| id == &p2.pause_id && *a == ResumeAction::Abort)
    );
    assert_eq!(run_status(&viewer, &run), Some(RunStatus::Aborted));
    assert_eq!(client.stats().held_gates, 0);
}
