//! `/task-graph/api/*` over copies of the taskgraph fixture sessions (all four agents),
//! including the live SSE feed while a session file grows.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mindgate_server::{RunningServer, ServeConfig};
use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::{DiscoveryConfig, SessionLocation};
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures")
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    config: DiscoveryConfig,
    server: RunningServer,
    http: reqwest::Client,
}

async fn start() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("homes");
    mindgate_testkit::copy_fixture_tree(&fixtures().join("dsh"), &root.join("dsh"));
    mindgate_testkit::copy_fixture_tree(&fixtures().join("pi"), &root.join("pi"));
    mindgate_testkit::copy_fixture_tree(&fixtures().join("claude"), &root.join("claude"));
    mindgate_testkit::copy_fixture_tree(&fixtures().join("codex"), &root.join("codex"));
    let config = DiscoveryConfig {
        dsh_sessions: Some(root.join("dsh")),
        pi_sessions: Some(root.join("pi")),
        claude_projects: Some(root.join("claude")),
        codex_sessions: Some(root.join("codex")),
        // Just after the fixtures' last events (2026-08-24T19:34:00Z): open sessions are live.
        now: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_787_600_040)),
        ..DiscoveryConfig::empty()
    };
    let serve = ServeConfig {
        task_graph: config.clone(),
        ..ServeConfig::for_tests(&dir.path().join("home"))
    };
    let server = mindgate_server::start(serve).await.expect("server starts");
    Fixture {
        _dir: dir,
        root,
        config,
        server,
        http: reqwest::Client::new(),
    }
}

impl Fixture {
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.server.base_url(), path)
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.expect("GET");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The graph the library builds for a listed task, as JSON.
    fn expected_graph(&self, task: &Value) -> Value {
        let loc = SessionLocation {
            agent: serde_json::from_value(task["agent"].clone()).unwrap(),
            path: PathBuf::from(task["path"].as_str().unwrap()),
            workspace: task["workspace"].as_str().map(str::to_owned),
        };
        let (_, tree) = load_tree(&loc, &self.config).unwrap();
        serde_json::to_value(&tree.graph).unwrap()
    }

    fn dsh_live_file(&self) -> PathBuf {
        self.root
            .join("dsh/--Users-kevin-Desktop-Nothing-Napkin--/s-live/session.v3.jsonl")
    }
}

fn ids(tasks: &Value) -> Vec<String> {
    let mut v: Vec<String> = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn status_reports_homes_and_counts() {
    let f = start().await;
    let (code, body) = f.get("/task-graph/api/status").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["ok"], true);
    let expected = mindgate_taskgraph::discover(&f.config);
    assert_eq!(body["sessions"], expected.len());
    assert!(expected.len() >= 8, "fixtures of four agents: {expected:?}");
    for agent in ["dsh", "pi", "claude_code", "codex"] {
        assert!(
            body["agents"][agent].as_u64().unwrap() >= 2,
            "{agent}: {body}"
        );
    }
    assert_eq!(
        body["homes"]["dsh"],
        f.root.join("dsh").display().to_string()
    );
    assert_eq!(body["watching"], 0);
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn tasks_lists_every_session_with_its_summary() {
    let f = start().await;
    let (code, body) = f.get("/task-graph/api/tasks").await;
    assert_eq!(code, 200, "{body}");
    let expected = mindgate_taskgraph::discover(&f.config);
    let mut want: Vec<String> = expected.iter().map(|t| t.id.clone()).collect();
    want.sort();
    assert_eq!(ids(&body), want);
    assert_eq!(body["count"], expected.len());
    for t in body["tasks"].as_array().unwrap() {
        for key in [
            "id",
            "agent",
            "workspace",
            "title",
            "status",
            "start_time",
            "duration_ms",
            "live",
            "counts",
        ] {
            assert!(t.get(key).is_some(), "{key} missing in {t}");
        }
    }
    let main = body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "dsh-main")
        .unwrap();
    assert_eq!(main["agent"], "dsh");
    assert_eq!(main["workspace"], "--Users-kevin-Desktop-Nothing-Napkin--");
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn task_is_exactly_the_library_graph_for_every_session() {
    let f = start().await;
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    for t in tasks["tasks"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        let (code, graph) = f.get(&format!("/task-graph/api/task?id={id}")).await;
        assert_eq!(code, 200, "{id}: {graph}");
        assert_eq!(graph, f.expected_graph(t), "{id}");
        assert_eq!(graph["session_id"], id);
        assert_eq!(graph["nodes"][0]["id"], "task");
        for key in ["summary", "critical_path", "meta", "edges"] {
            assert!(graph.get(key).is_some(), "{id}: {key}");
        }
    }
    // A unique prefix works too.
    let (code, graph) = f.get("/task-graph/api/task?id=dsh-ma").await;
    assert_eq!(code, 200);
    assert_eq!(graph["session_id"], "dsh-main");
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn errors_are_json_with_fitting_codes() {
    let f = start().await;
    for (path, code, needle) in [
        ("/task-graph/api/task", 400, "id"),
        ("/task-graph/api/task?id=", 400, "id"),
        ("/task-graph/api/task?id=nope", 404, "nope"),
        ("/task-graph/api/task?id=pi-", 400, "matches 2"),
        ("/task-graph/api/events?id=nope", 404, "nope"),
        (
            "/task-graph/api/events?id=dsh-main&afterSeq=x",
            400,
            "afterSeq",
        ),
        ("/task-graph/api/events?id=dsh-main&limit=-1", 400, "limit"),
        ("/task-graph/api/event?id=dsh-main", 400, "seq"),
        ("/task-graph/api/event?id=dsh-main&seq=abc", 400, "seq"),
        ("/task-graph/api/event?id=dsh-main&seq=99999", 404, "99999"),
        ("/task-graph/api/live", 400, "id"),
        ("/task-graph/api/live?id=nope", 404, "nope"),
    ] {
        let (got, body) = f.get(path).await;
        assert_eq!(got, code, "{path}: {body}");
        let expected = mindgate_errors::ErrorCode::from_http_status(code);
        assert_eq!(body["code"], expected.as_str(), "{path}: {body}");
        let msg = body["error"].as_str().unwrap_or_default();
        assert!(msg.contains(needle), "{path}: {body}");
    }
    // Paths are not ids: the API never reads files outside the discovered homes.
    let path = f.dsh_live_file().display().to_string();
    let (got, _) = f.get(&format!("/task-graph/api/task?id={path}")).await;
    assert_eq!(got, 404);
    f.server.stop().await.unwrap();
}

/// A session file that turns into a FIFO or grows past the size cap after discovery is the
/// client's problem (`400 bad_request`, `413 too_large`), never a `500`.
#[cfg(unix)]
#[tokio::test]
async fn a_session_turned_fifo_or_oversized_is_a_client_error() {
    let f = start().await;
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    let task = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["agent"] == "pi")
        .expect("a pi session")
        .clone();
    let id = task["id"].as_str().unwrap().to_owned();
    let file = PathBuf::from(task["path"].as_str().unwrap());
    let route = format!("/task-graph/api/task?id={id}");
    assert_eq!(f.get(&route).await.0, 200);

    std::fs::remove_file(&file).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&file).status();
    if made.is_ok_and(|s| s.success()) {
        let (got, body) = f.get(&route).await;
        assert_eq!(
            (got, body["code"].as_str()),
            (400, Some("bad_request")),
            "{body}"
        );
        assert!(
            body["error"]
                .as_str()
                .unwrap_or_default()
                .contains("not a regular file"),
            "{body}"
        );
        std::fs::remove_file(&file).unwrap();
    } else {
        eprintln!("skipped the FIFO case: mkfifo unavailable");
    }

    // Sparse: over the 256 MiB cap without writing it.
    let big = std::fs::File::create(&file).unwrap();
    big.set_len(mindgate_taskgraph::bounded::MAX_SESSION_BYTES + 1)
        .unwrap();
    let (got, body) = f.get(&route).await;
    assert_eq!(
        (got, body["code"].as_str()),
        (413, Some("too_large")),
        "{body}"
    );
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn guard_applies_to_task_graph_routes() {
    let f = start().await;
    let r = f
        .http
        .get(f.url("/task-graph/api/tasks"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = f
        .http
        .get(f.url("/task-graph/api/status"))
        .header("Host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn events_page_through_the_trajectory_and_event_picks_one_seq() {
    let f = start().await;
    let (code, all) = f.get("/task-graph/api/events?id=dsh-main").await;
    assert_eq!(code, 200, "{all}");
    let events = all["events"].as_array().unwrap();
    assert!(events.len() > 5);
    assert_eq!(all["more"], false);
    assert_eq!(all["total"], events.len());
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "{seqs:?}");
    for e in events {
        assert!(e["type"].is_string() && e["time_ms"].is_i64(), "{e}");
    }
    // afterSeq + limit page without gaps or repeats.
    let mut got = Vec::new();
    let mut after: Option<u64> = None;
    loop {
        let q = match after {
            Some(a) => format!("/task-graph/api/events?id=dsh-main&afterSeq={a}&limit=3"),
            None => "/task-graph/api/events?id=dsh-main&limit=3".to_owned(),
        };
        let (code, page) = f.get(&q).await;
        assert_eq!(code, 200);
        got.extend(page["events"].as_array().unwrap().iter().cloned());
        if page["more"] == false {
            break;
        }
        after = page["last_seq"].as_u64();
    }
    assert_eq!(&got, events);
    // Every node's event_ids resolve through /event.
    let (_, graph) = f.get("/task-graph/api/task?id=dsh-main").await;
    let tool = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["type"] == "tool" || n["type"] == "test")
        .unwrap();
    for seq in tool["event_ids"].as_array().unwrap() {
        let (code, one) = f
            .get(&format!("/task-graph/api/event?id=dsh-main&seq={seq}"))
            .await;
        assert_eq!(code, 200, "{one}");
        assert_eq!(one["seq"], *seq);
        assert_eq!(one["event"]["seq"], *seq);
        assert!(!one["events"].as_array().unwrap().is_empty());
    }
    f.server.stop().await.unwrap();
}

/// A minimal SSE reader over a streaming response.
struct Sse {
    resp: reqwest::Response,
    buf: String,
    graph: Value,
    version: Option<u64>,
}

#[derive(Debug)]
struct SseMsg {
    event: String,
    data: Value,
    /// The client's graph after this message: the last `graph`, with every `delta` since
    /// applied (as the Tasks page does).
    graph: Value,
}

/// Applies a `delta` message to a graph the way a client does.
fn apply_delta(graph: &mut Value, d: &Value) {
    for (list, index, items, count) in [
        ("nodes", "node_index", "nodes", "node_count"),
        ("edges", "edge_index", "edges", "edge_count"),
    ] {
        let target = graph[list].as_array_mut().unwrap();
        for (i, item) in d[index]
            .as_array()
            .unwrap()
            .iter()
            .zip(d[items].as_array().unwrap())
        {
            let i = i.as_u64().unwrap() as usize;
            assert!(i <= target.len(), "{list} index {i} past the end");
            let mut item = item.clone();
            // A node's event ids as a splice: keep the first `event_ids_keep`, append these.
            if let Some(keep) = item.as_object_mut().unwrap().remove("event_ids_keep") {
                let keep = keep.as_u64().unwrap() as usize;
                let had = target[i]["event_ids"].as_array().unwrap();
                assert!(keep <= had.len(), "kept {keep} of {} event ids", had.len());
                let mut ids = had[..keep].to_vec();
                ids.extend(item["event_ids"].as_array().unwrap().iter().cloned());
                item["event_ids"] = Value::Array(ids);
            }
            if i == target.len() {
                target.push(item);
            } else {
                target[i] = item;
            }
        }
        assert_eq!(
            target.len() as u64,
            d[count].as_u64().unwrap(),
            "{list} count"
        );
    }
    for (k, v) in d["fields"].as_object().unwrap() {
        if k == "summary" {
            // Only the summary's changed keys travel.
            for (sk, sv) in v.as_object().unwrap() {
                graph["summary"][sk] = sv.clone();
            }
        } else {
            graph[k] = v.clone();
        }
    }
    if let Some(cp) = d.get("critical_path") {
        // A splice: keep the first `keep[list]` ids of each list, append the rest.
        for list in ["node_ids", "hot_node_ids", "edge_ids"] {
            let keep = cp["keep"][list].as_u64().unwrap() as usize;
            let target = graph["critical_path"][list].as_array_mut().unwrap();
            assert!(keep <= target.len(), "critical_path.{list} keeps {keep}");
            target.truncate(keep);
            target.extend(cp[list].as_array().unwrap().iter().cloned());
        }
        for k in ["duration_ms", "total_ms"] {
            graph["critical_path"][k] = cp[k].clone();
        }
    }
}

impl Sse {
    async fn open(f: &Fixture, id: &str) -> Sse {
        Self::open_query(f, &format!("id={id}")).await
    }

    async fn open_query(f: &Fixture, query: &str) -> Sse {
        let resp = f
            .http
            .get(f.url(&format!("/task-graph/api/live?{query}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Sse {
            resp,
            buf: String::new(),
            graph: Value::Null,
            version: None,
        }
    }

    async fn next(&mut self) -> SseMsg {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut event = String::from("message");
                let mut data = String::new();
                let mut id = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    } else if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse::<u64>().ok();
                    }
                }
                if data.is_empty() {
                    continue; // keep-alive comment
                }
                let data: Value = serde_json::from_str(&data).unwrap();
                match event.as_str() {
                    "graph" => {
                        self.graph = data.clone();
                        self.version = id;
                    }
                    "delta" => {
                        assert_eq!(
                            Some(data["base"].as_u64().unwrap()),
                            self.version,
                            "deltas in order"
                        );
                        assert_eq!(id, data["version"].as_u64());
                        apply_delta(&mut self.graph, &data);
                        self.version = id;
                    }
                    _ => {}
                }
                return SseMsg {
                    event,
                    data,
                    graph: self.graph.clone(),
                };
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.resp.chunk())
                .await
                .expect("an SSE message within 10 s")
                .unwrap()
                .expect("stream open");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Reads messages until one satisfies `want`.
    async fn until(&mut self, mut want: impl FnMut(&SseMsg) -> bool) -> SseMsg {
        loop {
            let m = self.next().await;
            if want(&m) {
                return m;
            }
        }
    }
}

fn node<'a>(graph: &'a Value, id: &str) -> Option<&'a Value> {
    graph["nodes"].as_array()?.iter().find(|n| n["id"] == id)
}

fn append(path: &Path, lines: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(lines.as_bytes()).unwrap();
    f.flush().unwrap();
}

#[tokio::test]
async fn live_pushes_graph_updates_when_a_dsh_session_grows() {
    let f = start().await;
    let mut sse = Sse::open(&f, "dsh-live").await;
    let first = sse.next().await;
    assert_eq!(first.event, "graph");
    assert_eq!(first.data["session_id"], "dsh-live");
    assert_eq!(first.data["meta"]["live"], true);
    assert_eq!(first.data["status"], "RUNNING");
    assert_eq!(
        node(&first.data, "tool-l_tail").unwrap()["status"],
        "RUNNING"
    );
    let (_, status) = f.get("/task-graph/api/status").await;
    assert_eq!(status["watching"], 1);

    // A partial line is not applied until it is complete.
    append(
        &f.dsh_live_file(),
        r#"{"type":"tool/result","seq":7,"time":1787600009000,"data":{"message":{"source":{"callId":"l_tail"},"content":[{"type":"tool-result","toolCallId":"l_tail","content":"ok","isE"#,
    );
    append(
        &f.dsh_live_file(),
        concat!(
            r#"rror":false}]}}}"#,
            "\n",
            r#"{"type":"step/end","seq":8,"time":1787600009100,"data":{"turn":1,"step":1}}"#,
            "\n"
        ),
    );
    let upd = sse
        .until(|m| node(&m.graph, "tool-l_tail").is_some_and(|n| n["status"] == "SUCCESS"))
        .await;
    // Growth arrives as a delta: just the nodes that changed, not the whole graph.
    assert_eq!(upd.event, "delta");
    let changed: Vec<&str> = upd.data["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"tool-l_tail"), "{changed:?}");
    // Only the fields that changed travel: the ids and the title stay as they were.
    let fields = upd.data["fields"].as_object().unwrap();
    for same in ["task_id", "session_id", "workspace", "title"] {
        assert!(!fields.contains_key(same), "{same} re-sent: {fields:?}");
    }
    assert_eq!(node(&upd.graph, "step-1-1").unwrap()["status"], "SUCCESS");
    let evs = sse.until(|m| m.event == "events").await;
    let seqs: Vec<u64> = evs.data["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [7, 8]);
    assert_eq!(evs.data["reset"], false);

    append(
        &f.dsh_live_file(),
        concat!(
            r#"{"type":"turn/end","seq":9,"time":1787600010000,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
            "\n"
        ),
    );
    let done = sse.until(|m| m.graph["status"] == "SUCCESS").await;
    assert_eq!(node(&done.graph, "phase-1").unwrap()["status"], "SUCCESS");
    // A node sent before travels with only its new event ids (a splice of what the client
    // holds), not its whole list again.
    let spliced: Vec<&Value> = done.data["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.get("event_ids_keep").is_some())
        .collect();
    assert!(!spliced.is_empty(), "{}", done.data["nodes"]);
    for n in &spliced {
        let whole = node(&done.graph, n["id"].as_str().unwrap()).unwrap();
        let keep = n["event_ids_keep"].as_u64().unwrap() as usize;
        assert_eq!(
            whole["event_ids"].as_array().unwrap().len(),
            keep + n["event_ids"].as_array().unwrap().len()
        );
    }

    // The incrementally kept graph equals a fresh build of the grown file, and /task and
    // /events serve the grown session.
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    let t = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "dsh-live")
        .unwrap()
        .clone();
    let (_, graph) = f.get("/task-graph/api/task?id=dsh-live").await;
    assert_eq!(graph, done.graph);
    assert_eq!(graph, f.expected_graph(&t));
    let (_, evs) = f.get("/task-graph/api/events?id=dsh-live&afterSeq=6").await;
    assert_eq!(evs["events"].as_array().unwrap().len(), 3);
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn live_follows_codex_pi_and_claude_sessions_too() {
    let f = start().await;
    for (id, file) in [
        (
            "cx-live",
            f.root
                .join("codex/2026/08/24/rollout-2026-08-24T19-40-00-cx-live.jsonl"),
        ),
        (
            "pi-live",
            f.root
                .join("pi/--work-napkin--/2026-08-24T19-40-00-000Z_pi-live.jsonl"),
        ),
        ("c-side", f.root.join("claude/-work-napkin/c-side.jsonl")),
    ] {
        let mut sse = Sse::open(&f, id).await;
        let first = sse.next().await;
        assert_eq!(first.event, "graph", "{id}");
        let before = first.data["nodes"].as_array().unwrap().len();
        let (tool, text) = if id.starts_with("cx") {
            append(
                &file,
                concat!(
                    r#"{"timestamp":"2026-08-24T19:35:00.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_m","output":"migrated 3 tables"}}"#,
                    "\n"
                ),
            );
            ("tool-call_m", "migrated 3 tables")
        } else if id.starts_with("c-") {
            // A new prompt and a call, shown open; then its result.
            append(
                &file,
                concat!(
                    r#"{"parentUuid":"u206","isSidechain":false,"userType":"external","cwd":"/work/napkin","sessionId":"c-side","version":"2.0.1","gitBranch":"main","type":"user","uuid":"u207","timestamp":"2026-08-24T19:34:00.000Z","message":{"role":"user","content":"Count the lines"}}"#,
                    "\n",
                    r#"{"parentUuid":"u207","isSidechain":false,"userType":"external","cwd":"/work/napkin","sessionId":"c-side","version":"2.0.1","gitBranch":"main","type":"assistant","uuid":"u208","timestamp":"2026-08-24T19:34:02.000Z","requestId":"r4","message":{"id":"m4","role":"assistant","model":"claude-opus-4-1","content":[{"type":"tool_use","id":"k_wc","name":"Bash","input":{"command":"wc -l src/*"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"service_tier":"standard"}}}"#,
                    "\n"
                ),
            );
            sse.until(|m| node(&m.graph, "tool-k_wc").is_some_and(|n| n["status"] == "RUNNING"))
                .await;
            append(
                &file,
                concat!(
                    r#"{"parentUuid":"u208","isSidechain":false,"userType":"external","cwd":"/work/napkin","sessionId":"c-side","version":"2.0.1","gitBranch":"main","type":"user","uuid":"u209","timestamp":"2026-08-24T19:34:05.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"k_wc","content":"120 total"}]}}"#,
                    "\n"
                ),
            );
            ("tool-k_wc", "120 total")
        } else {
            // The fixture ends on a torn line: finish it off, then add the tool result.
            append(
                &file,
                concat!(
                    "\n",
                    r#"{"type":"message","id":"zz1","parentId":"a2","timestamp":"2026-08-24T19:35:00.000Z","message":{"role":"toolResult","toolCallId":"pl_deploy","toolName":"bash","content":[{"type":"text","text":"deployed to staging"}],"isError":false}}"#,
                    "\n"
                ),
            );
            ("tool-pl_deploy", "deployed to staging")
        };
        let upd = sse
            .until(|m| node(&m.graph, tool).is_some_and(|n| n["status"] == "SUCCESS"))
            .await;
        assert!(
            node(&upd.graph, tool).unwrap()["meta"]["output"]
                .as_str()
                .unwrap()
                .contains(text),
            "{id}"
        );
        assert!(
            upd.graph["nodes"].as_array().unwrap().len() >= before,
            "{id}"
        );
        let (_, tasks) = f.get("/task-graph/api/tasks").await;
        let t = tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()
            .clone();
        let (_, graph) = f.get(&format!("/task-graph/api/task?id={id}")).await;
        assert_eq!(graph, upd.graph, "{id}");
        assert_eq!(graph, f.expected_graph(&t), "{id}");
    }

    // Replacing a streamed file (here: back to the fixture) falls back to a whole-file read
    // and tells clients to start over.
    let rel = "pi/--work-napkin--/2026-08-24T19-40-00-000Z_pi-live.jsonl";
    let file = f.root.join(rel);
    let mut sse = Sse::open(&f, "pi-live").await;
    assert_eq!(sse.next().await.event, "graph");
    let tmp = file.with_extension("tmp");
    std::fs::copy(fixtures().join(rel), &tmp).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let reset = sse.until(|m| m.event == "events").await;
    assert_eq!(reset.data["reset"], true);
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    let t = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "pi-live")
        .unwrap()
        .clone();
    let (_, graph) = f.get("/task-graph/api/task?id=pi-live").await;
    assert_eq!(graph, f.expected_graph(&t));
    assert_eq!(node(&graph, "tool-pl_deploy").unwrap()["status"], "RUNNING");
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn live_feeds_share_one_watch_and_stop_with_the_server() {
    let f = start().await;
    let mut a = Sse::open(&f, "dsh-live").await;
    let mut b = Sse::open(&f, "dsh-live").await;
    assert_eq!(a.next().await.event, "graph");
    assert_eq!(b.next().await.event, "graph");
    let (_, status) = f.get("/task-graph/api/status").await;
    assert_eq!(status["watching"], 1);
    drop(a);
    drop(b);
    // Shutdown ends open SSE streams instead of waiting on them forever.
    let mut c = Sse::open(&f, "dsh-live").await;
    assert_eq!(c.next().await.event, "graph");
    tokio::time::timeout(Duration::from_secs(10), f.server.stop())
        .await
        .expect("server stops with an SSE client attached")
        .unwrap();
}

#[tokio::test]
async fn overview_turn_and_timeline_are_the_library_views() {
    let f = start().await;
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    let prices = mindgate_pricing::PriceTable::builtin();
    for t in tasks["tasks"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        let loc = SessionLocation {
            agent: serde_json::from_value(t["agent"].clone()).unwrap(),
            path: PathBuf::from(t["path"].as_str().unwrap()),
            workspace: t["workspace"].as_str().map(str::to_owned),
        };
        let (_, tree) = load_tree(&loc, &f.config).unwrap();
        let want = mindgate_taskgraph::overview(&tree.graph, &tree.children, &prices);
        let (code, got) = f
            .get(&format!("/task-graph/api/task/overview?id={id}"))
            .await;
        assert_eq!(code, 200, "{id}: {got}");
        assert_eq!(got, serde_json::to_value(&want).unwrap(), "{id}: overview");
        assert_eq!(
            got["headline"],
            serde_json::to_value(tree.graph.summary.headline).unwrap()
        );
        for turn in &want.turns {
            let (code, d) = f
                .get(&format!(
                    "/task-graph/api/task/turn?id={id}&turn={}",
                    turn.id
                ))
                .await;
            assert_eq!(code, 200, "{id} {}: {d}", turn.id);
            let lib = mindgate_taskgraph::turn_detail(&tree.graph, &turn.id).unwrap();
            assert_eq!(d, serde_json::to_value(&lib).unwrap(), "{id} {}", turn.id);
            // The turn's number names it too.
            let (code, by_number) = f
                .get(&format!(
                    "/task-graph/api/task/turn?id={id}&turn={}",
                    turn.turn
                ))
                .await;
            assert_eq!(code, 200);
            assert_eq!(by_number["turn_id"], turn.id.as_str());
        }
        let (code, tl) = f
            .get(&format!("/task-graph/api/task/timeline?id={id}"))
            .await;
        assert_eq!(code, 200);
        assert_eq!(
            tl["bars"],
            serde_json::to_value(mindgate_taskgraph::timeline(&tree.graph)).unwrap()
        );
    }
    let (code, body) = f.get("/task-graph/api/task/turn?id=dsh-main").await;
    assert_eq!(
        (code, body["error"].as_str()),
        (400, Some("missing query parameter `turn`"))
    );
    let (code, body) = f
        .get("/task-graph/api/task/turn?id=dsh-main&turn=phase-99")
        .await;
    assert_eq!(code, 404, "{body}");
    let (code, _) = f.get("/task-graph/api/task/overview?id=nope").await;
    assert_eq!(code, 404);
    let (code, _) = f
        .get("/task-graph/api/live?id=dsh-live&view=pictures")
        .await;
    assert_eq!(code, 400);
    f.server.stop().await.unwrap();
}

#[tokio::test]
async fn live_overview_sends_only_the_turns_that_changed() {
    let f = start().await;
    let mut sse = Sse::open_query(&f, "id=dsh-live&view=overview").await;
    let first = sse.next().await;
    assert_eq!(first.event, "overview");
    assert_eq!(first.data["session_id"], "dsh-live");
    let turns = first.data["turns"].as_array().unwrap().len();
    assert!(turns >= 1);
    append(
        &f.dsh_live_file(),
        concat!(
            r#"{"type":"tool/result","seq":7,"time":1787600009000,"data":{"message":{"source":{"callId":"l_tail"},"content":[{"type":"tool-result","toolCallId":"l_tail","content":"ok","isError":false}]}}}"#,
            "\n",
            r#"{"type":"step/end","seq":8,"time":1787600009100,"data":{"turn":1,"step":1}}"#,
            "\n",
            r#"{"type":"turn/end","seq":9,"time":1787600010000,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
            "\n"
        ),
    );
    let upd = sse
        .until(|m| m.event == "overview_delta" && m.data["status"] == "SUCCESS")
        .await;
    assert_eq!(upd.data["turn_count"], turns);
    let changed = upd.data["turns"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "only the grown turn travels: {changed:?}");
    assert_eq!(changed[0]["index"], turns - 1);
    assert_eq!(changed[0]["turn"]["status"], "SUCCESS");
    // The path's segments travel as a splice of the ones the client has: applied, they are
    // the overview's segments now.
    let keep = upd.data["critical_path"]["keep"].as_u64().unwrap() as usize;
    let sent = upd.data["critical_path"]["segments"].as_array().unwrap();
    let mut spliced = first.data["critical_path"]["segments"].as_array().unwrap()[..keep].to_vec();
    spliced.extend(sent.iter().cloned());
    let (_, now) = f.get("/task-graph/api/task/overview?id=dsh-live").await;
    assert_eq!(Value::Array(spliced), now["critical_path"]["segments"]);
    f.server.stop().await.unwrap();
}

/// Issue 26: opening the task page (its overview, then its live feed) reads the session
/// file once: the live feed follows the session the overview's cache read, and the lines
/// appended after it are tailed, not re-read whole.
#[tokio::test]
async fn the_page_reads_a_live_session_once() {
    let f = start().await;
    let reads = |s: &Value| s["session_reads"].as_u64().unwrap();
    let (_, before) = f.get("/task-graph/api/status").await;
    let (code, overview) = f.get("/task-graph/api/task/overview?id=dsh-live").await;
    assert_eq!(code, 200, "{overview}");
    let mut sse = Sse::open_query(&f, "id=dsh-live&view=overview").await;
    let first = sse.next().await;
    assert_eq!(first.event, "overview");
    assert_eq!(first.data["turns"], overview["turns"]);
    let (_, opened) = f.get("/task-graph/api/status").await;
    assert_eq!(reads(&opened) - reads(&before), 1, "{opened}");
    append(
        &f.dsh_live_file(),
        concat!(
            r#"{"type":"tool/result","seq":7,"time":1787600009000,"data":{"message":{"source":{"callId":"l_tail"},"content":[{"type":"tool-result","toolCallId":"l_tail","content":"ok","isError":false}]}}}"#,
            "\n"
        ),
    );
    let upd = sse.until(|m| m.event == "overview_delta").await;
    assert_eq!(
        upd.data["turn_count"],
        overview["turns"].as_array().unwrap().len()
    );
    // The grown session as a fresh read builds it: the tail applied the new line once.
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    let t = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "dsh-live")
        .unwrap()
        .clone();
    let (_, graph) = f.get("/task-graph/api/task?id=dsh-live").await;
    assert_eq!(graph, f.expected_graph(&t));
    let (_, after) = f.get("/task-graph/api/status").await;
    // The feed tailed the new line; the one more whole read is the task list's rescan of the
    // grown file (`session_reads` counts the catalog's reads too).
    assert_eq!(reads(&after) - reads(&opened), 1, "{after}");
    f.server.stop().await.unwrap();
}

/// Issue 26 item 6: a task opened first thing (the server has not listed its sessions yet)
/// reads its session once: the task list's read of it is the one the overview and the live
/// feed use (the feed goes on from the graph that read built), the feed's first overview is
/// the one the page fetched, and lines appended later are tailed into the graph a fresh read
/// builds.
#[tokio::test]
async fn a_task_opened_first_thing_reads_its_session_once() {
    let f = start().await;
    let (code, overview) = f.get("/task-graph/api/task/overview?id=dsh-live").await;
    assert_eq!(code, 200, "{overview}");
    let mut sse = Sse::open_query(&f, "id=dsh-live&view=overview").await;
    let first = sse.next().await;
    assert_eq!(first.event, "overview");
    assert_eq!(first.data, overview);
    let (_, status) = f.get("/task-graph/api/status").await;
    // Every session listed was read once, this one included.
    assert_eq!(status["session_reads"], status["sessions"], "{status}");
    append(
        &f.dsh_live_file(),
        concat!(
            r#"{"type":"tool/result","seq":7,"time":1787600009000,"data":{"message":{"source":{"callId":"l_tail"},"content":[{"type":"tool-result","toolCallId":"l_tail","content":"ok","isError":false}]}}}"#,
            "\n"
        ),
    );
    let upd = sse.until(|m| m.event == "overview_delta").await;
    assert_eq!(
        upd.data["turn_count"],
        overview["turns"].as_array().unwrap().len()
    );
    let (_, tasks) = f.get("/task-graph/api/tasks").await;
    let t = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "dsh-live")
        .unwrap()
        .clone();
    let (_, graph) = f.get("/task-graph/api/task?id=dsh-live").await;
    assert_eq!(graph, f.expected_graph(&t));
    let (_, after) = f.get("/task-graph/api/status").await;
    assert_eq!(
        after["session_reads"].as_u64().unwrap() - status["session_reads"].as_u64().unwrap(),
        1,
        "the grown file listed again, and only that: {after}"
    );
    f.server.stop().await.unwrap();
}

/// One more answer of the subagent `a1` of `c-main` (its file only; the parent's is not
/// touched), with `output` output tokens.
fn subagent_answers(f: &Fixture, uuid: &str, output: u64) {
    let line = format!(
        r#"{{"parentUuid":"u104","isSidechain":true,"cwd":"/work/napkin","sessionId":"c-main","type":"assistant","uuid":"{uuid}","timestamp":"2026-08-24T19:34:30.000Z","requestId":"req_{uuid}","message":{{"id":"msg_{uuid}","type":"message","role":"assistant","model":"claude-opus-4-1","content":[{{"type":"text","text":"checked"}}],"stop_reason":"end_turn","usage":{{"input_tokens":1,"output_tokens":{output}}}}},"agentId":"a1"}}"#
    );
    let file = f
        .root
        .join("claude/-work-napkin/c-main/subagents/agent-a1.jsonl");
    append(&file, &(line + "\n"));
}

/// Issue 26: a subagent counts in its parent's totals while it runs — the overview read
/// from the cache and the live overview both change when only the child's file grows.
#[tokio::test]
async fn a_growing_subagent_changes_its_parents_overview() {
    let f = start().await;
    let output = |o: &Value| o["subagents"]["tokens"]["output"].as_u64().unwrap();
    let (code, before) = f.get("/task-graph/api/task/overview?id=c-main").await;
    assert_eq!(code, 200, "{before}");
    assert_eq!(before["subagents"]["sessions"], 1, "{before}");

    // Not followed: the cached read is stale once the child's file changed.
    subagent_answers(&f, "u105", 40);
    let (_, read) = f.get("/task-graph/api/task/overview?id=c-main").await;
    assert_eq!(output(&read), output(&before) + 40);
    let total = |o: &Value| o["totals"]["tokens"]["output"].as_u64().unwrap();
    assert_eq!(
        total(&read) - total(&before),
        40,
        "counted once in the totals"
    );

    // Followed: the live overview sees the child grow (its folder is not watched: checked
    // every second), and the overview fetched meanwhile is the live one.
    let mut sse = Sse::open_query(&f, "id=c-main&view=overview").await;
    let first = sse.next().await;
    assert_eq!(first.event, "overview");
    assert_eq!(output(&first.data), output(&read));
    subagent_answers(&f, "u106", 7);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let upd = tokio::time::timeout_at(
        deadline,
        // A whole `overview` (the parent is followed afresh: a new generation) or a delta.
        sse.until(|m| m.event.starts_with("overview") && output(&m.data) == output(&read) + 7),
    )
    .await
    .expect("an overview with the child's new tokens within 30 s");
    let (_, now) = f.get("/task-graph/api/task/overview?id=c-main").await;
    assert_eq!(now["subagents"], upd.data["subagents"]);
    assert_eq!(now["totals"], upd.data["totals"]);
    f.server.stop().await.unwrap();
}
