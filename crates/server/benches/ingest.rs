//! Ingest load benchmark with a bounded loopback load generator.
//!
//! `cargo bench -p mindgate-server --bench ingest` measures, on this machine:
//! 1. sustained events/s from app sockets into SQLite with 1, 4 and 16 connections
//!    (time from the first frame sent until the last event is committed);
//! 2. end-to-end latency app send → `/ws/ui` subscriber at a paced 2,000 events/s;
//! 3. bytes on disk per event (database file after the final checkpoint);
//! 4. with `MINDGATE_BENCH_RSS=1`: peak RSS of this process (server and load
//!    generator together, an upper bound for the server) after 1,000,000 stored events.
//!
//! Sizes: `MINDGATE_BENCH_EVENTS` (default 200,000 per throughput scenario).
//! Figures are printed, never asserted.
//!
//! Events/s depend on how much CPU the machine leaves this process, so each
//! throughput line also prints the CPU time spent per event (Linux): the whole
//! process (server *and* load generator) and the store's busiest thread (the
//! writer). Those are steadier under load; `2 cores / process µs` and
//! `1 / writer µs` bound what an idle two-core machine would sustain.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use mindgate_server::{RunningServer, ServeConfig};
use mindgate_store::RunStore;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn hello() -> String {
    r#"{"gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "hello", "payload": {"versions": {"protocol": 1, "client": "bench"}, "capabilities": ["pause"], "app": "bench"}}"#.to_owned()
}

/// A realistic mix (Python client formatting): per tool call a node.started with
/// input, a node.token and a node.finished with output and usage.
fn event(run: &str, seq: u64) -> String {
    let ts = 1_700_000_000_000u64 + seq;
    let call = seq / 3;
    match seq % 3 {
        0 => format!(
            r#"{{"gm": 1, "seq": {seq}, "ts": {ts}, "runId": "{run}", "type": "node.started", "payload": {{"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights", "instanceId": "call_4f2a9c_{call}", "parentId": "agent:support", "input": {{"origin": "SFO", "destination": "JFK", "date": "2025-03-0{}"}}}}}}"#,
            call % 9 + 1
        ),
        1 => format!(
            r#"{{"gm": 1, "seq": {seq}, "ts": {ts}, "runId": "{run}", "type": "node.token", "payload": {{"nodeId": "llm:step", "deltas": [{{"t": "text", "v": "Searching flights from SFO to JFK"}}]}}}}"#
        ),
        _ => format!(
            r#"{{"gm": 1, "seq": {seq}, "ts": {ts}, "runId": "{run}", "type": "node.finished", "payload": {{"nodeId": "tool:search_flights", "instanceId": "call_4f2a9c_{call}", "durationMs": 12.4, "status": "ok", "output": [{{"flight": "UA{call}", "price": 318}}], "usage": {{"inputTokens": 120, "outputTokens": 48}}}}}}"#
        ),
    }
}

async fn start(dir: &std::path::Path) -> RunningServer {
    let mut config = ServeConfig::for_tests(dir);
    config.hello_timeout = Duration::from_secs(10);
    config.abandon_grace = Duration::from_secs(60);
    mindgate_server::start(config).await.expect("server")
}

async fn wait_total(store: &RunStore, total: u64, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if store.total_events().unwrap_or(0) >= total {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    false
}

/// Sends `per_conn` events on each of `conns` connections as fast as the socket takes them.
async fn blast(
    server: &RunningServer,
    store: &RunStore,
    conns: usize,
    per_conn: u64,
    tag: &str,
) -> f64 {
    let before = store.total_events().unwrap_or(0);
    let mut sockets = Vec::new();
    for _ in 0..conns {
        let (mut ws, _) = connect_async(server.ingest_url()).await.expect("connect");
        ws.send(Message::text(hello())).await.expect("hello");
        let _ack = ws.next().await;
        sockets.push(ws);
    }
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for (i, mut ws) in sockets.into_iter().enumerate() {
        let run = format!("{tag}-c{conns}-{i}");
        tasks.push(tokio::spawn(async move {
            for seq in 0..per_conn {
                ws.feed(Message::text(event(&run, seq)))
                    .await
                    .expect("send");
                if seq % 256 == 255 {
                    ws.flush().await.expect("flush");
                }
            }
            ws.flush().await.expect("flush");
            ws
        }));
    }
    let mut keep = Vec::new();
    for t in tasks {
        keep.push(t.await.expect("sender"));
    }
    let total = before + conns as u64 * per_conn;
    let ok = wait_total(store, total, Duration::from_secs(600)).await;
    let secs = t0.elapsed().as_secs_f64();
    assert!(ok, "events never all committed");
    drop(keep);
    (conns as u64 * per_conn) as f64 / secs
}

/// CPU seconds (user + system) from a `/proc/.../stat` line.
fn stat_cpu_secs(stat: &str) -> Option<f64> {
    // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0) // USER_HZ is 100 on Linux
}

/// (process CPU s, busiest `mindgate-store-*` thread CPU s).
fn cpu_now() -> (f64, f64) {
    let process = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| stat_cpu_secs(&s))
        .unwrap_or(f64::NAN);
    let mut writer = 0.0f64;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if comm.starts_with("mindgate-store") {
                let secs = std::fs::read_to_string(task.path().join("stat"))
                    .ok()
                    .and_then(|s| stat_cpu_secs(&s))
                    .unwrap_or(0.0);
                writer = writer.max(secs);
            }
        }
    }
    (process, writer)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

async fn latency(server: &RunningServer, rate: u64, seconds: u64) -> (f64, f64, f64, usize) {
    let run = "latency-run";
    let (mut app, _) = connect_async(server.ingest_url()).await.expect("connect");
    app.send(Message::text(hello())).await.expect("hello");
    let _ack = app.next().await;
    // Create the run, then subscribe a viewer to it.
    app.send(Message::text(event(run, 0))).await.expect("first");
    let (mut ui, _) = connect_async(format!("ws://{}/ws/ui", server.addr))
        .await
        .expect("ui");
    ui.send(Message::text(format!(
        r#"{{"type":"subscribe","runId":"{run}","events":true}}"#
    )))
    .await
    .expect("sub");
    loop {
        let Some(Ok(Message::Text(t))) = ui.next().await else {
            panic!("ui closed")
        };
        if t.as_str().contains("replay.end") {
            break;
        }
    }
    let total = rate * seconds;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, Instant)>();
    let receiver = tokio::spawn(async move {
        let mut got: HashMap<u64, Instant> = HashMap::new();
        while (got.len() as u64) < total {
            match tokio::time::timeout(Duration::from_secs(10), ui.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => {
                    let now = Instant::now();
                    let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap_or_default();
                    if v["type"] == "event"
                        && let Some(seq) = v["event"]["seq"].as_u64()
                    {
                        got.insert(seq, now);
                    }
                }
                _ => break,
            }
        }
        got
    });
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let start = Instant::now();
    for i in 1..=total {
        let due = start + interval * (i as u32);
        tokio::time::sleep_until(due.into()).await;
        let text = event(run, i);
        let sent = Instant::now();
        app.send(Message::text(text)).await.expect("send");
        let _ = tx.send((i, sent));
    }
    drop(tx);
    let got = receiver.await.expect("receiver");
    let mut lat = Vec::new();
    while let Some((seq, sent)) = rx.recv().await {
        if let Some(at) = got.get(&seq) {
            lat.push(at.duration_since(sent).as_secs_f64() * 1000.0);
        }
    }
    lat.sort_by(f64::total_cmp);
    (
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0),
        lat.len(),
    )
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn db_bytes(path: &std::path::Path) -> u64 {
    let mut total = 0;
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        total += std::fs::metadata(std::path::PathBuf::from(p))
            .map(|m| m.len())
            .unwrap_or(0);
    }
    total
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing we need.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let per_scenario = env_usize("MINDGATE_BENCH_EVENTS", 200_000) as u64;
        println!("mindgate ingest benchmark ({} CPUs)", std::thread::available_parallelism().map_or(0, |n| n.get()));

        let dir = tempfile::tempdir().expect("tmp");
        let server = start(dir.path()).await;
        let store = RunStore::open(&server.db_path).expect("store");
        for conns in [1usize, 4, 16] {
            let (p0, w0) = cpu_now();
            let rate = blast(&server, &store, conns, per_scenario / conns as u64, "tp").await;
            let (p1, w1) = cpu_now();
            let per = |secs: f64| secs * 1e6 / per_scenario as f64;
            println!(
                "throughput  {conns:>2} connection(s): {rate:>9.0} events/s ({per_scenario} events); CPU per event: process {:.2} µs, writer {:.2} µs",
                per(p1 - p0),
                per(w1 - w0)
            );
        }
        let (p50, p99, max, n) = latency(&server, 2_000, 5).await;
        println!("latency     app → /ws/ui at 2,000 events/s: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms ({n} events)");
        let stored = store.total_events().expect("count");
        let db = server.db_path.clone();
        drop(store);
        server.stop().await.expect("stop");
        let bytes = db_bytes(&db);
        println!(
            "storage     {stored} events in {bytes} bytes on disk: {:.0} bytes/event",
            bytes as f64 / stored as f64
        );

        if std::env::var("MINDGATE_BENCH_RSS").is_ok_and(|v| v == "1") {
            let dir = tempfile::tempdir().expect("tmp");
            let server = start(dir.path()).await;
            let store = RunStore::open(&server.db_path).expect("store");
            let target = 1_000_000u64;
            let rate = blast(&server, &store, 16, target / 16, "rss").await;
            println!(
                "rss         {} events stored at {rate:.0} events/s; peak RSS (server + load generator) {:.0} MB",
                store.total_events().unwrap_or(0),
                peak_rss_mb().unwrap_or(f64::NAN)
            );
            let db = server.db_path.clone();
            drop(store);
            server.stop().await.expect("stop");
            println!("rss storage {:.0} bytes/event", db_bytes(&db) as f64 / target as f64);
        }
    });
}
