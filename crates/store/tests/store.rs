//! Contract tests of the writer, the read API and the projection.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use mindgate_protocol::parse_envelope;
use mindgate_store::projection::NodeState;
use mindgate_store::{
    Committed, NewEvent, RunFilter, RunState, RunStore, Writer, WriterConfig, project,
};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    replays_are_deduplicated_and_counters_stay_exact,
    commit_hook_sees_only_new_events,
    event_pages_follow_after_seq,
    running_runs_are_abandoned_on_reopen_and_revive_when_the_app_returns,
    implicit_runs_take_the_app_hint_and_keep_the_claim,
    list_filters_search_errors_and_delete,
    projection_builds_nodes_instances_and_edges,
    an_open_pause_shows_as_paused_until_resumed,
    large_batches_with_replays_and_gaps_store_each_event_once,
    pruning_keeps_the_newest_runs_and_recent_days_and_never_running_ones,
    the_streamed_graph_equals_the_full_projection_at_every_prefix
);

fn frame(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> String {
    json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload}).to_string()
}

fn ev(run: &str, seq: u64, ty: &str, payload: Value) -> NewEvent {
    let f = frame(run, seq, 1_000 + seq as i64, ty, payload);
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

fn started(run: &str, seq: u64) -> NewEvent {
    ev(
        run,
        seq,
        "run.started",
        json!({"app": "shop", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "checkout"}}),
    )
}

fn open(path: &Path) -> (Writer, RunStore) {
    let (w, _) = Writer::open(path, WriterConfig::default(), None).expect("writer");
    let r = RunStore::open(path).expect("reader");
    (w, r)
}

/// A small run shaped like what graphmind-ai sends: agent, a tool that fails,
/// is retried and succeeds, an llm with tokens, a pause.
fn sample_run(run: &str) -> Vec<NewEvent> {
    vec![
        started(run, 0),
        ev(
            run,
            1,
            "graph.hint",
            json!({"nodes": [{"nodeId": "tool:never", "kind": "tool", "name": "never", "parentId": "agent:a"}]}),
        ),
        ev(
            run,
            2,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": run}),
        ),
        ev(
            run,
            3,
            "node.started",
            json!({"nodeId": "tool:search", "kind": "tool", "name": "search", "instanceId": "c1", "parentId": "agent:a", "input": {"q": "x"}}),
        ),
        ev(
            run,
            4,
            "exec.paused",
            json!({"pauseId": "p1", "nodeId": "tool:search", "point": "before", "reason": "breakpoint"}),
        ),
        ev(
            run,
            5,
            "exec.resumed",
            json!({"pauseId": "p1", "action": "continue"}),
        ),
        ev(
            run,
            6,
            "node.error",
            json!({"nodeId": "tool:search", "instanceId": "c1", "error": {"name": "ValueError", "message": "boom", "stack": "tb"}}),
        ),
        ev(
            run,
            7,
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "c1", "durationMs": 12.5, "heldMs": 10.0, "status": "ok", "output": [1, 2]}),
        ),
        ev(
            run,
            8,
            "node.started",
            json!({"nodeId": "llm:step", "kind": "llm", "name": "step", "instanceId": "l1", "parentId": "agent:a"}),
        ),
        ev(
            run,
            9,
            "node.token",
            json!({"nodeId": "llm:step", "deltas": [{"t": "text", "v": "Hel"}, {"t": "reasoning", "v": "hmm"}]}),
        ),
        ev(
            run,
            10,
            "node.token",
            json!({"nodeId": "llm:step", "instanceId": "l1", "deltas": [{"t": "text", "v": "lo"}]}),
        ),
        ev(
            run,
            11,
            "node.finished",
            json!({"nodeId": "llm:step", "instanceId": "l1", "durationMs": 3, "status": "ok", "usage": {"inputTokens": 7, "outputTokens": 2}}),
        ),
        ev(
            run,
            12,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": run, "durationMs": 30, "status": "ok"}),
        ),
        ev(run, 13, "run.finished", json!({"status": "ok"})),
    ]
}

fn replays_are_deduplicated_and_counters_stay_exact(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    for e in sample_run("r1") {
        w.append(e).expect("append");
    }
    // The whole run again, as a reconnecting client would replay it.
    for e in sample_run("r1") {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
    let run = r.get_run("r1").expect("read").expect("run exists");
    assert_eq!(run.counts.events, 14);
    assert_eq!(run.counts.errors, 1);
    assert_eq!(run.counts.nodes, 3);
    assert_eq!(run.usage.input_tokens, 7);
    assert_eq!(run.status, RunState::Ok);
    assert_eq!(run.name, "checkout");
    assert_eq!(run.app, "shop");
    assert_eq!(run.started_at, 1_000);
    assert_eq!(run.finished_at, Some(1_013));
    let page = r.events("r1", None, None).expect("read").expect("run");
    let seqs: Vec<u64> = page.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..14).collect::<Vec<_>>());
    w.close().expect("close");
}

fn commit_hook_sees_only_new_events(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let seen: Arc<Mutex<Vec<u64>>> = Arc::default();
    let sink = seen.clone();
    let hook = Box::new(move |c: Committed| {
        sink.lock()
            .expect("lock")
            .extend(c.events.iter().map(|e| e.seq));
    });
    let (w, _) = db.writer(WriterConfig::default(), Some(hook));
    w.append(started("r", 0)).expect("a");
    w.append(started("r", 0)).expect("a");
    w.append(ev(
        "r",
        1,
        "node.started",
        json!({"nodeId": "n", "kind": "tool", "name": "n", "instanceId": "i"}),
    ))
    .expect("a");
    w.flush().expect("flush");
    assert_eq!(*seen.lock().expect("lock"), vec![0, 1]);
    w.close().expect("close");
}

fn event_pages_follow_after_seq(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    for e in sample_run("r") {
        w.append(e).expect("a");
    }
    w.flush().expect("flush");
    let first = r.events("r", None, Some(5)).expect("read").expect("run");
    assert_eq!(first.events.len(), 5);
    assert!(first.has_more);
    assert_eq!(first.next_after_seq, Some(4));
    let second = r
        .events("r", first.next_after_seq, Some(5000))
        .expect("read")
        .expect("run");
    assert_eq!(second.events.first().map(|e| e.seq), Some(5));
    assert!(!second.has_more);
    assert_eq!(second.next_after_seq, Some(13));
    let empty = r.events("r", Some(13), None).expect("read").expect("run");
    assert!(empty.events.is_empty());
    assert_eq!(empty.next_after_seq, Some(13));
    assert!(r.events("missing", None, None).expect("read").is_none());
    // Stored envelopes read back as the app's envelope.
    let env: Value = serde_json::from_str(&first.events[3].envelope_json()).expect("json");
    assert_eq!(env["type"], "node.started");
    assert_eq!(env["runId"], "r");
    assert_eq!(env["payload"]["input"]["q"], "x");
    w.close().expect("close");
}

fn running_runs_are_abandoned_on_reopen_and_revive_when_the_app_returns(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    {
        let (w, _) = db.open();
        w.append(started("r", 0)).expect("a");
        w.close().expect("close");
    }
    let (w, report) = db.writer(WriterConfig::default(), None);
    assert_eq!(report.reconciled, vec!["r".to_owned()]);
    let r = db.reader();
    assert_eq!(
        r.get_run("r").expect("read").expect("run").status,
        RunState::Abandoned
    );
    w.append(ev(
        "r",
        1,
        "node.started",
        json!({"nodeId": "n", "kind": "tool", "name": "n", "instanceId": "i"}),
    ))
    .expect("a");
    w.flush().expect("flush");
    assert_eq!(
        r.get_run("r").expect("read").expect("run").status,
        RunState::Running
    );
    assert_eq!(w.abandon(vec!["r".into()]).expect("abandon"), 1);
    assert_eq!(w.abandon(vec!["r".into()]).expect("abandon"), 0);
    assert_eq!(
        r.get_run("r").expect("read").expect("run").status,
        RunState::Abandoned
    );
    w.append(ev("r", 2, "run.finished", json!({"status": "aborted"})))
        .expect("a");
    w.flush().expect("flush");
    assert_eq!(
        r.get_run("r").expect("read").expect("run").status,
        RunState::Aborted
    );
    w.close().expect("close");
}

fn implicit_runs_take_the_app_hint_and_keep_the_claim(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    let e = ev(
        "imp",
        5,
        "node.started",
        json!({"nodeId": "n", "kind": "tool", "name": "n", "instanceId": "i"}),
    )
    .with_app_hint(Some("cli-app".into()))
    .with_claim(Some("tok".into()));
    w.append(e).expect("a");
    w.flush().expect("flush");
    let run = r.get_run("imp").expect("read").expect("run");
    assert_eq!(run.app, "cli-app");
    assert_eq!(run.status, RunState::Running);
    assert_eq!(
        r.run_claim("imp").expect("read"),
        Some(Some("tok".to_owned()))
    );
    assert_eq!(r.run_claim("none").expect("read"), None);
    w.close().expect("close");
}

fn list_filters_search_errors_and_delete(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    for run in ["a1", "b2", "c3"] {
        for e in sample_run(run) {
            w.append(e).expect("a");
        }
    }
    w.append(started("live", 0)).expect("a");
    w.flush().expect("flush");
    let all = r.list_runs(&RunFilter::default()).expect("list");
    assert_eq!(all.runs.len(), 4);
    let running = r
        .list_runs(&RunFilter {
            status: Some(RunState::Running),
            ..Default::default()
        })
        .expect("list");
    assert_eq!(
        running
            .runs
            .iter()
            .map(|x| x.id.as_str())
            .collect::<Vec<_>>(),
        vec!["live"]
    );
    let q = r
        .list_runs(&RunFilter {
            q: Some("B2".into()),
            ..Default::default()
        })
        .expect("list");
    assert_eq!(q.runs.len(), 1);
    let page = r
        .list_runs(&RunFilter {
            limit: Some(2),
            ..Default::default()
        })
        .expect("list");
    assert_eq!(page.runs.len(), 2);
    assert!(page.next_before.is_some());
    let hits = r
        .search_events("ValueError", Some("b2"), 10)
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].seq, 6);
    assert!(hits[0].snippet.contains("ValueError"));
    let errors = r.recent_errors(10).expect("errors");
    assert_eq!(errors.len(), 3);
    assert_eq!(errors[0].message, "boom");
    assert!(w.delete_run("b2").expect("delete"));
    assert!(!w.delete_run("b2").expect("delete"));
    assert!(r.get_run("b2").expect("read").is_none());
    assert!(
        r.search_events("ValueError", Some("b2"), 10)
            .expect("search")
            .is_empty()
    );
    w.close().expect("close");
}

fn projection_builds_nodes_instances_and_edges(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    for e in sample_run("r") {
        w.append(e).expect("a");
    }
    w.flush().expect("flush");
    let events = r.all_events("r").expect("read").expect("run");
    let graph = project("r", &events).graph();
    let ids: Vec<&str> = graph.nodes.iter().map(|n| n.node_id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["tool:never", "agent:a", "tool:search", "llm:step"]
    );
    let never = &graph.nodes[0];
    assert!(never.hinted);
    assert_eq!(never.status, NodeState::Hinted);
    let search = &graph.nodes[2];
    assert_eq!(search.status, NodeState::Ok);
    assert_eq!(search.instances.len(), 1);
    // Held time is measured from the hold the hub saw (exec.paused at ts 4 -> exec.resumed at
    // ts 5), not the app's own `heldMs` figure, which counts only when nothing held here.
    assert_eq!(search.instances[0].held_ms, Some(1.0));
    assert_eq!(
        search.instances[0]
            .error
            .as_ref()
            .map(|e| e.message.as_str()),
        Some("boom")
    );
    let llm = &graph.nodes[3];
    assert_eq!(llm.instances[0].tokens, "Hello");
    assert_eq!(llm.instances[0].reasoning, "hmm");
    assert!(
        graph
            .edges
            .iter()
            .any(|e| e.source == "agent:a" && e.target == "tool:search")
    );
    assert!(
        graph
            .edges
            .iter()
            .any(|e| e.source == "agent:a" && e.target == "tool:never")
    );
    let v = serde_json::to_value(&graph).expect("json");
    assert_eq!(v["runId"], "r");
    assert_eq!(v["nodes"][2]["instances"][0]["instanceId"], "c1");
    assert_eq!(v["nodes"][2]["parentId"], "agent:a");

    let detail = r
        .node_detail("r", "tool:search")
        .expect("read")
        .expect("node");
    assert_eq!(detail.instances[0].input, Some(json!({"q": "x"})));
    assert_eq!(detail.instances[0].output, Some(json!([1, 2])));
    assert_eq!(
        detail.instances[0]
            .error_detail
            .as_ref()
            .and_then(|e| e["stack"].as_str()),
        Some("tb")
    );
    assert_eq!(detail.instances[0].pauses.len(), 1);
    assert_eq!(
        detail.instances[0].pauses[0].action.as_deref(),
        Some("continue")
    );
    assert!(r.node_detail("r", "tool:nope").expect("read").is_none());
    w.close().expect("close");
}

fn an_open_pause_shows_as_paused_until_resumed(backend: Backend) {
    let events = {
        let Some(db) = TestDb::new(backend) else {
            return;
        };
        let (w, r) = db.open();
        for e in sample_run("r").into_iter().take(5) {
            w.append(e).expect("a");
        }
        w.flush().expect("flush");
        let ev = r.all_events("r").expect("read").expect("run");
        w.close().expect("close");
        ev
    };
    let graph = project("r", &events).graph();
    let search = graph
        .nodes
        .iter()
        .find(|n| n.node_id == "tool:search")
        .expect("node");
    assert_eq!(search.status, NodeState::Paused);
    let agent = graph
        .nodes
        .iter()
        .find(|n| n.node_id == "agent:a")
        .expect("node");
    assert_eq!(agent.status, NodeState::Running);
}

#[cfg(unix)]
#[test]
fn database_directory_and_file_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("home").join("m.db");
    let (w, _r) = open(&path);
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(path.parent().expect("dir")), 0o700);
    assert_eq!(mode(&path), 0o600);
    w.close().expect("close");
}

#[test]
fn a_read_only_store_reads_while_the_writer_writes() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("m.db");
    let (w, _r) = open(&path);
    w.append(started("r", 0)).expect("a");
    w.flush().expect("flush");
    let ro = RunStore::open_read_only(&path).expect("ro");
    assert_eq!(
        ro.list_runs(&RunFilter::default())
            .expect("list")
            .runs
            .len(),
        1
    );
    w.append(started("r2", 0)).expect("a");
    w.flush().expect("flush");
    assert_eq!(
        ro.list_runs(&RunFilter::default())
            .expect("list")
            .runs
            .len(),
        2
    );
    w.close().expect("close");
}

fn large_batches_with_replays_and_gaps_store_each_event_once(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let events = Arc::new(Mutex::new(Vec::<u64>::new()));
    let seen = events.clone();
    let hook: mindgate_store::CommitHook = Box::new(move |c: Committed| {
        seen.lock().unwrap().extend(c.events.iter().map(|e| e.seq));
    });
    // One big queue drained in a few transactions: multi-row inserts and replays mix.
    let config = WriterConfig {
        max_batch: 500,
        ..WriterConfig::default()
    };
    let (w, _) = db.writer(config, Some(hook));
    let node = |seq: u64| {
        ev(
            "big",
            seq,
            "node.token",
            json!({"nodeId": "llm:a", "deltas": []}),
        )
    };
    w.append(started("big", 0)).unwrap();
    for seq in 1..=200 {
        w.append(node(seq)).unwrap();
    }
    // Replays of old events, a gap filled later, and duplicates inside one batch.
    for seq in (150..=260).rev() {
        if seq != 230 {
            w.append(node(seq)).unwrap();
        }
    }
    for seq in [230, 230, 261, 261, 262] {
        w.append(node(seq)).unwrap();
    }
    w.flush().unwrap();
    let r = db.reader();
    let run = r.get_run("big").unwrap().expect("run");
    assert_eq!(run.counts.events, 263);
    assert_eq!(run.last_seq, Some(262));
    let page = r.events("big", None, Some(1_000)).unwrap().expect("page");
    let seqs: Vec<u64> = page.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..=262).collect::<Vec<_>>());
    // The hook saw each new event exactly once.
    let mut hooked = events.lock().unwrap().clone();
    hooked.sort_unstable();
    assert_eq!(hooked, (0..=262).collect::<Vec<_>>());
    w.close().unwrap();
}

fn at(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = frame(run, seq, ts, ty, payload);
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

/// A run started at `ts`; finished (`ok`) one second later when `finish`.
fn run_at(w: &Writer, run: &str, ts: i64, finish: bool) {
    w.append(at(
        run,
        0,
        ts,
        "run.started",
        json!({"app": "shop", "sdk": {"name": "t", "version": "1"}}),
    ))
    .unwrap();
    w.append(at(
        run,
        1,
        ts + 10,
        "node.started",
        json!({"nodeId": "tool:a", "kind": "tool", "name": "a", "instanceId": "i"}),
    ))
    .unwrap();
    if finish {
        w.append(at(
            run,
            2,
            ts + 1_000,
            "run.finished",
            json!({"status": "ok"}),
        ))
        .unwrap();
    }
}

fn pruning_keeps_the_newest_runs_and_recent_days_and_never_running_ones(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let deleted = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = deleted.clone();
    let hook: mindgate_store::CommitHook = Box::new(move |c: Committed| {
        seen.lock().unwrap().extend(c.deleted);
    });
    let (w, _) = db.writer(WriterConfig::default(), Some(hook));
    let now = mindgate_store::now_ms();
    let day = 86_400_000i64;
    run_at(&w, "ancient", now - 90 * day, true);
    run_at(&w, "old-running", now - 80 * day, false);
    for i in 0..5 {
        run_at(&w, &format!("recent-{i}"), now - 5 * day + i * 1_000, true);
    }
    w.flush().unwrap();
    let r = db.reader();
    let count = |r: &RunStore| {
        r.list_runs(&RunFilter {
            limit: Some(1_000),
            ..Default::default()
        })
        .unwrap()
        .runs
        .len()
    };
    assert_eq!(count(&r), 7);

    // Keep-all does nothing.
    assert!(
        w.prune(mindgate_store::Retention::KEEP_ALL)
            .unwrap()
            .is_empty()
    );

    // Age only: the 90-day-old finished run goes; the running one stays however old.
    let gone = w
        .prune(mindgate_store::Retention {
            keep_runs: 0,
            keep_days: 30,
        })
        .unwrap();
    assert_eq!(gone, vec!["ancient".to_owned()]);
    assert!(r.get_run("old-running").unwrap().is_some());
    assert!(r.events("ancient", None, None).unwrap().is_none());

    // Count: keep the 3 newest; the older finished ones go, oldest first.
    let gone = w
        .prune(mindgate_store::Retention {
            keep_runs: 3,
            keep_days: 0,
        })
        .unwrap();
    assert_eq!(gone, vec!["recent-0".to_owned(), "recent-1".to_owned()]);
    let left: Vec<String> = r
        .list_runs(&RunFilter::default())
        .unwrap()
        .runs
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(left, ["recent-4", "recent-3", "recent-2", "old-running"]);
    // Their events are gone too, and viewers were told.
    assert_eq!(r.total_events().unwrap(), 3 * 3 + 2);
    assert_eq!(
        *deleted.lock().unwrap(),
        ["ancient", "recent-0", "recent-1"].map(str::to_owned)
    );

    // Many runs are pruned in several short transactions.
    for i in 0..120 {
        run_at(&w, &format!("bulk-{i:03}"), now - 2 * day + i, true);
    }
    w.flush().unwrap();
    let gone = w.prune(mindgate_store::Retention::default()).unwrap();
    assert!(
        gone.is_empty(),
        "124 runs, all recent: the defaults keep them"
    );
    let gone = w
        .prune(mindgate_store::Retention {
            keep_runs: 10,
            keep_days: 30,
        })
        .unwrap();
    // 123 finished + 1 running: the 10 newest stay, and the running one.
    assert_eq!(gone.len(), 123 - 10);
    assert_eq!(count(&r), 11);
    assert!(r.get_run("old-running").unwrap().is_some());
    w.close().unwrap();
}

/// Bytes 18 and 19 of a SQLite file header: 1 = rollback journal, 2 = WAL.
fn journal_format(path: &Path) -> (u8, u8) {
    let bytes = std::fs::read(path).expect("read db");
    (bytes[18], bytes[19])
}

#[test]
fn a_newer_schema_database_is_refused_without_converting_it_to_wal() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("newer.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch("CREATE TABLE future (x INTEGER); PRAGMA user_version = 99;")
            .expect("schema");
    }
    assert_eq!(
        journal_format(&path),
        (1, 1),
        "made in rollback-journal mode"
    );
    let err = Writer::open(&path, WriterConfig::default(), None).expect_err("refused");
    assert!(
        matches!(
            err,
            mindgate_store::StoreError::SchemaTooNew {
                found: 99,
                supported: mindgate_store::SCHEMA_VERSION
            }
        ),
        "{err}"
    );
    assert_eq!(
        journal_format(&path),
        (1, 1),
        "the file was left in its journal mode"
    );
    assert!(!dir.path().join("newer.db-wal").exists());
    let conn = rusqlite::Connection::open(&path).expect("reopen");
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("version");
    assert_eq!(version, 99);
}

#[cfg(unix)]
#[test]
fn a_read_only_database_is_refused_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("m.db");
    let (w, _r) = open(&path);
    w.append(started("kept", 0)).expect("append");
    w.close().expect("close");
    drop(_r);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let before = std::fs::read(&path).expect("read");
    let err = Writer::open(&path, WriterConfig::default(), None).expect_err("refused");
    assert!(
        matches!(
            err,
            mindgate_store::StoreError::ReadOnly { mode: 0o444, .. }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("read-only"), "{err}");
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o444, "the user's mode is kept");
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "nothing written"
    );
    // Its runs are still readable.
    let ro = RunStore::open_read_only(&path).expect("read-only store");
    assert!(ro.get_run("kept").expect("get").is_some());
}

#[cfg(unix)]
#[test]
fn an_existing_database_keeps_the_mode_its_owner_gave_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("shared.db");
    let (w, r) = open(&path);
    w.close().expect("close");
    drop(r);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let (w, _r) = open(&path);
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    w.close().expect("close");
}

fn the_streamed_graph_equals_the_full_projection_at_every_prefix(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    let run = sample_run("s");
    for (n, e) in run.into_iter().enumerate() {
        w.append(e).expect("a");
        w.flush().expect("flush");
        let events = r.all_events("s").expect("read").expect("run");
        let full = project("s", &events);
        let streamed = r.graph("s").expect("read").expect("run");
        assert_eq!(streamed, full.graph(), "after {} events", n + 1);
        assert_eq!(full.clone().into_graph(), full.graph());
    }
    assert!(r.graph("nope").expect("read").is_none());
    w.close().expect("close");
}
