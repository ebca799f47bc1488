//! Export → import into an empty store gives an identical store (every table, history
//! included), and the listing reads of the agent surfaces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{T0, TestEmbedder};
use mindgate_memory::time::ManualClock;
use mindgate_memory::*;

fn open(path: &std::path::Path) -> SqliteMemory {
    SqliteMemory::open(
        path,
        OpenOptions::default()
            .clock(Arc::new(ManualClock::at(T0)))
            .embedder(Arc::new(TestEmbedder::new())),
    )
    .unwrap()
}

/// A store with every kind of row in every state.
fn populate(s: &SqliteMemory) {
    let u = Scope::user("ana");
    let a = s
        .semantic()
        .remember(NewFact {
            subject: Some("Ana".into()),
            predicate: Some("lives in".into()),
            object: Some("Tbilisi".into()),
            importance: Some(0.7),
            ..NewFact::new(u.clone(), "Ana lives in Tbilisi")
        })
        .unwrap();
    s.semantic()
        .supersede(
            &a.record.id,
            NewFact::new(u.clone(), "Ana lives in Batumi"),
            "moved",
        )
        .unwrap();
    let b = s
        .semantic()
        .remember(NewFact::new(u.clone(), "Ana likes tea"))
        .unwrap();
    s.semantic()
        .forget(&b.record.id, "wrong", Actor::User)
        .unwrap();
    let mut q = NewFact::new(u.clone(), "Ana has a cat named Rex");
    q.meta.provenance = Some(MemoryProvenance::Extraction);
    let q = s.semantic().remember(q).unwrap();
    s.validate(&q.record.id, false, Actor::User).unwrap();
    let mut r = NewFact::new(u.clone(), "Ana works at night");
    r.meta.provenance = Some(MemoryProvenance::Extraction);
    r.meta.tags = vec!["work".into()];
    s.semantic().remember(r).unwrap();
    s.working()
        .upsert(NewBlock {
            scope: u.clone(),
            label: "persona".into(),
            value: "helpful".into(),
            ..NewBlock::default()
        })
        .unwrap();
    s.working()
        .append("ana", "persona", " and brief", Actor::Agent)
        .unwrap();
    s.session()
        .push(
            &u.clone().with_session("s1"),
            &serde_json::from_value(
                serde_json::json!({"role": "user", "content": "I moved to Batumi"}),
            )
            .unwrap(),
            Actor::Agent,
        )
        .unwrap();
    s.episodic()
        .put(NewEpisode {
            meta: WriteMeta::new(u.clone()),
            summary: "Ana talked about moving".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: "2026-01-01T01:00:00Z".into(),
            importance: None,
        })
        .unwrap();
    s.procedural()
        .add(NewRule {
            meta: WriteMeta::new(u.clone()),
            text: "Answer in Georgian".into(),
            priority: 2.0,
            ..NewRule::default()
        })
        .unwrap();
    let e1 = s.entities().resolve("ana", "Ana K").unwrap();
    let e2 = s.entities().resolve("ana", "Ana Kapanadze").unwrap();
    s.entities().merge(&e1.id, &e2.id, Actor::User).unwrap();
    s.shared()
        .attach(&q.record.id, "helper", Actor::User)
        .unwrap();
}

fn export(s: &SqliteMemory) -> String {
    let mut out = Vec::new();
    s.export_jsonl(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn export_then_import_into_an_empty_store_is_identical() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(&dir.path().join("a.db"));
    populate(&first);
    let dump = export(&first);
    assert!(dump.lines().count() > 20, "{dump}");
    for table in [
        "memory_items",
        "memory_history",
        "working_blocks",
        "entity_merges",
        "memory_vectors",
        "shared_attachments",
    ] {
        assert!(
            dump.contains(&format!("\"table\":\"{table}\"")),
            "{table} missing"
        );
    }
    let second = open(&dir.path().join("b.db"));
    let report = second.import_jsonl(&mut dump.as_bytes()).unwrap();
    assert_eq!(report.rows as usize, dump.lines().count() - 1);
    assert_eq!(export(&second), dump, "a second export differs");
    assert_eq!(first.ledger_len().unwrap(), second.ledger_len().unwrap());
    // Derived state (the full-text index, the vectors) works the same.
    for mode in [SearchMode::Lexical, SearchMode::Vector, SearchMode::Hybrid] {
        let mut o = MemorySearchOptions::new("ana", "where does Ana live");
        o.mode = Some(mode);
        let ids = |s: &SqliteMemory| {
            s.search(&o)
                .unwrap()
                .into_iter()
                .map(|h| h.record.id().to_owned())
                .collect::<Vec<_>>()
        };
        assert!(!ids(&first).is_empty());
        assert_eq!(ids(&first), ids(&second), "{mode:?}");
    }
}

#[test]
fn import_refuses_a_non_empty_store_and_bad_lines_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(&dir.path().join("a.db"));
    populate(&first);
    let dump = export(&first);
    let err = first.import_jsonl(&mut dump.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");

    let empty = open(&dir.path().join("b.db"));
    let mut broken: Vec<&str> = dump.lines().collect();
    broken.insert(5, "{\"table\":\"memory_items\",\"row\":{\"nope\":1}}");
    let broken = broken.join("\n");
    let err = empty.import_jsonl(&mut broken.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("line 6"), "{err}");
    assert!(empty.is_empty().unwrap(), "a failed import wrote rows");
    for bad in [
        "",
        "not json",
        "{\"format\":\"other\"}",
        "{\"table\":\"x\"}",
    ] {
        assert!(empty.import_jsonl(&mut bad.as_bytes()).is_err(), "{bad:?}");
    }
    assert!(empty.is_empty().unwrap());
}

#[test]
fn the_quarantine_queue_and_the_ledger_feed() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("a.db"));
    assert_eq!(s.ledger_head().unwrap(), 0);
    populate(&s);
    let queue = s.quarantine_queue(Some("ana"), None).unwrap();
    assert_eq!(
        queue.iter().map(MemoryItem::text).collect::<Vec<_>>(),
        vec!["Ana works at night"]
    );
    assert!(s.quarantine_queue(Some("bob"), None).unwrap().is_empty());
    let head = s.ledger_head().unwrap();
    let all = s.ledger_since(0, 1000).unwrap();
    assert_eq!(all.last().map(|e| e.seq), Some(head));
    assert!(s.ledger_since(head, 10).unwrap().is_empty());
    let page = s.ledger_since(2, 3).unwrap();
    assert_eq!(
        page.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![3, 4, 5]
    );
    assert_eq!(s.users().unwrap(), vec!["ana".to_owned()]);
    let s = Memory::from(s);
    let facts = agent::list_kind(&s, "ana", MemoryKind::Semantic, false, None).unwrap();
    assert_eq!(
        facts.iter().map(MemoryItem::text).collect::<Vec<_>>(),
        vec!["Ana lives in Batumi", "Ana has a cat named Rex"]
    );
    assert!(
        s.list_items(&ItemFilter {
            limit: Some(0),
            ..ItemFilter::default()
        })
        .is_err()
    );
}
