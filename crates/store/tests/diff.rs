//! `store::diff`: two runs aligned by `nodeId`, and their first divergence.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::diff::{ChangeOp, Difference};
use mindgate_store::{DiffError, NewEvent, RunStore, Writer, WriterConfig};
use serde_json::{Value, json};

fn ev(run: &str, seq: u64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 1_000 + seq as i64, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

/// What one run's tools answer: (search output, answer output), and whether the
/// `tool:answer` node runs at all.
struct Script {
    search_input: Value,
    search_output: Value,
    answer: Option<Value>,
    extra_tool: bool,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            search_input: json!({"q": "flights to Lisbon"}),
            search_output: json!({"hits": [{"id": 1, "price": 120}], "source": "cache"}),
            answer: Some(json!("book flight 1")),
            extra_tool: false,
        }
    }
}

/// An agent calling `tool:search`, an llm with usage, then `tool:answer`.
fn run_events(run: &str, script: &Script) -> Vec<NewEvent> {
    let mut seq = 0;
    let mut next = |ty: &str, payload: Value| {
        seq += 1;
        ev(run, seq, ty, payload)
    };
    let mut out = vec![
        next(
            "run.started",
            json!({"app": "trip", "sdk": {"name": "t", "version": "1"}, "meta": {"name": run}}),
        ),
        next(
            "node.started",
            json!({"nodeId": "agent:plan", "kind": "agent", "name": "plan", "instanceId": "a1"}),
        ),
        next(
            "node.started",
            json!({"nodeId": "tool:search", "kind": "tool", "name": "search", "instanceId": "s1", "parentId": "agent:plan", "input": script.search_input}),
        ),
        next(
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "s1", "status": "ok", "durationMs": 5, "output": script.search_output}),
        ),
        next(
            "node.started",
            json!({"nodeId": "llm:think", "kind": "llm", "name": "think", "instanceId": "l1", "parentId": "agent:plan", "model": "gpt-4o-mini"}),
        ),
        next(
            "node.finished",
            json!({"nodeId": "llm:think", "instanceId": "l1", "status": "ok", "durationMs": 40, "output": "ok", "usage": {"inputTokens": 1000, "outputTokens": 200}}),
        ),
    ];
    if script.extra_tool {
        out.push(next(
            "node.started",
            json!({"nodeId": "tool:weather", "kind": "tool", "name": "weather", "instanceId": "w1", "parentId": "agent:plan"}),
        ));
        out.push(next(
            "node.finished",
            json!({"nodeId": "tool:weather", "instanceId": "w1", "status": "ok", "durationMs": 3, "output": "sunny"}),
        ));
    }
    if let Some(answer) = &script.answer {
        out.push(next(
            "node.started",
            json!({"nodeId": "tool:answer", "kind": "tool", "name": "answer", "instanceId": "t1", "parentId": "agent:plan"}),
        ));
        out.push(next(
            "node.finished",
            json!({"nodeId": "tool:answer", "instanceId": "t1", "status": "ok", "durationMs": 2, "output": answer}),
        ));
    }
    // The agent's output repeats what its tools said: it differs whenever theirs do.
    out.push(next(
        "node.finished",
        json!({"nodeId": "agent:plan", "instanceId": "a1", "status": "ok", "durationMs": 60, "output": {"search": script.search_output, "answer": script.answer}}),
    ));
    out.push(next("run.finished", json!({"status": "ok"})));
    out
}

fn store_with(runs: &[(&str, Script)]) -> (tempfile::TempDir, RunStore) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("m.db");
    let (writer, _) = Writer::open(&path, WriterConfig::default(), None).expect("writer");
    for (id, script) in runs {
        for e in run_events(id, script) {
            writer.append(e).expect("append");
        }
    }
    writer.close().expect("close");
    let store = RunStore::open(&path).expect("reader");
    (dir, store)
}

#[test]
fn a_run_against_the_same_run_has_no_divergence() {
    let (_dir, store) = store_with(&[("a", Script::default()), ("b", Script::default())]);
    let diff = store.diff_runs("a", "b").expect("diff");
    assert_eq!(diff.first_divergence, None);
    assert!(diff.only_in_a.is_empty() && diff.only_in_b.is_empty());
    let ids: Vec<&str> = diff.nodes.iter().map(|n| n.node_id.as_str()).collect();
    assert_eq!(
        ids,
        ["agent:plan", "tool:search", "llm:think", "tool:answer"]
    );
    assert!(
        diff.nodes
            .iter()
            .all(|n| n.differences.is_empty() && n.changes.is_empty())
    );
    let think = &diff.nodes[2];
    let (a, b) = (think.a.as_ref().unwrap(), think.b.as_ref().unwrap());
    assert_eq!((a.tokens.input, a.tokens.output), (1000, 200));
    assert_eq!(a.cost, b.cost);
    assert!(
        a.cost.usd.unwrap() > 0.0,
        "gpt-4o-mini is priced: {:?}",
        a.cost
    );
    assert_eq!(a.duration_ms, Some(40.0));
    assert_eq!(diff.a.name, "a");
    assert_eq!(diff.a.tokens.input, 1000);
}

#[test]
fn a_changed_output_diverges_at_that_node_not_at_its_parent() {
    let changed = Script {
        search_output: json!({"hits": [{"id": 1, "price": 99}, {"id": 2}], "cached": true}),
        ..Script::default()
    };
    let (_dir, store) = store_with(&[("a", Script::default()), ("b", changed)]);
    let diff = store.diff_runs("a", "b").expect("diff");
    let first = diff.first_divergence.expect("a divergence");
    assert_eq!(first.node_id, "tool:search");
    assert_eq!(first.difference, Difference::Output);
    assert_eq!(first.instance, Some(0));
    assert_eq!(first.seq, Some(4), "the search's node.finished in run a");
    let search = diff
        .nodes
        .iter()
        .find(|n| n.node_id == "tool:search")
        .unwrap();
    assert_eq!(search.differences, [Difference::Output]);
    let paths: Vec<(ChangeOp, &str)> = search
        .changes
        .iter()
        .map(|c| (c.op, c.path.as_str()))
        .collect();
    assert!(
        paths.contains(&(ChangeOp::Changed, "/hits/0/price")),
        "{paths:?}"
    );
    assert!(paths.contains(&(ChangeOp::Added, "/hits/1")), "{paths:?}");
    assert!(paths.contains(&(ChangeOp::Removed, "/source")), "{paths:?}");
    assert!(paths.contains(&(ChangeOp::Added, "/cached")), "{paths:?}");
    let price = search
        .changes
        .iter()
        .find(|c| c.path == "/hits/0/price")
        .unwrap();
    assert_eq!(
        (price.a.clone(), price.b.clone()),
        (Some(json!(120)), Some(json!(99)))
    );
    // The agent's output differs too, but later (at its finish): it is listed, not first.
    let agent = &diff.nodes[0];
    assert_eq!(agent.differences, [Difference::Output]);
}

#[test]
fn a_changed_input_diverges_at_the_start() {
    let changed = Script {
        search_input: json!({"q": "flights to Porto"}),
        ..Script::default()
    };
    let (_dir, store) = store_with(&[("a", Script::default()), ("b", changed)]);
    let first = store.diff_runs("a", "b").unwrap().first_divergence.unwrap();
    assert_eq!(
        (first.node_id.as_str(), first.difference),
        ("tool:search", Difference::Input)
    );
    assert_eq!(first.seq, Some(3));
}

#[test]
fn a_node_missing_from_b_or_only_in_b_is_reported() {
    let short = Script {
        answer: None,
        ..Script::default()
    };
    let longer = Script {
        extra_tool: true,
        ..Script::default()
    };
    let (_dir, store) = store_with(&[("a", Script::default()), ("b", short), ("c", longer)]);
    let diff = store.diff_runs("a", "b").unwrap();
    assert_eq!(diff.only_in_a, ["tool:answer"]);
    let first = diff.first_divergence.unwrap();
    assert_eq!(
        (first.node_id.as_str(), first.difference),
        ("tool:answer", Difference::OnlyInA)
    );
    let answer = diff
        .nodes
        .iter()
        .find(|n| n.node_id == "tool:answer")
        .unwrap();
    assert!(answer.a.is_some() && answer.b.is_none());

    let diff = store.diff_runs("a", "c").unwrap();
    assert_eq!(diff.only_in_b, ["tool:weather"]);
    assert_eq!(diff.nodes.last().unwrap().node_id, "tool:weather");
    let first = diff.first_divergence.unwrap();
    assert_eq!(
        (first.node_id.as_str(), first.difference),
        ("tool:weather", Difference::OnlyInB)
    );
}

#[test]
fn an_unknown_run_is_named() {
    let (_dir, store) = store_with(&[("a", Script::default())]);
    match store.diff_runs("a", "nope") {
        Err(DiffError::NotFound(id)) => assert_eq!(id, "nope"),
        other => panic!("expected not found, got {other:?}"),
    }
}

#[test]
fn a_replay_diverges_at_its_forked_node_and_injected_values_are_not_differences() {
    // B replays A up to `tool:answer`: search and think are answered with A's recorded
    // outputs (injected), the answer runs live and says something else.
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("m.db");
    let (writer, _) = Writer::open(&path, WriterConfig::default(), None).expect("writer");
    for e in run_events("src", &Script::default()) {
        writer.append(e).unwrap();
    }
    let replay = Script {
        answer: Some(json!("book flight 2")),
        ..Script::default()
    };
    for e in run_events("rep", &replay) {
        let mut payload: Value = serde_json::from_str(&e.payload).unwrap();
        if e.type_name == "run.started" {
            payload["meta"]["replayOf"] = json!("src");
            payload["meta"]["replayAt"] = json!({"nodeId": "tool:answer", "instanceId": "t1"});
        }
        let before_fork = matches!(
            payload["nodeId"].as_str(),
            Some("tool:search" | "llm:think")
        );
        if e.type_name == "node.finished" && before_fork {
            payload["injected"] = json!(true);
        }
        writer
            .append(ev("rep", e.seq, &e.type_name, payload))
            .unwrap();
    }
    writer.close().unwrap();
    let store = RunStore::open(&path).unwrap();
    let diff = store.diff_runs("src", "rep").unwrap();
    assert_eq!(diff.b.replay_of.as_deref(), Some("src"));
    let first = diff.first_divergence.expect("a divergence");
    assert_eq!(
        (first.node_id.as_str(), first.difference),
        ("tool:answer", Difference::Output)
    );
    for id in ["tool:search", "llm:think"] {
        let node = diff.nodes.iter().find(|n| n.node_id == id).unwrap();
        assert!(node.differences.is_empty(), "{id}: {:?}", node.differences);
    }
    let answer = diff
        .nodes
        .iter()
        .find(|n| n.node_id == "tool:answer")
        .unwrap();
    assert_eq!(answer.changes[0].path, "");
    assert_eq!(answer.changes[0].a, Some(json!("book flight 1")));
    assert_eq!(answer.changes[0].b, Some(json!("book flight 2")));
}

/// `diff_runs` folds each run streamed from the database (no events held): the same
/// diff as the pure `diff_events` over the runs' events, and `RunStore::projection`
/// (streamed, then `into_details`) the same graph and node details as `project`.
#[test]
fn the_streamed_diff_and_projection_equal_the_pure_ones() {
    let changed = Script {
        answer: Some(json!("book flight 2")),
        ..Script::default()
    };
    let (_dir, store) = store_with(&[("a", Script::default()), ("b", changed)]);
    let events = |id: &str| store.all_events(id).unwrap().unwrap();
    let pure =
        mindgate_store::diff::diff_events("a", &events("a"), "b", &events("b"), store.prices());
    let streamed = store.diff_runs("a", "b").unwrap();
    let value = |d: &mindgate_store::RunDiff| {
        let mut v = serde_json::to_value(d).unwrap();
        // The run sides' names and states come from the run rows in diff_runs.
        v["a"] = Value::Null;
        v["b"] = Value::Null;
        v
    };
    assert!(streamed.first_divergence.is_some());
    assert_eq!(value(&streamed), value(&pure));

    let projected = mindgate_store::project("b", &events("b"));
    let (graph, details) = store.projection("b").unwrap().unwrap().into_details();
    assert_eq!(graph, projected.graph());
    assert_eq!(graph, store.graph("b").unwrap().unwrap());
    assert_eq!(details.len(), graph.nodes.len());
    for (detail, node) in details.iter().zip(&graph.nodes) {
        assert_eq!(Some(detail), projected.node(&node.node_id).as_ref());
    }
    assert!(store.projection("nope").unwrap().is_none());
}
