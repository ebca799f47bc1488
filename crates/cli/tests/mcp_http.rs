//! The MCP tools mounted at `/mcp` (streamable HTTP) of the real `mindgate serve`, behind
//! the server's guard; the binary wires them (the server crate does not depend on MCP).
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mindgate_testkit::ServeProcess;
use mindgate_testkit::frames::{every_event, hello};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A running `mindgate serve` and an HTTP client for it.
struct TestServer {
    serve: ServeProcess,
    http: reqwest::Client,
}

fn start() -> TestServer {
    TestServer {
        serve: ServeProcess::start(Path::new(env!("CARGO_BIN_EXE_mindgate")), &[]),
        http: reqwest::Client::new(),
    }
}

impl TestServer {
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.serve.base_url(), path)
    }

    fn token(&self) -> &str {
        self.serve.token()
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.expect("GET");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// An app connection that has said `hello`.
    async fn app(&self) -> Ws {
        let url = format!("ws://127.0.0.1:{}/ingest", self.serve.port());
        let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("connect");
        ws.send(Message::text(hello(None))).await.expect("hello");
        next_of(&mut ws, "hello.ack").await;
        ws
    }

    async fn wait_events(&self, run: &str, events: u64) {
        let what = format!("run {run} to reach {events} events");
        mindgate_testkit::wait::until_async(&what, Duration::from_secs(10), || async {
            let (status, v) = self.get(&format!("/api/runs/{run}")).await;
            (status == 200 && v["counts"]["events"].as_u64() == Some(events)).then_some(())
        })
        .await;
    }
}

async fn send_all(ws: &mut Ws, frames: &[String]) {
    for f in frames {
        ws.send(Message::text(f.clone())).await.expect("send");
    }
}

/// Reads until a message of `ty` arrives (skipping others).
async fn next_of(ws: &mut Ws, ty: &str) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap_or_else(|_| panic!("no {ty} in time"))
            .unwrap_or_else(|| panic!("socket ended waiting for {ty}"))
            .expect("frame");
        if let Message::Text(t) = msg
            && let Ok(v) = serde_json::from_str::<Value>(t.as_str())
            && v["type"] == ty
        {
            return v;
        }
    }
}

const ACCEPT: &str = "application/json, text/event-stream";

/// The JSON-RPC message with `id` in a JSON or SSE (`data: …`) body.
fn rpc_reply(body: &str, id: u64) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return (v["id"] == json!(id)).then_some(v);
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v["id"] == json!(id))
}

struct Mcp<'a> {
    t: &'a TestServer,
    session: Option<String>,
}

impl Mcp<'_> {
    async fn post(&self, body: Value) -> reqwest::Response {
        let mut req = self
            .t
            .http
            .post(self.t.url("/mcp"))
            .bearer_auth(self.t.token())
            .header("Accept", ACCEPT)
            .json(&body);
        if let Some(s) = &self.session {
            req = req
                .header("Mcp-Session-Id", s)
                .header("MCP-Protocol-Version", "2025-06-18");
        }
        tokio::time::timeout(Duration::from_secs(10), req.send())
            .await
            .expect("in time")
            .expect("POST /mcp")
    }

    async fn call(&self, id: u64, method: &str, params: Value) -> Value {
        let r = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(r.status().as_u16(), 200, "{method}");
        let body = tokio::time::timeout(Duration::from_secs(10), r.text())
            .await
            .expect("in time")
            .expect("body");
        rpc_reply(&body, id).unwrap_or_else(|| panic!("no reply to {method} in {body}"))
    }
}

#[tokio::test]
async fn mcp_over_http_lists_tools_and_runs_with_the_token() {
    let t = start();
    // One finished run to list.
    let mut app = t.app().await;
    for f in every_event("mcp-run") {
        app.send(Message::text(f)).await.expect("send");
    }
    t.wait_events("mcp-run", 13).await;

    let mut mcp = Mcp {
        t: &t,
        session: None,
    };
    let init = mcp
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "mindgate-test", "version": "0"}
            }}),
        )
        .await;
    assert_eq!(init.status().as_u16(), 200);
    mcp.session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = init.text().await.expect("body");
    let reply = rpc_reply(&body, 1).expect("initialize reply");
    assert!(
        reply["result"]["serverInfo"].is_object(),
        "initialize result: {reply}"
    );
    let note = mcp
        .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert!(note.status().is_success(), "initialized: {}", note.status());

    let tools = mcp.call(2, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["list_runs", "get_run", "get_node", "find_errors", "resume"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }

    let listed = mcp
        .call(
            3,
            "tools/call",
            json!({"name": "list_runs", "arguments": {}}),
        )
        .await;
    let result = &listed["result"];
    assert_ne!(result["isError"], json!(true), "{listed}");
    assert!(
        result.to_string().contains("mcp-run"),
        "list_runs should name the stored run: {listed}"
    );
    // Deep links point at this server's own port.
    assert!(
        result
            .to_string()
            .contains(&format!("127.0.0.1:{}", t.serve.port())),
        "{listed}"
    );
}

#[tokio::test]
async fn mcp_needs_the_token_and_a_same_origin() {
    let t = start();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "x", "version": "0"}
    }});
    let no_token = t
        .http
        .post(t.url("/mcp"))
        .header("Accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .expect("POST");
    assert_eq!(no_token.status().as_u16(), 401);
    let wrong_token = t
        .http
        .post(t.url("/mcp"))
        .bearer_auth("not-the-token")
        .header("Accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .expect("POST");
    assert_eq!(wrong_token.status().as_u16(), 401);
    // Reads need the token too under /mcp (an SSE stream of a session).
    let get = t
        .http
        .get(t.url("/mcp"))
        .header("Accept", "text/event-stream")
        .send()
        .await
        .expect("GET");
    assert_eq!(get.status().as_u16(), 401);
    let foreign = t
        .http
        .post(t.url("/mcp"))
        .bearer_auth(t.token())
        .header("Accept", ACCEPT)
        .header("Origin", "http://evil.example")
        .json(&init)
        .send()
        .await
        .expect("POST");
    assert_eq!(foreign.status().as_u16(), 403);
}

/// `list_pauses` and `resume` over `/mcp` reach the hub in process: the pause
/// the app holds is listed, and the resume reaches the app that owns the run.
#[tokio::test]
async fn mcp_control_tools_go_to_the_hub_in_process() {
    let t = start();
    let mut app = t.app().await;
    send_all(&mut app, &every_event("held")[..8]).await;
    let (_, held) = t.get("/api/pauses?runId=held&wait=5").await;
    assert_eq!(held["pauses"][0]["pauseId"], "p1", "{held}");

    let mut mcp = Mcp {
        t: &t,
        session: None,
    };
    let init = mcp
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "mindgate-test", "version": "0"}
            }}),
        )
        .await;
    mcp.session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    mcp.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let listed = mcp
        .call(
            2,
            "tools/call",
            json!({"name": "list_pauses", "arguments": {"runId": "held"}}),
        )
        .await;
    let pauses = &listed["result"]["structuredContent"]["pauses"];
    assert_eq!(pauses[0]["pauseId"], "p1", "{listed}");
    assert_eq!(pauses[0]["nodeId"], "agent:a");
    assert_eq!(
        pauses[0]["link"],
        format!(
            "http://127.0.0.1:{}/#/run/held/node/agent%3Aa",
            t.serve.port()
        )
    );

    let resumed = mcp
        .call(
            3,
            "tools/call",
            json!({"name": "resume", "arguments": {"runId": "held", "pauseId": "p1", "action": "continue"}}),
        )
        .await;
    let control = next_of(&mut app, "exec.resume").await;
    assert_eq!(control["payload"]["pauseId"], "p1");
    assert_eq!(control["payload"]["action"], "continue");
    assert_eq!(
        resumed["result"]["structuredContent"]["result"]["result"], "resumed",
        "{resumed}"
    );

    // The pause is gone: a second resume is refused as a tool error.
    let again = mcp
        .call(
            4,
            "tools/call",
            json!({"name": "resume", "arguments": {"runId": "held", "pauseId": "p1", "action": "continue"}}),
        )
        .await;
    assert_eq!(again["result"]["isError"], true, "{again}");
}
