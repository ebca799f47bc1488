//! One bad row never costs its batch: out-of-range seqs are refused, a row
//! that fails in SQLite is isolated, and a wrong run row cannot make replays
//! roll a batch back (issue #10, item 1).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, RunStore, Writer, WriterConfig};
use serde_json::{Value, json};

fn ev(run: &str, seq: u64, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 1_000, "runId": run, "type": "node.token",
        "payload": payload})
    .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

fn token(run: &str, seq: u64) -> NewEvent {
    ev(
        run,
        seq,
        json!({"nodeId": "llm:step", "deltas": [{"t": "text", "v": "x"}]}),
    )
}

/// Queues `events` while another connection holds the write lock, so the
/// writer takes them in as few batches as it can (every event queued after
/// the first one it picks up shares a batch with it); then waits for them.
fn in_one_batch(path: &Path, writer: &Writer, events: Vec<NewEvent>) {
    let lock = rusqlite::Connection::open(path).expect("lock connection");
    lock.busy_timeout(Duration::from_secs(5)).expect("busy");
    lock.execute_batch("BEGIN IMMEDIATE").expect("lock");
    for e in events {
        writer.append(e).expect("append");
    }
    lock.execute_batch("COMMIT").expect("unlock");
    writer.flush().expect("flush");
}

fn stored_seqs(store: &RunStore, run: &str) -> Vec<u64> {
    store
        .events(run, None, Some(5_000))
        .expect("events")
        .map(|p| p.events.iter().map(|e| e.seq).collect())
        .unwrap_or_default()
}

#[test]
fn a_seq_above_i64_is_refused_and_a_later_replay_loses_no_neighbour_rows() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("m.db");
    {
        let (w, _) = Writer::open(&path, WriterConfig::default(), None).expect("writer");
        for seq in 1..=5 {
            w.append(token("a", seq)).expect("append");
        }
        w.append(token("a", u64::MAX)).expect("append");
        w.flush().expect("flush");
        assert_eq!(w.stats().refused_rows, 1, "the out-of-range seq is refused");
        w.close().expect("close");
    }
    // After a restart, the app replays seq 3 while another app streams.
    let (w, _) = Writer::open(&path, WriterConfig::default(), None).expect("reopen");
    let mut batch = vec![token("b", 0), token("a", 3)];
    batch.extend((1..=100).map(|s| token("b", s)));
    in_one_batch(&path, &w, batch);
    let store = RunStore::open(&path).expect("reader");
    assert_eq!(stored_seqs(&store, "b"), (0..=100).collect::<Vec<_>>());
    assert_eq!(stored_seqs(&store, "a"), vec![1, 2, 3, 4, 5]);
    let a = store.get_run("a").expect("read").expect("run a");
    assert_eq!((a.counts.events, a.last_seq), (5, Some(5)));
    assert_eq!(w.stats().isolated_batches, 0);
    w.close().expect("close");
}

#[test]
fn one_failing_row_is_isolated_and_the_rest_of_its_batch_is_stored() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("m.db");
    let (w, _) = Writer::open(&path, WriterConfig::default(), None).expect("writer");
    w.append(token("b", 0)).expect("append");
    w.flush().expect("flush");
    // A row SQLite refuses (standing in for any per-row failure).
    let db = rusqlite::Connection::open(&path).expect("db");
    db.execute_batch(
        "CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.payload LIKE '%boom%' \
         BEGIN SELECT RAISE(ABORT, 'boom'); END;",
    )
    .expect("trigger");
    drop(db);
    let mut batch: Vec<NewEvent> = (1..=50).map(|s| token("b", s)).collect();
    batch.push(ev("c", 1, json!({"nodeId": "boom", "deltas": []})));
    batch.extend((51..=100).map(|s| token("b", s)));
    batch.push(token("c", 2));
    in_one_batch(&path, &w, batch);
    let store = RunStore::open(&path).expect("reader");
    assert_eq!(stored_seqs(&store, "b"), (0..=100).collect::<Vec<_>>());
    assert_eq!(stored_seqs(&store, "c"), vec![2]);
    let stats = w.stats();
    assert_eq!(stats.failed_rows, 1, "{stats:?}");
    assert!(stats.isolated_batches >= 1, "{stats:?}");
    let b = store.get_run("b").expect("read").expect("run b");
    assert_eq!((b.counts.events, b.last_seq), (101, Some(100)));
    // The writer keeps working normally afterwards.
    w.append(token("b", 101)).expect("append");
    w.flush().expect("flush");
    assert_eq!(stored_seqs(&store, "b").len(), 102);
    w.close().expect("close");
}

#[test]
fn a_wrong_last_seq_in_the_run_row_cannot_roll_back_a_replay_batch() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("m.db");
    {
        let (w, _) = Writer::open(&path, WriterConfig::default(), None).expect("writer");
        for seq in 1..=5 {
            w.append(token("a", seq)).expect("append");
        }
        w.close().expect("close");
    }
    // What an older version left behind after a seq above 2^63-1.
    let db = rusqlite::Connection::open(&path).expect("db");
    db.execute("UPDATE runs SET last_seq = -1 WHERE id = 'a'", [])
        .expect("poison");
    drop(db);
    let (w, _) = Writer::open(&path, WriterConfig::default(), None).expect("reopen");
    let mut batch = vec![token("b", 0), token("a", 3), token("a", 6)];
    batch.extend((1..=100).map(|s| token("b", s)));
    in_one_batch(&path, &w, batch);
    let store = RunStore::open(&path).expect("reader");
    assert_eq!(stored_seqs(&store, "b").len(), 101);
    assert_eq!(stored_seqs(&store, "a"), vec![1, 2, 3, 4, 5, 6]);
    let a = store.get_run("a").expect("read").expect("run a");
    assert_eq!((a.counts.events, a.last_seq), (6, Some(6)));
    assert_eq!(w.stats().isolated_batches, 0, "no batch failed");
    w.close().expect("close");
}
