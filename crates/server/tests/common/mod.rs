//! Shared helpers for the server's integration tests.
#![allow(dead_code, missing_docs, clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mindgate_server::RunningServer;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub server: RunningServer,
    pub http: reqwest::Client,
}

pub async fn start() -> TestServer {
    let dir = tempfile::tempdir().expect("tmp");
    let server = mindgate_server::start_for_tests(dir.path())
        .await
        .expect("server starts");
    TestServer {
        dir,
        server,
        http: reqwest::Client::new(),
    }
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.server.base_url(), path)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.expect("GET");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn send_json(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Value,
    ) -> (u16, Value) {
        let r = self
            .http
            .request(method, self.url(path))
            .bearer_auth(&self.server.token)
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn app(&self, token: Option<&str>) -> (Ws, Value) {
        let (mut ws, _) = connect_async(self.server.ingest_url())
            .await
            .expect("connect");
        ws.send(Message::text(hello(token))).await.expect("hello");
        let ack = next_json(&mut ws).await.expect("ack");
        (ws, ack)
    }

    pub async fn ui(&self, with_token: bool) -> Ws {
        let url = if with_token {
            format!(
                "ws://{}/ws/ui?token={}",
                self.server.addr, self.server.token
            )
        } else {
            format!("ws://{}/ws/ui", self.server.addr)
        };
        connect_async(url).await.expect("ui connect").0
    }

    /// Polls until the run reaches `events` stored events.
    pub async fn wait_events(&self, run: &str, events: u64) -> Value {
        for _ in 0..200 {
            let (status, v) = self.get(&format!("/api/runs/{run}")).await;
            if status == 200 && v["counts"]["events"].as_u64() == Some(events) {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("run {run} never reached {events} events");
    }
}

pub fn hello(token: Option<&str>) -> String {
    let mut p = json!({
        "versions": {"protocol": 1, "client": "test"},
        "capabilities": ["pause", "step", "inject", "retry", "abort", "run-claim"],
        "app": "test-app",
        "sdk": {"name": "rust-test", "version": "0"}
    });
    if let Some(t) = token {
        p["resumeToken"] = json!(t);
    }
    json!({"gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "hello", "payload": p}).to_string()
}

pub fn frame(run: &str, seq: u64, ty: &str, payload: Value) -> String {
    json!({"gm": 1, "seq": seq, "ts": 1_700_000_000_000i64 + seq as i64, "runId": run, "type": ty, "payload": payload}).to_string()
}

/// One of each event type, as a run.
pub fn every_event(run: &str) -> Vec<String> {
    vec![
        frame(
            run,
            1,
            "run.started",
            json!({"app": "test-app", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "all"}}),
        ),
        frame(
            run,
            2,
            "graph.hint",
            json!({"nodes": [{"nodeId": "tool:x", "kind": "tool", "name": "x"}]}),
        ),
        frame(
            run,
            3,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
        ),
        frame(
            run,
            4,
            "node.started",
            json!({"nodeId": "llm:m", "kind": "llm", "name": "m", "instanceId": "m1", "parentId": "agent:a", "input": {"p": 1}}),
        ),
        frame(
            run,
            5,
            "node.token",
            json!({"nodeId": "llm:m", "instanceId": "m1", "deltas": [{"t": "text", "v": "hi"}]}),
        ),
        frame(
            run,
            6,
            "node.finished",
            json!({"nodeId": "llm:m", "instanceId": "m1", "durationMs": 5, "status": "ok", "usage": {"inputTokens": 3, "outputTokens": 4}}),
        ),
        frame(
            run,
            7,
            "node.error",
            json!({"nodeId": "agent:a", "instanceId": "a1", "error": {"name": "E", "message": "bad"}}),
        ),
        frame(
            run,
            8,
            "exec.paused",
            json!({"pauseId": "p1", "nodeId": "agent:a", "point": "error", "reason": "error"}),
        ),
        frame(
            run,
            9,
            "exec.resumed",
            json!({"pauseId": "p1", "action": "continue"}),
        ),
        frame(
            run,
            10,
            "exec.refused",
            json!({"pauseId": "p1", "code": "disabled"}),
        ),
        frame(
            run,
            11,
            "future.kind",
            json!({"nodeId": "agent:a", "anything": [1]}),
        ),
        frame(
            run,
            12,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 9, "status": "error"}),
        ),
        frame(
            run,
            13,
            "run.finished",
            json!({"status": "error", "error": {"name": "E", "message": "bad"}}),
        ),
    ]
}

pub async fn next_json(ws: &mut Ws) -> Option<Value> {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .ok()??
            .ok()?;
        match msg {
            Message::Text(t) => return serde_json::from_str(t.as_str()).ok(),
            Message::Close(_) => return None,
            _ => {}
        }
    }
}

/// Reads until a message of `ty` arrives (skipping others).
pub async fn next_of(ws: &mut Ws, ty: &str) -> Value {
    loop {
        let v = next_json(ws)
            .await
            .unwrap_or_else(|| panic!("socket ended waiting for {ty}"));
        if v["type"] == ty {
            return v;
        }
    }
}

/// Reads until the close frame; returns its code.
pub async fn close_code(ws: &mut Ws) -> Option<u16> {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .ok()??;
        match msg {
            Ok(Message::Close(Some(f))) => return Some(f.code.into()),
            Ok(Message::Close(None)) => return None,
            Ok(_) => continue,
            Err(_) => return None,
        }
    }
}

pub async fn send_all(ws: &mut Ws, frames: &[String]) {
    for f in frames {
        ws.send(Message::text(f.clone())).await.expect("send");
    }
}
