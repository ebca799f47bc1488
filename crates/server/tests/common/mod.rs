//! Shared helpers for the server's integration tests.
#![allow(
    dead_code,
    unused_imports,
    missing_docs,
    clippy::expect_used,
    clippy::unwrap_used
)]

pub mod folded;

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
    start_with(|_| {}).await
}

/// A test server whose configuration `adjust` changes first.
pub async fn start_with(adjust: impl FnOnce(&mut mindgate_server::ServeConfig)) -> TestServer {
    let dir = tempfile::tempdir().expect("tmp");
    let mut config = mindgate_server::ServeConfig::for_tests(dir.path());
    adjust(&mut config);
    let server = mindgate_server::start(config).await.expect("server starts");
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

    /// Waits until the run has `events` stored events.
    pub async fn wait_events(&self, run: &str, events: u64) -> Value {
        let what = format!("run {run} to reach {events} events");
        mindgate_testkit::wait::until_async(&what, Duration::from_secs(10), || async {
            let (status, v) = self.get(&format!("/api/runs/{run}")).await;
            (status == 200 && v["counts"]["events"].as_u64() == Some(events)).then_some(v)
        })
        .await
    }

    /// Waits until the run's status is `status`.
    pub async fn wait_status(&self, run: &str, status: &str) -> Value {
        let what = format!("run {run} to become {status}");
        mindgate_testkit::wait::until_async(&what, Duration::from_secs(10), || async {
            let (code, v) = self.get(&format!("/api/runs/{run}")).await;
            (code == 200 && v["status"] == status).then_some(v)
        })
        .await
    }
}

pub use mindgate_testkit::frames::{every_event, frame, hello};

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

/// Waits until `t`'s `/api/pauses` of `run` has `n` gates.
pub async fn wait_pauses(t: &TestServer, run: &str, n: usize) -> Value {
    let what = format!("{n} gates of {run} on {}", t.server.addr);
    mindgate_testkit::wait::until_async(&what, Duration::from_secs(10), || async {
        let (_, v) = t.get(&format!("/api/pauses?runId={run}")).await;
        (v["pauses"].as_array().map(Vec::len) == Some(n)).then_some(v)
    })
    .await
}

/// An app on `t` whose run `run` holds gate `p1` before tool `a`.
pub async fn paused_app(t: &TestServer, run: &str) -> Ws {
    let (mut app, _) = t.app(None).await;
    for f in [
        frame(
            run,
            1,
            "run.started",
            json!({"app": "test-app", "sdk": {"name": "t", "version": "1"}}),
        ),
        frame(
            run,
            2,
            "node.started",
            json!({"nodeId": "tool:a", "kind": "tool", "name": "a", "instanceId": "i1"}),
        ),
        frame(
            run,
            3,
            "exec.paused",
            json!({"pauseId": "p1", "nodeId": "tool:a", "point": "before", "reason": "breakpoint"}),
        ),
    ] {
        app.send(Message::text(f)).await.expect("send");
    }
    wait_pauses(t, run, 1).await;
    app
}

/// `POST /api/runs/:run/pauses/p1/resume` with `body`, in the background (the answer
/// waits for the app).
pub fn resume_in_background(
    t: &TestServer,
    run: &str,
    body: Value,
) -> tokio::task::JoinHandle<(u16, Value)> {
    let http = t.http.clone();
    let url = t.url(&format!("/api/runs/{run}/pauses/p1/resume"));
    let token = t.server.token.clone();
    tokio::spawn(async move {
        let r = http
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("POST");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    })
}

/// A schema of the test's own in the test PostgreSQL, dropped at the end.
pub struct PgSchema {
    schema: mindgate_testkit::PgSchema,
    /// The schema.
    pub name: String,
    /// The test database's URL.
    pub admin: String,
}

impl PgSchema {
    /// A fresh schema, or `None` (after the "skipped" line) without a test PostgreSQL.
    pub async fn create(prefix: &str) -> Option<PgSchema> {
        let schema = mindgate_testkit::PgSchema::create(prefix)?;
        let name = schema.name().to_owned();
        let admin = schema.admin_url().to_owned();
        Some(PgSchema {
            schema,
            name,
            admin,
        })
    }

    /// The URL whose connections use this schema.
    pub fn url(&self) -> mindgate_store::PostgresUrl {
        mindgate_store::PostgresUrl::parse(self.schema.url()).expect("url")
    }

    /// A test server whose run store is this schema.
    pub async fn server(&self) -> TestServer {
        let url = self.url();
        start_with(move |c| c.postgres = Some(url)).await
    }
}
