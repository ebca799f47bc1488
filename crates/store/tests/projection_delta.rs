//! The deltas of a live projection: a snapshot followed by every delta, applied
//! the way a view applies them (replace a node summary by `nodeId`, an instance
//! by `nodeId` + `instanceId`, append what is new), gives the projection's own
//! graph after every event of every corpus case; and a delta carries only what
//! the event touched.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_store::RunProjection;
use serde_json::{Value, json};

const CORPUS: &str = include_str!("fixtures/run_graph_corpus.json");

/// A view's copy of the graph: `GET /graph`'s nodes (with instances), applied to.
struct ViewGraph {
    nodes: Vec<Value>,
}

impl ViewGraph {
    fn from_snapshot(projection: &RunProjection) -> ViewGraph {
        let graph = serde_json::to_value(projection.graph()).expect("graph serializes");
        ViewGraph {
            nodes: graph["nodes"].as_array().cloned().unwrap_or_default(),
        }
    }

    fn apply(&mut self, delta: &Value) {
        for change in delta["nodes"].as_array().expect("nodes") {
            let mut fields = change.clone();
            let count = fields
                .as_object_mut()
                .and_then(|o| o.remove("instanceCount"))
                .expect("instanceCount");
            match self
                .nodes
                .iter_mut()
                .find(|n| n["nodeId"] == change["nodeId"])
            {
                Some(node) => {
                    let instances = node["instances"].take();
                    *node = fields;
                    node["instances"] = instances;
                }
                None => {
                    fields["instances"] = json!([]);
                    self.nodes.push(fields);
                }
            }
            // The count is checked once the instances are applied.
            let node = self
                .nodes
                .iter_mut()
                .find(|n| n["nodeId"] == change["nodeId"])
                .expect("node");
            node["expectedCount"] = count;
        }
        for change in delta["instances"].as_array().expect("instances") {
            let mut instance = change.clone();
            let node_id = instance
                .as_object_mut()
                .and_then(|o| o.remove("nodeId"))
                .expect("nodeId");
            let node = self
                .nodes
                .iter_mut()
                .find(|n| n["nodeId"] == node_id)
                .expect("an instance's node is in the view (the delta names it)");
            let list = node["instances"].as_array_mut().expect("instances");
            let slot = list
                .iter_mut()
                .find(|i| i["instanceId"] == instance["instanceId"]);
            let held = slot
                .as_ref()
                .map(|i| (text_of(i, "tokens"), text_of(i, "reasoning")));
            let (tokens, reasoning) = held.unwrap_or_default();
            append_streamed(&mut instance, tokens, reasoning);
            match slot {
                Some(slot) => *slot = instance,
                None => list.push(instance),
            }
        }
        for node in &mut self.nodes {
            if let Some(count) = node.as_object_mut().and_then(|o| o.remove("expectedCount")) {
                assert_eq!(
                    node["instances"].as_array().map(Vec::len),
                    count.as_u64().map(|c| c as usize),
                    "instanceCount of {}",
                    node["nodeId"]
                );
            }
        }
    }
}

fn text_of(instance: &Value, key: &str) -> String {
    instance[key].as_str().unwrap_or_default().to_owned()
}

/// A delta's instance as the graph shows it: the text the view held with the
/// slices the delta added (`tokens` always, `reasoning` when not empty).
fn append_streamed(instance: &mut Value, tokens: String, reasoning: String) {
    let fields = instance.as_object_mut().expect("an instance is an object");
    assert!(
        !fields.contains_key("tokens") && !fields.contains_key("reasoning"),
        "a delta carries streamed text only as appended slices: {fields:?}"
    );
    let added = |fields: &mut serde_json::Map<String, Value>, key: &str| {
        fields
            .remove(key)
            .map(|v| v.as_str().expect("a text slice").to_owned())
            .unwrap_or_default()
    };
    let tokens = tokens + &added(fields, "tokensAdded");
    let reasoning = reasoning + &added(fields, "reasoningAdded");
    fields.insert("tokens".to_owned(), Value::from(tokens));
    if !reasoning.is_empty() {
        fields.insert("reasoning".to_owned(), Value::from(reasoning));
    }
}

fn cases() -> Vec<Value> {
    let corpus: Value = serde_json::from_str(CORPUS).expect("corpus is JSON");
    corpus["cases"].as_array().expect("cases").clone()
}

fn apply(projection: &mut RunProjection, seq: usize, event: &Value) {
    projection.apply_event(
        event[0].as_str().expect("type"),
        seq as u64,
        1000 + 10 * seq as i64,
        &event[1].to_string(),
    );
}

#[test]
fn snapshot_plus_deltas_is_the_graph_after_every_event_of_every_case() {
    let cases = cases();
    assert!(cases.len() >= 20);
    let mut checked = 0;
    for case in &cases {
        let events = case["events"].as_array().expect("events");
        // Snapshot at every point of the case, then deltas for the rest.
        for start in 0..=events.len() {
            let mut projection = RunProjection::for_graph("r");
            for (seq, event) in events.iter().enumerate().take(start) {
                apply(&mut projection, seq, event);
            }
            projection.track_changes();
            let mut view = ViewGraph::from_snapshot(&projection);
            for (seq, event) in events.iter().enumerate().skip(start) {
                apply(&mut projection, seq, event);
                if let Some(delta) = projection.take_delta() {
                    view.apply(&serde_json::to_value(&delta).expect("delta serializes"));
                }
                let want = serde_json::to_value(projection.graph()).expect("graph");
                let instances: usize = want["nodes"]
                    .as_array()
                    .expect("nodes")
                    .iter()
                    .map(|n| n["instances"].as_array().map_or(0, Vec::len))
                    .sum();
                assert_eq!(projection.instance_count(), instances, "instance count");
                assert_eq!(
                    Value::Array(view.nodes.clone()),
                    want["nodes"],
                    "case {:?}, snapshot after {start} events, after event {seq}",
                    case["name"]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "checked {checked} steps");
}

#[test]
fn a_delta_carries_only_what_the_event_touched() {
    let mut projection = RunProjection::for_graph("r");
    let started = |node: &str, inst: &str, parent: Option<&str>| {
        let mut p = json!({"nodeId": node, "instanceId": inst});
        if let Some(parent) = parent {
            p["parentId"] = json!(parent);
        }
        p.to_string()
    };
    projection.apply_event("node.started", 0, 0, &started("agent:a", "a#0", None));
    for k in 0..200u64 {
        let inst = format!("t#{k}");
        projection.apply_event(
            "node.started",
            1 + 2 * k,
            0,
            &started("tool:t", &inst, Some("agent:a")),
        );
        projection.apply_event(
            "node.finished",
            2 + 2 * k,
            0,
            &json!({"nodeId": "tool:t", "instanceId": inst}).to_string(),
        );
    }
    projection.track_changes();
    assert!(projection.take_delta().is_none(), "nothing applied yet");
    projection.apply_event("node.started", 500, 0, &started("tool:t", "t#new", None));
    let delta = projection.take_delta().expect("a delta");
    assert_eq!(delta.nodes.len(), 1, "one node summary");
    assert_eq!(delta.nodes[0].instance_count, 201);
    assert_eq!(
        delta.instances.len(),
        1,
        "the new instance, not the other 200"
    );
    assert_eq!(delta.instances[0].instance.instance_id, "t#new");
    assert!(projection.take_delta().is_none(), "a delta is taken once");
    // An event that changes nothing (an unknown pause) makes no delta.
    projection.apply_event("exec.resumed", 501, 0, r#"{"pauseId":"nope"}"#);
    assert!(projection.take_delta().is_none());
}

#[test]
fn a_token_delta_carries_only_the_new_text() {
    let mut projection = RunProjection::for_graph("r");
    projection.apply_event(
        "node.started",
        0,
        0,
        r#"{"nodeId":"llm:a","instanceId":"a#0"}"#,
    );
    let token = |v: &str| json!({"nodeId": "llm:a", "deltas": [{"t": "text", "v": v}]}).to_string();
    projection.apply_event("node.token", 1, 0, &token("Hello, "));
    projection.track_changes();
    let mut seq = 2;
    for (slice, want) in [("wor", "wor"), ("ld", "ld")] {
        projection.apply_event("node.token", seq, 0, &token(slice));
        seq += 1;
        let delta = serde_json::to_value(projection.take_delta().expect("a delta")).expect("JSON");
        let inst = &delta["instances"][0];
        assert_eq!(inst["tokensAdded"], want, "only the new slice");
        assert!(inst.get("tokens").is_none(), "not the whole text so far");
    }
    // Two slices between deltas go as one; reasoning has its own slice.
    projection.apply_event("node.token", seq, 0, &token("!"));
    projection.apply_event(
        "node.token",
        seq + 1,
        0,
        &json!({"nodeId": "llm:a", "deltas": [{"t": "reasoning", "v": "hm"}, {"t": "text", "v": "?"}]})
            .to_string(),
    );
    let delta = serde_json::to_value(projection.take_delta().expect("a delta")).expect("JSON");
    assert_eq!(delta["instances"][0]["tokensAdded"], "!?");
    assert_eq!(delta["instances"][0]["reasoningAdded"], "hm");
    // A delta that streamed nothing carries no slice.
    projection.apply_event(
        "node.finished",
        seq + 2,
        0,
        r#"{"nodeId":"llm:a","instanceId":"a#0","status":"ok"}"#,
    );
    let delta = serde_json::to_value(projection.take_delta().expect("a delta")).expect("JSON");
    assert!(delta["instances"][0].get("tokensAdded").is_none());
    assert_eq!(delta["instances"][0]["status"], "ok");
    let graph = serde_json::to_value(projection.graph()).expect("graph");
    assert_eq!(
        graph["nodes"][0]["instances"][0]["tokens"],
        "Hello, world!?"
    );
}

#[test]
fn without_tracking_there_is_no_delta() {
    let mut projection = RunProjection::for_graph("r");
    projection.apply_event("node.started", 0, 0, r#"{"nodeId":"agent:a"}"#);
    assert!(projection.take_delta().is_none());
}

#[test]
fn the_nodes_written_in_ranges_are_the_graph_nodes() {
    for case in cases() {
        let mut projection = RunProjection::for_graph("r");
        for (seq, event) in case["events"]
            .as_array()
            .expect("events")
            .iter()
            .enumerate()
        {
            apply(&mut projection, seq, event);
        }
        let mut nodes = Vec::new();
        let count = projection.node_count();
        for start in (0..count.max(1)).step_by(2) {
            let mut out = Vec::new();
            projection
                .write_nodes_json(start..start + 2, &mut out)
                .expect("writes");
            let part: Value = serde_json::from_slice(&out).expect("JSON");
            nodes.extend(part.as_array().expect("an array").iter().cloned());
        }
        let want = serde_json::to_value(projection.graph()).expect("graph");
        assert_eq!(
            Value::Array(nodes),
            want["nodes"],
            "case {:?}",
            case["name"]
        );
    }
}
