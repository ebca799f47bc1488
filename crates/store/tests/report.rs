//! Run analytics (`report`): a run's errors with recovery, slowest executions,
//! tokens by node, and recent errors across runs with the `since` filter.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, RunStore, WriterConfig};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    run_report_marks_an_error_recovered_when_a_later_execution_succeeded,
    error_report_filters_by_since_and_marks_recovered_hits
);

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

/// A run at `t0` whose `tool:s` fails (instance s1), is retried as s2 and
/// succeeds, and whose `agent:a` fails for good; the run fails.
fn failing_run(run: &str, t0: i64) -> Vec<NewEvent> {
    vec![
        ev(
            run,
            0,
            t0,
            "run.started",
            json!({"app": "shop", "sdk": {"name": "t", "version": "1"}}),
        ),
        ev(
            run,
            1,
            t0 + 1,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
        ),
        ev(
            run,
            2,
            t0 + 2,
            "node.started",
            json!({"nodeId": "tool:s", "kind": "tool", "name": "s", "instanceId": "s1", "parentId": "agent:a"}),
        ),
        ev(
            run,
            3,
            t0 + 3,
            "node.error",
            json!({"nodeId": "tool:s", "instanceId": "s1", "error": {"name": "Timeout", "message": "slow"}}),
        ),
        ev(
            run,
            4,
            t0 + 4,
            "node.finished",
            json!({"nodeId": "tool:s", "instanceId": "s1", "durationMs": 2, "status": "error"}),
        ),
        ev(
            run,
            5,
            t0 + 5,
            "node.started",
            json!({"nodeId": "tool:s", "kind": "tool", "name": "s", "instanceId": "s2", "parentId": "agent:a"}),
        ),
        ev(
            run,
            6,
            t0 + 6,
            "node.finished",
            json!({"nodeId": "tool:s", "instanceId": "s2", "durationMs": 1, "status": "ok", "usage": {"inputTokens": 5, "outputTokens": 1}}),
        ),
        ev(
            run,
            7,
            t0 + 7,
            "node.error",
            json!({"nodeId": "agent:a", "instanceId": "a1", "error": {"name": "E", "message": "gave up"}}),
        ),
        ev(
            run,
            8,
            t0 + 8,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 7, "status": "error"}),
        ),
        ev(
            run,
            9,
            t0 + 9,
            "run.finished",
            json!({"status": "error", "error": {"name": "E", "message": "gave up"}}),
        ),
    ]
}

fn fill(db: &TestDb, runs: &[(&str, i64)]) -> RunStore {
    let (w, _) = db.writer(WriterConfig::default(), None);
    for (run, t0) in runs {
        for e in failing_run(run, *t0) {
            w.append(e).unwrap();
        }
    }
    w.flush().unwrap();
    w.close().unwrap();
    db.reader()
}

fn run_report_marks_an_error_recovered_when_a_later_execution_succeeded(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let store = fill(&db, &[("r1", 1_000)]);
    let report = store.run_report("r1").unwrap().expect("run exists");
    let recovered: Vec<(&str, &str, bool)> = report
        .errors
        .iter()
        .map(|e| (e.node_id.as_str(), e.instance_id.as_str(), e.recovered))
        .collect();
    assert_eq!(
        recovered,
        [("agent:a", "a1", false), ("tool:s", "s1", true)]
    );
    assert_eq!((report.error_count, report.unrecovered_count), (2, 1));
    assert_eq!(
        report.run_error,
        Some(json!({"name": "E", "message": "gave up"}))
    );
    let slowest: Vec<&str> = report
        .slowest
        .iter()
        .map(|s| s.instance_id.as_str())
        .collect();
    assert_eq!(slowest, ["a1", "s1", "s2"]);
    assert_eq!(report.tokens.by_node.len(), 1);
    assert_eq!(report.tokens.by_node[0].node_id, "tool:s");
    assert_eq!(report.tokens.by_node[0].input_tokens, 5);
    assert!(store.run_report("nope").unwrap().is_none());
}

fn error_report_filters_by_since_and_marks_recovered_hits(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let store = fill(&db, &[("old", 1_000), ("new", 50_000)]);

    let all = store.error_report(20, None).unwrap();
    let hits: Vec<(&str, Option<&str>, bool)> = all
        .nodes
        .iter()
        .map(|h| (h.hit.run_id.as_str(), h.hit.node_id.as_deref(), h.recovered))
        .collect();
    assert_eq!(
        hits,
        [
            ("new", Some("agent:a"), false),
            ("new", Some("tool:s"), true),
            ("old", Some("agent:a"), false),
            ("old", Some("tool:s"), true),
        ]
    );
    assert_eq!(all.runs.len(), 2);
    assert!(
        all.runs
            .iter()
            .all(|r| !r.error_from_node && r.error.is_some())
    );

    let recent = store.error_report(20, Some(40_000)).unwrap();
    assert_eq!(recent.since, Some(40_000));
    assert!(
        recent.nodes.iter().all(|h| h.hit.run_id == "new"),
        "{recent:?}"
    );
    assert_eq!(recent.nodes.len(), 2);
    let runs: Vec<&str> = recent.runs.iter().map(|r| r.run.id.as_str()).collect();
    assert_eq!(runs, ["new"]);

    let none = store.error_report(20, Some(100_000)).unwrap();
    assert!(none.nodes.is_empty() && none.runs.is_empty());

    let one = store.error_report(1, None).unwrap();
    assert_eq!(one.nodes.len(), 1);
}
