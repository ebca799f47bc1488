//! The run row keeps its held time and work time: the writer adds each released hold as
//! it stores the `exec.resumed`, so the run list, `GET /api/runs/:id` and `mindgate runs`
//! read them without projecting the run, and they equal the projection's
//! (`RunGraph::times`). A hold that began before the writer (re)loaded its run is timed
//! from the stored `exec.paused`; a hold counts once; an import recounts it; a SQLite file
//! from before the column gets it filled from its stored holds.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, RunImport, RunStore, run_work_ms};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    the_run_row_keeps_the_held_time_the_projection_shows,
    a_hold_begun_before_a_restart_is_timed_from_its_stored_pause,
    a_hold_released_twice_counts_once,
    an_imported_run_has_its_held_time_recounted,
    a_store_from_before_the_column_gets_it_filled_from_its_holds
);

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

/// `run.started` at 1,000, a tool held from 1,200 to 4,200 (error gate, released) and
/// from 5,000 to 5,500 (before gate), then finished at 6,000.
fn held_run(run: &str) -> Vec<NewEvent> {
    let node =
        |id: &str| json!({"nodeId": "tool:pay", "instanceId": id, "kind": "tool", "name": "pay"});
    let paused = |pause: &str, inst: &str, point: &str| json!({"pauseId": pause, "nodeId": "tool:pay", "instanceId": inst, "point": point});
    let resumed = |pause: &str| json!({"pauseId": pause, "action": "continue", "principal": {"kind": "viewer"}});
    vec![
        ev(
            run,
            0,
            1_000,
            "run.started",
            json!({"app": "shop", "sdk": {"name": "t", "version": "1"}}),
        ),
        ev(run, 1, 1_100, "node.started", node("i1")),
        ev(run, 2, 1_200, "exec.paused", paused("p1", "i1", "error")),
        ev(run, 3, 4_200, "exec.resumed", resumed("p1")),
        ev(
            run,
            4,
            4_250,
            "node.error",
            json!({"nodeId": "tool:pay", "instanceId": "i1", "error": {"name": "E", "message": "declined"}}),
        ),
        ev(run, 5, 4_900, "node.started", node("i2")),
        ev(run, 6, 5_000, "exec.paused", paused("p2", "i2", "before")),
        ev(run, 7, 5_500, "exec.resumed", resumed("p2")),
        ev(
            run,
            8,
            5_600,
            "node.finished",
            json!({"nodeId": "tool:pay", "instanceId": "i2", "durationMs": 700.0, "status": "ok"}),
        ),
        ev(run, 9, 6_000, "run.finished", json!({"status": "ok"})),
    ]
}

/// The run's held and work time as the run row says (list and detail agree).
fn row_times(r: &RunStore, run: &str) -> (i64, Option<i64>) {
    let detail = r.get_run(run).expect("read").expect("run");
    let listed = r
        .list_runs(&Default::default())
        .expect("list")
        .runs
        .into_iter()
        .find(|s| s.id == run)
        .expect("listed");
    assert_eq!(
        (listed.held_ms, listed.work_ms),
        (detail.held_ms, detail.work_ms)
    );
    (detail.held_ms, detail.work_ms)
}

/// The projection's held and work time of the stored run.
fn projected_times(r: &RunStore, run: &str) -> (f64, Option<f64>) {
    let graph = r.projection(run).expect("project").expect("run").graph();
    (graph.times.held_ms, graph.times.work_ms)
}

fn the_run_row_keeps_the_held_time_the_projection_shows(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    let events = held_run("r");
    // While it is held, nothing is released yet and work time grows with the duration.
    for e in events.iter().take(3).cloned() {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
    let running = r.get_run("r").expect("read").expect("run");
    assert_eq!(running.held_ms, 0);
    assert_eq!(
        running.work_ms,
        Some(run_work_ms(running.duration_ms.unwrap(), 0))
    );
    for e in events.into_iter().skip(3) {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
    assert_eq!(row_times(&r, "r"), (3_500, Some(5_000 - 3_500)));
    let (held, work) = projected_times(&r, "r");
    assert_eq!((held, work), (3_500.0, Some(1_500.0)));
    let json = serde_json::to_value(r.get_run("r").unwrap().unwrap()).unwrap();
    assert_eq!(
        (json["heldMs"].clone(), json["workMs"].clone()),
        (json!(3_500), json!(1_500))
    );
    w.close().expect("close");
}

fn a_hold_begun_before_a_restart_is_timed_from_its_stored_pause(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let events = held_run("r");
    {
        let (w, _) = db.open();
        for e in events.iter().take(7).cloned() {
            w.append(e).expect("append");
        }
        w.close().expect("close");
    }
    // A new writer (a restarted server) stores the release of the hold p2 began before.
    let (w, r) = db.open();
    for e in events.into_iter().skip(7) {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
    assert_eq!(row_times(&r, "r"), (3_500, Some(1_500)));
    assert_eq!(projected_times(&r, "r").0, 3_500.0);
    w.close().expect("close");
}

fn a_hold_released_twice_counts_once(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let mut events = held_run("r");
    let again = json!({"pauseId": "p1", "action": "continue"});
    events.pop(); // run.finished, sent after the second release
    events.push(ev("r", 9, 5_800, "exec.resumed", again.clone()));
    events.push(ev("r", 10, 6_000, "run.finished", json!({"status": "ok"})));
    {
        let (w, _) = db.open();
        for e in events.iter().cloned() {
            w.append(e).expect("append");
        }
        w.close().expect("close");
    }
    // And once more after a restart: the stored first release is found.
    let (w, r) = db.open();
    w.append(ev("r", 11, 6_100, "exec.resumed", again))
        .expect("append");
    w.flush().expect("flush");
    assert_eq!(row_times(&r, "r").0, 3_500);
    assert_eq!(projected_times(&r, "r").0, 3_500.0);
    w.close().expect("close");
}

fn an_imported_run_has_its_held_time_recounted(backend: Backend) {
    let Some(source) = TestDb::new(Backend::Sqlite) else {
        return;
    };
    let Some(target) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = source.open();
    for e in held_run("r") {
        w.append(e).expect("append");
    }
    w.close().expect("close");
    let mut file = Vec::new();
    r.export_jsonl("r", &mut file).expect("export");
    // A header that lies about the held time is not believed.
    let text = String::from_utf8(file)
        .unwrap()
        .replacen("\"heldMs\":3500", "\"heldMs\":1", 1);
    assert!(
        !text.contains("\"heldMs\":3500"),
        "the header carried the held time"
    );
    let mut lines = text.lines();
    let mut import = RunImport::begin_in(&target.database, lines.next().unwrap_or_default(), None)
        .expect("begin");
    for (i, line) in lines.enumerate() {
        import.add_event(i as u64 + 2, line).expect("event");
    }
    import.finish().expect("import");
    let tr = target.reader();
    assert_eq!(row_times(&tr, "r"), (3_500, Some(1_500)));
}

/// Takes the store back to before the run row kept its held time.
fn drop_held_column(db: &TestDb) {
    match &db.database {
        mindgate_store::Database::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).expect("open");
            conn.execute_batch("ALTER TABLE runs DROP COLUMN held_ms; PRAGMA user_version = 1;")
                .expect("downgrade");
        }
        mindgate_store::Database::Postgres(_) => {
            let mut client = mindgate_testkit::pg_client(&db.postgres_url());
            client
                .batch_execute(
                    "ALTER TABLE runs DROP COLUMN held_ms, DROP COLUMN thread_id, \
                     DROP COLUMN user_id, DROP COLUMN tags_json; \
                     DROP INDEX events_search; DROP INDEX events_payload_text; \
                     DROP TABLE annotations; DROP TABLE annotation_history; \
                     DROP TABLE datasets; DROP TABLE dataset_versions; DROP TABLE dataset_examples; \
                     DELETE FROM mindgate_run_migrations WHERE version >= 3;",
                )
                .expect("downgrade");
        }
    }
}

fn a_store_from_before_the_column_gets_it_filled_from_its_holds(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    {
        let (w, _) = db.open();
        for e in held_run("r") {
            w.append(e).expect("append");
        }
        w.close().expect("close");
    }
    drop_held_column(&db);
    let (w, r) = db.open();
    assert_eq!(row_times(&r, "r"), (3_500, Some(1_500)));
    w.close().expect("close");
}
