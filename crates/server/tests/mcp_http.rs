//! The MCP tools mounted at `/mcp` (streamable HTTP) behind the server's guard.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

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
    t: &'a common::TestServer,
    session: Option<String>,
}

impl Mcp<'_> {
    async fn post(&self, body: Value) -> reqwest::Response {
        let mut req = self
            .t
            .http
            .post(self.t.url("/mcp"))
            .bearer_auth(&self.t.server.token)
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
    let t = common::start().await;
    // One finished run to list.
    let (mut app, _) = t.app(None).await;
    for f in common::every_event("mcp-run") {
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
            .contains(&format!("127.0.0.1:{}", t.server.addr.port())),
        "{listed}"
    );
}

#[tokio::test]
async fn mcp_needs_the_token_and_a_same_origin() {
    let t = common::start().await;
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
        .bearer_auth(&t.server.token)
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
    let t = common::start().await;
    let (mut app, _) = t.app(None).await;
    common::send_all(&mut app, &common::every_event("held")[..8]).await;
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
            t.server.addr.port()
        )
    );

    let resumed = mcp
        .call(
            3,
            "tools/call",
            json!({"name": "resume", "arguments": {"runId": "held", "pauseId": "p1", "action": "continue"}}),
        )
        .await;
    let control = common::next_of(&mut app, "exec.resume").await;
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
