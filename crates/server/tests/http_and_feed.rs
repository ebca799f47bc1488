//! The HTTP API, the guard, the embedded UI and the `/ws/ui` feed over real sockets.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use futures_util::SinkExt;
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

#[tokio::test]
async fn controls_reach_the_app_and_resumes_are_refereed() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    let (s, body) = t
        .send_json(
            Method::POST,
            "/api/breakpoints",
            json!({"kind": "tool", "name": "x"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(body["added"], true);
    let bp = next_of(&mut app, "breakpoint.set").await;
    assert_eq!(bp["runId"], "*");
    assert_eq!(
        bp["payload"]["matcher"],
        json!({"kind": "tool", "name": "x"})
    );
    let (s, _) = t
        .send_json(Method::PUT, "/api/mode", json!({"mode": "step"}))
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        next_of(&mut app, "mode.set").await["payload"]["mode"],
        "step"
    );
    let (_, debug) = t.get("/api/debug").await;
    assert_eq!(debug["mode"], "step");
    assert_eq!(debug["breakpoints"].as_array().unwrap().len(), 2);
    let (s, body) = t
        .send_json(
            Method::DELETE,
            "/api/breakpoints",
            json!({"matcher": {"kind": "tool", "name": "x"}}),
        )
        .await;
    assert_eq!((s, body["removed"].clone()), (200, json!(true)));
    assert_eq!(
        next_of(&mut app, "breakpoint.clear").await["payload"]["matcher"]["name"],
        "x"
    );

    // A pause held by the app.
    send_all(&mut app, &every_event("pr")[..4]).await;
    send_all(
        &mut app,
        &[frame(
            "pr",
            20,
            "exec.paused",
            json!({"pauseId": "p9", "nodeId": "llm:m", "point": "before", "reason": "step"}),
        )],
    )
    .await;
    let (_, pauses) = t.get("/api/pauses?wait=5").await;
    assert_eq!(pauses["pauses"][0]["pauseId"], "p9");
    assert_eq!(pauses["pauses"][0]["reason"], "step");
    let (_, none) = t.get("/api/pauses?runId=other").await;
    assert_eq!(none["pauses"], json!([]));
    let path = "/api/runs/pr/pauses/p9/resume";
    // Missing token: 401, and nothing reaches the app.
    let r = t
        .http
        .post(t.url(path))
        .json(&json!({"action": "continue"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let (s, bad) = t
        .send_json(Method::POST, path, json!({"action": "explode"}))
        .await;
    assert_eq!(s, 400);
    assert!(bad["error"].as_str().unwrap().contains("explode"));
    let (_, first) = t
        .send_json(
            Method::POST,
            path,
            json!({"action": "inject", "output": {"v": 1}}),
        )
        .await;
    assert_eq!(first["result"], "resumed");
    let (_, second) = t
        .send_json(Method::POST, path, json!({"action": "continue"}))
        .await;
    assert_eq!(second["result"], "taken");
    let (_, missing) = t
        .send_json(
            Method::POST,
            "/api/runs/pr/pauses/nope/resume",
            json!({"action": "continue"}),
        )
        .await;
    assert_eq!(missing["result"], "no-such-pause");
    let resume = next_of(&mut app, "exec.resume").await;
    assert_eq!(resume["runId"], "pr");
    assert_eq!(
        resume["payload"],
        json!({"pauseId": "p9", "action": "inject", "output": {"v": 1}})
    );
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn long_poll_returns_when_a_pause_appears() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    send_all(&mut app, &every_event("lp")[..2]).await;
    t.wait_events("lp", 2).await;
    let url = t.url("/api/pauses?runId=lp&wait=10");
    let poll = tokio::spawn(async move {
        reqwest::get(url)
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!poll.is_finished());
    send_all(
        &mut app,
        &[frame(
            "lp",
            3,
            "exec.paused",
            json!({"pauseId": "q", "nodeId": "tool:x", "point": "before"}),
        )],
    )
    .await;
    let got = tokio::time::timeout(Duration::from_secs(5), poll)
        .await
        .expect("answered")
        .unwrap();
    assert_eq!(got["pauses"][0]["pauseId"], "q");
    // When the app goes away its pause disappears (the client auto-continued).
    drop(app);
    for _ in 0..100 {
        if t.get("/api/pauses").await.1["pauses"] == json!([]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(t.get("/api/pauses").await.1["pauses"], json!([]));
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn runs_list_filters_and_delete() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    send_all(&mut app, &every_event("one")).await;
    send_all(&mut app, &every_event("two")[..3]).await;
    t.wait_events("one", 13).await;
    t.wait_events("two", 3).await;
    let (_, list) = t.get("/api/runs").await;
    let runs = list["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        for key in [
            "id",
            "app",
            "name",
            "status",
            "startedAt",
            "finishedAt",
            "durationMs",
            "counts",
            "usage",
            "source",
        ] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
    }
    let (_, errs) = t.get("/api/runs?status=error").await;
    assert_eq!(errs["runs"].as_array().unwrap().len(), 1);
    let (s, bad) = t.get("/api/runs?status=sideways").await;
    assert_eq!(s, 400);
    assert!(bad["error"].as_str().unwrap().contains("sideways"));
    let (s, _) = t.get("/api/runs?limit=abc").await;
    assert_eq!(s, 400);
    let (_, hits) = t.get("/api/search?q=bad&runId=one").await;
    assert!(!hits["hits"].as_array().unwrap().is_empty());
    let (_, recent) = t.get("/api/errors").await;
    assert_eq!(recent["errors"][0]["runId"], "one");
    let r = t.http.delete(t.url("/api/runs/one")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let (s, _) = t
        .send_json(Method::DELETE, "/api/runs/one", json!({}))
        .await;
    assert_eq!(s, 200);
    let (s, _) = t
        .send_json(Method::DELETE, "/api/runs/one", json!({}))
        .await;
    assert_eq!(s, 404);
    assert_eq!(
        t.get("/api/runs").await.1["runs"].as_array().unwrap().len(),
        1
    );
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn guard_refuses_rebinding_hosts_and_foreign_origins() {
    let t = start().await;
    let with = |k: &'static str, v: &str| t.http.get(t.url("/api/runs")).header(k, v.to_owned());
    assert_eq!(
        with("Origin", "http://evil.example")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        403
    );
    assert_eq!(
        with("Host", "evil.example")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        403
    );
    let own = format!("http://{}", t.server.addr);
    assert_eq!(
        with("Origin", &own).send().await.unwrap().status().as_u16(),
        200
    );
    // Cross-site WebSocket hijacking: /ws/ui and /ingest from a foreign origin are refused.
    for path in ["/ws/ui", "/ingest"] {
        let mut req = format!("ws://{}{}", t.server.addr, path)
            .into_client_request()
            .unwrap();
        req.headers_mut()
            .insert("Origin", "http://evil.example".parse().unwrap());
        let err = tokio_tungstenite::connect_async(req)
            .await
            .expect_err("refused");
        assert!(err.to_string().contains("403"), "{err}");
    }
    // Mutations without the token.
    let r = t
        .http
        .put(t.url("/api/mode"))
        .json(&json!({"mode": "step"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("Bearer"));
    let r = t
        .http
        .put(t.url("/api/mode"))
        .bearer_auth("wrong")
        .json(&json!({"mode": "step"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(t.get("/api/debug").await.1["mode"], "run");
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn embedded_ui_and_token_file() {
    let t = start().await;
    let r = t.http.get(t.url("/")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    for path in mindgate_server::asset_paths() {
        let r = t.http.get(t.url(&format!("/{path}"))).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path}");
    }
    let r = t
        .http
        .get(t.url("/run/abc/node/tool:x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let (s, body) = t.get("/api/nope").await;
    assert_eq!(s, 404);
    assert!(body["error"].is_string());
    let home = mindgate_home::Home::at(t.dir.path());
    let file = mindgate_home::token_file::read(&home, t.server.addr.port()).expect("token file");
    assert_eq!(file.token, t.server.token);
    assert_eq!(file.port, t.server.addr.port());
    assert_eq!(file.pid, std::process::id());
    assert_eq!(
        file.url,
        format!("http://{}/#token={}", t.server.addr, t.server.token)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = t.server.token_file.clone().unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let path = t.server.token_file.clone().unwrap();
    t.server.stop().await.expect("stop");
    assert!(!path.exists(), "token file removed on stop");
}

#[tokio::test]
async fn ui_feed_welcome_state_runs_and_read_only_controls() {
    let t = start().await;
    let mut ro = t.ui(false).await;
    let welcome = next_json(&mut ro).await.unwrap();
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(welcome["readOnly"], true);
    let state = next_of(&mut ro, "state").await;
    assert_eq!(state["breakpoints"], json!([{"point": "error"}]));
    assert_eq!(state["mode"], "run");
    ro.send(Message::text(json!({"type": "control", "requestId": "r1", "envelope": {"gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "mode.set", "payload": {"mode": "step"}}}).to_string())).await.unwrap();
    let err = next_of(&mut ro, "error").await;
    assert_eq!(err["code"], "unauthorized");
    assert_eq!(err["requestId"], "r1");

    let mut ui = t.ui(true).await;
    assert_eq!(next_json(&mut ui).await.unwrap()["readOnly"], false);
    ui.send(Message::text(
        json!({"type": "subscribe", "runId": "*"}).to_string(),
    ))
    .await
    .unwrap();
    let runs = next_of(&mut ui, "runs").await;
    assert_eq!(runs["runs"], json!([]));
    let (mut app, _) = t.app(None).await;
    // The attached app shows up as a delta.
    let st = next_of(&mut ui, "app.attached").await;
    assert_eq!(st["app"]["app"], "test-app");
    send_all(&mut app, &every_event("fresh")[..3]).await;
    let upd = next_of(&mut ui, "run.update").await;
    assert_eq!(upd["run"]["id"], "fresh");
    // A control from the authorized viewer reaches the app and the state.
    ui.send(Message::text(json!({"type": "control", "envelope": {"gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "mode.set", "payload": {"mode": "step"}}}).to_string())).await.unwrap();
    assert_eq!(
        next_of(&mut app, "mode.set").await["payload"]["mode"],
        "step"
    );
    loop {
        let st = next_of(&mut ui, "debug").await;
        if st["mode"] == "step" {
            break;
        }
    }
    // exec.resume through the feed.
    send_all(
        &mut app,
        &[frame(
            "fresh",
            30,
            "exec.paused",
            json!({"pauseId": "pz", "nodeId": "agent:a", "point": "before"}),
        )],
    )
    .await;
    let held = next_of(&mut ui, "pause.held").await;
    assert_eq!(held["pause"]["pauseId"], "pz");
    let resume = json!({"gm": 1, "seq": 0, "ts": 0, "runId": "fresh", "type": "exec.resume", "payload": {"pauseId": "pz", "action": "continue"}});
    ui.send(Message::text(
        json!({"type": "control", "requestId": 7, "envelope": resume}).to_string(),
    ))
    .await
    .unwrap();
    let res = next_of(&mut ui, "resume.result").await;
    assert_eq!(
        (res["result"].clone(), res["requestId"].clone()),
        (json!("resumed"), json!(7))
    );
    ui.send(Message::text(
        json!({"type": "control", "requestId": 8, "envelope": resume}).to_string(),
    ))
    .await
    .unwrap();
    assert_eq!(next_of(&mut ui, "resume.result").await["result"], "taken");
    assert_eq!(
        next_of(&mut app, "exec.resume").await["payload"]["pauseId"],
        "pz"
    );
    // Deleting a run is announced.
    let (s, _) = t
        .send_json(Method::DELETE, "/api/runs/fresh", json!({}))
        .await;
    assert_eq!(s, 200);
    assert_eq!(next_of(&mut ui, "run.deleted").await["runId"], "fresh");
    t.server.stop().await.expect("stop");
}

/// Subscribing while the run is being written: every event exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_replay_then_tail_is_race_free() {
    let t = start().await;
    let (mut app, _) = t.app(None).await;
    const N: u64 = 6_000;
    let mut frames = vec![frame(
        "race",
        0,
        "run.started",
        json!({"app": "a", "sdk": {"name": "x", "version": "1"}}),
    )];
    for i in 1..N {
        frames.push(frame(
            "race",
            i,
            "node.token",
            json!({"nodeId": "llm:x", "deltas": [{"t": "text", "v": "t"}]}),
        ));
    }
    // The second half waits until the viewer's replay has begun, so the subscribe always
    // lands mid-stream (on a loaded machine the whole stream could otherwise be stored
    // first), and the rest arrives while the history is being replayed.
    let (replaying, resume_writer) = tokio::sync::oneshot::channel::<()>();
    let second_half = frames.split_off(N as usize / 2);
    let writer = tokio::spawn(async move {
        for chunk in frames.chunks(200) {
            send_all(&mut app, chunk).await;
        }
        let _ = resume_writer.await;
        for chunk in second_half.chunks(200) {
            send_all(&mut app, chunk).await;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        app
    });
    // Subscribe somewhere in the middle of the stream.
    loop {
        let (s, run) = t.get("/api/runs/race").await;
        if s == 200 && run["counts"]["events"].as_u64().unwrap_or(0) > 1_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut ui = t.ui(false).await;
    ui.send(Message::text(
        json!({"type": "subscribe", "runId": "race", "events": true}).to_string(),
    ))
    .await
    .unwrap();
    next_of(&mut ui, "replay.start").await;
    let mut seen = Vec::with_capacity(N as usize);
    let mut replay_end = None;
    let mut replaying = Some(replaying);
    while (seen.len() as u64) < N {
        let v = next_json(&mut ui).await.expect("feed ended early");
        match v["type"].as_str() {
            Some("event") => {
                assert_eq!(v["runId"], "race");
                seen.push(v["event"]["seq"].as_u64().unwrap());
                if let Some(go) = replaying.take() {
                    let _ = go.send(());
                }
            }
            Some("replay.end") => replay_end = v["lastSeq"].as_u64(),
            _ => {}
        }
    }
    let _app = writer.await.unwrap();
    let replayed = replay_end.expect("replay.end seen");
    assert!(
        (1_000..N - 1).contains(&replayed),
        "subscribed mid-stream ({replayed})"
    );
    assert_eq!(seen, (0..N).collect::<Vec<_>>(), "each seq once, in order");
    let unique: HashSet<u64> = seen.iter().copied().collect();
    assert_eq!(unique.len() as u64, N);
    t.server.stop().await.expect("stop");
}
