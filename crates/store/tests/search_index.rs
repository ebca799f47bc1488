//! The SQLite search index behind the writer (issue 27, "bound index cost"): the index is a
//! sibling file (`<db>.search`) filled by its own thread from a watermark over the queue of
//! stored events, and a search scans what it has not reached, so an event is found the
//! moment its store call returns and still after the indexer caught up; the watermark
//! survives a restart; a deleted run's events are not found (its key reused or not); a
//! missing, corrupt or outdated index file is rebuilt. Real SQLite files throughout.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, RunImport, RunStore, Writer};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

fn ev(run: &str, seq: u64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 1_000 + seq as i64, "runId": run, "type": ty, "payload": payload})
        .to_string();
    let parsed = parse_envelope(&f);
    NewEvent::from_frame(&f, &parsed).unwrap_or_else(|| panic!("{parsed:?}"))
}

/// A run whose tool output says `words`.
fn fill(w: &Writer, run: &str, words: &str) {
    for e in [
        ev(
            run,
            0,
            "run.started",
            json!({"app": "trips", "sdk": {"name": "t", "version": "1"}}),
        ),
        ev(
            run,
            1,
            "node.started",
            json!({"nodeId": "tool:t", "instanceId": "t-1", "kind": "tool", "name": "t"}),
        ),
        ev(
            run,
            2,
            "node.finished",
            json!({"nodeId": "tool:t", "instanceId": "t-1", "durationMs": 5.0, "status": "ok", "output": {"text": words}}),
        ),
        ev(run, 3, "run.finished", json!({"status": "ok"})),
    ] {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
}

fn db_path(db: &TestDb) -> PathBuf {
    db.database.sqlite_path().expect("sqlite").to_path_buf()
}

fn runs_found(r: &RunStore, query: &str) -> Vec<String> {
    let mut runs: Vec<String> = r
        .search_events(query, None, 50)
        .expect("search")
        .into_iter()
        .map(|h| h.run_id)
        .collect();
    runs.sort();
    runs
}

/// Waits (bounded) until the index holds every queued event.
fn caught_up(r: &RunStore) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if r.search_index_pending().expect("pending") == Some(0) {
            return;
        }
        assert!(Instant::now() < deadline, "the indexer did not catch up");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The index file's inode and watermark.
fn index_state(db: &Path) -> (u64, i64) {
    use std::os::unix::fs::MetadataExt;
    let path = mindgate_store::search::index_path(db);
    let ino = std::fs::metadata(&path).expect("index file").ino();
    let conn = rusqlite::Connection::open(&path).expect("open index");
    let mark = conn
        .query_row(
            "SELECT value FROM search_meta WHERE key = 'watermark'",
            [],
            |r| r.get(0),
        )
        .expect("watermark");
    (ino, mark)
}

/// Holds the index file's write lock, so the indexer cannot advance while it lives.
fn stall_indexer(db: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(mindgate_store::search::index_path(db)).expect("open");
    conn.execute_batch("BEGIN IMMEDIATE").expect("lock");
    conn
}

#[test]
fn an_event_is_found_at_once_and_after_the_indexer_caught_up() {
    let db = TestDb::new(Backend::Sqlite).expect("sqlite");
    let path = db_path(&db);
    let (w, r) = db.open();
    fill(&w, "r1", "Room held at the Zanzibar Serena");
    caught_up(&r);
    let lock = stall_indexer(&path);
    fill(&w, "r2", "a dhow to Zanzibar at dawn");
    // Stored, not indexed: found by the scan of the tail.
    assert!(r.search_index_pending().expect("pending") >= Some(1));
    assert_eq!(runs_found(&r, "zanzibar"), ["r1", "r2"]);
    let hits = r.search_events("DHOW", None, 5).expect("search");
    assert_eq!((hits.len(), hits[0].seq), (1, 2));
    assert_eq!(hits[0].node_id.as_deref(), Some("tool:t"));
    assert!(
        r.search_events("dhow", Some("r1"), 5)
            .expect("s")
            .is_empty()
    );
    drop(lock);
    caught_up(&r);
    assert_eq!(runs_found(&r, "zanzibar"), ["r1", "r2"]);
    assert_eq!(runs_found(&r, "dhow"), ["r2"]);
    w.close().expect("close");
}

#[test]
fn the_watermark_resumes_after_reopening() {
    let db = TestDb::new(Backend::Sqlite).expect("sqlite");
    let path = db_path(&db);
    {
        let (w, r) = db.open();
        fill(&w, "r1", "Zanzibar");
        caught_up(&r);
        w.close().expect("close");
    }
    let (ino, mark) = index_state(&path);
    // Stored while no indexer runs (an import in another process): found by the scan.
    let source = TestDb::new(Backend::Sqlite).expect("sqlite");
    let (sw, sr) = source.open();
    fill(&sw, "r2", "Zanzibar again");
    let mut out = Vec::new();
    sr.export_jsonl("r2", &mut out)
        .expect("export")
        .expect("run");
    sw.close().expect("close");
    let text = String::from_utf8(out).expect("utf8");
    let mut lines = text.lines();
    let mut import =
        RunImport::begin_in(&db.database, lines.next().unwrap_or_default(), None).expect("begin");
    for (i, line) in lines.enumerate() {
        import.add_event(i as u64 + 2, line).expect("event");
    }
    import.finish().expect("import");
    let r = db.reader();
    assert_eq!(r.search_index_pending().expect("pending"), Some(1));
    assert_eq!(runs_found(&r, "zanzibar"), ["r1", "r2"]);
    let (w, _) = db.writer(Default::default(), None);
    caught_up(&r);
    let (ino_after, mark_after) = index_state(&path);
    assert_eq!(
        ino_after, ino,
        "the index file was rebuilt instead of resumed"
    );
    assert!(mark_after > mark, "{mark_after} <= {mark}");
    assert_eq!(runs_found(&r, "zanzibar"), ["r1", "r2"]);
    w.close().expect("close");
}

#[test]
fn a_deleted_runs_events_are_not_found_even_when_its_key_is_reused() {
    let db = TestDb::new(Backend::Sqlite).expect("sqlite");
    let path = db_path(&db);
    let (w, r) = db.open();
    fill(&w, "r1", "Zanzibar one");
    fill(&w, "r2", "Zanzibar two");
    caught_up(&r);
    assert!(w.delete_run("r1").expect("delete"));
    assert_eq!(runs_found(&r, "zanzibar"), ["r2"]);
    // With the indexer held back: r2 (the newest run key) is deleted and r3 may take its
    // key; r2's index rows must not answer for r3's events.
    let lock = stall_indexer(&path);
    assert!(w.delete_run("r2").expect("delete"));
    fill(&w, "r3", "Kilimanjaro");
    assert!(runs_found(&r, "zanzibar").is_empty());
    assert_eq!(runs_found(&r, "kilimanjaro"), ["r3"]);
    drop(lock);
    caught_up(&r);
    assert!(runs_found(&r, "zanzibar").is_empty());
    assert_eq!(runs_found(&r, "kilimanjaro"), ["r3"]);
    // And the index no longer holds them.
    let index = rusqlite::Connection::open(mindgate_store::search::index_path(&path)).expect("o");
    let rows: i64 = index
        .query_row("SELECT COUNT(*) FROM search_rows", [], |r| r.get(0))
        .expect("rows");
    assert_eq!(rows, 3, "r3's three events with text");
    w.close().expect("close");
}

/// Damages the index file of a closed store, reopens it, and checks the index is rebuilt.
fn rebuilt_after(damage: impl FnOnce(&Path)) {
    let db = TestDb::new(Backend::Sqlite).expect("sqlite");
    let path = db_path(&db);
    {
        let (w, r) = db.open();
        fill(&w, "r1", "Zanzibar");
        caught_up(&r);
        w.close().expect("close");
    }
    damage(&mindgate_store::search::index_path(&path));
    let (w, r) = db.open();
    // Found while the index is rebuilt (a scan) and after.
    assert_eq!(runs_found(&r, "zanzibar"), ["r1"]);
    caught_up(&r);
    assert_eq!(runs_found(&r, "zanzibar"), ["r1"]);
    fill(&w, "r2", "Zanzibar");
    assert_eq!(runs_found(&r, "zanzibar"), ["r1", "r2"]);
    w.close().expect("close");
    let (_, mark) = index_state(&path);
    assert!(mark >= 0);
}

fn remove_with_wal(index: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = index.as_os_str().to_os_string();
        name.push(suffix);
        let _ = std::fs::remove_file(name);
    }
}

#[test]
fn a_missing_index_file_is_rebuilt() {
    rebuilt_after(remove_with_wal);
}

#[test]
fn a_corrupt_index_file_is_rebuilt() {
    rebuilt_after(|index| {
        remove_with_wal(index);
        std::fs::write(index, vec![0x5a; 8192]).expect("write garbage");
    });
}

#[test]
fn an_index_file_of_another_version_is_rebuilt() {
    rebuilt_after(|index| {
        let conn = rusqlite::Connection::open(index).expect("open");
        conn.execute(
            "UPDATE search_meta SET value = 999 WHERE key = 'version'",
            [],
        )
        .expect("version");
    });
}

/// Past `search_backlog_limit` events waiting to be indexed, the writer waits for the
/// indexer before a transaction (bounded: a stalled indexer slows ingest, never stops it);
/// once the indexer caught up it writes without waiting again.
#[test]
fn the_writer_waits_for_an_indexer_that_fell_too_far_behind() {
    let db = TestDb::new(Backend::Sqlite).expect("sqlite");
    let path = db_path(&db);
    let config = mindgate_store::WriterConfig {
        search_backlog_limit: 6,
        ..mindgate_store::WriterConfig::default()
    };
    let (w, _) = db.writer(config, None);
    let r = db.reader();
    fill(&w, "r1", "first leg to Accra");
    caught_up(&r);
    assert_eq!(w.stats().search_waits, 0);

    let lock = stall_indexer(&path);
    fill(&w, "r2", "second leg to Kumasi");
    fill(&w, "r3", "third leg to Tamale");
    // Eight events wait (more than six): the next transaction waits for the indexer first,
    // gives up after its bound, and stores the run all the same.
    fill(&w, "r4", "fourth leg to Bolgatanga");
    assert!(w.stats().search_waits >= 1, "{:?}", w.stats());
    assert_eq!(runs_found(&r, "leg to"), ["r1", "r2", "r3", "r4"]);

    drop(lock);
    caught_up(&r);
    let waits = w.stats().search_waits;
    fill(&w, "r5", "fifth leg to Wa");
    assert_eq!(
        w.stats().search_waits,
        waits,
        "no wait once the indexer caught up"
    );
    assert_eq!(runs_found(&r, "leg to"), ["r1", "r2", "r3", "r4", "r5"]);
    w.close().expect("close");
}
