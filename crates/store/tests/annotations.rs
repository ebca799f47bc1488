//! Annotations: made, edited and deleted with their history kept, listed by run, node,
//! label and kind, checked by one set of rules, filtering the run list by label, verdict
//! and score, and carried by a run's export and import. On both backends.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::{
    AnnotationFilter, AnnotationKind, AnnotationPatch, Author, AuthorKind, NewAnnotation, NewEvent,
    RunFilter, RunImport, StoreError, Verdict, Writer,
};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    an_annotation_is_made_edited_and_deleted_with_its_history_kept,
    bad_annotations_are_refused_and_nothing_is_stored,
    the_run_list_filters_by_label_verdict_and_score,
    annotations_travel_with_the_run_export
);

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("event")
}

fn run(w: &Writer, id: &str, t: i64) {
    let node =
        json!({"nodeId": "tool:search", "instanceId": "i1", "kind": "tool", "name": "search"});
    w.append(ev(
        id,
        0,
        t,
        "run.started",
        json!({"app": "a", "sdk": {"name": "t", "version": "1"}}),
    ))
    .expect("append");
    w.append(ev(id, 1, t + 1, "node.started", node))
        .expect("append");
    w.append(ev(
        id,
        2,
        t + 5,
        "node.finished",
        json!({"nodeId": "tool:search", "instanceId": "i1", "durationMs": 4.0, "status": "ok"}),
    ))
    .expect("append");
    w.append(ev(id, 3, t + 9, "run.finished", json!({"status": "ok"})))
        .expect("append");
}

fn note(run: &str) -> NewAnnotation {
    NewAnnotation {
        run_id: run.to_owned(),
        ..Default::default()
    }
}

fn an_annotation_is_made_edited_and_deleted_with_its_history_kept(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    run(&w, "r1", 1_000);
    w.flush().expect("flush");
    let made = r
        .create_annotation(
            NewAnnotation {
                node_id: Some("tool:search".into()),
                instance_id: Some("i1".into()),
                verdict: Some(Verdict::Down),
                labels: vec!["wrong-tool".into(), " wrong-tool ".into(), "slow".into()],
                comment: Some("searched twice".into()),
                ..note("r1")
            },
            Author::person(),
        )
        .expect("create");
    assert_eq!(
        made.labels,
        vec!["wrong-tool", "slow"],
        "labels trimmed, each once"
    );
    assert_eq!((made.version, made.kind), (1, AnnotationKind::Note));
    let by_agent = r
        .create_annotation(
            NewAnnotation {
                score: Some(0.25),
                ..note("r1")
            },
            Author::agent(),
        )
        .expect("agent");
    assert_eq!(by_agent.author.kind, AuthorKind::Agent);

    let patch: AnnotationPatch =
        serde_json::from_value(json!({"verdict": "up", "comment": null})).expect("patch");
    let edited = r
        .update_annotation(&made.id, patch, Author::person())
        .expect("edit");
    assert_eq!(
        (edited.verdict, edited.comment.as_deref()),
        (Some(Verdict::Up), None)
    );
    assert_eq!(edited.labels, made.labels, "fields not in the patch kept");
    assert_eq!(edited.version, 2);

    let of_node = r
        .list_annotations(&AnnotationFilter {
            run_id: Some("r1".into()),
            node_id: Some("tool:search".into()),
            ..Default::default()
        })
        .expect("list");
    assert_eq!(of_node, vec![edited.clone()]);
    let labelled = r
        .list_annotations(&AnnotationFilter {
            label: Some("slow".into()),
            ..Default::default()
        })
        .expect("list");
    assert_eq!(labelled.len(), 1);

    let deleted = r
        .delete_annotation(&made.id, Author::person())
        .expect("delete");
    assert!(deleted.deleted_at.is_some());
    let live = r
        .list_annotations(&AnnotationFilter {
            run_id: Some("r1".into()),
            ..Default::default()
        })
        .expect("list");
    assert_eq!(
        live.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        vec![by_agent.id.as_str()]
    );
    let history = r.annotation_history(&made.id).expect("history");
    assert_eq!(
        history
            .iter()
            .map(|v| (v.action.as_str(), v.before.version))
            .collect::<Vec<_>>(),
        vec![("edit", 1), ("delete", 2)]
    );
    assert_eq!(history[0].before.comment.as_deref(), Some("searched twice"));
    let again = r
        .delete_annotation(&made.id, Author::person())
        .expect_err("gone");
    assert!(matches!(again, StoreError::NoAnnotation { .. }), "{again}");
    w.close().expect("close");
}

fn bad_annotations_are_refused_and_nothing_is_stored(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    run(&w, "r1", 1_000);
    w.flush().expect("flush");
    let cases = [
        (note("r1"), "needs a verdict"),
        (
            NewAnnotation {
                score: Some(1.5),
                ..note("r1")
            },
            "from 0 to 1",
        ),
        (
            NewAnnotation {
                score: Some(f64::NAN),
                ..note("r1")
            },
            "finite",
        ),
        (
            NewAnnotation {
                labels: vec![String::new()],
                ..note("r1")
            },
            "label",
        ),
        (
            NewAnnotation {
                labels: vec!["x".repeat(65)],
                ..note("r1")
            },
            "label",
        ),
        (
            NewAnnotation {
                instance_id: Some("i1".into()),
                verdict: Some(Verdict::Up),
                ..note("r1")
            },
            "needs nodeId",
        ),
        (
            NewAnnotation {
                check: Some(json!({})),
                ..note("r1")
            },
            "kind check",
        ),
    ];
    for (new, says) in cases {
        let err = r.create_annotation(new, Author::person()).expect_err(says);
        assert!(matches!(err, StoreError::BadAnnotation { .. }), "{err}");
        assert!(err.to_string().contains(says), "{err} / {says}");
        assert_eq!(err.code(), mindgate_errors::ErrorCode::BadRequest);
    }
    let named = r
        .create_annotation(
            NewAnnotation {
                score: Some(42.0),
                score_name: Some("latency-ms".into()),
                ..note("r1")
            },
            Author::person(),
        )
        .expect("a named score takes any finite value");
    assert_eq!(named.score, Some(42.0));
    let err = r
        .create_annotation(
            NewAnnotation {
                verdict: Some(Verdict::Up),
                ..note("nope")
            },
            Author::person(),
        )
        .expect_err("no run");
    assert!(matches!(err, StoreError::NoRun { .. }), "{err}");
    let patch: AnnotationPatch = serde_json::from_value(json!({"score": 7})).expect("patch");
    let err = r.update_annotation(
        &named.id,
        serde_json::from_value(json!({"scoreName": null})).expect("p"),
        Author::person(),
    );
    assert!(
        err.is_err(),
        "clearing the name of a score over 1 is refused"
    );
    r.update_annotation(&named.id, patch, Author::person())
        .expect("named score edit");
    assert!(
        serde_json::from_value::<AnnotationPatch>(json!({"verdit": "up"})).is_err(),
        "unknown key"
    );
    let stored = r
        .list_annotations(&AnnotationFilter::default())
        .expect("list");
    assert_eq!(stored.len(), 1, "only the good one: {stored:?}");
    assert_eq!(
        r.annotation_history(&named.id).expect("h").len(),
        1,
        "the refused edit kept nothing"
    );
    w.close().expect("close");
}

fn the_run_list_filters_by_label_verdict_and_score(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    for (i, id) in ["good", "bad", "plain"].iter().enumerate() {
        run(&w, id, 1_000 * (i as i64 + 1));
    }
    w.flush().expect("flush");
    let good = NewAnnotation {
        verdict: Some(Verdict::Up),
        score: Some(0.9),
        labels: vec!["golden".into()],
        ..note("good")
    };
    r.create_annotation(good, Author::person()).expect("good");
    let bad = NewAnnotation {
        verdict: Some(Verdict::Down),
        score: Some(0.1),
        labels: vec!["loop".into()],
        ..note("bad")
    };
    let bad = r.create_annotation(bad, Author::person()).expect("bad");
    let ids = |f: RunFilter| -> Vec<String> {
        r.list_runs(&f)
            .expect("list")
            .runs
            .into_iter()
            .map(|x| x.id)
            .collect()
    };
    assert_eq!(
        ids(RunFilter {
            label: Some("golden".into()),
            ..Default::default()
        }),
        vec!["good"]
    );
    assert_eq!(
        ids(RunFilter {
            verdict: Some(Verdict::Down),
            ..Default::default()
        }),
        vec!["bad"]
    );
    assert_eq!(
        ids(RunFilter {
            min_score: Some(0.5),
            ..Default::default()
        }),
        vec!["good"]
    );
    assert_eq!(
        ids(RunFilter {
            max_score: Some(0.5),
            ..Default::default()
        }),
        vec!["bad"]
    );
    assert_eq!(ids(RunFilter::default()).len(), 3);
    r.delete_annotation(&bad.id, Author::person())
        .expect("delete");
    assert!(
        ids(RunFilter {
            label: Some("loop".into()),
            ..Default::default()
        })
        .is_empty(),
        "a deleted annotation filters nothing"
    );
    w.close().expect("close");
}

fn annotations_travel_with_the_run_export(backend: Backend) {
    let Some(source) = TestDb::new(Backend::Sqlite) else {
        return;
    };
    let Some(target) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = source.open();
    run(&w, "r1", 1_000);
    w.flush().expect("flush");
    let kept = r
        .create_annotation(
            NewAnnotation {
                node_id: Some("tool:search".into()),
                verdict: Some(Verdict::Up),
                labels: vec!["golden".into()],
                comment: Some("right".into()),
                ..note("r1")
            },
            Author::person(),
        )
        .expect("a");
    let check = r
        .create_annotation(
            NewAnnotation {
                kind: AnnotationKind::Check,
                check: Some(
                    json!({"passed": false, "rules": [{"name": "no-new-errors", "passed": true}]}),
                ),
                ..note("r1")
            },
            Author::agent(),
        )
        .expect("check");
    let gone = r
        .create_annotation(
            NewAnnotation {
                verdict: Some(Verdict::Down),
                ..note("r1")
            },
            Author::person(),
        )
        .expect("b");
    r.delete_annotation(&gone.id, Author::person())
        .expect("delete");
    let mut out = Vec::new();
    r.export_jsonl("r1", &mut out)
        .expect("export")
        .expect("run");
    w.close().expect("close");
    let text = String::from_utf8(out).expect("utf8");
    let annotation_lines = text
        .lines()
        .filter(|l| l.starts_with("{\"annotation\""))
        .count();
    assert_eq!(annotation_lines, 2, "live annotations only:\n{text}");
    for (new_id, expect_same_ids) in [(None, true), (Some("r1-copy"), false)] {
        let mut lines = text.lines();
        let mut import =
            RunImport::begin_in(&target.database, lines.next().unwrap_or_default(), new_id)
                .expect("begin");
        for (i, line) in lines.enumerate() {
            import.add_line(i as u64 + 2, line).expect("line");
        }
        let report = import.finish().expect("import");
        let tr = target.reader();
        let got = tr
            .list_annotations(&AnnotationFilter {
                run_id: Some(report.run_id.clone()),
                ..Default::default()
            })
            .expect("list");
        assert_eq!(got.len(), 2);
        let mut want = vec![kept.clone(), check.clone()];
        for (g, w) in got.iter().zip(want.iter_mut()) {
            if !expect_same_ids {
                w.id.clone_from(&g.id);
            }
            w.run_id.clone_from(&report.run_id);
        }
        assert_eq!(
            got, want,
            "lossless, ids kept unless the run takes a new id"
        );
    }
    // A bad annotation line rolls the import back.
    let Some(other) = TestDb::new(backend) else {
        return;
    };
    let mut lines = text.lines();
    let mut import = RunImport::begin_in(&other.database, lines.next().unwrap_or_default(), None)
        .expect("begin");
    let mut err = None;
    for (i, line) in lines.enumerate() {
        let line = line.replace("\"golden\"", "\"\"");
        if let Err(e) = import.add_line(i as u64 + 2, &line) {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("refused");
    assert!(err.to_string().contains("invalid annotation"), "{err}");
}

fn thumbs_up(run: &str) -> NewAnnotation {
    NewAnnotation {
        verdict: Some(Verdict::Up),
        ..note(run)
    }
}

/// A SQLite file from before annotations (schema 4), opened read-only before any writer
/// migrated it — as `mindgate mcp` and `mindgate check` open the file — holds none: the
/// reads answer none, not SQLite's "no such table", and a write is refused naming the
/// file's schema and `mindgate migrate`; migrated, the file takes annotations.
#[test]
fn a_file_from_before_annotations_reads_as_none_and_refuses_writes_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    {
        let (w, _) =
            Writer::open(&path, mindgate_store::WriterConfig::default(), None).expect("writer");
        run(&w, "r1", 1_000);
        w.close().expect("close");
    }
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute_batch(
        "DROP TABLE dataset_examples; DROP TABLE dataset_versions; DROP TABLE datasets; \
         DROP TABLE annotation_history; DROP TABLE annotations; PRAGMA user_version = 4;",
    )
    .expect("back to schema 4");
    drop(conn);

    let ro = mindgate_store::RunStore::open_read_only(&path).expect("read-only store");
    let all = mindgate_store::AnnotationFilter {
        run_id: Some("r1".into()),
        ..Default::default()
    };
    assert!(ro.list_annotations(&all).expect("list").is_empty());
    assert!(ro.get_annotation("ann_0").expect("get").is_none());
    assert!(ro.annotation_history("ann_0").expect("history").is_empty());
    let rw = mindgate_store::RunStore::open(&path).expect("store");
    let err = rw
        .create_annotation(thumbs_up("r1"), Author::person())
        .expect_err("a write on schema 4");
    assert!(
        matches!(
            err,
            StoreError::SchemaTooOld {
                found: 4,
                needed: 5,
                what: "annotations",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("mindgate migrate --db"), "{err}");
    let err = rw
        .update_annotation("ann_0", AnnotationPatch::default(), Author::person())
        .expect_err("an edit");
    assert!(matches!(err, StoreError::NoAnnotation { .. }), "{err:?}");

    mindgate_store::migrate(&mindgate_store::Database::Sqlite(path.clone())).expect("migrate");
    let store = mindgate_store::RunStore::open(&path).expect("store");
    store
        .create_annotation(thumbs_up("r1"), Author::person())
        .expect("an annotation after migrating");
    assert_eq!(store.list_annotations(&all).expect("list").len(), 1);
}
