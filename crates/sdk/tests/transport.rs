//! Transport: handshake, replay on attach with original seq, gap markers,
//! disconnect fail-open, session tokens, payload shrinking, pause timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mindgate_protocol::{
    BreakpointMatcher, Message, PausePoint, ResumeAction, RunMode, WILDCARD_RUN_ID,
};
use mindgate_sdk::{Aborted, CAPABILITIES, Client, TRUNCATED_KEY, tool};
use serde_json::json;
use support::FakeViewer;

type R<T> = Result<T, Aborted>;

fn hello_of(viewer: &FakeViewer, n: usize) -> mindgate_protocol::Hello {
    let hellos: Vec<_> = viewer
        .frames()
        .into_iter()
        .filter_map(|e| match e.message {
            Message::Hello(h) => Some((e.run_id, h)),
            _ => None,
        })
        .collect();
    let (run, hello) = hellos[n].clone();
    assert_eq!(run, WILDCARD_RUN_ID);
    hello
}

#[tokio::test]
async fn hello_announces_capabilities_and_echoes_the_session_token() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let first = hello_of(&viewer, 0);
    assert_eq!(first.versions.protocol, 1);
    assert_eq!(first.capabilities, CAPABILITIES);
    for cap in ["pause", "step", "inject", "retry", "abort", "run-claim"] {
        assert!(first.capabilities.iter().any(|c| c == cap), "{cap}");
    }
    assert_eq!(first.resume_token, None);
    assert_eq!(first.sdk.map(|s| s.name), Some("mindgate-sdk".to_owned()));
    viewer.disconnect();
    viewer
        .wait_n(2, |e| matches!(e.message, Message::Hello(_)))
        .await;
    let second = hello_of(&viewer, 1);
    assert_eq!(second.resume_token.as_deref(), Some(viewer.session_token()));
    assert!(client.ready(support::WAIT).await);
}

#[tokio::test]
async fn replay_on_attach_keeps_original_seq_and_dedupes() {
    let viewer = FakeViewer::start().await;
    // A long retry interval: after the disconnect the client stays detached until kicked.
    let client = viewer
        .client_with(viewer.config().retry_interval(Duration::from_secs(60)))
        .await;
    let run_once = |label: &'static str| {
        let client = client.clone();
        async move {
            client
                .run(label, (), async {
                    tool("t").call(|_| async { R::Ok(1) }).await
                })
                .await
        }
    };
    run_once("live").await.unwrap();
    viewer
        .wait_for(|e| matches!(e.message, Message::RunFinished(_)))
        .await;
    viewer.go_away(&client).await;
    let before = client.stats().seq;
    run_once("offline").await.unwrap();
    let after = client.stats().seq;
    assert!(after > before);
    viewer.come_back(&client).await;
    viewer
        .wait_n(2, |e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let frames = viewer.frames();
    // Every (runId, seq) seen twice is the same event (the viewer can dedupe).
    let mut seen: HashMap<(String, u64), String> = HashMap::new();
    let mut duplicates = 0;
    for e in frames.iter().filter(|e| e.run_id != WILDCARD_RUN_ID) {
        let key = (e.run_id.clone(), e.seq);
        let body = serde_json::to_string(&e.message).unwrap();
        if let Some(prev) = seen.insert(key, body.clone()) {
            assert_eq!(prev, body, "seq reused for a different event");
            duplicates += 1;
        }
    }
    assert!(duplicates > 0, "the live run was not replayed");
    // The offline run arrived with the seqs assigned while detached, oldest first.
    let offline: Vec<u64> = frames
        .iter()
        .filter(|e| e.seq >= before && e.seq < after && e.run_id != WILDCARD_RUN_ID)
        .map(|e| e.seq)
        .collect();
    assert!(!offline.is_empty());
    assert!(offline.windows(2).all(|w| w[0] < w[1]), "{offline:?}");
    assert_eq!(offline.len() as u64, after - before);
}

#[tokio::test]
async fn dropped_events_are_reported_with_a_gap_marker() {
    let viewer = FakeViewer::start().await;
    let client = viewer
        .client_with(
            viewer
                .config()
                .buffer_size(10)
                .retry_interval(Duration::from_secs(60)),
        )
        .await;
    viewer.go_away(&client).await;
    client
        .run("flood", (), async {
            for i in 0..20 {
                tool("t").call(|_| async move { R::Ok(i) }).await?;
            }
            R::Ok(())
        })
        .await
        .unwrap();
    assert_eq!(client.stats().buffered, 10);
    viewer.come_back(&client).await;
    let gap = viewer
        .wait_for(|e| matches!(&e.message, Message::GraphHint(h) if h.gap.is_some()))
        .await;
    let Message::GraphHint(hint) = gap.message else {
        unreachable!()
    };
    assert!(hint.nodes.is_empty());
    let gap = hint.gap.unwrap();
    // 2 (run.started, agent node) + 20 × 2 + 2 (agent finished, run.finished) = 44; 10 kept.
    assert_eq!(gap.dropped_count, 34);
    assert_eq!(gap.to_seq - gap.from_seq + 1, 34);
    assert_eq!(gap.reason.as_deref(), Some("buffer-full"));
    // The kept 10 follow, with their original seqs.
    let replayed = viewer
        .wait_n(10, |e| {
            e.run_id != WILDCARD_RUN_ID
                && e.seq > gap.to_seq
                && !matches!(e.message, Message::GraphHint(_))
        })
        .await;
    let marker_seq = viewer
        .frames()
        .iter()
        .position(|e| matches!(&e.message, Message::GraphHint(h) if h.gap.is_some()));
    let first_replayed = viewer.frames().iter().position(|e| e.seq == gap.to_seq + 1);
    assert!(marker_seq < first_replayed, "the gap marker comes first");
    assert_eq!(replayed[0].seq, gap.to_seq + 1);
}

#[tokio::test]
async fn disconnect_mid_hold_releases_at_once_and_forgets_breakpoints() {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before)],
        RunMode::Run,
    )
    .await;
    let client = viewer
        .client_with(viewer.config().retry_interval(Duration::from_secs(60)))
        .await;
    let task = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .run("held", (), async {
                    let first = tool("first").call(|_| async { R::Ok(1) }).await?;
                    let released_at = Instant::now();
                    // Detached now: no breakpoint holds this one.
                    let second = tool("second").call(|_| async { R::Ok(2) }).await?;
                    R::Ok((first + second, released_at))
                })
                .await
        })
    };
    let (run, paused) = viewer.pause(1).await;
    let cut = Instant::now();
    viewer.set_refusing(true);
    viewer.disconnect();
    let (sum, released_at) = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .expect("held gate was not released within 2 s")
        .unwrap()
        .unwrap();
    assert_eq!(sum, 3);
    assert!(released_at.duration_since(cut) < Duration::from_secs(2));
    assert_eq!(client.stats().held_gates, 0);
    // After reconnecting (nothing armed now), the release is on record.
    viewer.arm_next(Vec::new(), RunMode::Run);
    viewer.come_back(&client).await;
    let resumed = viewer
        .wait_for(
            |e| matches!(&e.message, Message::ExecResumed(r) if r.pause_id == paused.pause_id),
        )
        .await;
    assert_eq!(resumed.run_id, run);
    let Message::ExecResumed(r) = resumed.message else {
        unreachable!()
    };
    assert_eq!(r.action, ResumeAction::Continue);
    // The re-armed (empty) state holds nothing.
    let v = client
        .run("after", (), async {
            tool("x").call(|_| async { R::Ok(5) }).await
        })
        .await;
    assert_eq!(v, Ok(5));
}

#[tokio::test]
async fn pause_timeout_releases_with_continue() {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before)],
        RunMode::Run,
    )
    .await;
    let client = viewer
        .client_with(
            viewer
                .config()
                .pause_timeout(Some(Duration::from_millis(50))),
        )
        .await;
    let out = client
        .run("timeout", (), async {
            tool("slow").call(|_| async { R::Ok(9) }).await
        })
        .await;
    assert_eq!(out, Ok(9));
    let resumed = viewer
        .wait_for(|e| matches!(e.message, Message::ExecResumed(_)))
        .await;
    let Message::ExecResumed(r) = resumed.message else {
        unreachable!()
    };
    assert_eq!(r.action, ResumeAction::Continue);
}

#[tokio::test]
async fn dropping_a_held_node_releases_its_gate_with_a_record() {
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before)],
        RunMode::Run,
    )
    .await;
    let client = viewer.client().await;
    let held = client.run("dropped", (), async {
        tool("t").call(|_| async { R::Ok(1) }).await
    });
    let timed = tokio::time::timeout(Duration::from_millis(100), held).await;
    assert!(timed.is_err(), "the gate should have held");
    assert_eq!(client.stats().held_gates, 0);
    let (_, paused) = viewer.pause(1).await;
    viewer
        .wait_for(
            |e| matches!(&e.message, Message::ExecResumed(r) if r.pause_id == paused.pause_id),
        )
        .await;
}

#[tokio::test]
async fn oversized_payloads_are_shrunk_with_a_marker() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let big = "x".repeat(700 * 1024);
    let out = client
        .run("big", (), async {
            tool("dump")
                .input(&json!({"blob": big.clone()}))
                .call(|_| async { R::Ok(big.clone()) })
                .await
        })
        .await;
    assert_eq!(out.map(|s| s.len()), Ok(700 * 1024));
    let started = viewer
        .wait_for(|e| matches!(&e.message, Message::NodeStarted(n) if n.node_id == "tool:dump"))
        .await;
    let finished = viewer
        .wait_for(|e| matches!(&e.message, Message::NodeFinished(n) if n.node_id == "tool:dump"))
        .await;
    for env in [started, finished] {
        let text = env.to_json();
        assert!(text.len() < 512 * 1024, "{} bytes", text.len());
        assert!(text.contains(TRUNCATED_KEY), "no marker");
    }
}

#[tokio::test]
async fn breakpoints_and_mode_follow_controls() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let armed = client.stats().breakpoints;
    viewer.set_breakpoint(BreakpointMatcher::at(PausePoint::Before).name("watched"));
    // Controls travel on the socket: wait until the client has armed it.
    mindgate_testkit::wait::until_async(
        "the breakpoint to be armed",
        Duration::from_secs(10),
        || {
            let n = client.stats().breakpoints;
            async move { (n > armed).then_some(()) }
        },
    )
    .await;
    let task = {
        let client: Client = client.clone();
        tokio::spawn(async move {
            client
                .run("bp", (), async {
                    tool("ignored").call(|_| async { R::Ok(()) }).await?;
                    tool("watched").call(|_| async { R::Ok(()) }).await
                })
                .await
        })
    };
    let (run, p) = viewer.pause(1).await;
    assert_eq!(p.node_id, "tool:watched");
    viewer.resume(&run, &p.pause_id, ResumeAction::Continue, None);
    assert_eq!(task.await.unwrap(), Ok(()));
}

#[tokio::test]
async fn low_level_gate_holds_and_returns_the_decision() {
    use mindgate_sdk::{Decision, GateNode, NodeKind, current_run};
    let viewer = FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::After).name("hook")],
        RunMode::Run,
    )
    .await;
    let client = viewer.client().await;
    let node = GateNode {
        node_id: "custom:hook",
        kind: NodeKind::Custom,
        name: "hook",
    };
    // Not matching: ready at once.
    assert_eq!(
        client.gate(PausePoint::Before, node).await,
        Decision::Continue
    );
    let task = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .run("manual", (), async {
                    let node = GateNode {
                        node_id: "custom:hook",
                        kind: NodeKind::Custom,
                        name: "hook",
                    };
                    let first = client.gate(PausePoint::After, node).await;
                    let second = client.gate(PausePoint::After, node).await;
                    let aborted = current_run().map(|r| r.is_aborted());
                    R::Ok((first, second, aborted))
                })
                .await
        })
    };
    let (run, p) = viewer.pause(1).await;
    assert_eq!(p.node_id, "custom:hook");
    viewer.resume(
        &run,
        &p.pause_id,
        ResumeAction::Inject,
        Some(json!({"any": 1})),
    );
    let (run2, p2) = viewer.pause(2).await;
    assert_eq!(run2, run, "the gate is attributed to the enclosing run");
    viewer.resume(&run, &p2.pause_id, ResumeAction::Abort, None);
    let (first, second, aborted) = task.await.unwrap().unwrap();
    assert_eq!(first, Decision::Inject(json!({"any": 1})));
    assert_eq!(second, Decision::Abort);
    assert_eq!(aborted, Some(true));
}
