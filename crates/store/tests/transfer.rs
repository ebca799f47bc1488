//! `store::transfer`: a run exported as JSON Lines and imported into another database.
//! The import cases run with the target on SQLite and on PostgreSQL (see `common`).
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::{Backend, TestDb};
use mindgate_protocol::parse_envelope;
use mindgate_store::{
    Database, NewEvent, RunFilter, RunImport, RunStore, TransferError, WriterConfig,
};
use serde_json::{Value, json};

contract!(
    export_then_import_round_trips_graph_events_and_report,
    an_existing_id_is_refused_and_new_id_imports_beside_it,
    a_bad_line_names_its_number_and_writes_nothing,
    retention_by_age_leaves_imported_runs_alone,
);

/// A fresh SQLite store (the exports' source).
fn sqlite() -> TestDb {
    TestDb::new(Backend::Sqlite).expect("sqlite")
}

fn ev(run: &str, seq: u64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 2_000 + seq as i64, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

/// A run with a hint, a failing then recovered tool, streamed tokens, a pause, usage,
/// an unknown event type and an unknown envelope field.
fn write_sample(db: &TestDb, run: &str) {
    let (writer, _) = db.writer(WriterConfig::default(), None);
    let unknown = format!(
        r#"{{"gm":1,"seq":12,"ts":2012,"runId":"{run}","type":"future.thing","payload":{{"nodeId":"tool:search","x":[1, 2]}},"trace":"t-1"}}"#
    );
    let events = vec![
        ev(
            run,
            1,
            "run.started",
            json!({"app": "shop", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "checkout", "tags": ["x"]}}),
        ),
        ev(
            run,
            2,
            "graph.hint",
            json!({"nodes": [{"nodeId": "tool:never", "kind": "tool", "name": "never", "parentId": "agent:a"}]}),
        ),
        ev(
            run,
            3,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
        ),
        ev(
            run,
            4,
            "node.started",
            json!({"nodeId": "tool:search", "kind": "tool", "name": "search", "instanceId": "c1", "parentId": "agent:a", "input": {"q": "ünïcode ✓"}}),
        ),
        ev(
            run,
            5,
            "exec.paused",
            json!({"pauseId": "p1", "nodeId": "tool:search", "point": "before", "reason": "breakpoint"}),
        ),
        ev(
            run,
            6,
            "exec.resumed",
            json!({"pauseId": "p1", "action": "continue"}),
        ),
        ev(
            run,
            7,
            "node.error",
            json!({"nodeId": "tool:search", "instanceId": "c1", "error": {"name": "ValueError", "message": "boom"}}),
        ),
        ev(
            run,
            8,
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "c1", "durationMs": 12.5, "status": "ok", "output": [1, 2]}),
        ),
        ev(
            run,
            9,
            "node.started",
            json!({"nodeId": "llm:step", "kind": "llm", "name": "step", "instanceId": "l1", "parentId": "agent:a", "model": "gpt-4o"}),
        ),
        ev(
            run,
            10,
            "node.token",
            json!({"nodeId": "llm:step", "instanceId": "l1", "deltas": [{"t": "text", "v": "Hel"}, {"t": "text", "v": "lo"}]}),
        ),
        ev(
            run,
            11,
            "node.finished",
            json!({"nodeId": "llm:step", "instanceId": "l1", "durationMs": 3, "status": "ok", "usage": {"inputTokens": 7, "outputTokens": 2}}),
        ),
        NewEvent::from_frame(&unknown, &parse_envelope(&unknown)).expect("opaque event"),
        ev(
            run,
            13,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 30, "status": "ok"}),
        ),
        ev(run, 14, "run.finished", json!({"status": "ok"})),
    ];
    for e in events {
        writer.append(e).expect("append");
    }
    writer.close().expect("close");
}

fn export(store: &RunStore, run: &str) -> String {
    let mut out = Vec::new();
    let n = store.export_jsonl(run, &mut out).expect("export");
    assert_eq!(n, Some(14));
    String::from_utf8(out).expect("utf-8")
}

fn import(
    db: &Database,
    text: &str,
    new_id: Option<&str>,
) -> Result<mindgate_store::ImportReport, TransferError> {
    let mut lines = text.lines();
    let mut import = RunImport::begin_in(db, lines.next().unwrap_or_default(), new_id)?;
    for (i, line) in lines.enumerate() {
        import.add_event(i as u64 + 2, line)?;
    }
    import.finish()
}

fn envelopes(store: &RunStore, run: &str) -> Vec<Value> {
    store
        .all_events(run)
        .unwrap()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

/// The lines of an export, parsed (`jsonb` orders keys its own way).
fn parsed(jsonl: &str) -> Vec<Value> {
    jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn export_then_import_round_trips_graph_events_and_report(backend: Backend) {
    let Some(target_db) = TestDb::new(backend) else {
        return;
    };
    let source_db = sqlite();
    write_sample(&source_db, "r1");
    let source = source_db.reader();
    let text = export(&source, "r1");
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], "mindgate.run");
    assert_eq!(header["run"]["id"], "r1");

    let report = import(&target_db.database, &text, None).expect("import");
    assert_eq!((report.run_id.as_str(), report.events), ("r1", 14));
    let target = target_db.reader();

    let graph = |s: &RunStore| serde_json::to_value(s.graph("r1").unwrap().unwrap()).unwrap();
    assert_eq!(graph(&source), graph(&target));
    let source_events = envelopes(&source, "r1");
    assert_eq!(source_events, envelopes(&target, "r1"));
    assert_eq!(
        source_events[11]["trace"], "t-1",
        "unknown envelope fields survive"
    );
    assert_eq!(source_events[11]["type"], "future.thing");
    let report = |s: &RunStore| serde_json::to_value(s.run_report("r1").unwrap().unwrap()).unwrap();
    assert_eq!(report(&source), report(&target));
    let detail = |s: &RunStore| {
        serde_json::to_value(s.node_detail("r1", "tool:search").unwrap().unwrap()).unwrap()
    };
    assert_eq!(detail(&source), detail(&target));

    let mut a = serde_json::to_value(source.get_run_with_cost("r1").unwrap().unwrap()).unwrap();
    let mut b = serde_json::to_value(target.get_run_with_cost("r1").unwrap().unwrap()).unwrap();
    assert_eq!(a["source"], "live");
    assert_eq!(b["source"], "import");
    a["source"] = Value::Null;
    b["source"] = Value::Null;
    assert_eq!(a, b, "the run summary is kept, but for its source");
    // A second export of the import is the same file, but for the source.
    assert_eq!(
        parsed(&export(&target, "r1").replace("\"import\"", "\"live\"")),
        parsed(&text)
    );
}

fn an_existing_id_is_refused_and_new_id_imports_beside_it(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    write_sample(&db, "r1");
    let store = db.reader();
    let text = export(&store, "r1");
    match import(&db.database, &text, None) {
        Err(TransferError::Exists { run_id }) => assert_eq!(run_id, "r1"),
        other => panic!("expected exists, got {other:?}"),
    }
    let report = import(&db.database, &text, Some("r1-copy")).expect("new id");
    assert_eq!(report.run_id, "r1-copy");
    let runs = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.runs.len(), 2);
    assert_eq!(
        serde_json::to_value(store.graph("r1-copy").unwrap().unwrap().nodes).unwrap(),
        serde_json::to_value(store.graph("r1").unwrap().unwrap().nodes).unwrap()
    );
}

fn a_bad_line_names_its_number_and_writes_nothing(backend: Backend) {
    let Some(target) = TestDb::new(backend) else {
        return;
    };
    let source_db = sqlite();
    write_sample(&source_db, "r1");
    let text = export(&source_db.reader(), "r1");
    let target_db = &target.database;
    // The target store exists (and is empty) before the first import.
    drop(target.writer(WriterConfig::default(), None));
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();

    let cases: Vec<(usize, String, &str)> = vec![
        (5, "{not json".to_owned(), "line 5: invalid event"),
        (
            6,
            lines[6].replace("\"runId\":\"r1\"", "\"runId\":\"other\""),
            "line 6: event of run other",
        ),
        (7, lines[3].clone(), "line 7: seq 3 appears twice"),
        (
            8,
            lines[8].replace("\"gm\":1", "\"gm\":2"),
            "line 8: not a GraphMind v1 event",
        ),
    ];
    for (at, bad, expected) in cases {
        let original = std::mem::replace(&mut lines[at - 1], bad);
        let err = import(target_db, &lines.join("\n"), None).expect_err(expected);
        assert!(err.to_string().starts_with(expected), "{err}");
        lines[at - 1] = original;
        let target = target.reader();
        assert!(
            target.get_run("r1").unwrap().is_none(),
            "nothing half-written after {expected}"
        );
        assert_eq!(target.total_events().unwrap(), 0);
    }
    // A file cut short: fewer events than the header counts.
    let short = lines[..10].join("\n");
    let err = import(target_db, &short, None).expect_err("incomplete");
    assert!(
        matches!(
            err,
            TransferError::Incomplete {
                expected: 14,
                found: 9
            }
        ),
        "{err}"
    );
    assert!(target.reader().get_run("r1").unwrap().is_none());
    // Not an export at all.
    let err = import(target_db, "{\"resourceSpans\": []}", None).expect_err("header");
    assert!(
        err.to_string()
            .starts_with("line 1: not a Mindgate run export header"),
        "{err}"
    );
    // The intact file still imports.
    import(target_db, &lines.join("\n"), None).expect("intact");
}

fn retention_by_age_leaves_imported_runs_alone(backend: Backend) {
    let Some(target_db) = TestDb::new(backend) else {
        return;
    };
    let source_db = sqlite();
    write_sample(&source_db, "old");
    let text = export(&source_db.reader(), "old");
    import(&target_db.database, &text, None).expect("import");
    // The run's own times are from 1970: by age it would go at once.
    let (writer, _) = target_db.writer(WriterConfig::default(), None);
    let retention = mindgate_store::Retention {
        keep_runs: 0,
        keep_days: 1,
    };
    assert!(writer.prune(retention).unwrap().is_empty());
    writer.close().unwrap();
    assert!(target_db.reader().get_run("old").unwrap().is_some());
    // The same run written live is pruned by the same rule.
    let (writer, _) = source_db.writer(WriterConfig::default(), None);
    assert_eq!(writer.prune(retention).unwrap(), ["old"]);
    writer.close().unwrap();
}

/// On PostgreSQL two imports of one run id at once (no file lock keeps them apart): the
/// database referees, one stores the run and the other is refused as existing.
#[test]
fn on_postgres_concurrent_imports_of_one_id_store_it_once() {
    let Some(target) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let source_db = sqlite();
    write_sample(&source_db, "r1");
    let text = export(&source_db.reader(), "r1");
    let mut lines = text.lines();
    let mut first =
        RunImport::begin_in(&target.database, lines.next().unwrap(), None).expect("first begins");
    // The second one starts while the first holds the id, uncommitted.
    let second = {
        let database = target.database.clone();
        let text = text.clone();
        std::thread::spawn(move || import(&database, &text, None))
    };
    for (i, line) in lines.enumerate() {
        first.add_event(i as u64 + 2, line).expect("event");
    }
    first.finish().expect("first commits");
    match second.join().expect("second thread") {
        Err(TransferError::Exists { run_id }) => assert_eq!(run_id, "r1"),
        other => panic!("expected exists, got {other:?}"),
    }
    let store = target.reader();
    assert_eq!(
        store.list_runs(&RunFilter::default()).unwrap().runs.len(),
        1
    );
    assert_eq!(store.total_events().unwrap(), 14);
}

/// On PostgreSQL an import is announced as the writers' commits are: a follower (another
/// server) hears the imported run with every event it stored.
#[test]
fn on_postgres_an_import_is_announced_to_followers() {
    let Some(target) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let Database::Postgres(url) = &target.database else {
        unreachable!("a PostgreSQL store");
    };
    // The store exists before the follower listens.
    drop(target.writer(WriterConfig::default(), None));
    let (tx, rx) = std::sync::mpsc::channel();
    let follower =
        mindgate_store::Follower::start(url, "a-server", None, Box::new(move |f| drop(tx.send(f))))
            .expect("follower");
    let source_db = sqlite();
    write_sample(&source_db, "r1");
    let source = source_db.reader();
    import(&target.database, &export(&source, "r1"), Some("r1-in")).expect("import");
    let mut heard = Vec::new();
    let mut runs = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while heard.len() < 14 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(mindgate_store::Followed::Commit(c)) => {
                heard.extend(c.events);
                runs.extend(c.runs.into_iter().map(|r| r.id));
            }
            Ok(mindgate_store::Followed::Resync) => {}
            Err(e) => panic!(
                "the import was not announced ({} events heard): {e}",
                heard.len()
            ),
        }
    }
    follower.stop();
    assert_eq!(runs, ["r1-in"]);
    let stored = target.reader().all_events("r1-in").unwrap().unwrap();
    let seqs = |events: &[mindgate_store::StoredEvent]| -> Vec<u64> {
        events.iter().map(|e| e.seq).collect()
    };
    assert_eq!(seqs(&heard), seqs(&stored));
}
