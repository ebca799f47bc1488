//! The run-graph rules, pinned by one corpus of event sequences with the graph
//! each must project to (`tests/fixtures/run_graph_corpus.json`). The viewer's
//! run model runs the same corpus (`tests/browser/run_graph_corpus.test.mjs`),
//! so the graph API, the MCP tools and the page cannot disagree.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_store::RunProjection;
use serde_json::{Value, json};

const CORPUS: &str = include_str!("fixtures/run_graph_corpus.json");

/// The graph in the corpus's shape: nodes in order, instances with their
/// state and streamed text.
fn normalized(projection: RunProjection) -> Value {
    let graph = serde_json::to_value(projection.into_graph()).expect("graph serializes");
    let nodes = graph["nodes"].as_array().cloned().unwrap_or_default();
    Value::Array(
        nodes
            .iter()
            .map(|n| {
                let instances: Vec<Value> = n["instances"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|i| {
                        json!({"instanceId": i["instanceId"], "status": i["status"], "text": i["tokens"]})
                    })
                    .collect();
                json!({
                    "nodeId": n["nodeId"], "kind": n["kind"], "name": n["name"],
                    "parentId": n["parentId"], "status": n["status"], "instances": instances,
                })
            })
            .collect(),
    )
}

#[test]
fn every_corpus_case_projects_to_its_graph() {
    let corpus: Value = serde_json::from_str(CORPUS).expect("corpus is JSON");
    let cases = corpus["cases"].as_array().expect("cases");
    assert!(cases.len() >= 20, "the corpus has its cases");
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let mut projection = RunProjection::for_graph("r");
        for (i, event) in case["events"]
            .as_array()
            .expect("events")
            .iter()
            .enumerate()
        {
            let seq = i as u64;
            let ts = 1000 + 10 * i as i64;
            let payload = event[1].to_string();
            projection.apply_event(event[0].as_str().expect("type"), seq, ts, &payload);
        }
        let got = normalized(projection);
        if got != case["graph"] {
            failures.push(format!(
                "{name}\n  expected {}\n  got      {}",
                case["graph"], got
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_graph_lists_one_edge_per_parent_link() {
    let corpus: Value = serde_json::from_str(CORPUS).expect("corpus is JSON");
    for case in corpus["cases"].as_array().expect("cases") {
        let mut projection = RunProjection::for_graph("r");
        for (i, event) in case["events"]
            .as_array()
            .expect("events")
            .iter()
            .enumerate()
        {
            projection.apply_event(
                event[0].as_str().expect("type"),
                i as u64,
                0,
                &event[1].to_string(),
            );
        }
        let graph = projection.into_graph();
        let linked = graph.nodes.iter().filter(|n| n.parent_id.is_some()).count();
        assert_eq!(graph.edges.len(), linked, "{}", case["name"]);
        for edge in &graph.edges {
            assert!(graph.nodes.iter().any(|n| n.node_id == edge.source));
        }
    }
}
