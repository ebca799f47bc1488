//! Issue #10 regressions: the HTTP listener's timeouts and connection cap, the
//! `wait` overflow of `GET /api/pauses`, and WebSocket protocol errors closed
//! with a code. Raw sockets, so the tests send exactly the bytes an attacker would.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{every_event, frame, hello, send_all};
use mindgate_server::{HttpLimits, RunningServer, ServeConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bound on every wait in this file.
const PATIENCE: Duration = Duration::from_secs(5);

async fn start_with(limits: HttpLimits) -> (tempfile::TempDir, RunningServer) {
    let dir = tempfile::tempdir().expect("tmp");
    let mut config = ServeConfig::for_tests(dir.path());
    config.http = limits;
    let server = mindgate_server::start(config).await.expect("server starts");
    (dir, server)
}

/// Reads until the peer closes; returns what it sent (`None` if it stayed open past `PATIENCE`).
async fn read_to_close(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(PATIENCE, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(out),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

async fn raw_get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let got = read_to_close(&mut s).await.expect("answered and closed");
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn a_slowloris_request_and_an_idle_connection_are_closed_at_the_header_timeout() {
    let (_dir, server) = start_with(HttpLimits {
        header_read_timeout: Duration::from_millis(300),
        ..HttpLimits::default()
    })
    .await;
    // Headers that never end.
    let mut slow = TcpStream::connect(server.addr).await.expect("connect");
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        .await
        .expect("write");
    // A connection that never sends a byte.
    let mut silent = TcpStream::connect(server.addr).await.expect("connect");
    // A keep-alive connection idle after one answered request.
    let mut kept = TcpStream::connect(server.addr).await.expect("connect");
    let req = format!("GET /health HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr);
    kept.write_all(req.as_bytes()).await.expect("write");
    for (name, stream) in [
        ("slowloris", &mut slow),
        ("silent", &mut silent),
        ("idle keep-alive", &mut kept),
    ] {
        let got = read_to_close(stream).await;
        assert!(got.is_some(), "the {name} connection was never closed");
        if name == "idle keep-alive" {
            let text = String::from_utf8_lossy(got.as_deref().unwrap_or_default()).into_owned();
            assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        }
    }
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn connections_over_the_cap_get_503_and_health_recovers_when_they_close() {
    let (_dir, server) = start_with(HttpLimits {
        max_connections: 3,
        max_connections_per_ip: 3,
        header_read_timeout: Duration::from_secs(30),
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(TcpStream::connect(server.addr).await.expect("connect"));
    }
    // The three idle sockets hold every slot once the server has accepted them.
    let mut refused = String::new();
    for _ in 0..50 {
        refused = raw_get(server.addr, "/health").await;
        if refused.starts_with("HTTP/1.1 503") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 1"),
        "{refused}"
    );
    assert!(refused.contains("too many open connections"), "{refused}");
    drop(idle.pop());
    let mut health = String::new();
    for _ in 0..50 {
        health = raw_get(server.addr, "/health").await;
        if health.starts_with("HTTP/1.1 200") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn connections_over_the_per_ip_cap_get_503() {
    let (_dir, server) = start_with(HttpLimits {
        max_connections: 100,
        max_connections_per_ip: 2,
        header_read_timeout: Duration::from_secs(30),
    })
    .await;
    let _a = TcpStream::connect(server.addr).await.expect("connect");
    let _b = TcpStream::connect(server.addr).await.expect("connect");
    let mut answer = String::new();
    for _ in 0..50 {
        answer = raw_get(server.addr, "/health").await;
        if answer.starts_with("HTTP/1.1 503") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn a_huge_pause_wait_is_clamped_instead_of_panicking() {
    let t = common::start().await;
    let (mut app, _) = t.app(None).await;
    send_all(&mut app, &every_event("big-wait")[..2]).await;
    t.wait_events("big-wait", 2).await;
    let url = t.url("/api/pauses?runId=big-wait&wait=1e20");
    let poll = tokio::spawn(async move {
        let r = reqwest::get(url).await?;
        let status = r.status().as_u16();
        Ok::<_, reqwest::Error>((status, r.json::<Value>().await?))
    });
    send_all(
        &mut app,
        &[frame(
            "big-wait",
            3,
            "exec.paused",
            json!({"pauseId": "w", "nodeId": "tool:x", "point": "before"}),
        )],
    )
    .await;
    let (status, body) = tokio::time::timeout(PATIENCE, poll)
        .await
        .expect("answered")
        .expect("joined")
        .expect("the request got an answer, not a dropped connection");
    assert_eq!(status, 200);
    assert_eq!(body["pauses"][0]["pauseId"], "w");
    t.server.stop().await.expect("stop");
}

// ---- WebSocket protocol errors ------------------------------------------------

/// Encodes one client frame.
fn ws_frame(first_byte: u8, payload: &[u8], masked: bool) -> Vec<u8> {
    let mask_bit = if masked { 0x80 } else { 0 };
    let mut out = vec![first_byte];
    match u16::try_from(payload.len()) {
        Ok(n) if n < 126 => out.push(n as u8 | mask_bit),
        Ok(n) => {
            out.push(126 | mask_bit);
            out.extend_from_slice(&n.to_be_bytes());
        }
        Err(_) => panic!("test frames stay under 64 KiB"),
    }
    if masked {
        let key = [0x12, 0x34, 0x56, 0x78];
        out.extend_from_slice(&key);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

const FIN_TEXT: u8 = 0x81;

/// A raw WebSocket: handshake done, bytes after the 101 kept.
struct RawWs {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl RawWs {
    async fn connect(addr: SocketAddr, path: &str) -> RawWs {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        stream.write_all(req.as_bytes()).await.expect("write");
        let mut ws = RawWs {
            stream,
            buf: Vec::new(),
        };
        let end = loop {
            if let Some(i) = ws.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            assert!(ws.fill().await, "closed during the handshake");
        };
        let head = String::from_utf8_lossy(&ws.buf[..end]).into_owned();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        ws.buf.drain(..end);
        ws
    }

    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout(PATIENCE, self.stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
            _ => false,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    /// The next server frame `(opcode, payload)`, or `None` if the socket ended.
    async fn next_frame(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if self.buf.len() >= 2 {
                let (len, at) = match self.buf[1] & 0x7f {
                    126 if self.buf.len() >= 4 => (
                        usize::from(u16::from_be_bytes([self.buf[2], self.buf[3]])),
                        4,
                    ),
                    127 if self.buf.len() >= 10 => {
                        let mut n = [0u8; 8];
                        n.copy_from_slice(&self.buf[2..10]);
                        (usize::try_from(u64::from_be_bytes(n)).unwrap(), 10)
                    }
                    n @ 0..=125 => (usize::from(n), 2),
                    _ => (usize::MAX, 0),
                };
                if len != usize::MAX && self.buf.len() >= at + len {
                    let opcode = self.buf[0] & 0x0f;
                    let payload = self.buf[at..at + len].to_vec();
                    self.buf.drain(..at + len);
                    return Some((opcode, payload));
                }
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    /// Skips frames until the close frame: `(code, reason)`.
    async fn close_frame(&mut self) -> Option<(u16, String)> {
        loop {
            let (opcode, payload) = self.next_frame().await?;
            if opcode == 8 {
                if payload.len() < 2 {
                    return Some((0, String::new()));
                }
                let code = u16::from_be_bytes([payload[0], payload[1]]);
                return Some((code, String::from_utf8_lossy(&payload[2..]).into_owned()));
            }
        }
    }
}

/// The bad frames of the review and the close code each must get.
fn bad_frames() -> Vec<(&'static str, Vec<u8>, u16)> {
    vec![
        (
            "unmasked text frame",
            ws_frame(FIN_TEXT, br#"{"x":1}"#, false),
            1002,
        ),
        (
            "text frame with invalid UTF-8",
            ws_frame(FIN_TEXT, &[0x7b, 0xff, 0xfe, 0x7d], true),
            1007,
        ),
        (
            "reserved bits set",
            ws_frame(FIN_TEXT | 0x70, b"{}", true),
            1002,
        ),
        ("reserved data opcode", ws_frame(0x83, b"{}", true), 1002),
        ("reserved control opcode", ws_frame(0x8b, b"", true), 1002),
    ]
}

#[tokio::test]
async fn ingest_closes_bad_frames_with_a_code_and_a_reason() {
    let t = common::start().await;
    for (name, bytes, code) in bad_frames() {
        let mut ws = RawWs::connect(t.server.addr, "/ingest").await;
        ws.send(&ws_frame(FIN_TEXT, hello(None).as_bytes(), true))
            .await;
        let (opcode, ack) = ws.next_frame().await.expect("hello.ack");
        assert_eq!(opcode, 1);
        assert!(String::from_utf8_lossy(&ack).contains("hello.ack"));
        ws.send(&bytes).await;
        let (got, reason) = ws
            .close_frame()
            .await
            .unwrap_or_else(|| panic!("{name}: connection dropped without a close frame"));
        assert_eq!(got, code, "{name}: {reason}");
        assert!(!reason.is_empty(), "{name}: close without a reason");
    }
    // Before the hello, too.
    let mut ws = RawWs::connect(t.server.addr, "/ingest").await;
    ws.send(&ws_frame(FIN_TEXT, b"{}", false)).await;
    assert_eq!(ws.close_frame().await.map(|(c, _)| c), Some(1002));
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn ui_feed_closes_bad_frames_with_a_code_and_a_reason() {
    let t = common::start().await;
    for (name, bytes, code) in bad_frames() {
        let mut ws = RawWs::connect(t.server.addr, "/ws/ui").await;
        let (opcode, welcome) = ws.next_frame().await.expect("welcome");
        assert_eq!(opcode, 1);
        assert!(String::from_utf8_lossy(&welcome).contains("welcome"));
        ws.send(&bytes).await;
        let (got, reason) = ws
            .close_frame()
            .await
            .unwrap_or_else(|| panic!("{name}: connection dropped without a close frame"));
        assert_eq!(got, code, "{name}: {reason}");
        assert!(!reason.is_empty(), "{name}: close without a reason");
    }
    t.server.stop().await.expect("stop");
}

#[tokio::test]
async fn the_graph_pages_through_nodes_and_the_unpaged_shape_is_unchanged() {
    let t = common::start().await;
    let (mut app, _) = t.app(None).await;
    send_all(&mut app, &every_event("pg")).await;
    t.wait_events("pg", 13).await;
    let (status, full) = t.get("/api/runs/pg/graph").await;
    assert_eq!(status, 200);
    let keys: Vec<&str> = full
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["runId", "nodes", "edges", "heldMs", "workMs"]);
    let (mut nodes, mut edges, mut after) = (Vec::new(), Vec::new(), 0);
    loop {
        let (status, page) = t
            .get(&format!("/api/runs/pg/graph?limit=1&after={after}"))
            .await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["totalNodes"], full["nodes"].as_array().unwrap().len());
        nodes.extend(page["nodes"].as_array().unwrap().iter().cloned());
        edges.extend(page["edges"].as_array().unwrap().iter().cloned());
        after = page["nextAfter"].as_u64().unwrap();
        if page["hasMore"] != true {
            break;
        }
    }
    assert_eq!(Value::Array(nodes), full["nodes"]);
    assert_eq!(Value::Array(edges), full["edges"]);
    assert_eq!(t.get("/api/runs/none/graph").await.0, 404);
    assert_eq!(t.get("/api/runs/pg/graph?limit=x").await.0, 400);
    t.server.stop().await.expect("stop");
}
