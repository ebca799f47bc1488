//! `/ws/ui` run graphs: `subscribe {runId}` (or with `projection: true`)
//! answers `graph.snapshot` parts then `graph.delta`s; snapshot + deltas give the
//! graph `GET /api/runs/:id/graph` answers, for a viewer that subscribed before
//! the run existed and for one that subscribed while it was being written.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::folded::Folded;
use common::{Ws, frame, next_json, start};
use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

async fn subscribe_projection(ui: &mut Ws, run: &str) {
    ui.send(Message::text(
        json!({"type": "subscribe", "runId": run, "projection": true}).to_string(),
    ))
    .await
    .unwrap();
}

fn run_frames(run: &str, nodes: u64) -> Vec<String> {
    let mut frames = vec![frame(
        run,
        0,
        "run.started",
        json!({"app": "a", "sdk": {"name": "x", "version": "1"}}),
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
    for i in 0..nodes {
        let id = format!("tool:t{}", i % 600);
        // Parent named before it runs (a pending node), retries, tokens, errors.
        push(
            "node.started",
            json!({"nodeId": id, "kind": "tool", "name": id, "parentId": format!("chain:c{}", i % 7), "instanceId": format!("i{i}")}),
        );
        push(
            "node.token",
            json!({"nodeId": id, "instanceId": format!("i{i}"), "deltas": [{"t": "text", "v": "ab"}]}),
        );
        if i % 9 == 0 {
            push(
                "node.error",
                json!({"nodeId": id, "instanceId": format!("i{i}"), "error": {"name": "E", "message": "m"}}),
            );
        } else {
            push(
                "node.finished",
                json!({"nodeId": id, "instanceId": format!("i{i}"), "status": "ok", "durationMs": 1}),
            );
        }
    }
    push("run.finished", json!({"status": "ok"}));
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_and_deltas_give_the_stored_graph() {
    let t = start().await;
    let run = "proj";
    // Viewer `early` subscribes before the run exists: an empty snapshot, then deltas.
    let mut early = t.ui(false).await;
    subscribe_projection(&mut early, run).await;
    let mut early_graph = Folded::default();
    early_graph.read_snapshot(&mut early).await;
    assert_eq!(early_graph.nodes, Vec::<Value>::new(), "nothing stored yet");
    assert_eq!(early_graph.snapshot_parts, 1);
    let frames = run_frames(run, 1_500);
    let last_seq = frames.len() as u64 - 1;
    let (mut app, _) = t.app(None).await;
    // The second half is written once the late viewer has its snapshot.
    let (go_on, second_half) = tokio::sync::oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
        let mut second_half = Some(second_half);
        for (i, chunk) in frames.chunks(100).enumerate() {
            if i == 20
                && let Some(rx) = second_half.take()
            {
                rx.await.unwrap();
            }
            for f in chunk {
                app.send(Message::text(f.clone())).await.unwrap();
            }
            app.flush().await.unwrap();
            tokio::task::yield_now().await;
        }
        app
    });
    // Viewer `late` subscribes while the run is being written.
    mindgate_testkit::wait::until_async("some events stored", Duration::from_secs(10), || async {
        let (s, r) = t.get(&format!("/api/runs/{run}")).await;
        (s == 200 && r["counts"]["events"].as_u64().unwrap_or(0) > 1_850).then_some(())
    })
    .await;
    let mut late = t.ui(false).await;
    subscribe_projection(&mut late, run).await;
    let mut late_graph = Folded::default();
    late_graph.read_snapshot(&mut late).await;
    assert_eq!(
        late_graph.snapshot_parts,
        late_graph.nodes.len().div_ceil(500),
        "parts of 500 nodes ({} nodes)",
        late_graph.nodes.len()
    );
    go_on.send(()).unwrap();
    late_graph.follow(&mut late, last_seq).await;
    early_graph.follow(&mut early, last_seq).await;
    let _app = writer.await.unwrap();

    let (status, graph) = t.get(&format!("/api/runs/{run}/graph")).await;
    assert_eq!(status, 200);
    let want = graph["nodes"].as_array().unwrap();
    assert_eq!(want.len(), 1 + 600 + 7, "root, 600 tools, 7 chains");
    assert_eq!(&early_graph.nodes, want, "snapshot before the run + deltas");
    assert_eq!(&late_graph.nodes, want, "snapshot mid-run + deltas");
    assert!(early_graph.deltas > 1, "the live tail came as deltas");
    let mid = late_graph
        .snapshot_seq
        .expect("the late snapshot had events");
    // The live graph may be a few batches behind the store: deltas bring the rest.
    assert!(mid > 0 && mid < last_seq, "subscribed mid-run ({mid})");
    t.server.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_subscribe_follows_the_graph_by_default() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    let frames = run_frames("default", 3);
    let last_seq = frames.len() as u64 - 1;
    for f in frames {
        app.send(Message::text(f)).await.unwrap();
    }
    t.wait_events("default", last_seq + 1).await;
    let mut ui = t.ui(false).await;
    ui.send(Message::text(
        json!({"type": "subscribe", "runId": "default"}).to_string(),
    ))
    .await
    .unwrap();
    let mut graph = Folded::default();
    graph.follow(&mut ui, last_seq).await;
    let (_, want) = t.get("/api/runs/default/graph").await;
    assert_eq!(&graph.nodes, want["nodes"].as_array().unwrap());
    t.server.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_true_replays_the_events() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    for f in run_frames("plain", 3) {
        app.send(Message::text(f)).await.unwrap();
    }
    t.wait_events("plain", 12).await;
    for sub in [
        json!({"type": "subscribe", "runId": "plain", "events": true}),
        json!({"type": "subscribe", "runId": "plain", "projection": false}),
    ] {
        let mut ui = t.ui(false).await;
        ui.send(Message::text(sub.to_string())).await.unwrap();
        let mut events = 0;
        loop {
            let msg = next_json(&mut ui).await.expect("feed");
            match msg["type"].as_str() {
                Some("graph.snapshot") => panic!("{sub} asks for events"),
                Some("event") => events += 1,
                Some("replay.end") => break,
                _ => {}
            }
        }
        assert_eq!(events, 12, "{sub}");
    }
    t.server.stop().await.expect("stop");
}

/// Subscribes a new viewer to `run`'s graph: `Some(viewer)` once it has its
/// snapshot, `None` when refused.
async fn try_follow(t: &common::TestServer, run: &str) -> Option<Ws> {
    let mut ui = t.ui(false).await;
    subscribe_projection(&mut ui, run).await;
    loop {
        let msg = next_json(&mut ui).await?;
        match msg["type"].as_str() {
            Some("graph.snapshot") => return Some(ui),
            Some("error") => return None,
            _ => {}
        }
    }
}

fn bounded(max_runs: usize, max_items: usize) -> impl FnOnce(&mut mindgate_server::ServeConfig) {
    move |config| {
        config.live_graphs = mindgate_server::LiveGraphBounds {
            max_runs,
            max_items,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_graphs_are_bounded_in_runs_and_an_idle_one_makes_room() {
    let t = common::start_with(bounded(3, 1_000_000)).await;
    // Three followed runs fill the bound: a fourth run is refused, a second
    // viewer of a followed run is not.
    let mut held = Vec::new();
    for k in 0..3 {
        held.push(try_follow(&t, &format!("run-{k}")).await.expect("followed"));
    }
    let mut fourth = t.ui(false).await;
    subscribe_projection(&mut fourth, "run-3").await;
    let refused = common::next_of(&mut fourth, "error").await;
    assert_eq!(refused["code"], "unavailable");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("at most 3 runs"),
        "{refused}"
    );
    let _second = try_follow(&t, "run-0")
        .await
        .expect("a followed run is joined");
    // A run whose last viewer left is kept idle, and dropped to make room.
    let mut leaving = held.pop().expect("a viewer");
    leaving.close(None).await.unwrap();
    let _newcomer = mindgate_testkit::wait::until_async(
        "an idle graph to make room for another run",
        Duration::from_secs(10),
        || try_follow(&t, "run-3"),
    )
    .await;
    // The followed runs are never dropped: their viewers still get deltas.
    let (mut app, _) = t.app(None).await;
    for f in run_frames("run-0", 2) {
        app.send(Message::text(f)).await.unwrap();
    }
    let delta = common::next_of(&mut held[0], "graph.delta").await;
    assert_eq!(delta["runId"], "run-0");
    t.server.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_graphs_are_bounded_in_nodes_and_instances() {
    let t = common::start_with(bounded(32, 100)).await;
    let (mut app, _) = t.app(None).await;
    let frames = run_frames("big", 150);
    let last_seq = frames.len() as u64 - 1;
    for f in frames {
        app.send(Message::text(f)).await.unwrap();
    }
    t.wait_events("big", last_seq + 1).await;
    // 158 nodes and 151 instances: more than the bound, admitted while nothing is held.
    let mut big = try_follow(&t, "big")
        .await
        .expect("the first graph is admitted");
    let mut small = t.ui(false).await;
    subscribe_projection(&mut small, "small").await;
    let refused = common::next_of(&mut small, "error").await;
    assert_eq!(refused["code"], "unavailable");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("hold 100 nodes and instances"),
        "{refused}"
    );
    // Left, the big graph is over the bound even idle: it goes, and another run fits.
    big.close(None).await.unwrap();
    let _small = mindgate_testkit::wait::until_async(
        "the left graph to be dropped",
        Duration::from_secs(10),
        || try_follow(&t, "small"),
    )
    .await;
    t.server.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_followed_again_after_its_viewers_left_catches_up() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    let frames = run_frames("again", 40);
    let (first, rest) = frames.split_at(30);
    for f in first {
        app.send(Message::text(f.clone())).await.unwrap();
    }
    t.wait_events("again", 30).await;
    let mut ui = try_follow(&t, "again").await.expect("followed");
    ui.close(None).await.unwrap();
    // Written while nobody follows the run (its graph idle, not following commits).
    for f in rest {
        app.send(Message::text(f.clone())).await.unwrap();
    }
    let last_seq = frames.len() as u64 - 1;
    t.wait_events("again", last_seq + 1).await;
    let mut again = t.ui(false).await;
    subscribe_projection(&mut again, "again").await;
    let mut graph = Folded::default();
    graph.follow(&mut again, last_seq).await;
    let (_, want) = t.get("/api/runs/again/graph").await;
    assert_eq!(&graph.nodes, want["nodes"].as_array().unwrap());
    t.server.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_viewer_hears_an_apps_refusal_of_a_resume() {
    let t = start().await;
    let run = "refusing";
    let (mut app, _) = t.app(None).await;
    app.send(Message::text(frame(
        run,
        0,
        "run.started",
        json!({"app": "a", "sdk": {"name": "x", "version": "1"}}),
    )))
    .await
    .unwrap();
    t.wait_events(run, 1).await;
    let mut ui = t.ui(false).await;
    subscribe_projection(&mut ui, run).await;
    common::next_of(&mut ui, "graph.snapshot").await;
    app.send(Message::text(frame(
        run,
        1,
        "exec.refused",
        json!({"pauseId": "p1", "code": "schema", "message": "output must be a string"}),
    )))
    .await
    .unwrap();
    let refused = common::next_of(&mut ui, "resume.refused").await;
    assert_eq!(refused["runId"], run);
    assert_eq!(refused["seq"], 1);
    assert_eq!(refused["pauseId"], "p1");
    assert_eq!(refused["code"], "schema");
    assert_eq!(refused["message"], "output must be a string");
    t.server.stop().await.expect("stop");
}
