//! Synthetic facts for write-throughput and search-latency figures.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::store::{MemoryStore, SemanticMemory};
use crate::types::*;

const SUBJECTS: &[&str] = &[
    "Ana", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kemal",
    "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tove",
];
const VERBS: &[&str] = &[
    "likes",
    "visited",
    "bought",
    "painted",
    "repaired",
    "booked",
    "cooked",
    "studied",
    "adopted",
    "sold",
    "borrowed",
    "planted",
    "photographed",
    "recommended",
    "cancelled",
    "organised",
];
const OBJECTS: &[&str] = &[
    "a red bicycle",
    "the old piano",
    "tickets to Lisbon",
    "a vegetable garden",
    "a golden retriever",
    "the violin lessons",
    "a cabin by the lake",
    "sourdough bread",
    "a camping trip",
    "the chess club",
    "a yoga retreat",
    "a vintage camera",
    "the marathon",
    "a pottery class",
    "a birthday party",
    "the new laptop",
    "a hiking trail",
    "a jazz concert",
    "the book club",
    "a sailing course",
    "a mountain hut",
    "the science fair",
    "a charity run",
    "a tomato harvest",
];
const WHEN: &[&str] = &[
    "last Monday",
    "in March",
    "after work",
    "on the weekend",
    "during the holidays",
    "yesterday",
    "two years ago",
    "every Friday",
    "before the trip",
    "in the morning",
];

fn sentence(rng: &mut StdRng) -> String {
    format!(
        "{} {} {} {} (note {})",
        SUBJECTS[rng.random_range(0..SUBJECTS.len())],
        VERBS[rng.random_range(0..VERBS.len())],
        OBJECTS[rng.random_range(0..OBJECTS.len())],
        WHEN[rng.random_range(0..WHEN.len())],
        rng.random_range(0..100_000u32),
    )
}

/// Figures of one synthetic size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LatencyFigures {
    /// Facts stored.
    pub facts: usize,
    /// Write throughput (facts/s, batches of 1000, embedding included).
    pub write_facts_per_sec: f64,
    /// Hybrid search latency p50, ms (query embedding included).
    pub search_p50_ms: f64,
    /// p95, ms.
    pub search_p95_ms: f64,
    /// Searches timed.
    pub searches: usize,
}

/// Facts per synthetic session (so a search's neighbour lookups, [`crate::neighbours`],
/// find sessions of a conversation's size).
pub const SESSION_FACTS: usize = 50;

/// Writes `facts` synthetic facts into user `bench`'s memory in batches of 1000, in
/// sessions of [`SESSION_FACTS`]: answers the facts written and the seconds taken.
pub fn write_facts<S: MemoryStore>(
    store: &S,
    facts: usize,
    rng: &mut StdRng,
) -> Result<(usize, f64)> {
    let start = Instant::now();
    let mut written = 0;
    while written < facts {
        let n = (facts - written).min(1000);
        let batch: Vec<NewFact> = (written..written + n)
            .map(|i| {
                let scope = Scope::user("bench").with_session(format!("s{}", i / SESSION_FACTS));
                NewFact::new(scope, sentence(rng))
            })
            .collect();
        written += store.semantic().remember_many_unchecked(batch)?.len();
    }
    Ok((written, start.elapsed().as_secs_f64()))
}

/// A question about the synthetic facts ("What did Ana do with a red bicycle?").
pub fn question(rng: &mut StdRng) -> String {
    format!(
        "What did {} do with {}?",
        SUBJECTS[rng.random_range(0..SUBJECTS.len())],
        OBJECTS[rng.random_range(0..OBJECTS.len())]
    )
}

/// Times `searches` hybrid top-10 searches in user `bench`'s memory (query embedding
/// included): milliseconds each, in order.
pub fn time_searches<S: MemoryStore>(
    store: &S,
    searches: usize,
    rng: &mut StdRng,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(searches);
    for _ in 0..searches {
        let q = question(rng);
        let t = Instant::now();
        store.search(&MemorySearchOptions::new("bench", q))?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(times)
}

/// The `p` quantile (0–1) of sorted values (0 for none).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 * p).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0.0)
}

/// Writes `facts` synthetic facts (in one user's memory), then times `searches` hybrid
/// top-10 searches. Deterministic for a seed.
pub fn run<S: MemoryStore>(
    store: &S,
    facts: usize,
    searches: usize,
    seed: u64,
) -> Result<LatencyFigures> {
    let mut rng = StdRng::seed_from_u64(seed);
    let (written, write_secs) = write_facts(store, facts, &mut rng)?;
    let mut times = time_searches(store, searches, &mut rng)?;
    times.sort_by(f64::total_cmp);
    Ok(LatencyFigures {
        facts: written,
        write_facts_per_sec: written as f64 / write_secs.max(1e-9),
        search_p50_ms: percentile(&times, 0.50),
        search_p95_ms: percentile(&times, 0.95),
        searches: times.len(),
    })
}
