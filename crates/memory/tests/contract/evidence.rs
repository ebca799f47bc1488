//! Scores with a meaning (issue 28, item 2), on every backend: a hit needs evidence (a
//! lexical match, or a cosine at or above the vector floor), the fused score is on a 0–1
//! scale with the raw and normalised list scores beside it, a negative cosine never
//! surfaces, and a trusted record always ranks above a quarantined one.

use std::sync::Arc;

use mindgate_memory::time::ManualClock;
use mindgate_memory::*;

use super::{fact, ids, opts, setup};

/// One unrelated fact: a query sharing no word with it finds nothing, in every mode; a
/// query sharing one finds it.
pub fn an_unrelated_query_finds_nothing<S: MemoryStore>(make: &dyn Fn(Arc<ManualClock>) -> S) {
    let (s, _) = setup(make);
    s.semantic().remember(fact("Ada lives in Bergen")).unwrap();
    for mode in [SearchMode::Hybrid, SearchMode::Vector, SearchMode::Lexical] {
        let mut o = opts("peanuts");
        o.mode = Some(mode);
        let hits = s.search(&o).unwrap();
        assert!(hits.is_empty(), "{mode:?}: {hits:?}");
    }
    assert_eq!(s.search(&opts("Bergen")).unwrap().len(), 1);
    // The floor is the search's to set: at 0 any non-negative cosine is evidence, at 1
    // only an identical direction.
    let mut o = opts("Ada lives in Bergen");
    o.mode = Some(SearchMode::Vector);
    o.vector_floor = Some(0.999);
    assert_eq!(s.search(&o).unwrap().len(), 1, "the same text");
    o.query = "Ada lives".into();
    assert!(s.search(&o).unwrap().is_empty(), "below the floor");
    for bad in [-0.1, 1.5, f64::NAN] {
        o.vector_floor = Some(bad);
        assert!(
            matches!(
                s.search(&o),
                Err(MemoryError::Invalid { field, .. }) if field == "vectorFloor"
            ),
            "{bad}"
        );
    }
}

/// An exact phrase: the fused score and the final score are at most 1, `bm25` (raw) and
/// `bm25Norm` (0–1) both present; with several hits every score stays in 0–1.
pub fn an_exact_phrase_scores_within_the_scale<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
) {
    let (s, _) = setup(make);
    s.semantic().remember(fact("Ada lives in Bergen")).unwrap();
    s.semantic()
        .remember(fact("Ada owns a red bicycle"))
        .unwrap();
    s.semantic().remember(fact("Bob lives in Oslo")).unwrap();
    for fusion in [FusionMethod::Score, FusionMethod::Rrf] {
        let mut o = opts("Ada lives in Bergen");
        o.fusion = Some(fusion);
        let hits = s.search(&o).unwrap();
        let top = &hits[0];
        assert_eq!(top.record.text(), "Ada lives in Bergen");
        assert!(top.signals.contains_key("bm25"), "{:?}", top.signals);
        assert_eq!(top.signals["bm25Norm"], 1.0, "{:?}", top.signals);
        assert!(top.signals["fused"] <= 1.0, "{fusion:?} {:?}", top.signals);
        for h in &hits {
            assert!((0.0..=1.0).contains(&h.score), "{fusion:?} {h:?}");
            assert!((0.0..=1.0).contains(&h.signals["fused"]), "{h:?}");
            for norm in ["bm25Norm", "vectorNorm"] {
                if let Some(v) = h.signals.get(norm) {
                    assert!((0.0..=1.0).contains(v), "{norm} {h:?}");
                }
            }
        }
    }
}

/// A vector pointing away from the query (negative cosine) is never evidence: not a hit
/// in vector mode even at the lowest floor, and never a `vector` signal of a hit that the
/// lexical list found.
pub fn a_negative_cosine_never_surfaces<S: MemoryStore>(make: &dyn Fn(Arc<ManualClock>) -> S) {
    let (s, _) = setup(make);
    let tea = s.semantic().remember(fact("Ada drinks green tea")).unwrap();
    // The test embedder points `-word` away from `word`.
    let mut o = opts("-green -tea");
    o.mode = Some(SearchMode::Vector);
    o.vector_floor = Some(0.0);
    assert!(s.search(&o).unwrap().is_empty());
    o.mode = Some(SearchMode::Hybrid);
    let hits = s.search(&o).unwrap();
    assert_eq!(ids(&hits), vec![tea.record.id.clone()], "the words match");
    assert!(
        !hits[0].signals.contains_key("vector"),
        "{:?}",
        hits[0].signals
    );
    assert!(hits[0].signals.contains_key("bm25"));
}

/// With quarantined records shown (the inspector's path), the active "prefers window
/// seats" ranks above the quarantined "prefers aisle seats" even for a query that
/// matches the quarantined one better.
pub fn trusted_records_rank_above_quarantined<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
) {
    let (s, _) = setup(make);
    let window = s
        .semantic()
        .remember(fact("Ana prefers window seats"))
        .unwrap();
    let mut derived = fact("Ana prefers aisle seats");
    derived.meta.provenance = Some(MemoryProvenance::Extraction);
    let aisle = s.semantic().remember(derived).unwrap();
    assert_eq!(aisle.trust.status, Some(MemoryStatus::Quarantined));
    for query in ["Ana prefers aisle seats", "aisle seats", "Ana seats"] {
        let mut o = opts(query);
        o.include_quarantined = Some(true);
        let hits = s.search(&o).unwrap();
        assert_eq!(
            ids(&hits),
            vec![window.record.id.clone(), aisle.record.id.clone()],
            "{query}: {hits:?}"
        );
        assert!(hits[1].signals["trust"] < 1.0);
    }
    // Without includeQuarantined the quarantined one never comes back.
    assert_eq!(
        ids(&s.search(&opts("aisle seats")).unwrap()),
        vec![window.record.id.clone()]
    );
}
