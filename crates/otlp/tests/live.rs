//! The live rules end to end: spans → events → the store → the run graph every view reads.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_otlp::{Tracker, TrackerConfig, run_id_of};
use mindgate_store::{RunStore, Writer, WriterConfig};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use serde_json::{Value, json};

const TRACE: [u8; 16] = [0xab; 16];

fn kv(key: &str, value: Value) -> KeyValue {
    let v = match value {
        Value::String(s) => any_value::Value::StringValue(s),
        Value::Number(n) if n.is_i64() => any_value::Value::IntValue(n.as_i64().unwrap()),
        Value::Number(n) => any_value::Value::DoubleValue(n.as_f64().unwrap()),
        Value::Bool(b) => any_value::Value::BoolValue(b),
        other => any_value::Value::StringValue(other.to_string()),
    };
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(v) }),
        ..KeyValue::default()
    }
}

fn span(id: u8, parent: Option<u8>, name: &str, start_ms: u64, end_ms: u64, attrs: Value) -> Span {
    Span {
        trace_id: TRACE.to_vec(),
        span_id: vec![id; 8],
        parent_span_id: parent.map(|p| vec![p; 8]).unwrap_or_default(),
        name: name.to_owned(),
        start_time_unix_nano: start_ms * 1_000_000,
        end_time_unix_nano: end_ms * 1_000_000,
        attributes: attrs
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| kv(k, v.clone()))
            .collect(),
        ..Span::default()
    }
}

fn failed(mut s: Span, message: &str) -> Span {
    s.status = Some(Status {
        message: message.to_owned(),
        code: 2,
    });
    s
}

fn request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv("service.name", json!("trip-agent"))],
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: None,
                spans,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

fn agent(id: u8, parent: Option<u8>) -> Span {
    span(
        id,
        parent,
        "invoke_agent planner",
        1_000,
        9_000,
        json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}),
    )
}

fn chat(id: u8, parent: u8, start: u64) -> Span {
    span(
        id,
        Some(parent),
        "chat gpt-4o",
        start,
        start + 500,
        json!({
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5}),
    )
}

fn tool(id: u8, parent: u8) -> Span {
    span(
        id,
        Some(parent),
        "execute_tool get_weather",
        3_000,
        3_100,
        json!({
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.arguments": "{\"city\":\"Paris\"}"}),
    )
}

struct Fixture {
    _dir: tempfile::TempDir,
    writer: Writer,
    store: RunStore,
    tracker: Tracker,
    now: i64,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let (writer, _) = Writer::open(&path, WriterConfig::default(), None).unwrap();
        let store = RunStore::open(&path).unwrap();
        Fixture {
            _dir: dir,
            writer,
            store,
            tracker: Tracker::new(TrackerConfig {
                quiet_ms: 1_000,
                ..TrackerConfig::default()
            }),
            now: 100_000,
        }
    }

    /// Sends one request; returns how many events it made.
    fn send(&mut self, spans: Vec<Span>) -> usize {
        let store = &self.store;
        let mut last = |id: &str| {
            let events = store.all_events(id).ok().flatten()?;
            Some(mindgate_otlp::StoredTrace::from_events(
                events
                    .iter()
                    .map(|e| (e.seq, e.type_name.as_str(), e.payload_value())),
            ))
        };
        let batch = self.tracker.ingest(&request(spans), self.now, &mut last);
        assert_eq!(batch.rejected_spans, 0, "{:?}", batch.reasons);
        let n = batch.events.len();
        for e in batch.events {
            self.writer.append(e).unwrap();
        }
        self.writer.flush().unwrap();
        n
    }

    fn graph(&self) -> Value {
        serde_json::to_value(self.store.graph(&run_id_of(&TRACE)).unwrap().unwrap()).unwrap()
    }

    fn run(&self) -> Value {
        serde_json::to_value(self.store.get_run(&run_id_of(&TRACE)).unwrap().unwrap()).unwrap()
    }
}

fn node<'a>(graph: &'a Value, id: &str) -> &'a Value {
    graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nodeId"] == id)
        .unwrap_or_else(|| panic!("no node {id} in {graph}"))
}

fn node_ids(graph: &Value) -> Vec<String> {
    graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["nodeId"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_whole_trace_in_one_request_gets_stable_nodes() {
    let mut f = Fixture::new();
    // Children first, as the SDK's batch processor sends them.
    f.send(vec![
        chat(2, 1, 1_100),
        tool(3, 1),
        chat(4, 1, 4_000),
        agent(1, None),
    ]);
    let g = f.graph();
    assert_eq!(
        node_ids(&g),
        ["agent:planner", "llm:gpt-4o", "tool:get_weather"]
    );
    let llm = node(&g, "llm:gpt-4o");
    assert_eq!(llm["parentId"], "agent:planner");
    assert_eq!(llm["instances"].as_array().unwrap().len(), 2);
    assert_eq!(node(&g, "tool:get_weather")["parentId"], "agent:planner");
    let run = f.run();
    assert_eq!(run["status"], "ok");
    assert_eq!(run["source"], "otlp");
    assert_eq!(run["app"], "trip-agent");
    assert_eq!(run["name"], "planner");
    assert_eq!(run["usage"]["inputTokens"], 20);
}

#[test]
fn a_late_parent_fills_its_placeholder_and_ends_the_run() {
    let mut f = Fixture::new();
    f.send(vec![chat(2, 1, 1_100)]);
    let g = f.graph();
    let placeholder = format!("custom:span-{}", "01".repeat(8));
    assert_eq!(node(&g, &placeholder)["status"], "pending");
    assert_eq!(node(&g, "llm:gpt-4o")["parentId"], placeholder.as_str());
    assert_eq!(f.run()["status"], "running");
    f.send(vec![tool(3, 1), agent(1, None)]);
    let g = f.graph();
    // The placeholder keeps its place (right after the child that named it): one node.
    assert_eq!(
        node_ids(&g),
        ["llm:gpt-4o", placeholder.as_str(), "tool:get_weather"]
    );
    let parent = node(&g, &placeholder);
    assert_eq!(
        (parent["kind"].as_str(), parent["name"].as_str()),
        (Some("agent"), Some("planner"))
    );
    assert_eq!(parent["status"], "ok");
    assert_eq!(
        node(&g, "tool:get_weather")["parentId"],
        placeholder.as_str()
    );
    assert_eq!(f.run()["status"], "ok");
}

#[test]
fn a_retried_request_adds_nothing() {
    let mut f = Fixture::new();
    let spans = || vec![chat(2, 1, 1_100), agent(1, None)];
    let first = f.send(spans());
    assert!(first > 0);
    assert_eq!(f.send(spans()), 0);
    assert_eq!(f.run()["counts"]["events"], first);
}

#[test]
fn a_pending_span_twin_shows_work_in_progress() {
    let mut f = Fixture::new();
    // logfire: a zero-length twin whose parent is the real span, the real parent named
    // in `logfire.pending_parent_id`.
    let mut pending = span(
        9,
        Some(2),
        "chat gpt-4o",
        1_100,
        1_100,
        json!({
        "logfire.span_type": "pending_span", "logfire.pending_parent_id": "0101010101010101",
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}),
    );
    pending.span_id = vec![9; 8];
    f.send(vec![pending]);
    let g = f.graph();
    let llm = node(&g, "llm:gpt-4o");
    assert_eq!(llm["status"], "running");
    assert_eq!(llm["instances"][0]["instanceId"], "02".repeat(8));
    f.send(vec![chat(2, 1, 1_100)]);
    let g = f.graph();
    let llm = node(&g, "llm:gpt-4o");
    assert_eq!(llm["status"], "ok");
    assert_eq!(llm["instances"].as_array().unwrap().len(), 1);
}

#[test]
fn an_error_span_fails_its_node_and_a_quiet_run_is_finished() {
    let mut f = Fixture::new();
    let mut broken = failed(tool(3, 1), "city not found");
    broken
        .attributes
        .push(kv("error.type", json!("LookupError")));
    f.send(vec![broken]);
    let g = f.graph();
    assert_eq!(node(&g, "tool:get_weather")["status"], "error");
    let detail = f
        .store
        .node_detail(&run_id_of(&TRACE), "tool:get_weather")
        .unwrap()
        .unwrap();
    let detail = serde_json::to_string(&detail).unwrap();
    assert!(
        detail.contains("LookupError") && detail.contains("city not found"),
        "{detail}"
    );
    assert_eq!(f.run()["status"], "running");
    assert!(f.tracker.expire(f.now + 500).is_empty(), "not quiet yet");
    let events = f.tracker.expire(f.now + 1_000);
    assert_eq!(events.len(), 1);
    for e in events {
        f.writer.append(e).unwrap();
    }
    f.writer.flush().unwrap();
    assert_eq!(f.run()["status"], "error");
    assert!(f.tracker.expire(f.now + 5_000).is_empty(), "finished once");
}

#[test]
fn a_new_tracker_continues_a_stored_run() {
    let mut f = Fixture::new();
    let first = f.send(vec![chat(2, 1, 1_100)]);
    // A restarted server: the trace's run continues after its stored seq.
    f.tracker = Tracker::new(TrackerConfig::default());
    // A retry of a stored span adds nothing; the new root continues the run.
    assert_eq!(f.send(vec![chat(2, 1, 1_100)]), 0);
    f.send(vec![agent(1, None)]);
    let run = f.run();
    assert_eq!(run["status"], "ok");
    assert!(run["counts"]["events"].as_u64().unwrap() > first as u64);
}

#[test]
fn a_span_naming_itself_as_parent_finishes_its_own_node() {
    let mut f = Fixture::new();
    f.send(vec![
        span(5, Some(5), "self", 1_000, 2_000, json!({})),
        agent(1, None),
    ]);
    let graph = f.graph();
    let own = node(&graph, "custom:self");
    assert_eq!(own["status"], "ok", "{own}");
    assert!(own["parentId"].is_null(), "{own}");
    assert_eq!(f.run()["status"], "ok");
}

#[test]
fn a_cycle_of_parents_is_stored_whole() {
    let mut f = Fixture::new();
    // 1 -> 2 -> 3 -> 1, all in one request: each span starts and ends once.
    f.send(vec![
        span(1, Some(2), "a", 1_000, 2_000, json!({})),
        span(2, Some(3), "b", 1_000, 2_000, json!({})),
        span(3, Some(1), "c", 1_000, 2_000, json!({})),
    ]);
    // Broken at span 1 (the first reached): it starts first, under a placeholder for
    // its parent 2, which span 2 fills in when it starts last.
    let graph = f.graph();
    let mut ids = node_ids(&graph);
    ids.sort();
    assert_eq!(
        ids,
        ["custom:a", "custom:c", "custom:span-0202020202020202"]
    );
    for n in graph["nodes"].as_array().unwrap() {
        assert_eq!(n["status"], "ok", "{n}");
    }
}

#[test]
fn the_store_names_the_seqs_a_writer_did_not_get() {
    let mut f = Fixture::new();
    f.send(vec![agent(1, None)]);
    let run = run_id_of(&TRACE);
    let last = f.store.get_run(&run).unwrap().unwrap().last_seq.unwrap();
    assert!(f.store.missing_seqs(&run, 1, last).unwrap().is_empty());
    assert_eq!(
        f.store.missing_seqs(&run, last, last + 2).unwrap(),
        vec![last + 1, last + 2]
    );
    assert_eq!(f.store.missing_seqs("otlp-none", 1, 2).unwrap(), vec![1, 2]);
}

#[test]
fn a_conversation_id_on_a_child_span_makes_the_run_join_its_thread() {
    let mut f = Fixture::new();
    let mut chat_span = chat(2, 1, 1_100);
    chat_span
        .attributes
        .push(kv("gen_ai.conversation.id", json!("conv-42")));
    chat_span.attributes.push(kv("user.id", json!("ada")));
    f.send(vec![chat_span, agent(1, None)]);
    let run = f.run();
    assert_eq!(run["meta"]["threadId"], "conv-42");
    assert_eq!(run["threadId"], "conv-42");
    assert_eq!(run["userId"], "ada");
    let thread = f.store.get_thread("conv-42").unwrap().unwrap();
    assert_eq!(thread.runs.len(), 1);
}

#[test]
fn a_session_id_names_the_thread_when_no_conversation_id_does() {
    let mut f = Fixture::new();
    let mut root = agent(1, None);
    root.attributes.push(kv("session.id", json!("s-7")));
    f.send(vec![root]);
    assert_eq!(f.run()["threadId"], "s-7");
}
