//! Runs, attribution, nodes, tokens, the loop guard and fail-open behaviour.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use mindgate_protocol::{Message, NodeKind, PauseReason, ResumeAction, RunStatus};
use mindgate_sdk::{
    Aborted, Client, Config, LoopGuardConfig, LoopMode, current_run, graph_hint, hint,
    in_current_run, step, tool,
};
use serde_json::json;
use support::FakeViewer;

#[derive(Debug, PartialEq, thiserror::Error)]
enum TestError {
    #[error(transparent)]
    Aborted(#[from] Aborted),
    #[error("host failure {0}")]
    Host(&'static str),
}

async fn agent(client: &Client, name: &'static str, tools: usize) -> Result<usize, TestError> {
    client
        .run(name, json!({"agent": name}), async move {
            let mut total = 0;
            for i in 0..tools {
                let n: usize = step()
                    .call(|ctx| async move {
                        tokio::task::yield_now().await;
                        ctx.token(name);
                        Ok::<_, TestError>(i)
                    })
                    .await?;
                // Nested: a tool inside a chain, with awaits in between.
                let inner: usize = mindgate_sdk::chain("plan")
                    .call(|_| async move {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        tool(format!("{name}-tool"))
                            .input(&json!({"i": i}))
                            .call(|_| async move { Ok::<_, TestError>(n + 1) })
                            .await
                    })
                    .await?;
                total += inner;
            }
            // A spawned task stays in the run when wrapped.
            let spawned = tokio::spawn(in_current_run(async move {
                tool("spawned")
                    .call(|_| async {
                        Ok::<_, TestError>(current_run().map(|r| r.name().to_owned()))
                    })
                    .await
            }))
            .await
            .unwrap()?;
            assert_eq!(spawned.as_deref(), Some(name));
            Ok::<_, TestError>(total)
        })
        .await
}

#[tokio::test]
async fn concurrent_runs_keep_their_events_apart() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let (a, b) = tokio::join!(agent(&client, "alpha", 5), agent(&client, "beta", 5));
    assert_eq!((a, b), (Ok(15), Ok(15)));
    assert!(client.flush(Duration::from_secs(5)).await);
    viewer
        .wait_n(2, |e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let frames = viewer.frames();
    let mut run_of_name: HashMap<String, String> = HashMap::new();
    for e in &frames {
        if let Message::RunStarted(r) = &e.message {
            let name = r.meta.as_ref().unwrap()["name"]
                .as_str()
                .unwrap()
                .to_owned();
            run_of_name.insert(name, e.run_id.clone());
        }
    }
    let alpha = run_of_name["alpha"].clone();
    let beta = run_of_name["beta"].clone();
    assert_ne!(alpha, beta);
    for e in &frames {
        let Message::NodeStarted(n) = &e.message else {
            continue;
        };
        if n.name.starts_with("alpha") {
            assert_eq!(e.run_id, alpha, "{n:?}");
        }
        if n.name.starts_with("beta") {
            assert_eq!(e.run_id, beta, "{n:?}");
        }
        if n.node_id == "tool:alpha-tool" || n.node_id == "tool:beta-tool" {
            assert_eq!(n.parent_id.as_deref(), Some("chain:plan"));
        }
        if n.node_id == "chain:plan" || n.node_id == "llm:step" {
            let agent = if e.run_id == alpha {
                "agent:alpha"
            } else {
                "agent:beta"
            };
            assert_eq!(n.parent_id.as_deref(), Some(agent));
        }
    }
    // Tokens carry the run's own name.
    for e in &frames {
        if let Message::NodeToken(t) = &e.message {
            let text: String = t.deltas.iter().map(|d| d.v.as_str()).collect();
            let expected = if e.run_id == alpha { "alpha" } else { "beta" };
            assert!(
                text.contains(expected)
                    && !text.contains(if expected == "alpha" { "beta" } else { "alpha" })
            );
        }
    }
    // Every instance id is unique, and llm steps are `<run>:s<N>`.
    let mut ids = HashSet::new();
    for e in &frames {
        if let Message::NodeStarted(n) = &e.message {
            assert!(
                ids.insert(n.instance_id.clone()),
                "duplicate {}",
                n.instance_id
            );
            if n.node_id == "llm:step" {
                assert!(n.instance_id.starts_with(&format!("{}:s", e.run_id)));
            }
        }
    }
    // Every node.finished carries an instance id; both runs end ok.
    for e in &frames {
        match &e.message {
            Message::NodeFinished(f) => assert!(f.instance_id.is_some()),
            Message::RunFinished(f) => assert_eq!(f.status, RunStatus::Ok),
            _ => {}
        }
    }
    // The spawned tool landed in its run.
    let spawned_runs: HashSet<_> = frames
        .iter()
        .filter(|e| matches!(&e.message, Message::NodeStarted(n) if n.node_id == "tool:spawned"))
        .map(|e| e.run_id.clone())
        .collect();
    assert_eq!(spawned_runs, HashSet::from([alpha, beta]));
}

#[tokio::test]
async fn events_outside_a_run_go_to_one_implicit_run() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    for i in 0..3 {
        let out = client
            .node(NodeKind::Tool, "loose")
            .input(&i)
            .call(|_| async move { Ok::<_, TestError>(i) })
            .await;
        assert_eq!(out, Ok(i));
    }
    assert!(client.flush(Duration::from_secs(5)).await);
    viewer
        .wait_n(3, |e| matches!(e.message, Message::NodeFinished(_)))
        .await;
    let frames = viewer.frames();
    let implicit: Vec<_> = frames
        .iter()
        .filter_map(|e| match &e.message {
            Message::RunStarted(r) => Some((e.run_id.clone(), r.meta.clone().unwrap_or_default())),
            _ => None,
        })
        .collect();
    assert_eq!(implicit.len(), 1);
    assert_eq!(implicit[0].1.get("implicit"), Some(&json!(true)));
    let runs: HashSet<_> = frames
        .iter()
        .filter(|e| matches!(e.message, Message::NodeStarted(_)))
        .map(|e| e.run_id.clone())
        .collect();
    assert_eq!(runs, HashSet::from([implicit[0].0.clone()]));
}

#[tokio::test]
async fn host_errors_pass_through_and_the_run_reports_them() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let out: Result<(), TestError> = client
        .run("failing", (), async {
            tool("broken")
                .call(|_| async { Err::<(), _>(TestError::Host("disk full")) })
                .await
        })
        .await;
    assert_eq!(out, Err(TestError::Host("disk full")));
    let fin = viewer
        .wait_for(|e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let Message::RunFinished(fin) = fin.message else {
        unreachable!()
    };
    assert_eq!(fin.status, RunStatus::Error);
    assert_eq!(fin.error.unwrap().message, "host failure disk full");
}

#[tokio::test]
async fn anyhow_errors_work_as_the_host_error_type() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let out: anyhow::Result<u8> = client
        .run("anyhow", (), async {
            let v = tool("t")
                .call(|_| async { Ok::<u8, anyhow::Error>(3) })
                .await?;
            anyhow::ensure!(v == 3, "unexpected");
            Ok(v)
        })
        .await;
    assert_eq!(out.unwrap(), 3);
}

#[tokio::test]
async fn tokens_are_batched_in_order_before_finished() {
    let viewer = FakeViewer::start().await;
    let client = viewer
        .client_with(viewer.config().token_interval(Duration::from_millis(20)))
        .await;
    let words: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let expected: String = words.concat();
    client
        .run("stream", (), async {
            step()
                .call(|ctx| {
                    let words = words.clone();
                    async move {
                        for (i, w) in words.iter().enumerate() {
                            ctx.token(w);
                            if i % 50 == 0 {
                                tokio::time::sleep(Duration::from_millis(25)).await;
                            }
                        }
                        ctx.reasoning("done");
                        ctx.usage(10, 200);
                        Ok::<_, TestError>(())
                    }
                })
                .await
        })
        .await
        .unwrap();
    viewer
        .wait_for(|e| matches!(e.message, Message::RunFinished(_)))
        .await;
    let frames = viewer.frames();
    let mut text = String::new();
    let mut batches = 0;
    let mut finished_at = None;
    for (i, e) in frames.iter().enumerate() {
        match &e.message {
            Message::NodeToken(t) => {
                assert!(finished_at.is_none(), "token after node.finished");
                assert_eq!(t.node_id, "llm:step");
                assert!(t.instance_id.is_some());
                batches += 1;
                for d in &t.deltas {
                    if d.t == mindgate_protocol::TokenChannel::Text {
                        text.push_str(&d.v);
                    }
                }
            }
            Message::NodeFinished(f) if f.node_id == "llm:step" => {
                finished_at = Some(i);
                assert_eq!(f.usage.as_ref().map(|u| u.output_tokens), Some(200));
            }
            _ => {}
        }
    }
    assert_eq!(text, expected);
    assert!(batches >= 2, "tokens were not streamed while the node ran");
    assert!(batches < 20, "tokens were not batched: {batches} frames");
}

#[tokio::test]
async fn graph_hint_announces_tools() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    client
        .run("hinted", (), async {
            graph_hint([hint(NodeKind::Tool, "search"), hint(NodeKind::Tool, "book")]);
            Ok::<_, TestError>(())
        })
        .await
        .unwrap();
    let e = viewer
        .wait_for(|e| matches!(e.message, Message::GraphHint(_)))
        .await;
    let Message::GraphHint(h) = e.message else {
        unreachable!()
    };
    let ids: Vec<_> = h.nodes.iter().map(|n| n.node_id.as_str()).collect();
    assert_eq!(ids, ["tool:search", "tool:book"]);
    assert_eq!(h.nodes[0].parent_id.as_deref(), Some("agent:hinted"));
}

#[tokio::test]
async fn third_identical_tool_call_holds_for_a_loop() {
    let viewer = FakeViewer::start().await;
    let client = viewer.client().await;
    let task = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .run("loopy", (), async {
                    for _ in 0..3 {
                        // An llm step in between does not break the tool streak.
                        step().call(|_| async { Ok::<_, TestError>(()) }).await?;
                        tool("search")
                            .input(&json!({"q": "same", "_meta": {"progressToken": 1}}))
                            .call(|_| async { Ok::<_, TestError>(()) })
                            .await?;
                    }
                    Ok::<_, TestError>(())
                })
                .await
        })
    };
    let (run, p) = viewer.pause(1).await;
    assert_eq!(p.reason, Some(PauseReason::Loop));
    assert_eq!(p.node_id, "tool:search");
    let info = p.loop_info.unwrap();
    assert_eq!(info.repeats, 3);
    assert!(info.first_seq < info.last_seq);
    assert_eq!(info.fingerprint.len(), 32);
    viewer.resume(&run, &p.pause_id, ResumeAction::Continue, None);
    assert_eq!(task.await.unwrap(), Ok(()));
}

#[tokio::test]
async fn loop_guard_can_be_turned_off() {
    let viewer = FakeViewer::start().await;
    let config = viewer.config().loop_guard(LoopGuardConfig {
        mode: LoopMode::Off,
        ..Default::default()
    });
    let client = viewer.client_with(config).await;
    let out = client
        .run("loopy", (), async {
            for _ in 0..5 {
                tool("search")
                    .input(&"same")
                    .call(|_| async { Ok::<_, TestError>(()) })
                    .await?;
            }
            Ok::<_, TestError>(())
        })
        .await;
    assert_eq!(out, Ok(()));
    assert_eq!(client.stats().held_gates, 0);
    assert!(client.flush(Duration::from_secs(5)).await);
    assert!(
        !viewer
            .frames()
            .iter()
            .any(|e| matches!(e.message, Message::ExecPaused(_)))
    );
}

#[tokio::test]
async fn disabled_mode_opens_no_socket_and_still_runs_everything() {
    let viewer = FakeViewer::start().await;
    for kill in ["MINDGATE_DISABLED", "GRAPHMIND_DISABLED"] {
        let client = Client::new(
            Config::default()
                .url(viewer.url.clone())
                .enabled(true)
                .env([(kill, "1")]),
        );
        assert!(!client.is_enabled());
        let out = client
            .run("off", (), async {
                let handle = current_run().expect("a working run context");
                assert!(!handle.is_aborted());
                let v = tool("t")
                    .input(&json!({"x": 1}))
                    .call(|ctx| async move {
                        ctx.token("ignored");
                        Ok::<_, TestError>(ctx.attempt())
                    })
                    .await?;
                Ok::<_, TestError>(v)
            })
            .await;
        assert_eq!(out, Ok(1));
        assert!(!client.ready(Duration::from_millis(50)).await);
        let stats = client.stats();
        assert!(!stats.started, "a disabled client started its transport");
        assert_eq!(
            (stats.buffered, stats.seq),
            (0, 0),
            "a disabled client buffered events"
        );
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(viewer.connections(), 0);
}

#[tokio::test]
async fn production_environment_disables_unless_forced() {
    let off = Client::new(Config::default().env([("APP_ENV", "production")]));
    assert!(!off.is_enabled());
    let on = Client::new(Config::default().env([("APP_ENV", "production"), ("GRAPHMIND", "1")]));
    assert!(on.is_enabled());
}

#[tokio::test]
async fn detached_client_runs_without_a_viewer() {
    // Nothing listens on this port: every gate passes, events stay buffered.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/ingest", listener.local_addr().unwrap());
    drop(listener);
    let client = Client::new(
        Config::default()
            .url(url)
            .env(std::iter::empty::<(String, String)>()),
    );
    let out = client
        .run("alone", (), async {
            tool("t")
                .call(|_| async { Err::<(), _>(TestError::Host("x")) })
                .await
        })
        .await;
    assert_eq!(out, Err(TestError::Host("x")));
    assert!(!client.is_attached());
    assert!(client.stats().buffered >= 5);
}
