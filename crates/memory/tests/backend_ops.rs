//! The store-wide operations — export / import, maintenance, re-embedding — run the same
//! cases on both backends (SQLite in a temporary file, PostgreSQL in a schema of its own
//! per case; without `MINDGATE_TEST_POSTGRES_URL` the PostgreSQL cases say "skipped" and
//! pass), and an export moves between the backends with its items unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod places;

use std::sync::Arc;

use common::{T0, TestEmbedder};
use mindgate_memory::sqlite::{MAX_LIST, MaintenanceConfig, ReembedProgress};
use mindgate_memory::time::{DAY_MS, ManualClock};
use mindgate_memory::*;
use places::{Backend, Place};
use serde_json::Value;

fn options(clock: Arc<ManualClock>) -> OpenOptions {
    OpenOptions::default()
        .clock(clock)
        .embedder(Arc::new(TestEmbedder::new()))
}

fn open(place: &Place) -> Memory {
    place.open(options(Arc::new(ManualClock::at(T0)))).unwrap()
}

/// A store with every kind of row in every state.
fn populate(s: &Memory) {
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

fn export(s: &Memory) -> String {
    let mut out = Vec::new();
    s.export_jsonl(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Every record in every state, the ledger, the blocks, the entities: what a store holds
/// as its views read it.
fn items(s: &Memory) -> Value {
    let all = s
        .list_items(&ItemFilter {
            include_deleted: true,
            include_superseded: true,
            limit: Some(MAX_LIST),
            ..ItemFilter::default()
        })
        .unwrap();
    let users = s.users().unwrap();
    let blocks: Vec<_> = users.iter().map(|u| s.working().list(u).unwrap()).collect();
    let entities: Vec<_> = users
        .iter()
        .map(|u| s.entities().list(u).unwrap())
        .collect();
    serde_json::json!({
        "items": all,
        "ledger": s.ledger_since(0, 100_000).unwrap(),
        "blocks": blocks,
        "entities": entities,
        "embedder": s.stored_embedder().unwrap(),
        "meta": users.iter().map(|u| s.metadata(u).unwrap()).collect::<Vec<_>>(),
    })
}

fn search_ids(s: &Memory, mode: SearchMode) -> Vec<String> {
    let mut o = MemorySearchOptions::new("ana", "where does Ana live");
    o.mode = Some(mode);
    s.search(&o)
        .unwrap()
        .into_iter()
        .map(|h| h.record.id().to_owned())
        .collect()
}

fn export_then_import_into_an_empty_store_is_identical(backend: Backend) {
    let (Some(a), Some(b)) = (Place::new(backend), Place::new(backend)) else {
        return;
    };
    let first = open(&a);
    populate(&first);
    assert_eq!(
        first.export_rows().unwrap() as usize + 1,
        export(&first).lines().count()
    );
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
    let second = open(&b);
    assert!(second.is_empty().unwrap());
    let report = second.import_jsonl(&mut dump.as_bytes()).unwrap();
    assert_eq!(report.rows as usize, dump.lines().count() - 1);
    assert_eq!(export(&second), dump, "a second export differs");
    assert_eq!(first.ledger_len().unwrap(), second.ledger_len().unwrap());
    assert_eq!(items(&first), items(&second));
    // Derived state (the full-text index, the vectors) works the same.
    for mode in [SearchMode::Lexical, SearchMode::Vector, SearchMode::Hybrid] {
        assert!(!search_ids(&first, mode).is_empty());
        assert_eq!(
            search_ids(&first, mode),
            search_ids(&second, mode),
            "{mode:?}"
        );
    }
    // The imported store keeps writing: its keys continue after the imported ones.
    let more = second
        .semantic()
        .remember(NewFact::new(Scope::user("ana"), "Ana plays chess"))
        .unwrap();
    assert_eq!(
        second.get_item(&more.record.id).unwrap().text(),
        "Ana plays chess"
    );
    assert_eq!(
        second.ledger_len().unwrap(),
        first.ledger_len().unwrap() + 1
    );
}

fn import_refuses_a_non_empty_store_and_bad_lines_write_nothing(backend: Backend) {
    let (Some(a), Some(b)) = (Place::new(backend), Place::new(backend)) else {
        return;
    };
    let first = open(&a);
    populate(&first);
    let dump = export(&first);
    let err = first.import_jsonl(&mut dump.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");

    let empty = open(&b);
    let mut broken: Vec<&str> = dump.lines().collect();
    broken.insert(5, "{\"table\":\"memory_items\",\"row\":{\"nope\":1}}");
    let broken = broken.join("\n");
    let err = empty.import_jsonl(&mut broken.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("line 6"), "{err}");
    assert!(empty.is_empty().unwrap(), "a failed import wrote rows");
    // A row the database refuses (a duplicate key) at the end: nothing before it stays.
    let last_item = dump
        .lines()
        .rfind(|l| l.contains("\"table\":\"memory_items\""))
        .unwrap();
    let duplicated = format!("{dump}{last_item}\n");
    let err = empty.import_jsonl(&mut duplicated.as_bytes()).unwrap_err();
    let lines = duplicated.lines().count();
    assert!(err.to_string().contains(&format!("line {lines}")), "{err}");
    assert!(empty.is_empty().unwrap(), "a failed import wrote rows");
    for bad in [
        "",
        "not json",
        "{\"format\":\"other\"}",
        "{\"table\":\"x\"}",
    ] {
        assert!(empty.import_jsonl(&mut bad.as_bytes()).is_err(), "{bad:?}");
    }
    let newer = dump.replacen("\"schemaVersion\":", "\"schemaVersion\":99", 1);
    assert!(matches!(
        empty.import_jsonl(&mut newer.as_bytes()),
        Err(MemoryError::SchemaTooNew { .. })
    ));
    // Vectors of another embedder are refused.
    let other = b
        .open(OpenOptions::default().embedder(Arc::new(TestEmbedder {
            dim: 32,
            model: "small",
        })))
        .unwrap();
    assert!(matches!(
        other.import_jsonl(&mut dump.as_bytes()),
        Err(MemoryError::EmbedderMismatch { .. })
    ));
    assert!(empty.is_empty().unwrap());
}

on_both_backends!(
    export_then_import_into_an_empty_store_is_identical,
    import_refuses_a_non_empty_store_and_bad_lines_write_nothing,
);

fn maintenance_decays_archives_and_evicts_deterministically(backend: Backend) {
    let Some(place) = Place::new(backend) else {
        return;
    };
    let clock = Arc::new(ManualClock::at(T0));
    let config = MemoryConfig {
        maintenance: MaintenanceConfig {
            capacity: Some(2),
            ..MaintenanceConfig::default()
        },
        ..MemoryConfig::default()
    };
    let s = place
        .open(OpenOptions {
            config,
            ..options(clock.clone())
        })
        .unwrap();
    let u = || Scope::user("u");
    let stale = s
        .semantic()
        .remember(NewFact::new(u(), "stale fact about tents"))
        .unwrap();
    clock.advance(15 * DAY_MS);
    let low = s
        .semantic()
        .remember(NewFact {
            importance: Some(0.0),
            ..NewFact::new(u(), "minor fact about cups")
        })
        .unwrap();
    let high = s
        .semantic()
        .remember(NewFact {
            importance: Some(1.0),
            ..NewFact::new(u(), "major fact about cups")
        })
        .unwrap();
    let mid = s
        .semantic()
        .remember(NewFact::new(u(), "middle fact about mugs"))
        .unwrap();
    clock.advance(6 * DAY_MS);
    // retention(stale) = exp(-21/7) = 0.0498 < 0.05 → archived.
    let report = s.maintain("u").unwrap();
    assert_eq!(report.scanned, 4);
    assert_eq!(report.archived, vec![stale.record.id.clone()]);
    assert_eq!(
        report.evicted,
        vec![low.record.id.clone()],
        "least salient beyond capacity 2"
    );
    let live: Vec<String> = s
        .search(&MemorySearchOptions::new("u", "fact cups mugs tents"))
        .unwrap()
        .into_iter()
        .map(|h| h.record.id().to_owned())
        .collect();
    assert!(
        live.contains(&high.record.id) && live.contains(&mid.record.id) && live.len() == 2,
        "{live:?}"
    );
    let mut o = MemorySearchOptions::new("u", "stale tents");
    o.include_archived = Some(true);
    assert_eq!(
        s.search(&o).unwrap()[0].record.id(),
        stale.record.id,
        "archived rows stay recallable"
    );
    let ledger = s.ledger(&low.record.id).unwrap();
    assert_eq!(ledger.last().unwrap().action, "evict");
    assert_eq!(ledger.last().unwrap().actor, Actor::Maintenance);
    assert!(s.metadata("u").unwrap().last_consolidated_at.is_some());
    // A second pass finds nothing more to do; a bad user id is refused.
    let again = s.maintain("u").unwrap();
    assert_eq!(
        (again.scanned, again.archived.len(), again.evicted.len()),
        (2, 0, 0)
    );
    assert!(matches!(s.maintain(""), Err(MemoryError::Invalid { .. })));
}

on_both_backends!(maintenance_decays_archives_and_evicts_deterministically);

const EXTRACTION: &str = r#"{"summary": "Alice plans a trip to Lisbon in May and asks for vegetarian restaurants.",
 "facts": [
   {"text": "Alice is vegetarian", "subject": "Alice", "predicate": "diet", "object": "vegetarian",
    "importance": 0.8, "evidence": ["m1"]},
   {"text": "Alice travels to Lisbon in May", "subject": "Alice", "predicate": "travels_to",
    "object": "Lisbon", "evidence": ["m1", "m3"]},
   {"subject": "no text here"}
 ]}"#;

const REFLECTION: &str = r#"{"insights": [
  {"text": "Alice's trip plans revolve around vegetarian food", "cites": ["f1", "f2", "m3"]},
  {"text": "uncited", "cites": ["f99"]}
]}"#;

/// A chat model answering fixed completions in order; before its first answer it can run
/// `meanwhile` (another consolidation committing while this one waits for the model).
struct Scripted<'a> {
    answers: Vec<&'static str>,
    calls: std::sync::Mutex<usize>,
    meanwhile: Option<Box<dyn Fn() + Send + Sync + 'a>>,
}

impl<'a> Scripted<'a> {
    fn new(meanwhile: Option<Box<dyn Fn() + Send + Sync + 'a>>) -> Self {
        Self {
            answers: vec![EXTRACTION, REFLECTION],
            calls: std::sync::Mutex::new(0),
            meanwhile,
        }
    }
}

impl consolidate::ChatModel for Scripted<'_> {
    fn model(&self) -> &str {
        "scripted"
    }

    fn complete(
        &self,
        _: &[consolidate::ChatMessage],
    ) -> std::result::Result<String, consolidate::ConsolidateError> {
        let mut calls = self.calls.lock().unwrap();
        if *calls == 0
            && let Some(run) = &self.meanwhile
        {
            run();
        }
        let answer = self.answers[(*calls).min(self.answers.len() - 1)];
        *calls += 1;
        Ok(answer.to_owned())
    }
}

fn push_session(store: &Memory) {
    let scope = Scope::user("alice").with_session("s1");
    let texts = [
        (true, "I'm flying to Lisbon in May. I'm vegetarian."),
        (false, "Lovely! Do you want restaurant ideas?"),
        (true, "Yes please, vegetarian places near Alfama."),
        (false, "Here are three in Alfama."),
    ];
    for (from_user, text) in texts {
        let content = MessageContentValue::Text(text.to_owned());
        let message = if from_user {
            Message::User {
                content,
                user_id: None,
            }
        } else {
            Message::Assistant {
                content,
                tool_calls: None,
                agent_id: None,
            }
        };
        store
            .session()
            .push(&scope, &message, Actor::Agent)
            .unwrap();
    }
}

fn consolidation_lands_quarantined_records_with_their_citations(backend: Backend) {
    let Some(place) = Place::new(backend) else {
        return;
    };
    let store = open(&place);
    push_session(&store);
    let chat = Scripted::new(None);
    let report =
        consolidate::consolidate(&store, &chat, &consolidate::ConsolidateOptions::new("s1"))
            .unwrap();
    assert_eq!(report.user_id, "alice");
    assert_eq!((report.messages, report.calls), (4, 2));
    assert_eq!(report.sequences, Some((1, 4)));
    assert_eq!(
        (
            report.episodes.len(),
            report.facts.len(),
            report.insights.len()
        ),
        (1, 2, 1)
    );
    let skipped: Vec<_> = report.skipped.iter().map(|s| s.what.as_str()).collect();
    assert_eq!(skipped, vec!["fact 3 of call 1", "insight 2"]);
    let episode = &report.episodes[0];
    assert_eq!(episode.trust.provenance, Some(MemoryProvenance::Extraction));
    assert_eq!(episode.trust.status, Some(MemoryStatus::Quarantined));
    for fact in &report.facts {
        assert_eq!(fact.trust.status, Some(MemoryStatus::Quarantined));
        assert_eq!(fact.subject.as_deref(), Some("Alice"));
    }
    // Read back from the store, not just the report.
    let insight = store.insights().get(&report.insights[0].record.id).unwrap();
    assert_eq!(insight.trust.provenance, Some(MemoryProvenance::Reflection));
    assert_eq!(insight.trust.status, Some(MemoryStatus::Quarantined));
    let third_message = store
        .session()
        .list("alice", "s1", Some(2), Some(1))
        .unwrap();
    assert_eq!(
        insight.cites,
        vec![
            report.facts[0].record.id.clone(),
            report.facts[1].record.id.clone(),
            third_message[0].record.id.clone(),
        ]
    );
    // Quarantined: a default search finds none of it, the review path does.
    let mut options = MemorySearchOptions {
        query: "Lisbon vegetarian".to_owned(),
        user_id: Some("alice".to_owned()),
        kinds: Some(vec![
            MemoryKind::Semantic,
            MemoryKind::Episodic,
            MemoryKind::Insight,
        ]),
        ..MemorySearchOptions::default()
    };
    assert!(store.search(&options).unwrap().is_empty());
    options.include_quarantined = Some(true);
    assert_eq!(store.search(&options).unwrap().len(), 4);
    assert!(
        store
            .metadata("alice")
            .unwrap()
            .last_consolidated_at
            .is_some()
    );
    // Run again: nothing new since the mark, no call made.
    let again = Scripted::new(None);
    let second =
        consolidate::consolidate(&store, &again, &consolidate::ConsolidateOptions::new("s1"))
            .unwrap();
    assert_eq!((second.messages, second.calls), (0, 0));
    assert_eq!(*again.calls.lock().unwrap(), 0);
}

/// Two handles on one store (two instances on one PostgreSQL database, two connections
/// to one SQLite file): the consolidation whose mark moved meanwhile writes nothing.
fn a_consolidation_racing_another_of_the_same_session_writes_nothing(backend: Backend) {
    let Some(place) = Place::new(backend) else {
        return;
    };
    let a = open(&place);
    let b = open(&place);
    push_session(&a);
    let rows_after_inner = std::sync::Mutex::new(0);
    let inner = Scripted::new(None);
    let outer = Scripted::new(Some(Box::new(|| {
        let report =
            consolidate::consolidate(&b, &inner, &consolidate::ConsolidateOptions::new("s1"))
                .unwrap();
        assert_eq!(report.facts.len(), 2);
        *rows_after_inner.lock().unwrap() = b.row_count().unwrap();
    })));
    let err = consolidate::consolidate(&a, &outer, &consolidate::ConsolidateOptions::new("s1"))
        .unwrap_err();
    assert_eq!(err.code(), mindgate_errors::ErrorCode::Conflict, "{err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(a.row_count().unwrap(), *rows_after_inner.lock().unwrap());
    assert_eq!(a.row_count().unwrap(), 4 + 1 + 2 + 1);
}

on_both_backends!(
    consolidation_lands_quarantined_records_with_their_citations,
    a_consolidation_racing_another_of_the_same_session_writes_nothing,
);

fn switching_embedders_is_refused_until_reembedded(backend: Backend) {
    let Some(place) = Place::new(backend) else {
        return;
    };
    let clock = Arc::new(ManualClock::at(T0));
    {
        let s = place.open(options(clock.clone())).unwrap();
        s.semantic()
            .remember_many_unchecked(
                (0..100)
                    .map(|i| {
                        NewFact::new(Scope::user("u"), format!("fact number {i} about gardens"))
                    })
                    .collect(),
            )
            .unwrap();
        s.entities().resolve("u", "Garden Club").unwrap();
        assert_eq!(
            s.stored_embedder().unwrap().as_deref(),
            Some("test:hash@64")
        );
    }
    let other = || {
        Arc::new(TestEmbedder {
            dim: 32,
            model: "small",
        })
    };
    let err = place
        .open(OpenOptions::default().embedder(other()))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, MemoryError::EmbedderMismatch { .. }));
    assert!(
        text.contains("mindgate memory reembed --embedder test"),
        "{text}"
    );
    let without = place.open_for_reembed(OpenOptions::default()).unwrap();
    assert!(
        matches!(without.reembed(|_| {}), Err(MemoryError::Invalid { .. })),
        "re-embedding needs an embedder"
    );
    drop(without);
    let s = place
        .open_for_reembed(OpenOptions::default().embedder(other()))
        .unwrap();
    let mut seen = Vec::new();
    let n = s.reembed(|p: ReembedProgress| seen.push(p)).unwrap();
    assert_eq!(n, 100);
    assert_eq!(
        seen.first().unwrap(),
        &ReembedProgress {
            done: 0,
            total: 100
        }
    );
    assert_eq!(
        seen.last().unwrap(),
        &ReembedProgress {
            done: 100,
            total: 100
        }
    );
    assert_eq!(seen.len(), 1 + 100usize.div_ceil(reembed::BATCH));
    assert!(seen.windows(2).all(|w| w[0].done < w[1].done));
    let ledger = s.ledger("store").unwrap();
    let row = ledger.last().unwrap();
    assert_eq!(row.action, "reembed");
    assert_eq!(
        row.detail,
        Some(serde_json::json!({"from": "test:hash@64", "to": "test:small@32", "embedded": 100}))
    );
    drop(s);
    let s = place
        .open(OpenOptions::default().embedder(other()))
        .unwrap();
    assert_eq!(
        s.stored_embedder().unwrap().as_deref(),
        Some("test:small@32")
    );
    let mut o = MemorySearchOptions::new("u", "fact number 7 about gardens");
    o.mode = Some(SearchMode::Vector);
    assert_eq!(
        s.search(&o).unwrap().len(),
        10,
        "vector search works on the new vectors"
    );
    // Only the new embedder's vectors are left: an export carries 100 record vectors.
    let dump = export(&s);
    assert_eq!(
        dump.lines()
            .filter(|l| l.contains("\"table\":\"memory_vectors\""))
            .count(),
        100
    );
    assert!(
        dump.lines()
            .filter(|l| l.contains("\"table\":\"entity_vectors\""))
            .any(|l| l.contains("test:small@32")),
        "entity names are re-embedded too"
    );
    // Running again has nothing left to embed.
    drop(s);
    let s = place
        .open_for_reembed(OpenOptions::default().embedder(other()))
        .unwrap();
    assert_eq!(s.reembed(|_| {}).unwrap(), 0);
    drop(s);
    assert!(
        place.open(options(clock)).is_err(),
        "the old embedder is now the mismatch"
    );
}

on_both_backends!(switching_embedders_is_refused_until_reembedded);

/// Every export line as a value, JSON held in text columns parsed (PostgreSQL's `jsonb`
/// keeps its own key order), the header left out.
fn rows_of(dump: &str) -> Vec<Value> {
    dump.lines()
        .skip(1)
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(row) = v.get_mut("row").and_then(Value::as_object_mut) {
                for cell in row.values_mut() {
                    if let Some(parsed) = cell
                        .as_str()
                        .filter(|t| t.starts_with('{') || t.starts_with('['))
                        .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    {
                        *cell = parsed;
                    }
                }
            }
            v
        })
        .collect()
}

#[test]
fn an_export_moves_from_sqlite_to_postgres_and_back_with_the_same_items() {
    let Some(pg) = Place::new(Backend::Postgres) else {
        return;
    };
    let (Some(a), Some(b)) = (Place::new(Backend::Sqlite), Place::new(Backend::Sqlite)) else {
        unreachable!("SQLite places always exist");
    };
    let source = open(&a);
    populate(&source);
    let first = export(&source);
    let on_pg = open(&pg);
    let report = on_pg.import_jsonl(&mut first.as_bytes()).unwrap();
    assert_eq!(report.rows as usize, first.lines().count() - 1);
    assert_eq!(items(&on_pg), items(&source));
    let second = export(&on_pg);
    assert_eq!(
        first.lines().next(),
        second.lines().next(),
        "the same header"
    );
    assert_eq!(rows_of(&second), rows_of(&first));
    let back = open(&b);
    back.import_jsonl(&mut second.as_bytes()).unwrap();
    assert_eq!(items(&back), items(&source));
    assert_eq!(rows_of(&export(&back)), rows_of(&first));
    // The vectors moved unchanged (the same ranking); full text is re-indexed by
    // PostgreSQL (`ts_rank`, not BM25: the same records, ranked its own way).
    assert_eq!(
        search_ids(&on_pg, SearchMode::Vector),
        search_ids(&source, SearchMode::Vector)
    );
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    assert_eq!(
        sorted(search_ids(&on_pg, SearchMode::Lexical)),
        sorted(search_ids(&source, SearchMode::Lexical))
    );
}
