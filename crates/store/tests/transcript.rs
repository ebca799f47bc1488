//! Node detail reads an `llm` instance as a conversation, and an `llm` node is labelled
//! by its model in the graph, its live deltas and node detail (`docs/transcripts.md`).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_store::RunProjection;
use serde_json::{Value, json};

fn apply(p: &mut RunProjection, seq: u64, type_name: &str, payload: Value) {
    p.apply_event(type_name, seq, 1_000 + seq as i64, &payload.to_string());
}

/// A graphmind-ai agent: `llm:step` called twice, a tool between.
fn chat_agent(p: &mut RunProjection) {
    apply(
        p,
        1,
        "node.started",
        json!({"nodeId": "agent:trip", "kind": "agent", "name": "trip", "instanceId": "a1"}),
    );
    apply(
        p,
        2,
        "node.started",
        json!({"nodeId": "llm:step", "kind": "llm", "name": "step", "parentId": "agent:trip", "instanceId": "s1",
        "input": {"provider": "openai", "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Weather in Oslo?"}]}}),
    );
    apply(
        p,
        3,
        "node.finished",
        json!({"nodeId": "llm:step", "instanceId": "s1", "status": "ok",
        "usage": {"inputTokens": 20, "outputTokens": 5, "model": "gpt-4o-mini-2024-07-18"},
        "output": {"text": "", "toolCalls": [{"id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}], "finishReason": "tool_calls"}}),
    );
    apply(
        p,
        4,
        "node.started",
        json!({"nodeId": "tool:get_weather", "kind": "tool", "name": "get_weather", "parentId": "llm:step", "instanceId": "t1",
        "input": {"messages": [{"role": "user", "content": "not a model call"}]}}),
    );
    apply(
        p,
        5,
        "node.finished",
        json!({"nodeId": "tool:get_weather", "instanceId": "t1", "status": "ok", "output": "sunny"}),
    );
}

#[test]
fn an_llm_instance_carries_its_transcript_and_a_tool_does_not() {
    let mut p = RunProjection::for_detail("r1");
    chat_agent(&mut p);
    let step = serde_json::to_value(p.node("llm:step").unwrap()).unwrap();
    let t = &step["instances"][0]["transcript"];
    assert_eq!(
        t["messages"],
        json!([
            {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}]}
        ])
    );
    assert_eq!(
        t["model"], "gpt-4o-mini-2024-07-18",
        "the store's model, not the asked one"
    );
    assert_eq!(t["finishReason"], "tool_calls");
    assert_eq!(t["usage"]["inputTokens"], 20);
    assert_eq!(t["inputCount"], 1);
    let tool = serde_json::to_value(p.node("tool:get_weather").unwrap()).unwrap();
    assert!(tool["instances"][0].get("transcript").is_none(), "{tool}");
    // into_details (the diff's and the export's read) answers the same.
    let (_, details) = p.into_details();
    let step = details.iter().find(|d| d.node_id == "llm:step").unwrap();
    let attached = serde_json::to_value(step.instances[0].transcript.as_ref().unwrap()).unwrap();
    assert_eq!(attached, *t);
    let read = mindgate_store::transcript_of("llm", &step.instances[0]).unwrap();
    assert_eq!(serde_json::to_value(&read).unwrap(), *t);
    assert_eq!(
        mindgate_store::transcript_of("tool", &step.instances[0]),
        None
    );
}

#[test]
fn an_llm_node_is_labelled_by_its_model_in_the_graph_deltas_and_detail() {
    let mut p = RunProjection::for_graph("r1");
    p.track_changes();
    apply(
        &mut p,
        1,
        "node.started",
        json!({"nodeId": "llm:step", "kind": "llm", "name": "step", "instanceId": "s1"}),
    );
    let first = serde_json::to_value(p.take_delta().unwrap()).unwrap();
    assert!(
        first["nodes"][0].get("label").is_none(),
        "no model named yet: {first}"
    );
    apply(
        &mut p,
        2,
        "node.finished",
        json!({"nodeId": "llm:step", "instanceId": "s1", "status": "ok", "usage": {"inputTokens": 1, "outputTokens": 1, "model": "gpt-4o-mini"}}),
    );
    let delta = serde_json::to_value(p.take_delta().unwrap()).unwrap();
    assert_eq!(delta["nodes"][0]["label"], "gpt-4o-mini");
    apply(
        &mut p,
        3,
        "node.started",
        json!({"nodeId": "llm:step", "kind": "llm", "name": "step", "instanceId": "s2", "model": "claude-haiku-4-5"}),
    );
    let graph = serde_json::to_value(p.graph()).unwrap();
    assert_eq!(graph["nodes"][0]["label"], "gpt-4o-mini +1 model");

    let mut d = RunProjection::for_detail("r1");
    chat_agent(&mut d);
    assert_eq!(
        d.node("llm:step").unwrap().label.as_deref(),
        Some("gpt-4o-mini-2024-07-18")
    );
    assert_eq!(d.node("tool:get_weather").unwrap().label, None);
    let graph = d.into_graph();
    let agent = graph
        .nodes
        .iter()
        .find(|n| n.node_id == "agent:trip")
        .unwrap();
    assert_eq!(agent.label, None);
}

#[test]
fn a_node_named_after_its_model_needs_no_label() {
    assert_eq!(
        mindgate_store::node_label("llm", "gpt-4o", [Some("gpt-4o")].into_iter()),
        None
    );
    assert_eq!(
        mindgate_store::node_label("llm", "step", [None, None].into_iter()),
        None
    );
    assert_eq!(
        mindgate_store::node_label(
            "llm",
            "step",
            [Some("a"), Some("b"), Some("a"), Some("c")].into_iter()
        ),
        Some("a +2 models".to_owned())
    );
    assert_eq!(
        mindgate_store::node_label("tool", "step", [Some("a")].into_iter()),
        None
    );
}

#[test]
fn a_tool_instance_carries_the_call_id_it_answers() {
    let mut p = RunProjection::for_graph("r1");
    apply(
        &mut p,
        1,
        "node.started",
        json!({"nodeId": "tool:find_hotels", "kind": "tool", "name": "find_hotels", "instanceId": "t1",
        "otel": {"traceId": "t", "spanId": "s", "attributes": {"gen_ai.tool.call.id": "call_h", "gen_ai.operation.name": "execute_tool"}}}),
    );
    apply(
        &mut p,
        2,
        "node.started",
        json!({"nodeId": "tool:book", "kind": "tool", "name": "book", "instanceId": "t2", "toolCallId": "call_b"}),
    );
    apply(
        &mut p,
        3,
        "node.started",
        json!({"nodeId": "tool:pay", "kind": "tool", "name": "pay", "instanceId": "t3"}),
    );
    let graph = serde_json::to_value(p.graph()).unwrap();
    assert_eq!(graph["nodes"][0]["instances"][0]["toolCallId"], "call_h");
    assert_eq!(graph["nodes"][1]["instances"][0]["toolCallId"], "call_b");
    assert!(
        graph["nodes"][2]["instances"][0]
            .get("toolCallId")
            .is_none()
    );
}
