//! The LoCoMo benchmark's loader and scorer on a small fixture of the same shape, plus an
//! interop check on the shared data when it is present.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use mindgate_memory::bench::locomo::{Tuning, evaluate, load_file, load_into, parse, turn_text};
use mindgate_memory::*;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/locomo-mini.json")
}

#[test]
fn parses_turns_dates_captions_and_evidence() {
    let convs = load_file(&fixture()).unwrap();
    assert_eq!(convs.len(), 2);
    let c = &convs[0];
    assert_eq!(c.sample_id, "mini-1");
    assert_eq!(c.turns.len(), 6);
    assert_eq!(c.turns[3].dia_id, "D2:1");
    assert_eq!(c.turns[3].date, "6:30 pm on 20 April, 2024");
    assert_eq!(
        turn_text(&c.turns[2]),
        "[9:00 am on 2 March, 2024] Ruth: Look at our boat! [shared an image: a photo of a red rowing boat on a river]"
    );
    // Malformed evidence strings yield their ids; duplicates collapse; category 5 has none.
    assert_eq!(c.questions[1].evidence, vec!["D1:2", "D2:1"]);
    assert_eq!(c.questions[2].evidence, vec!["D2:2"]);
    assert!(c.questions[3].evidence.is_empty());
    assert!(parse("{}").is_err());
    assert!(parse("not json").is_err());
}

#[test]
fn scores_evidence_recall_within_each_conversation() {
    let store = SqliteMemory::open_in_memory(
        OpenOptions::default().embedder(Arc::new(common::TestEmbedder::new())),
    )
    .unwrap();
    let convs = load_file(&fixture()).unwrap();
    let (written, _) = load_into(&store, &convs, true).unwrap();
    assert_eq!(written, 8);
    let turn = store.semantic().get("mini-1:D2:2").unwrap();
    assert_eq!(turn.record.user_id, "mini-1");
    // Each turn is remembered in its session, so its neighbours are the turns around it.
    assert_eq!(turn.record.session_id.as_deref(), Some("mini-1:D2"));
    assert_eq!(
        turn.text,
        "[6:30 pm on 20 April, 2024] Ruth: We won our first regatta in Ghent."
    );
    assert_eq!(
        turn.context.as_deref(),
        Some("in reply to Omar: The clock chimes again, it took me six weeks.")
    );
    assert_eq!(
        store.semantic().get("mini-1:D1:1").unwrap().context,
        None,
        "the first turn replies to nothing"
    );
    let lexical = evaluate(&store, &convs, SearchMode::Lexical, &Tuning::default()).unwrap();
    assert_eq!(lexical.overall.questions, 4, "category 5 is not counted");
    assert_eq!(
        lexical.by_category.keys().copied().collect::<Vec<_>>(),
        vec![1, 2, 4]
    );
    // With 6 and 2 turns per conversation, every evidence turn is in the top 10.
    assert_eq!(lexical.overall.recall_at_10, 1.0);
    assert_eq!(lexical.overall.hit_at_10, 1.0);
    // "Which club did Li join?" must find Li's turn, never Ruth's in the other conversation.
    let hits = store
        .search(&MemorySearchOptions::new(
            "mini-2",
            "Which club did Li join?",
        ))
        .unwrap();
    assert!(hits.iter().all(|h| h.record.record().user_id == "mini-2"));
    assert_eq!(hits[0].record.id(), "mini-2:D1:1");
    for fusion in [FusionMethod::Rrf, FusionMethod::Score] {
        for query_feedback in [None, Some(2)] {
            let tuning = Tuning {
                candidate_pool: Some(20),
                vector_weight: Some(0.5),
                vector_floor: None,
                fusion: Some(fusion),
                query_feedback,
                neighbour_weight: None,
            };
            let hybrid = evaluate(&store, &convs, SearchMode::Hybrid, &tuning).unwrap();
            assert_eq!(
                hybrid.overall.recall_at_10, 1.0,
                "{fusion:?} {query_feedback:?}"
            );
        }
    }
}

#[test]
fn reads_the_shared_locomo_file_when_present() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/locomo/locomo-dev.json");
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let convs = load_file(&path).unwrap();
    assert!(!convs.is_empty());
    let (mut named, mut real) = (0usize, 0usize);
    for c in &convs {
        assert!(!c.turns.is_empty(), "{}", c.sample_id);
        let ids: std::collections::HashSet<&str> =
            c.turns.iter().map(|t| t.dia_id.as_str()).collect();
        for q in c.questions.iter().filter(|q| (1..=4).contains(&q.category)) {
            named += q.evidence.len();
            real += q
                .evidence
                .iter()
                .filter(|e| ids.contains(e.as_str()))
                .count();
        }
    }
    // Nearly all evidence names a real turn; the few that do not are errors in the data.
    assert!(
        named > 0 && real as f64 >= 0.95 * named as f64,
        "{real} of {named}"
    );
}
