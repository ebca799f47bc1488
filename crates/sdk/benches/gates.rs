//! Criterion benchmarks of the SDK's hot paths:
//! * `gate/detached` — a gate with no viewer (target ≤ 50 ns; reference 13 µs);
//! * `gate/attached_no_match` — attached, breakpoints armed, none matching;
//! * `emit/node_finished` — one event into the replay buffer (target ≤ 1 µs; reference ~3 µs);
//! * `node/detached_call` — a whole tool call (two events, three gates), detached;
//! * `release/on_disconnect` — from the viewer dropping the socket to the held
//!   node running again (target ≤ 1 ms; reference bound 100 ms).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use futures_util::FutureExt;
use mindgate_protocol::{
    BreakpointMatcher, Message, NodeFinished, NodeKind, NodeStatus, PausePoint, RunMode,
};
use mindgate_sdk::{Aborted, Client, Config, Decision, GateNode};
use serde_json::json;

const NODE: GateNode<'static> = GateNode {
    node_id: "tool:search",
    kind: NodeKind::Tool,
    name: "search",
};

fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/ingest", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn detached_client() -> Client {
    Client::new(
        Config::default()
            .url(closed_port_url())
            .env(std::iter::empty::<(String, String)>())
            .retry_interval(Duration::from_secs(3600)),
    )
}

fn bench_gates(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();

    let detached = detached_client();
    c.bench_function("gate/detached", |b| {
        b.iter(|| {
            let d = detached
                .gate(PausePoint::Before, black_box(NODE))
                .now_or_never();
            debug_assert_eq!(d, Some(Decision::Continue));
            black_box(d)
        })
    });

    let viewer = rt.block_on(support::FakeViewer::with(
        vec![
            BreakpointMatcher::at(PausePoint::Before).name("other"),
            BreakpointMatcher::on_error(),
        ],
        RunMode::Run,
    ));
    let attached = rt.block_on(viewer.client());
    c.bench_function("gate/attached_no_match", |b| {
        b.iter(|| {
            let d = attached
                .gate(PausePoint::Before, black_box(NODE))
                .now_or_never();
            debug_assert_eq!(d, Some(Decision::Continue));
            black_box(d)
        })
    });

    let message = Message::NodeFinished(NodeFinished {
        node_id: "tool:search".into(),
        instance_id: Some("call_abc123_42".into()),
        output: Some(json!({"results": ["a", "b", "c"], "count": 3})),
        usage: None,
        duration_ms: 12.5,
        status: NodeStatus::Ok,
        held_ms: None,
        finish_reason: None,
        extra: Default::default(),
    });
    let emitter = detached_client();
    c.bench_function("emit/node_finished", |b| {
        b.iter_batched(
            || message.clone(),
            |m| black_box(emitter.emit(m)),
            BatchSize::SmallInput,
        )
    });

    let caller = detached_client();
    c.bench_function("node/detached_call", |b| {
        b.iter(|| {
            let out = caller
                .node(NodeKind::Tool, "search")
                .call(|_| async { Ok::<_, Aborted>(1u32) })
                .now_or_never();
            black_box(out)
        })
    });
}

fn bench_release(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let viewer = rt.block_on(support::FakeViewer::with(
        vec![BreakpointMatcher::at(PausePoint::Before)],
        RunMode::Run,
    ));
    let client =
        rt.block_on(viewer.client_with(viewer.config().retry_interval(Duration::from_millis(1))));
    let mut group = c.benchmark_group("release");
    group.sample_size(30);
    group.bench_function("on_disconnect", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    assert!(client.ready(support::WAIT).await);
                    let task = {
                        let client = client.clone();
                        tokio::spawn(async move {
                            client
                                .node(NodeKind::Tool, "held")
                                .call(|_| async { Ok::<_, Aborted>(()) })
                                .await
                                .ok();
                            Instant::now()
                        })
                    };
                    while client.stats().held_gates == 0 {
                        tokio::task::yield_now().await;
                    }
                    let cut = Instant::now();
                    viewer.disconnect();
                    let released = task.await.unwrap();
                    total += released.duration_since(cut);
                }
                total
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench_gates, bench_release);
criterion_main!(benches);
