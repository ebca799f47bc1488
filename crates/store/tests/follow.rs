//! Several writers on one PostgreSQL run store: commit announcements (exact seq
//! ranges, sent inside the transaction), the follower that turns other writers' commits
//! into [`Committed`] values (and says `Resync` after a lost connection), and the
//! instance-aware abandonment of orphaned runs. Without `MINDGATE_TEST_POSTGRES_URL`
//! every case prints the usual "skipped" line and passes.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mindgate_protocol::parse_envelope;
use mindgate_store::{
    COMMIT_CHANNEL, Committed, Database, Followed, Follower, NewEvent, RunState, Writer,
    WriterConfig, follower_application_name,
};
use postgres::fallible_iterator::FallibleIterator;
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

/// Longest any observable condition is waited for.
const PATIENCE: Duration = Duration::from_secs(20);

fn ev(run: &str, seq: u64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 1_000 + seq as i64, "runId": run, "type": ty,
        "payload": payload})
    .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

fn started(run: &str) -> NewEvent {
    ev(
        run,
        0,
        "run.started",
        json!({"app": "shop", "sdk": {"name": "t", "version": "1"}}),
    )
}

fn node(run: &str, seq: u64) -> NewEvent {
    ev(
        run,
        seq,
        "node.started",
        json!({"nodeId": format!("tool:{seq}"), "kind": "tool", "name": "t", "instanceId": format!("i{seq}")}),
    )
}

fn writer_as(db: &TestDb, instance: &str) -> Writer {
    let config = WriterConfig {
        instance_id: Some(instance.to_owned()),
        ..WriterConfig::default()
    };
    db.writer(config, None).0
}

fn url(db: &TestDb) -> &mindgate_store::PostgresUrl {
    match &db.database {
        Database::Postgres(url) => url,
        Database::Sqlite(_) => panic!("not PostgreSQL"),
    }
}

/// The schema of the test store (announcements name it).
fn schema_of(db: &TestDb) -> String {
    let mut client = mindgate_testkit::pg_client(&db.postgres_url());
    client
        .query_one("SELECT current_schema()", &[])
        .unwrap()
        .get(0)
}

/// A raw listener on the announcement channel.
fn listener(db: &TestDb) -> postgres::Client {
    let mut client = mindgate_testkit::pg_client(&db.postgres_url());
    client
        .batch_execute(&format!("LISTEN {COMMIT_CHANNEL}"))
        .unwrap();
    client
}

/// Seqs announced for `run` by announcements of `schema`, heard until `enough` holds.
fn hear_seqs(
    client: &mut postgres::Client,
    schema: &str,
    run: &str,
    enough: impl Fn(&BTreeSet<u64>) -> bool,
) -> (BTreeSet<u64>, Vec<Value>) {
    let until = Instant::now() + PATIENCE;
    let mut seqs = BTreeSet::new();
    let mut heard = Vec::new();
    while !enough(&seqs) {
        assert!(
            Instant::now() < until,
            "announcements missing; got {seqs:?}"
        );
        let mut notes = client.notifications();
        let Some(note) = notes
            .timeout_iter(Duration::from_millis(500))
            .next()
            .unwrap()
        else {
            continue;
        };
        assert!(note.payload().len() <= mindgate_store::MAX_ANNOUNCEMENT_BYTES);
        let v: Value = serde_json::from_str(note.payload()).unwrap();
        if v["s"] != schema {
            continue; // another test's store
        }
        for r in v["runs"].as_array().unwrap() {
            if r["id"] == run {
                for range in r["seqs"].as_array().unwrap() {
                    let (lo, hi) = (range[0].as_u64().unwrap(), range[1].as_u64().unwrap());
                    seqs.extend(lo..=hi);
                }
            }
        }
        heard.push(v);
    }
    (seqs, heard)
}

#[test]
fn announcements_carry_exactly_the_newly_stored_seqs() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let w = writer_as(&db, "inst-a");
    let schema = schema_of(&db);
    let mut client = listener(&db);
    w.append(started("r1")).unwrap();
    w.append(node("r1", 1)).unwrap();
    w.append(node("r1", 2)).unwrap();
    w.flush().unwrap();
    let (first, heard) = hear_seqs(&mut client, &schema, "r1", |s| s.len() >= 3);
    assert_eq!(first, BTreeSet::from([0, 1, 2]));
    assert!(heard.iter().all(|v| v["w"] == w.id()), "{heard:?}");
    assert_eq!(w.id(), "inst-a");
    // A replay of seq 2 beside new seqs 3 and 5: only the new ones are announced.
    w.append(node("r1", 2)).unwrap();
    w.append(node("r1", 3)).unwrap();
    w.append(node("r1", 5)).unwrap();
    w.append(node("r1", 3)).unwrap();
    w.flush().unwrap();
    let (second, _) = hear_seqs(&mut client, &schema, "r1", |s| {
        s.contains(&3) && s.contains(&5)
    });
    assert_eq!(second, BTreeSet::from([3, 5]));
    // A change without events (an abandon) lists the run with no ranges.
    assert_eq!(w.abandon(vec!["r1".to_owned()]).unwrap(), 1);
    let until = Instant::now() + PATIENCE;
    loop {
        assert!(Instant::now() < until, "no announcement of the abandon");
        let mut notes = client.notifications();
        let Some(note) = notes
            .timeout_iter(Duration::from_millis(500))
            .next()
            .unwrap()
        else {
            continue;
        };
        let v: Value = serde_json::from_str(note.payload()).unwrap();
        if v["s"] == schema.as_str() {
            assert_eq!(v["runs"], json!([{"id": "r1", "seqs": []}]), "{v}");
            break;
        }
    }
    w.close().unwrap();
}

/// Reports of a follower, gathered until `done` says enough.
fn follow_until(
    rx: &mpsc::Receiver<Followed>,
    mut done: impl FnMut(&Followed) -> bool,
) -> Vec<Followed> {
    let until = Instant::now() + PATIENCE;
    let mut got = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let report = rx
            .recv_timeout(left)
            .expect("the follower reported in time");
        let stop = done(&report);
        got.push(report);
        if stop {
            return got;
        }
    }
}

fn commits(reports: &[Followed]) -> Vec<&Committed> {
    reports
        .iter()
        .filter_map(|r| match r {
            Followed::Commit(c) => Some(c),
            Followed::Resync => None,
        })
        .collect()
}

#[test]
fn the_follower_reads_other_writers_commits_skips_its_own_and_resyncs_after_a_loss() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let mine = writer_as(&db, "inst-b");
    let other = writer_as(&db, "inst-a");
    let store = db.reader();
    let (tx, rx) = mpsc::channel();
    let follower = Follower::start(
        url(&db),
        mine.id(),
        None,
        Box::new(move |f| drop(tx.send(f))),
    )
    .unwrap();
    // Our own commit first, then the other writer's: once the other's is heard, ours
    // (announced earlier) would have been heard too.
    mine.append(started("own")).unwrap();
    mine.flush().unwrap();
    other.append(started("theirs")).unwrap();
    for seq in 1..=40 {
        other.append(node("theirs", seq)).unwrap();
    }
    other.flush().unwrap();
    let mut seen = Vec::new();
    let reports = follow_until(&rx, |r| {
        if let Followed::Commit(c) = r {
            seen.extend(c.events.iter().map(|e| e.seq));
        }
        seen.len() >= 41
    });
    let commits = commits(&reports);
    assert!(
        commits
            .iter()
            .all(|c| c.runs.iter().all(|r| r.id == "theirs")
                && c.events.iter().all(|e| e.run_id == "theirs")),
        "own commits reported: {commits:?}"
    );
    let followed: Vec<_> = commits.iter().flat_map(|c| c.events.iter()).collect();
    let stored = store.all_events("theirs").unwrap().unwrap();
    assert_eq!(followed.len(), stored.len());
    for (a, b) in followed.iter().zip(&stored) {
        assert_eq!(
            (a.seq, a.ts, &a.type_name, &a.node_id, a.payload.get()),
            (b.seq, b.ts, &b.type_name, &b.node_id, b.payload.get())
        );
    }
    let last = commits.last().unwrap().runs.last().unwrap();
    assert_eq!(
        (last.id.as_str(), last.counts.events, last.status),
        ("theirs", 41, RunState::Running)
    );

    // Cut the follower's connection: it reconnects, says Resync, and follows again.
    let mut admin = mindgate_testkit::pg_client(&db.postgres_url());
    let cut: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1",
            &[&follower_application_name(mine.id())],
        )
        .unwrap()
        .get(0);
    assert_eq!(cut, 1);
    follow_until(&rx, |r| matches!(r, Followed::Resync));
    other.append(node("theirs", 41)).unwrap();
    other.flush().unwrap();
    follow_until(&rx, |r| match r {
        Followed::Commit(c) => c.events.iter().any(|e| e.seq == 41),
        Followed::Resync => false,
    });
    follower.stop();
    assert!(follower.is_stopped());
    mine.close().unwrap();
    other.close().unwrap();
}

#[test]
fn without_viewers_the_follower_reports_runs_but_reads_no_events() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let other = writer_as(&db, "inst-a");
    let (tx, rx) = mpsc::channel();
    let follower = Follower::start(
        url(&db),
        "inst-b",
        Some(std::sync::Arc::new(|| false)),
        Box::new(move |f| drop(tx.send(f))),
    )
    .unwrap();
    other.append(started("quiet")).unwrap();
    other.append(node("quiet", 1)).unwrap();
    other.flush().unwrap();
    let reports = follow_until(&rx, |r| match r {
        Followed::Commit(c) => c.runs.iter().any(|r| r.counts.events == 2),
        Followed::Resync => false,
    });
    assert!(commits(&reports).iter().all(|c| c.events.is_empty()));
    drop(follower);
    other.close().unwrap();
}

#[test]
fn orphaned_runs_are_abandoned_and_revive_when_written_again() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    // A run of an instance-less writer (owner unknown), left running.
    let (legacy, _) = db.writer(WriterConfig::default(), None);
    legacy.append(started("nobody")).unwrap();
    legacy.close().unwrap();
    let a = writer_as(&db, "inst-a");
    let b = writer_as(&db, "inst-b");
    a.append(started("on-a")).unwrap();
    b.append(started("on-b")).unwrap();
    a.flush().unwrap();
    b.flush().unwrap();
    // A third instance opening leaves the live instances' runs alone.
    let (late, report) = db.writer(
        WriterConfig {
            instance_id: Some("inst-c".to_owned()),
            ..WriterConfig::default()
        },
        None,
    );
    assert!(report.reconciled.is_empty(), "{report:?}");
    let store = db.reader();
    let status = |id: &str| store.get_run(id).unwrap().unwrap().status;
    assert_eq!(status("on-a"), RunState::Running);
    // inst-b is not live: its run and the owner-less one are orphans.
    let mut gone = a
        .abandon_orphans(vec!["inst-a".to_owned(), "inst-c".to_owned()])
        .unwrap();
    gone.sort();
    assert_eq!(gone, vec!["nobody".to_owned(), "on-b".to_owned()]);
    assert_eq!(status("on-a"), RunState::Running);
    assert_eq!(status("on-b"), RunState::Abandoned);
    assert_eq!(status("nobody"), RunState::Abandoned);
    // Once abandoned, nothing is left to abandon.
    assert!(
        a.abandon_orphans(vec!["inst-a".to_owned()])
            .unwrap()
            .is_empty()
    );
    // The app of on-b comes back (to instance b): the run is running again, owned by b.
    b.append(node("on-b", 1)).unwrap();
    b.flush().unwrap();
    assert_eq!(status("on-b"), RunState::Running);
    // Abandoned by its own writer and written again: running again too.
    assert_eq!(
        a.abandon_orphans(vec!["inst-b".to_owned()]).unwrap(),
        vec!["on-a".to_owned()]
    );
    a.append(node("on-a", 1)).unwrap();
    a.flush().unwrap();
    assert_eq!(status("on-a"), RunState::Running);
    for w in [a, b, late] {
        w.close().unwrap();
    }
}

#[test]
fn abandoning_orphans_goes_through_the_commit_hook() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let b = writer_as(&db, "inst-b");
    b.append(started("on-b")).unwrap();
    b.close().unwrap();
    let (tx, rx) = mpsc::channel::<Committed>();
    let hook: mindgate_store::CommitHook = Box::new(move |c| drop(tx.send(c)));
    let (a, _) = db.writer(
        WriterConfig {
            instance_id: Some("inst-a".to_owned()),
            ..WriterConfig::default()
        },
        Some(hook),
    );
    assert_eq!(
        a.abandon_orphans(vec!["inst-a".to_owned()]).unwrap(),
        vec!["on-b".to_owned()]
    );
    let c = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(c.runs.len(), 1);
    assert_eq!(
        (c.runs[0].id.as_str(), c.runs[0].status),
        ("on-b", RunState::Abandoned)
    );
    a.close().unwrap();
}

#[test]
fn on_sqlite_abandoning_orphans_changes_nothing_and_reopening_still_reconciles() {
    let db = TestDb::new(Backend::Sqlite).unwrap();
    let config = WriterConfig {
        instance_id: Some("inst-a".to_owned()),
        ..WriterConfig::default()
    };
    let (w, _) = db.writer(config.clone(), None);
    w.append(started("r")).unwrap();
    w.flush().unwrap();
    assert!(w.abandon_orphans(Vec::new()).unwrap().is_empty());
    assert_eq!(
        db.reader().get_run("r").unwrap().unwrap().status,
        RunState::Running
    );
    w.close().unwrap();
    let (w, report) = db.writer(config, None);
    assert_eq!(report.reconciled, vec!["r".to_owned()]);
    w.close().unwrap();
}

/// A run an app moves A → B → A: without being told, A would write the counters it cached
/// before B's events over B's; told (`forget_runs`, what the server's follower does for
/// every run it hears another writer change), it re-reads the run first.
#[test]
fn a_writer_told_another_changed_a_run_counts_on_from_the_stored_run() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let a = writer_as(&db, "inst-a");
    let b = writer_as(&db, "inst-b");
    let store = db.reader();
    let count = |store: &mindgate_store::RunStore| {
        store
            .get_run("moving")
            .unwrap()
            .expect("the run")
            .counts
            .events
    };
    a.append(started("moving")).unwrap();
    a.append(node("moving", 1)).unwrap();
    a.flush().unwrap();
    b.append(node("moving", 2)).unwrap();
    b.append(node("moving", 3)).unwrap();
    b.flush().unwrap();
    assert_eq!(count(&store), 4);
    a.forget_runs(["moving".to_owned()]);
    a.append(node("moving", 4)).unwrap();
    a.flush().unwrap();
    assert_eq!(count(&store), 5, "A counted on from the stored run");
    // Forgetting everything (after a follower's reconnect) works the same way.
    b.forget_all_runs();
    b.append(node("moving", 5)).unwrap();
    b.flush().unwrap();
    assert_eq!(count(&store), 6);
    a.close().unwrap();
    b.close().unwrap();
}
