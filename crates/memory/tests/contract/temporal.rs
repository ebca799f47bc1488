//! The one temporal truth, as a property: random histories (remember, supersede with and
//! without validity windows, forget, quarantined writes, validate, reject) and, at many
//! instants on both axes, a search whose query matches every version returns exactly the
//! versions `fact_at` (the belief oracle) names — and exactly the versions of an
//! independent model of the rule written here. Seeded, so a failure names its history.

use std::collections::BTreeSet;
use std::sync::Arc;

use mindgate_memory::time::{Clock, ManualClock, format_ms, parse_time};
use mindgate_memory::*;

use super::{FactAtOf, setup};
use crate::common::{HOUR, T0};

/// A small deterministic generator (splitmix64): no dependency, a seed reproduces a case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What the model knows of one stored version.
#[derive(Debug, Clone)]
struct Version {
    id: String,
    chain: usize,
    created: i64,
    deleted: Option<i64>,
    active_since: Option<i64>,
    superseded_at: Option<i64>,
    valid_from: Option<i64>,
    valid_to: Option<i64>,
}

impl Version {
    fn stands(&self, k: i64) -> bool {
        self.created <= k
            && self.deleted.is_none_or(|d| d > k)
            && self.active_since.is_some_and(|a| a <= k)
    }
    fn holds(&self, a: i64) -> bool {
        self.valid_from.is_none_or(|f| f <= a) && self.valid_to.is_none_or(|t| t > a)
    }
    fn live(&self) -> bool {
        self.deleted.is_none()
    }
}

/// The rule, written independently of the store: per chain the newest version standing
/// and holding (with `asOf`), or the chain's head standing at `knownAt` (without).
fn model(versions: &[Version], as_of: Option<i64>, known_at: Option<i64>) -> BTreeSet<String> {
    let k = known_at.unwrap_or(i64::MAX);
    let mut out = BTreeSet::new();
    for (i, v) in versions.iter().enumerate() {
        let answers = match as_of {
            None => v.stands(k) && v.superseded_at.is_none_or(|s| s > k),
            Some(a) => {
                v.stands(k)
                    && v.holds(a)
                    && !versions[i + 1..]
                        .iter()
                        .any(|l| l.chain == v.chain && l.stands(k) && l.holds(a))
            }
        };
        if answers {
            out.insert(v.id.clone());
        }
    }
    out
}

/// Valid-time instants the windows are built from: 2020-01-01 and a year apart.
fn valid_days() -> Vec<i64> {
    let first = parse_time("t", "2020-01-01T00:00:00Z").unwrap_or(0);
    (0..6).map(|n| first + n * 365 * 24 * HOUR).collect()
}

fn window(rng: &mut Rng) -> (Option<String>, Option<String>) {
    let days = valid_days();
    if rng.chance(30) {
        return (None, None);
    }
    let from = rng.below(days.len() - 1);
    let to = from + 1 + rng.below(days.len() - from - 1);
    let from = (!rng.chance(15)).then(|| format_ms(days[from]));
    let to = rng.chance(50).then(|| format_ms(days[to]));
    (from, to)
}

fn new_fact(n: usize, rng: &mut Rng) -> NewFact {
    let mut f = NewFact::new(Scope::user("u1"), format!("Ada note {n} kept"));
    let (from, to) = window(rng);
    f.valid_from = from;
    f.valid_to = to;
    if rng.chance(30) {
        f.meta.provenance = Some(MemoryProvenance::Extraction);
    }
    f
}

/// Applies one random operation at the clock's time, keeping the model in step.
fn step<S: MemoryStore>(s: &S, now: i64, rng: &mut Rng, versions: &mut Vec<Version>) {
    let n = versions.len();
    let pick = |rng: &mut Rng, ok: &dyn Fn(&Version) -> bool| -> Option<usize> {
        let candidates: Vec<usize> = (0..versions.len()).filter(|&i| ok(&versions[i])).collect();
        (!candidates.is_empty()).then(|| candidates[rng.below(candidates.len())])
    };
    let record = |f: &Fact, chain: usize| Version {
        id: f.record.id.clone(),
        chain,
        created: now,
        deleted: None,
        active_since: (f.trust.status == Some(MemoryStatus::Active)).then_some(now),
        superseded_at: None,
        valid_from: f
            .valid_from
            .as_deref()
            .and_then(|t| parse_time("t", t).ok()),
        valid_to: f.valid_to.as_deref().and_then(|t| parse_time("t", t).ok()),
    };
    match rng.below(6) {
        0 | 1 => {
            let f = s.semantic().remember(new_fact(n, rng)).unwrap();
            let chain = versions.iter().map(|v| v.chain + 1).max().unwrap_or(0);
            versions.push(record(&f, chain));
        }
        2 => {
            let Some(i) = pick(rng, &|v| v.live() && v.superseded_at.is_none()) else {
                return;
            };
            let new = new_fact(n, rng);
            // A derived version of an active fact is held (rules::conflicts::supersede_hold):
            // stored quarantined, unlinked, the old one current — a chain of its own.
            let held = versions[i].active_since.is_some() && new.meta.provenance.is_some();
            let f = s
                .semantic()
                .supersede(&versions[i].id, new, "changed")
                .unwrap();
            assert_eq!(f.supersedes.is_none(), held, "held iff the rule says so");
            let chain = if held {
                versions.iter().map(|v| v.chain + 1).max().unwrap_or(0)
            } else {
                versions[i].superseded_at = Some(now);
                versions[i].chain
            };
            versions.push(record(&f, chain));
        }
        3 => {
            let Some(i) = pick(rng, &|v| v.live()) else {
                return;
            };
            s.semantic()
                .forget(&versions[i].id, "gone", Actor::User)
                .unwrap();
            versions[i].deleted = Some(now);
        }
        4 => {
            let Some(i) = pick(rng, &|v| v.live() && v.active_since.is_none()) else {
                return;
            };
            s.validate(&versions[i].id, false, Actor::User).unwrap();
            versions[i].active_since = Some(now);
        }
        _ => {
            let Some(i) = pick(rng, &|v| v.live() && v.active_since.is_none()) else {
                return;
            };
            s.reject(&versions[i].id, "wrong", Actor::User).unwrap();
            versions[i].deleted = Some(now);
        }
    }
}

fn searched<S: MemoryStore>(s: &S, as_of: Option<i64>, known_at: Option<i64>) -> BTreeSet<String> {
    let mut o = MemorySearchOptions::new("u1", "Ada note");
    o.mode = Some(SearchMode::Lexical);
    o.kinds = Some(vec![MemoryKind::Semantic]);
    o.top_k = Some(1000);
    o.as_of = as_of.map(format_ms);
    o.known_at = known_at.map(format_ms);
    s.search(&o)
        .unwrap()
        .into_iter()
        .map(|h| h.record.id().to_owned())
        .collect()
}

/// What `fact_at` names over every chain: `valid` with `asOf`, `believed` without.
fn oracle<S>(
    s: &S,
    fact_at: FactAtOf<'_, S>,
    versions: &[Version],
    as_of: Option<i64>,
    known_at: Option<i64>,
) -> BTreeSet<String> {
    let mut chains: Vec<usize> = versions.iter().map(|v| v.chain).collect();
    chains.dedup();
    let mut out = BTreeSet::new();
    for chain in chains {
        let Some(first) = versions.iter().find(|v| v.chain == chain) else {
            continue;
        };
        let a = as_of.map(format_ms);
        let k = known_at.map(format_ms);
        let at = fact_at(s, &first.id, a.as_deref(), k.as_deref()).unwrap();
        match as_of {
            Some(_) => out.extend(at.valid),
            None => out.extend(at.believed),
        }
    }
    out
}

/// Runs `histories` random histories of `ops` operations from `seed`.
pub fn search_agrees_with_belief_at_every_instant<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
    fact_at: FactAtOf<'_, S>,
    seed: u64,
    histories: u64,
    ops: usize,
) {
    for case in 0..histories {
        let case_seed = seed.wrapping_add(case);
        let mut rng = Rng(case_seed);
        let (s, clock) = setup(make);
        let mut versions: Vec<Version> = Vec::new();
        let mut times = Vec::new();
        for _ in 0..ops {
            let now = clock.now_ms();
            step(&s, now, &mut rng, &mut versions);
            times.push(now);
            clock.advance(HOUR);
        }
        let mut as_ofs: Vec<Option<i64>> = vec![None];
        for d in valid_days() {
            as_ofs.extend([Some(d - 1), Some(d), Some(d + 180 * 24 * HOUR)]);
        }
        let mut known: Vec<Option<i64>> = vec![None, Some(T0 - 1)];
        for t in &times {
            known.extend([Some(*t), Some(t + HOUR / 2)]);
        }
        for _ in 0..24 {
            let a = as_ofs[rng.below(as_ofs.len())];
            let k = known[rng.below(known.len())];
            let want = model(&versions, a, k);
            let got = searched(&s, a, k);
            let at = (a.map(format_ms), k.map(format_ms));
            assert_eq!(
                got, want,
                "seed {case_seed}: search at (asOf, knownAt) {at:?} vs the model; history {versions:#?}"
            );
            let belief = oracle(&s, fact_at, &versions, a, k);
            assert_eq!(
                got, belief,
                "seed {case_seed}: search at {at:?} vs fact_at; history {versions:#?}"
            );
        }
    }
}
