//! Span shapes of real senders, as fixtures written for these tests: the Vercel AI SDK
//! (`ai.*` + `gen_ai.*` attributes, one export) and pydantic-ai (a logfire pending-span twin,
//! then the work over two exports), through decoding, the live rules and the store.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_otlp::{Tracker, TrackerConfig, decode_json};
use mindgate_store::{RunStore, Writer, WriterConfig};
use serde_json::Value;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// Sends each export in turn; returns the run's summary and graph as JSON after each one.
fn ingest(exports: &[&str], run: &str) -> Vec<(Value, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let (writer, _) = Writer::open(&path, WriterConfig::default(), None).unwrap();
    let store = RunStore::open(&path).unwrap();
    let mut tracker = Tracker::new(TrackerConfig::default());
    let mut after = Vec::new();
    for export in exports {
        let decoded = decode_json(export.as_bytes()).unwrap();
        assert_eq!(decoded.rejected_spans, 0, "{:?}", decoded.reasons);
        let batch = tracker.ingest(&decoded.request, 0, &mut |_| None);
        assert_eq!(batch.rejected_spans, 0, "{:?}", batch.reasons);
        for e in batch.events {
            writer.append(e).unwrap();
        }
        writer.flush().unwrap();
        after.push((
            serde_json::to_value(store.get_run(run).unwrap().unwrap()).unwrap(),
            serde_json::to_value(store.graph(run).unwrap().unwrap()).unwrap(),
        ));
    }
    after
}

fn node<'a>(graph: &'a Value, id: &str) -> &'a Value {
    graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nodeId"] == id)
        .unwrap_or_else(|| panic!("no node {id} in {graph}"))
}

#[test]
fn vercel_ai_sdk_generate_text_with_a_tool_call() {
    let text = fixture("vercel_ai.json");
    let states = ingest(&[&text], "otlp-4bf92f3577b34da6a3ce929d0e0e4736");
    let (run, graph) = &states[0];
    let ids: Vec<&str> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["nodeId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["chain:weather-agent", "llm:gpt-4o", "tool:weather"]);
    let llm = node(graph, "llm:gpt-4o");
    assert_eq!(llm["parentId"], "chain:weather-agent");
    assert_eq!(llm["instances"].as_array().unwrap().len(), 2);
    assert_eq!(llm["instances"][0]["model"], "gpt-4o-2024-08-06");
    assert_eq!(
        node(graph, "tool:weather")["parentId"],
        "chain:weather-agent"
    );
    // The root's ai.usage.* (the sum of its calls) is inclusive: counted once.
    assert_eq!(run["usage"]["inputTokens"], 62 + 98);
    assert_eq!(run["usage"]["outputTokens"], 15 + 12);
    assert_eq!(
        (run["status"].as_str(), run["app"].as_str()),
        (Some("ok"), Some("next-app"))
    );
}

#[test]
fn pydantic_ai_run_with_a_pending_twin_over_two_exports() {
    let text = fixture("pydantic_ai.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let states = ingest(&lines, "otlp-0af7651916cd43dd8448eb211c80319c");
    // After the first export: the agent runs (its pending twin), its first steps are under it.
    let (run, graph) = &states[0];
    assert_eq!(run["status"], "running");
    let agent = node(graph, "agent:support_agent");
    assert_eq!(agent["status"], "running");
    assert_eq!(node(graph, "llm:gpt-4o")["parentId"], "agent:support_agent");
    let tool = node(graph, "tool:roll_dice");
    assert_eq!(tool["parentId"], "agent:support_agent");
    assert_eq!(tool["status"], "ok");
    // After the second: the same agent node, one instance, finished; the run with it.
    let (run, graph) = &states[1];
    let agent = node(graph, "agent:support_agent");
    assert_eq!(agent["status"], "ok");
    assert_eq!(agent["instances"].as_array().unwrap().len(), 1);
    assert_eq!(
        node(graph, "llm:gpt-4o")["instances"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(graph["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(run["status"], "ok");
    assert_eq!(run["usage"]["inputTokens"], 95);
    assert_eq!(run["name"], "support_agent");
}
