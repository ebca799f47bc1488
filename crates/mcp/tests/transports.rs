//! Output bounds for errors, JSON-RPC errors for bad stdio lines, and bounded
//! HTTP sessions (issue #10).

use std::sync::Arc;
use std::time::Duration;

use mindgate_mcp::http::{BoundedSessionManager, HttpLimits};
use mindgate_mcp::output_limits::MAX_ERROR_CHARS;
use mindgate_mcp::stdio::LineTransport;
use mindgate_mcp::{McpConfig, MindgateMcp, StreamableHttpServerConfig};
use mindgate_taskgraph::DiscoveryConfig;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

fn server(home: &std::path::Path) -> MindgateMcp {
    let mut c = McpConfig::new(home);
    c.discovery = DiscoveryConfig::empty();
    c.port = Some(4999);
    MindgateMcp::new(c)
}

/// A client end talking raw lines to a server on a [`LineTransport`].
struct Raw {
    _dir: tempfile::TempDir,
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
}

impl Raw {
    async fn start(max_line: Option<usize>) -> Raw {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        // An empty run database, so run ids are looked up (and unknown).
        let db = dir.path().join(mindgate_home::RUN_DB_FILE);
        let (w, _) =
            mindgate_store::Writer::open(&db, mindgate_store::WriterConfig::default(), None)
                .unwrap_or_else(|e| panic!("{e}"));
        w.close().unwrap_or_else(|e| panic!("{e}"));
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_io);
        let mut transport = LineTransport::new(sr, sw);
        if let Some(m) = max_line {
            transport = transport.with_max_line(m);
        }
        let mcp = server(dir.path());
        tokio::spawn(async move {
            if let Ok(running) = mcp.serve(transport).await {
                let _ = running.waiting().await;
            }
        });
        let (cr, cw) = tokio::io::split(client_io);
        let mut raw = Raw {
            _dir: dir,
            write: cw,
            read: BufReader::new(cr),
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .await;
        let init = raw.next().await;
        assert_eq!(init["id"], 0, "{init}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn line(&mut self, bytes: &[u8]) {
        self.write
            .write_all(bytes)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        self.write.flush().await.unwrap_or_else(|e| panic!("{e}"));
    }

    async fn send(&mut self, v: &Value) {
        let mut bytes = v.to_string().into_bytes();
        bytes.push(b'\n');
        self.line(&bytes).await;
    }

    /// The next message from the server (bounded wait).
    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(20), self.read.read_line(&mut line));
        match read.await {
            Ok(Ok(n)) if n > 0 => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("server sent non-JSON {line:?}: {e}")),
            other => panic!("no message from the server: {other:?}"),
        }
    }

    async fn ping(&mut self, id: u64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let v = self.next().await;
        assert_eq!(v["id"], id, "expected the ping answer, got {v}");
        assert!(v.get("result").is_some(), "{v}");
    }

    async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
            .await;
        let v = self.next().await;
        assert_eq!(v["id"], id, "{v}");
        v
    }
}

#[tokio::test]
async fn garbage_lines_get_a_parse_error_and_the_session_goes_on() {
    let mut c = Raw::start(None).await;
    c.line(b"this is not json\n").await;
    let v = c.next().await;
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    assert!(v.as_object().is_some_and(|o| o.contains_key("id")), "{v}");
    c.ping(1).await;

    c.line(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":\"x\n")
        .await; // torn JSON
    assert_eq!(c.next().await["error"]["code"], -32700);
    c.line(b"\xff\xfe{}\n").await; // not UTF-8
    assert_eq!(c.next().await["error"]["code"], -32700);
    c.line(b"[1, 2, 3]\n").await; // JSON, but no message
    let v = c.next().await;
    assert_eq!(v["error"]["code"], -32600, "{v}");
    c.line(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":7}\n")
        .await; // a request of the wrong shape: answered by its id
    let v = c.next().await;
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(5), json!(-32600)),
        "{v}"
    );
    // An echoed error reply is a response: never answered (no error storm).
    c.line(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n")
        .await;
    c.line(b"\n   \n").await; // blank lines are skipped
    c.ping(2).await;
}

#[tokio::test]
async fn an_oversized_line_is_dropped_with_an_error_reply() {
    let mut c = Raw::start(Some(64 * 1024)).await;
    let mut big = vec![b'{'; 200 * 1024];
    big.push(b'\n');
    c.line(&big).await;
    let v = c.next().await;
    assert_eq!(v["error"]["code"], -32600, "{v}");
    c.ping(3).await;
}

#[tokio::test]
async fn huge_inputs_give_errors_of_bounded_length() {
    let mut c = Raw::start(None).await;
    let huge = "r".repeat(1_000_000);
    let cases = [
        ("get_run", json!({"runId": huge})),
        ("get_node", json!({"runId": huge, "nodeId": huge})),
        ("get_task_graph", json!({"id": huge})),
        ("get_task_graph", json!({"id": format!("/{huge}")})),
        // rmcp's own argument errors quote the value: bounded too.
        ("list_runs", json!({"limit": huge})),
        ("get_run", json!({"runId": 1, huge.clone(): 2})),
    ];
    for (i, (tool, args)) in cases.into_iter().enumerate() {
        let v = c.call(10 + i as u64, tool, args).await;
        let r = &v["result"];
        assert_eq!(
            r["isError"],
            true,
            "{tool}: {}",
            &v.to_string()[..300.min(v.to_string().len())]
        );
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("Error: "),
            "{tool}: {}",
            &text[..200.min(text.len())]
        );
        assert!(
            text.chars().count() <= MAX_ERROR_CHARS + 10,
            "{tool}: {} chars",
            text.chars().count()
        );
        let message = r["structuredContent"]["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(!message.is_empty() && message.chars().count() <= MAX_ERROR_CHARS);
        assert!(
            v.to_string().len() < 3 * MAX_ERROR_CHARS + 1000,
            "{tool}: {} bytes",
            v.to_string().len()
        );
    }
    // An unknown tool with a huge name is a protocol error, bounded as well.
    let v = c.call(30, &huge, json!({})).await;
    assert!(
        v.to_string().len() < 3 * MAX_ERROR_CHARS,
        "{} bytes",
        v.to_string().len()
    );
    c.ping(31).await;
}

/// An HTTP MCP client of one session.
struct HttpSession {
    url: String,
    id: String,
    client: reqwest::Client,
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    body: Value,
    session: Option<&str>,
) -> reqwest::Response {
    let mut req = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-06-18");
    }
    req.send().await.unwrap_or_else(|e| panic!("{e}"))
}

impl HttpSession {
    async fn open(client: &reqwest::Client, url: &str) -> HttpSession {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}});
        let resp = post(client, url, init, None).await;
        assert!(resp.status().is_success(), "{}", resp.status());
        let id = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no session id"));
        let _ = resp.text().await;
        let resp = post(
            client,
            url,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            Some(&id),
        )
        .await;
        assert!(resp.status().is_success(), "{}", resp.status());
        HttpSession {
            url: url.to_owned(),
            id,
            client: client.clone(),
        }
    }

    /// The HTTP status of a `ping` in this session.
    async fn ping(&self) -> u16 {
        let resp = post(
            &self.client,
            &self.url,
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            Some(&self.id),
        )
        .await;
        let status = resp.status().as_u16();
        let _ = resp.text().await;
        status
    }
}

async fn http_server(
    limits: HttpLimits,
) -> (String, Arc<BoundedSessionManager>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mcp = server(dir.path());
    let manager = Arc::new(BoundedSessionManager::new(limits));
    let service = StreamableHttpService::new(
        move || Ok(mcp.clone()),
        manager.clone(),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://127.0.0.1:{port}/mcp"), manager, dir)
}

#[tokio::test]
async fn http_sessions_are_capped_least_recently_used_first() {
    let limits = HttpLimits {
        max_sessions: 2,
        ..HttpLimits::default()
    };
    let (url, manager, _dir) = http_server(limits).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let a = HttpSession::open(&client, &url).await;
    let b = HttpSession::open(&client, &url).await;
    assert_eq!(a.ping().await, 200); // a is now more recent than b
    let c = HttpSession::open(&client, &url).await;
    assert_eq!(manager.open_sessions().await, 2);
    assert_eq!(
        b.ping().await,
        404,
        "the least recently used session is closed"
    );
    assert_eq!(a.ping().await, 200);
    assert_eq!(c.ping().await, 200);
}

#[tokio::test]
async fn idle_http_sessions_expire() {
    let limits = HttpLimits {
        idle_timeout: Duration::from_millis(300),
        ..HttpLimits::default()
    };
    let (url, manager, _dir) = http_server(limits).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let s = HttpSession::open(&client, &url).await;
    assert_eq!(s.ping().await, 200);
    // Wait (bounded) for the session to be closed, without touching it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while manager.open_sessions().await > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the idle session never expired"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(s.ping().await, 404);
}

/// A FIFO posing as a server's token file must not hang the run tools (they
/// look for a running server to build their links).
#[cfg(unix)]
#[test]
fn a_fifo_token_file_does_not_hang_the_run_tools() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join(mindgate_home::RUN_DB_FILE);
    let (w, _) = mindgate_store::Writer::open(&db, mindgate_store::WriterConfig::default(), None)
        .unwrap_or_else(|e| panic!("{e}"));
    w.close().unwrap_or_else(|e| panic!("{e}"));
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap_or_else(|e| panic!("{e}"));
    let made = std::process::Command::new("mkfifo")
        .arg(run.join("serve-4747.json"))
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    let mut c = McpConfig::new(dir.path());
    c.discovery = DiscoveryConfig::empty();
    let mcp = MindgateMcp::new(c);
    // On its own thread and runtime, so a read that blocks fails the test instead of
    // hanging it (a runtime waits for its blocking tasks when dropped).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_multi_thread().build() else {
            return;
        };
        let r = rt.block_on(mcp.list_runs(rmcp::handler::server::wrapper::Parameters(
            mindgate_mcp::params::ListRunsArgs::default(),
        )));
        let _ = tx.send(r.is_error);
        std::mem::forget(rt);
    });
    let is_error = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("list_runs hung on the FIFO token file"));
    assert_eq!(is_error, Some(false));
    drop(dir);
}
