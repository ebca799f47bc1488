//! Threads: runs whose meta names one conversation (`threadId`, `conversationId`,
//! `sessionId`) are grouped and totalled by the store; the run list filters by thread,
//! user and tag; an import keeps them; a store from before the columns gets them filled
//! from its stored meta. On both backends.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::{NewEvent, RunFilter, RunImport, RunStore, ThreadFilter, Writer};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    runs_of_one_conversation_group_into_a_thread_with_totals,
    the_run_list_filters_by_thread_user_and_tag,
    an_imported_run_keeps_its_thread,
    a_store_from_before_the_columns_gets_them_filled_from_its_meta
);

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    let parsed = parse_envelope(&f);
    NewEvent::from_frame(&f, &parsed).unwrap_or_else(|| panic!("{parsed:?}"))
}

/// A finished run started at `t` lasting 1 s, with `meta`, 100/20 tokens and, when
/// `fail`, one `node.error`.
fn run(w: &Writer, id: &str, t: i64, meta: Value, fail: bool) {
    let node = json!({"nodeId": "llm:chat", "instanceId": "i1", "kind": "llm", "name": "chat"});
    let mut events = vec![
        ev(
            id,
            0,
            t,
            "run.started",
            json!({"app": "chat", "sdk": {"name": "t", "version": "1"}, "meta": meta}),
        ),
        ev(id, 1, t + 10, "node.started", node),
    ];
    if fail {
        events.push(ev(id, 2, t + 20, "node.error", json!({"nodeId": "llm:chat", "instanceId": "i1", "error": {"name": "E", "message": "boom"}})));
    }
    events.push(ev(id, 3, t + 900, "node.finished", json!({"nodeId": "llm:chat", "instanceId": "i1", "durationMs": 890.0, "status": "ok", "usage": {"inputTokens": 100, "outputTokens": 20}})));
    events.push(ev(
        id,
        4,
        t + 1_000,
        "run.finished",
        json!({"status": "ok"}),
    ));
    for e in events {
        w.append(e).expect("append");
    }
}

/// Three runs of thread `t-1` (the second by `conversationId`, which `threadId` beats),
/// one of `s-9` by `sessionId`, and one without a thread.
fn fill(w: &Writer) {
    run(
        w,
        "a1",
        1_000,
        json!({"threadId": "t-1", "userId": "ada", "tags": ["beta"]}),
        false,
    );
    run(
        w,
        "a2",
        5_000,
        json!({"conversationId": "t-1", "sessionId": "other", "userId": "ada"}),
        true,
    );
    run(
        w,
        "a3",
        9_000,
        json!({"threadId": "t-1", "userId": "bob", "tags": ["beta", "vip"]}),
        false,
    );
    run(w, "b1", 7_000, json!({"sessionId": "s-9"}), false);
    run(w, "c1", 8_000, json!({"name": "alone"}), false);
    w.flush().expect("flush");
}

fn runs_of_one_conversation_group_into_a_thread_with_totals(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    fill(&w);
    let list = r.list_threads(&ThreadFilter::default()).expect("threads");
    let ids: Vec<&str> = list.threads.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t-1", "s-9"], "latest active first; c1 has no thread");
    let t = &list.threads[0];
    assert_eq!(t.run_count, 3);
    assert_eq!((t.first_started_at, t.last_started_at), (1_000, 9_000));
    assert_eq!(t.duration_ms, 3_000);
    assert_eq!(t.work_ms, 3_000);
    assert_eq!((t.tokens.input_tokens, t.tokens.output_tokens), (300, 60));
    assert_eq!(t.errors, 1);
    assert_eq!(t.user_id.as_deref(), Some("bob"), "the latest run's user");
    assert_eq!(t.tags, ["beta", "vip"]);
    let detail = r.get_thread("t-1").expect("read").expect("thread");
    let order: Vec<&str> = detail.runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(order, ["a1", "a2", "a3"], "oldest first");
    assert_eq!(&detail.thread, t, "the list and the page total alike");
    assert!(detail.runs.iter().all(|r| r.cost.is_some()));
    assert!(r.get_thread("nope").expect("read").is_none());
    // Filters and paging.
    let by_user = r
        .list_threads(&ThreadFilter {
            user: Some("ada".into()),
            ..Default::default()
        })
        .expect("threads");
    assert_eq!(by_user.threads.len(), 1);
    let by_tag = r
        .list_threads(&ThreadFilter {
            tag: Some("vip".into()),
            ..Default::default()
        })
        .expect("threads");
    assert_eq!(by_tag.threads[0].id, "t-1");
    let page = r
        .list_threads(&ThreadFilter {
            limit: Some(1),
            ..Default::default()
        })
        .expect("threads");
    assert_eq!(page.next_before, Some(9_000));
    let next = r
        .list_threads(&ThreadFilter {
            limit: Some(1),
            before: page.next_before,
            ..Default::default()
        })
        .expect("threads");
    assert_eq!(next.threads[0].id, "s-9");
    assert_eq!(next.next_before, None);
    w.close().expect("close");
}

fn ids(r: &RunStore, filter: RunFilter) -> Vec<String> {
    r.list_runs(&filter)
        .expect("runs")
        .runs
        .into_iter()
        .map(|r| r.id)
        .collect()
}

fn the_run_list_filters_by_thread_user_and_tag(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    fill(&w);
    assert_eq!(
        ids(
            &r,
            RunFilter {
                thread: Some("t-1".into()),
                ..Default::default()
            }
        ),
        ["a3", "a2", "a1"]
    );
    assert_eq!(
        ids(
            &r,
            RunFilter {
                user: Some("ada".into()),
                ..Default::default()
            }
        ),
        ["a2", "a1"]
    );
    assert_eq!(
        ids(
            &r,
            RunFilter {
                tag: Some("beta".into()),
                ..Default::default()
            }
        ),
        ["a3", "a1"]
    );
    assert_eq!(
        ids(
            &r,
            RunFilter {
                tag: Some("bet".into()),
                ..Default::default()
            }
        ),
        Vec::<String>::new()
    );
    let a3 = r.get_run("a3").expect("read").expect("run");
    assert_eq!(a3.thread_id.as_deref(), Some("t-1"));
    assert_eq!(a3.user_id.as_deref(), Some("bob"));
    assert_eq!(a3.tags, ["beta", "vip"]);
    let v = serde_json::to_value(&a3).expect("json");
    assert_eq!(
        (v["threadId"].clone(), v["userId"].clone()),
        (json!("t-1"), json!("bob"))
    );
    w.close().expect("close");
}

fn an_imported_run_keeps_its_thread(backend: Backend) {
    let Some(source) = TestDb::new(Backend::Sqlite) else {
        return;
    };
    let Some(target) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = source.open();
    fill(&w);
    let mut out = Vec::new();
    r.export_jsonl("a2", &mut out)
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
    let tr = target.reader();
    let detail = tr.get_thread("t-1").expect("read").expect("thread");
    assert_eq!(detail.runs[0].id, "a2");
    assert_eq!(detail.thread.user_id.as_deref(), Some("ada"));
}

/// Takes the store back to before the run row kept its thread, user and tags.
fn drop_thread_columns(db: &TestDb) {
    match &db.database {
        mindgate_store::Database::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).expect("open");
            conn.execute_batch(
                "DROP INDEX runs_by_thread; ALTER TABLE runs DROP COLUMN thread_id; \
                 ALTER TABLE runs DROP COLUMN user_id; ALTER TABLE runs DROP COLUMN tags_json; \
                 PRAGMA user_version = 2;",
            )
            .expect("downgrade");
        }
        mindgate_store::Database::Postgres(_) => {
            let mut client = mindgate_testkit::pg_client(&db.postgres_url());
            client
                .batch_execute(
                    "ALTER TABLE runs DROP COLUMN thread_id, DROP COLUMN user_id, \
                     DROP COLUMN tags_json; \
                     DROP INDEX events_search; DROP INDEX events_payload_text; \
                     DROP TABLE annotations; DROP TABLE annotation_history; \
                     DROP TABLE datasets; DROP TABLE dataset_versions; DROP TABLE dataset_examples; \
                     DELETE FROM mindgate_run_migrations WHERE version >= 4;",
                )
                .expect("downgrade");
        }
    }
}

fn a_store_from_before_the_columns_gets_them_filled_from_its_meta(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    {
        let (w, _) = db.open();
        fill(&w);
        // Values the rule ignores: an object, an empty id, a tag too long.
        run(
            &w,
            "d1",
            9_500,
            json!({"threadId": {"x": 1}, "sessionId": 42, "userId": "", "tags": ["ok", "x".repeat(65)]}),
            false,
        );
        w.close().expect("close");
    }
    drop_thread_columns(&db);
    let (w, r) = db.open();
    let detail = r.get_thread("t-1").expect("read").expect("thread");
    assert_eq!(detail.runs.len(), 3);
    assert_eq!(detail.thread.tags, ["beta", "vip"]);
    assert_eq!(detail.thread.user_id.as_deref(), Some("bob"));
    let d1 = r.get_run("d1").expect("read").expect("run");
    let fresh = mindgate_store::run_keys(d1.meta.as_ref());
    assert_eq!(
        (d1.thread_id.clone(), d1.user_id.clone(), d1.tags.clone()),
        (fresh.thread_id, fresh.user_id, fresh.tags),
        "the backfill applies the writer's rule"
    );
    assert_eq!(d1.thread_id.as_deref(), Some("42"));
    w.close().expect("close");
}
