//! Datasets: examples taken from a node instance and from a whole run, every edit a new
//! version with the earlier ones readable, one set of rules, and a JSON Lines export that
//! an import gives back byte for byte. On both backends.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::datasets::jsonl;
use mindgate_store::{Author, AuthorKind, ExamplePatch, NewEvent, NewExample, StoreError, Writer};
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

contract!(
    examples_are_taken_from_a_node_instance_and_from_a_run,
    every_edit_is_a_version_and_earlier_versions_stay_readable,
    bad_examples_are_refused_and_nothing_is_stored,
    export_then_import_then_export_gives_the_same_bytes,
    edits_made_together_each_take_their_own_version
);

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("event")
}

/// An agent asked a question, calling a search tool twice (two instances), and answering.
fn run(w: &Writer, id: &str) {
    let events = [
        (
            "run.started",
            json!({"app": "a", "sdk": {"name": "t", "version": "1"}}),
        ),
        (
            "node.started",
            json!({"nodeId": "agent:main", "instanceId": "a1", "kind": "agent", "name": "main",
                   "input": {"question": "refund?"}}),
        ),
        (
            "node.started",
            json!({"nodeId": "tool:search", "instanceId": "s1", "kind": "tool", "name": "search",
                   "parentId": "agent:main", "input": {"q": "refund policy"}}),
        ),
        (
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "s1", "status": "ok", "durationMs": 5.0,
                   "output": {"hits": 3}}),
        ),
        (
            "node.started",
            json!({"nodeId": "tool:search", "instanceId": "s2", "kind": "tool", "name": "search",
                   "parentId": "agent:main", "input": {"q": "refund window"}}),
        ),
        (
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "s2", "status": "ok", "durationMs": 5.0,
                   "output": {"hits": 1}}),
        ),
        (
            "node.finished",
            json!({"nodeId": "agent:main", "instanceId": "a1", "status": "ok", "durationMs": 5.0,
                   "output": {"answer": "within 30 days"}}),
        ),
        ("run.finished", json!({"status": "ok"})),
    ];
    for (i, (ty, payload)) in events.into_iter().enumerate() {
        w.append(ev(id, i as u64, 1_000 + i as i64 * 10, ty, payload))
            .expect("append");
    }
}

fn by_hand(input: Value) -> NewExample {
    NewExample {
        input,
        ..Default::default()
    }
}

fn examples_are_taken_from_a_node_instance_and_from_a_run(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = db.open();
    run(&w, "r1");
    w.flush().expect("flush");
    let first = r
        .example_from_run("r1", Some("tool:search"), Some("s1"))
        .expect("instance");
    assert_eq!(first.input, json!({"q": "refund policy"}));
    assert_eq!(first.expected, Some(json!({"hits": 3})));
    let source = first.source.clone().expect("source");
    assert_eq!(
        (
            source.run_id.as_str(),
            source.node_id.as_deref(),
            source.instance_id.as_deref()
        ),
        ("r1", Some("tool:search"), Some("s1"))
    );
    let last = r
        .example_from_run("r1", Some("tool:search"), None)
        .expect("the node's last instance");
    assert_eq!(last.input, json!({"q": "refund window"}));
    let whole = r.example_from_run("r1", None, None).expect("run");
    assert_eq!(
        whole.input,
        json!({"question": "refund?"}),
        "the agent input"
    );
    assert_eq!(
        whole.expected,
        Some(json!({"answer": "within 30 days"})),
        "the final output"
    );
    assert_eq!(whole.source.as_ref().and_then(|s| s.node_id.clone()), None);

    for (node, instance, says) in [
        (Some("tool:nope"), None, "no node"),
        (Some("tool:search"), Some("s9"), "no instance"),
        (None, Some("s1"), "needs nodeId"),
    ] {
        let err = r.example_from_run("r1", node, instance).expect_err(says);
        assert!(err.to_string().contains(says), "{err} / {says}");
    }
    let err = r.example_from_run("nope", None, None).expect_err("no run");
    assert!(matches!(err, StoreError::NoRun { .. }), "{err}");

    let (ds, stored) = r
        .add_examples("support", vec![first, whole], Author::person())
        .expect("add");
    assert_eq!((ds.version, ds.examples), (1, 2));
    let (shown, examples) = r.get_dataset("support", None).expect("show");
    assert_eq!(shown, ds);
    assert_eq!(examples, stored, "stored as made, in order");
    w.close().expect("close");
}

fn every_edit_is_a_version_and_earlier_versions_stay_readable(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let r = {
        let (w, r) = db.open();
        w.close().expect("close");
        r
    };
    let (v1, a) = r
        .add_examples(
            "qa",
            vec![by_hand(json!("one")), by_hand(json!("two"))],
            Author::person(),
        )
        .expect("add");
    let mut agent = Author::agent();
    agent.name = Some("mcp".into());
    let (v2, b) = r
        .add_examples("qa", vec![by_hand(json!("three"))], agent.clone())
        .expect("add");
    assert_eq!((v1.version, v2.version, v2.examples), (1, 2, 3));
    assert_eq!(b[0].added_by.kind, AuthorKind::Agent);
    let patch: ExamplePatch =
        serde_json::from_value(json!({"expected": "TWO", "metadata": {"tier": "gold"}}))
            .expect("patch");
    let (v3, edited) = r
        .update_example("qa", &a[1].id, patch, Author::person())
        .expect("update");
    assert_eq!(v3.version, 3);
    assert_eq!(
        (edited.id.as_str(), edited.input.clone()),
        (a[1].id.as_str(), json!("two"))
    );
    assert_eq!(edited.expected, Some(json!("TWO")));
    let v4 = r
        .remove_examples("qa", &[a[0].id.clone()], Author::person())
        .expect("remove");
    assert_eq!((v4.version, v4.examples), (4, 2));

    let inputs = |v: Option<u32>| -> Vec<Value> {
        r.get_dataset("qa", v)
            .expect("show")
            .1
            .into_iter()
            .map(|e| e.input)
            .collect()
    };
    assert_eq!(inputs(Some(1)), vec![json!("one"), json!("two")]);
    assert_eq!(
        inputs(Some(3)),
        vec![json!("one"), json!("two"), json!("three")]
    );
    assert_eq!(
        inputs(None),
        vec![json!("two"), json!("three")],
        "the edit kept its place"
    );
    let (old, ex) = r.get_dataset("qa", Some(2)).expect("v2");
    assert_eq!((old.version, old.latest), (2, 4));
    assert_eq!(
        ex[1].expected, None,
        "version 2 has the example before its edit"
    );
    let log = r.dataset_versions("qa").expect("log");
    assert_eq!(
        log.iter()
            .map(|v| (v.version, v.action.as_str(), v.examples))
            .collect::<Vec<_>>(),
        vec![
            (1, "add", 2),
            (2, "add", 3),
            (3, "update", 3),
            (4, "remove", 2)
        ]
    );
    assert_eq!(log[1].by, agent);

    let err = r.get_dataset("qa", Some(9)).expect_err("no version 9");
    assert!(matches!(err, StoreError::NoDataset { .. }), "{err}");
    let err = r
        .remove_examples("qa", &[a[0].id.clone()], Author::person())
        .expect_err("already gone");
    assert!(err.to_string().contains("no example"), "{err}");
    assert_eq!(
        r.dataset_versions("qa").expect("log").len(),
        4,
        "the refused edit kept nothing"
    );

    let gone = r.delete_dataset("qa", Author::person()).expect("delete");
    assert_eq!((gone.version, gone.examples), (5, 0));
    assert!(
        r.list_datasets().expect("list").is_empty(),
        "a deleted dataset is not listed"
    );
    assert!(
        r.get_dataset("qa", None).is_err(),
        "the newest version is the deleted one"
    );
    assert_eq!(
        inputs(Some(4)),
        vec![json!("two"), json!("three")],
        "history kept"
    );
    let (again, _) = r
        .add_examples("qa", vec![by_hand(json!("four"))], Author::person())
        .expect("the name taken up again");
    assert_eq!((again.version, again.examples), (6, 1));
    assert_eq!(
        r.list_datasets()
            .expect("list")
            .iter()
            .map(|d| (d.name.as_str(), d.version))
            .collect::<Vec<_>>(),
        vec![("qa", 6)]
    );
}

fn bad_examples_are_refused_and_nothing_is_stored(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let r = {
        let (w, r) = db.open();
        w.close().expect("close");
        r
    };
    let big = json!("x".repeat(mindgate_store::datasets::MAX_VALUE_BYTES));
    let cases: Vec<(&str, Vec<NewExample>, &str)> = vec![
        ("qa", vec![by_hand(Value::Null)], "needs an input"),
        ("qa", vec![by_hand(big)], "larger than"),
        ("qa", vec![], "give 1 to"),
        ("bad name", vec![by_hand(json!(1))], "dataset name"),
        ("-x", vec![by_hand(json!(1))], "dataset name"),
        (
            "qa",
            vec![
                by_hand(json!(1)),
                NewExample {
                    source: Some(mindgate_store::ExampleSource {
                        run_id: "r1".into(),
                        node_id: None,
                        instance_id: Some("i1".into()),
                    }),
                    ..by_hand(json!(2))
                },
            ],
            "needs source.nodeId",
        ),
    ];
    for (name, new, says) in cases {
        let err = r.add_examples(name, new, Author::person()).expect_err(says);
        assert!(matches!(err, StoreError::BadDataset { .. }), "{err}");
        assert!(err.to_string().contains(says), "{err} / {says}");
        assert_eq!(err.code(), mindgate_errors::ErrorCode::BadRequest);
    }
    assert!(
        r.list_datasets().expect("list").is_empty(),
        "nothing stored"
    );
    assert!(
        serde_json::from_value::<NewExample>(json!({"input": 1, "expectd": 2})).is_err(),
        "unknown key"
    );
    let (_, made) = r
        .add_examples("qa", vec![by_hand(json!(1))], Author::person())
        .expect("good");
    let patch: ExamplePatch = serde_json::from_value(json!({"input": null})).expect("patch");
    let err = r
        .update_example("qa", &made[0].id, patch, Author::person())
        .expect_err("null input");
    assert!(err.to_string().contains("needs an input"), "{err}");
    let err = r
        .update_example(
            "nope",
            &made[0].id,
            ExamplePatch::default(),
            Author::person(),
        )
        .expect_err("no dataset");
    assert!(matches!(err, StoreError::NoDataset { .. }), "{err}");
    assert_eq!(r.dataset_versions("qa").expect("log").len(), 1);

    for (text, says) in [
        ("", "empty"),
        ("{\"run\": {}}\n", "line 1: not a dataset export"),
        (
            "{\"dataset\":{\"name\":\"qa\",\"version\":1,\"examples\":2}}\n{\"id\":\"ex_1\",\"input\":1,\"addedBy\":{\"kind\":\"person\"},\"updatedAt\":1}\n",
            "cut short",
        ),
        (
            "{\"dataset\":{\"name\":\"qa\",\"version\":1,\"examples\":1}}\n{\"id\":\"ex_1\",\"input\":1}\n",
            "line 2: invalid example",
        ),
    ] {
        let err = jsonl::parse(text).expect_err(says);
        assert!(err.to_string().contains(says), "{err} / {says}");
    }
}

fn export_then_import_then_export_gives_the_same_bytes(backend: Backend) {
    let Some(source) = TestDb::new(Backend::Sqlite) else {
        return;
    };
    let Some(target) = TestDb::new(backend) else {
        return;
    };
    let (w, r) = source.open();
    run(&w, "r1");
    w.flush().expect("flush");
    let from_run = r
        .example_from_run("r1", Some("tool:search"), Some("s2"))
        .expect("from");
    let odd = NewExample {
        input: json!({"z": 1, "a": [1.5, -0.0, 1e300, "ünï\u{0}code"], "m": {"y": null, "b": true}}),
        expected: Some(json!([])),
        metadata: serde_json::from_value(json!({"zeta": 1, "alpha": {"deep": [null]}}))
            .expect("meta"),
        source: None,
    };
    let (_, made) = r
        .add_examples(
            "golden",
            vec![from_run, odd, by_hand(json!("drop me"))],
            Author::person(),
        )
        .expect("add");
    r.remove_examples("golden", &[made[2].id.clone()], Author::agent())
        .expect("remove");
    let mut first = Vec::new();
    let ds = r
        .export_dataset("golden", None, &mut first)
        .expect("export");
    assert_eq!(ds.version, 2);
    let mut old = Vec::new();
    r.export_dataset("golden", Some(1), &mut old)
        .expect("export v1");
    w.close().expect("close");
    let text = String::from_utf8(first.clone()).expect("utf8");
    assert!(
        text.starts_with("{\"dataset\":{\"name\":\"golden\",\"version\":2,\"examples\":2}}\n"),
        "the export names its version:\n{text}"
    );
    assert_eq!(
        String::from_utf8(old).expect("utf8").lines().count(),
        4,
        "v1: 3 examples"
    );

    let tr = {
        let (tw, tr) = target.open();
        tw.close().expect("close");
        tr
    };
    let file = jsonl::parse(&text).expect("parse");
    let imported = tr
        .import_dataset(file, None, Author::person())
        .expect("import");
    assert_eq!(
        (imported.version, imported.examples),
        (2, 2),
        "the file's version kept"
    );
    let mut second = Vec::new();
    tr.export_dataset("golden", None, &mut second)
        .expect("export again");
    assert_eq!(
        String::from_utf8(second).expect("utf8"),
        text,
        "export → import → export is byte-identical"
    );

    // Into an existing dataset: a new version holding exactly the file's examples.
    let replaced = tr
        .import_dataset(jsonl::parse(&text).expect("parse"), None, Author::person())
        .expect("import again");
    assert_eq!((replaced.version, replaced.examples), (3, 2));
    let copy = tr
        .import_dataset(
            jsonl::parse(&text).expect("parse"),
            Some("copy"),
            Author::person(),
        )
        .expect("import as");
    assert_eq!((copy.name.as_str(), copy.version), ("copy", 2));
    let err = tr
        .get_dataset("copy", Some(1))
        .expect_err("before the import");
    assert!(err.to_string().contains("versions 2 to 2"), "{err}");
}

fn edits_made_together_each_take_their_own_version(backend: Backend) {
    let Some(db) = TestDb::new(backend) else {
        return;
    };
    let r = {
        let (w, r) = db.open();
        w.close().expect("close");
        r
    };
    let r = std::sync::Arc::new(r);
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let r = r.clone();
            std::thread::spawn(move || {
                r.add_examples("new", vec![by_hand(json!(i))], Author::person())
                    .map(|(d, _)| d.version)
            })
        })
        .collect();
    let mut versions: Vec<u32> = threads
        .into_iter()
        .map(|t| t.join().expect("thread").expect("add"))
        .collect();
    versions.sort_unstable();
    assert_eq!(
        versions,
        vec![1, 2, 3, 4],
        "a new dataset, four adds at once"
    );
    let (ds, examples) = r.get_dataset("new", None).expect("show");
    assert_eq!((ds.version, examples.len()), (4, 4));
}

/// A SQLite file from before datasets (schema 5), opened read-only before any writer
/// migrated it — as `mindgate mcp` opens the file — holds no dataset: the reads answer as
/// for an empty store, not with SQLite's "no such table", and a write is refused saying
/// how to bring the file up to date; nothing is written.
#[test]
fn a_file_from_before_datasets_reads_as_empty_and_refuses_writes_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    {
        let (w, _) =
            Writer::open(&path, mindgate_store::WriterConfig::default(), None).expect("writer");
        run(&w, "r1");
        w.close().expect("close");
    }
    // Back to schema 5: the file as Mindgate wrote it before datasets.
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute_batch(
        "DROP TABLE dataset_examples; DROP TABLE dataset_versions; DROP TABLE datasets; \
         PRAGMA user_version = 5;",
    )
    .expect("downgrade");
    drop(conn);

    let ro = mindgate_store::RunStore::open_read_only(&path).expect("read-only store");
    assert_eq!(ro.list_datasets().expect("list"), vec![], "no datasets");
    for err in [
        ro.get_dataset("golden", None).expect_err("show"),
        ro.dataset_versions("golden").expect_err("versions"),
    ] {
        assert!(matches!(err, StoreError::NoDataset { .. }), "{err:?}");
        assert_eq!(err.to_string(), "no dataset golden");
    }
    let err = ro
        .export_dataset("golden", None, &mut Vec::new())
        .expect_err("export");
    assert!(matches!(err, StoreError::NoDataset { .. }), "{err:?}");

    // A write (the MCP's dataset_add opens a connection of its own): refused, with the way out.
    let rw = mindgate_store::RunStore::open(&path).expect("store");
    let err = rw
        .add_examples("golden", vec![by_hand(json!(1))], Author::person())
        .expect_err("a write on schema 5");
    assert!(
        matches!(
            err,
            StoreError::SchemaTooOld {
                found: 5,
                needed: 6,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("schema version 5")
            && message.contains("datasets")
            && message.contains("mindgate migrate --db")
            && !message.contains("no such table"),
        "{message}"
    );
    assert_eq!(err.code(), mindgate_errors::ErrorCode::Conflict);
    let err = rw
        .add_to_dataset(
            "golden",
            mindgate_store::AddExamples {
                from: Some(mindgate_store::ExampleSource {
                    run_id: "r1".into(),
                    node_id: None,
                    instance_id: None,
                }),
                ..Default::default()
            },
            Author::person(),
        )
        .map(|_| ())
        .expect_err("from a run");
    assert!(matches!(err, StoreError::SchemaTooOld { .. }), "{err:?}");
    assert_eq!(ro.list_datasets().expect("list"), vec![], "nothing written");

    // Migrated, the file takes datasets as any other.
    mindgate_store::migrate(&mindgate_store::Database::Sqlite(path.clone())).expect("migrate");
    let store = mindgate_store::RunStore::open(&path).expect("store");
    let (ds, _) = store
        .add_examples("golden", vec![by_hand(json!(1))], Author::person())
        .expect("add after migrating");
    assert_eq!((ds.version, ds.examples), (1, 1));
}
