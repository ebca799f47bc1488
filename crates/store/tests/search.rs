//! Search across everything: each stored event's text is found (SQLite: through the index
//! file filled behind the writer, plus a scan of what it has not reached; PostgreSQL: the
//! index written in the writer's transaction), an imported one too, a store from before the index gets it filled, and a
//! hit names its run, node, instance and seq with the match marked in its snippet. On both
//! backends (SQLite: substrings through FTS5 trigrams; PostgreSQL: words through tsvector).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::{EventHit, NewEvent, RunImport, Writer};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    a_word_only_in_a_tool_output_is_found_with_its_node_and_mark,
    an_imported_run_is_searchable,
    a_store_from_before_the_index_gets_it_filled
);

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    let parsed = parse_envelope(&f);
    NewEvent::from_frame(&f, &parsed).unwrap_or_else(|| panic!("{parsed:?}"))
}

/// A run whose tool `book_hotel` answers with a confirmation naming "Zanzibar".
fn fill(w: &Writer, run: &str) {
    let tool = json!({"nodeId": "tool:book_hotel", "instanceId": "t-1", "kind": "tool", "name": "book_hotel", "input": {"city": "Stone Town"}});
    for e in [
        ev(
            run,
            0,
            1_000,
            "run.started",
            json!({"app": "trips", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "plan a trip"}}),
        ),
        ev(run, 1, 1_010, "node.started", tool),
        ev(
            run,
            2,
            1_500,
            "node.finished",
            json!({"nodeId": "tool:book_hotel", "instanceId": "t-1", "durationMs": 490.0, "status": "ok", "output": {"confirmation": "Room held at the Zanzibar Serena, check-in Friday"}}),
        ),
        ev(run, 3, 2_000, "run.finished", json!({"status": "ok"})),
    ] {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
}

fn marked(hit: &EventHit) -> String {
    let [a, b] = hit.mark.expect("a mark");
    hit.snippet.chars().skip(a).take(b - a).collect()
}

fn a_word_only_in_a_tool_output_is_found_with_its_node_and_mark(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    fill(&w, "r1");
    let hits = r.search_events("zanzibar", None, 10).expect("search");
    assert_eq!(hits.len(), 1, "{hits:?}");
    let h = &hits[0];
    assert_eq!((h.run_id.as_str(), h.seq), ("r1", 2));
    assert_eq!(h.node_id.as_deref(), Some("tool:book_hotel"));
    assert_eq!(h.instance_id.as_deref(), Some("t-1"));
    assert_eq!(h.type_name, "node.finished");
    assert_eq!(marked(h), "Zanzibar");
    // Node and run names are found too.
    let by_name = r.search_events("book_hotel", None, 10).expect("search");
    assert!(
        by_name.iter().any(|h| h.seq == 1 && h.mark.is_some()),
        "{by_name:?}"
    );
    assert_eq!(
        r.search_events("plan", Some("r1"), 10).expect("search")[0].seq,
        0
    );
    assert!(
        r.search_events("zanzibar", Some("other"), 10)
            .expect("search")
            .is_empty()
    );
    if backend == Backend::Sqlite {
        // Any substring of three characters or more; ids are not text.
        assert_eq!(
            marked(&r.search_events("nzib", None, 10).expect("search")[0]),
            "nzib"
        );
        assert!(r.search_events("t-1", None, 10).expect("search").is_empty());
    }
    assert!(w.delete_run("r1").expect("delete"));
    assert!(
        r.search_events("zanzibar", None, 10)
            .expect("search")
            .is_empty()
    );
    w.close().expect("close");
}

fn an_imported_run_is_searchable(backend: Backend) {
    let Some(source) = TestDb::new(Backend::Sqlite) else {
        return;
    };
    let Some(target) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = source.open();
    fill(&w, "r1");
    let mut out = Vec::new();
    r.export_jsonl("r1", &mut out)
        .expect("export")
        .expect("run");
    w.close().expect("close");
    let text = String::from_utf8(out).expect("utf8");
    let mut lines = text.lines();
    let mut import = RunImport::begin_in(&target.database, lines.next().unwrap_or_default(), None)
        .expect("begin");
    for (i, line) in lines.enumerate() {
        import.add_event(i as u64 + 2, line).expect("event");
    }
    import.finish().expect("import");
    let hits = target
        .reader()
        .search_events("Zanzibar", None, 10)
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].node_id.as_deref(), Some("tool:book_hotel"));
}

fn drop_index(db: &TestDb) {
    match &db.database {
        mindgate_store::Database::Sqlite(path) => {
            // A schema-6 file: its index in the file (empty here), no queue, no sibling.
            let conn = rusqlite::Connection::open(path).expect("open");
            conn.execute_batch(
                "DROP TABLE search_queue; \
                 CREATE TABLE search_rows (id INTEGER PRIMARY KEY, run_key INTEGER NOT NULL, \
                     seq INTEGER NOT NULL); \
                 CREATE VIRTUAL TABLE search_fts USING fts5(body, content = '', \
                     contentless_delete = 1, tokenize = 'trigram'); \
                 PRAGMA user_version = 6;",
            )
            .expect("downgrade");
            drop(conn);
            for file in ["", "-wal", "-shm"] {
                let mut name = mindgate_store::search::index_path(path).into_os_string();
                name.push(file);
                let _ = std::fs::remove_file(name);
            }
        }
        mindgate_store::Database::Postgres(_) => {
            let mut client = mindgate_testkit::pg_client(&db.postgres_url());
            client
                .batch_execute(
                    "DROP INDEX events_search; DROP INDEX events_payload_text; \
                     DELETE FROM mindgate_run_migrations WHERE version = 5;",
                )
                .expect("downgrade");
        }
    }
}

fn a_store_from_before_the_index_gets_it_filled(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    {
        let (w, _) = db.open();
        fill(&w, "r1");
        w.close().expect("close");
    }
    drop_index(&db);
    let (w, r) = db.open();
    let hits = r.search_events("zanzibar", None, 10).expect("search");
    assert_eq!(hits.len(), 1);
    fill(&w, "r2");
    assert_eq!(
        r.search_events("zanzibar", None, 10).expect("search").len(),
        2
    );
    w.close().expect("close");
}
