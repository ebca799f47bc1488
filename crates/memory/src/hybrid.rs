//! Hybrid search, the part every backend shares: the options checked once into a
//! [`SearchPlan`] (kinds, pool, fusion, the filter as a WHERE clause), the exact vector walk
//! over the in-memory mirror with the filter applied before the cut, and the fusion of the
//! lexical and vector lists with trust and decay multipliers ([`rank`]). A backend supplies
//! the lexical list, the filter check by rowid and the rows.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::config::{FusionDefaults, MemoryConfig};
use crate::error::{MemoryError, Result};
use crate::fusion::{
    RRF_K, min_max_normalised, weighted_reciprocal_rank_fusion, weighted_score_fusion,
};
use crate::maintenance::retention;
use crate::rules::filter::Filter;
use crate::rules::row::{ItemRow, MAX_TEXT_CHARS};
use crate::trust::trust_multiplier;
use crate::types::*;
use crate::vectors::VectorCache;

/// Most hits one search returns.
pub const MAX_TOP_K: usize = 1000;
/// Default hits.
pub const DEFAULT_TOP_K: usize = 10;

/// Kinds searched when the options name none.
pub const SEARCHABLE: [MemoryKind; 5] = [
    MemoryKind::Semantic,
    MemoryKind::Episodic,
    MemoryKind::Procedural,
    MemoryKind::Insight,
    MemoryKind::Session,
];

/// A search's options, checked.
#[derive(Debug)]
pub struct SearchPlan {
    /// Hits returned.
    pub top_k: usize,
    /// Candidates taken from each list.
    pub pool: usize,
    /// Which lists run.
    pub mode: SearchMode,
    /// How they fuse.
    pub fusion: FusionMethod,
    /// Weight of the vector list.
    pub vector_weight: f64,
    /// Least cosine a vector candidate needs to enter the vector list.
    pub vector_floor: f64,
    /// Share of a source's score its session neighbours get ([`crate::neighbours`]; 0 off).
    pub neighbour_weight: f64,
    /// Neighbours on each side of a source.
    pub neighbour_window: usize,
    /// The filter every candidate passes.
    pub filter: Filter,
}

impl SearchPlan {
    /// Checks `o` for the kinds `fixed` (or the options' kinds, or every searchable kind).
    pub fn new(
        o: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
        config: &MemoryConfig,
        defaults: FusionDefaults,
    ) -> Result<Self> {
        let top_k = o.top_k.unwrap_or(DEFAULT_TOP_K);
        if top_k == 0 || top_k > MAX_TOP_K {
            return Err(MemoryError::invalid(
                "topK",
                format!("must be 1 to {MAX_TOP_K}"),
            ));
        }
        if o.query.chars().count() > MAX_TEXT_CHARS {
            return Err(MemoryError::invalid(
                "query",
                format!("at most {MAX_TEXT_CHARS} characters"),
            ));
        }
        let pool = o
            .candidate_pool
            .unwrap_or(config.default_candidate_pool)
            .clamp(1, 10_000)
            .max(top_k);
        let kinds: Vec<MemoryKind> = match (fixed, &o.kinds) {
            (Some(k), _) => vec![k],
            (None, Some(ks)) if !ks.is_empty() => {
                for k in ks {
                    if !SEARCHABLE.contains(k) {
                        return Err(MemoryError::invalid(
                            "kinds",
                            format!("`{k}` records are not searchable"),
                        ));
                    }
                }
                ks.clone()
            }
            _ => SEARCHABLE.to_vec(),
        };
        let filter = Filter::from_options(o, &kinds)?;
        let mode = o.mode.unwrap_or_default();
        let fusion = o.fusion.unwrap_or(defaults.method);
        let vector_weight = o.vector_weight.unwrap_or(defaults.vector_weight);
        if !vector_weight.is_finite() || !(0.0..=10.0).contains(&vector_weight) {
            return Err(MemoryError::invalid(
                "vectorWeight",
                "must be a number in [0, 10]",
            ));
        }
        let vector_floor = o.vector_floor.unwrap_or(defaults.vector_floor);
        // Below 0 a vector pointing away from the query would count as evidence.
        if !vector_floor.is_finite() || !(0.0..=1.0).contains(&vector_floor) {
            return Err(MemoryError::invalid(
                "vectorFloor",
                "must be a number in [0, 1]",
            ));
        }
        let neighbour_weight = o.neighbour_weight.unwrap_or(config.neighbour_weight);
        if !neighbour_weight.is_finite() || !(0.0..=1.0).contains(&neighbour_weight) {
            return Err(MemoryError::invalid(
                "neighbourWeight",
                "must be a number in [0, 1]",
            ));
        }
        Ok(Self {
            top_k,
            pool,
            mode,
            fusion,
            vector_weight,
            vector_floor,
            neighbour_weight,
            neighbour_window: config.neighbour_window.min(crate::neighbours::MAX_WINDOW),
            filter,
        })
    }

    /// True when the lexical list runs.
    pub fn lexical(&self) -> bool {
        self.mode != SearchMode::Vector
    }

    /// True when the query is embedded for the vector list.
    pub fn embeds(&self, query: &str) -> bool {
        self.mode != SearchMode::Lexical && !query.trim().is_empty()
    }
}

/// The vector list: `(rowid, cosine)`, best first, only rows `admit` lets through and
/// whose cosine is above `floor` (at or below it a vector is no evidence). Walks the exact
/// ranking of the mirror in growing slices until `pool` rows pass or none are left, so
/// the filter is applied before the cut, never after.
pub fn vector_list(
    cache: &VectorCache,
    query_vec: &[f32],
    pool: usize,
    floor: f64,
    mut admit: impl FnMut(&[i64]) -> Result<HashSet<i64>>,
) -> Result<Vec<(i64, f64)>> {
    let mut scores = cache.scores(query_vec);
    scores.retain(|&(score, _)| score.is_finite() && f64::from(score) > floor);
    let total = scores.len();
    let order = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let mut out = Vec::new();
    let mut done = 0;
    let mut slice = (pool * 4).max(256);
    while out.len() < pool && done < total {
        let end = (done + slice).min(total);
        if end < total {
            scores[done..].select_nth_unstable_by(end - done, order);
        }
        scores[done..end].sort_unstable_by(order);
        let ids: Vec<i64> = scores[done..end]
            .iter()
            .map(|&(_, i)| cache.rowids[i as usize])
            .collect();
        let admitted = admit(&ids)?;
        for (&(score, _), id) in scores[done..end].iter().zip(ids) {
            if admitted.contains(&id) {
                out.push((id, f64::from(score)));
                if out.len() == pool {
                    break;
                }
            }
        }
        done = end;
        slice *= 4;
    }
    Ok(out)
}

/// The lists of one search, fused.
pub struct Fused {
    /// `(rowid, fused score in 0–1)`, best first.
    pub order: Vec<(i64, f64)>,
    lexical: HashMap<i64, f64>,
    vector: HashMap<i64, f64>,
    lexical_norm: HashMap<i64, f64>,
    vector_norm: HashMap<i64, f64>,
    rrf: Option<HashMap<i64, f64>>,
    neighbour: HashMap<i64, f64>,
}

impl Fused {
    /// Fuses the lexical and vector lists as `plan` says. The fused score is on a 0–1
    /// scale: score fusion divides the weighted sum of the normalised scores by the
    /// weights of the lists that returned candidates; rank fusion divides by the best
    /// score those lists allow (first in each).
    pub fn new(plan: &SearchPlan, lex: Vec<(i64, f64)>, vec: Vec<(i64, f64)>) -> Self {
        let weights = [(&lex, 1.0), (&vec, plan.vector_weight)];
        let total: f64 = weights
            .iter()
            .filter(|(list, _)| !list.is_empty())
            .map(|(_, w)| w)
            .sum();
        // Clamped: a sum of fractions can round a hair above its best.
        let scale = |raw: f64, best: f64| {
            if best > 0.0 {
                (raw / best).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        let (order, rrf) = match plan.fusion {
            FusionMethod::Rrf => {
                let lex_ids: Vec<i64> = lex.iter().map(|x| x.0).collect();
                let vec_ids: Vec<i64> = vec.iter().map(|x| x.0).collect();
                let raw = weighted_reciprocal_rank_fusion(
                    &[(&lex_ids, 1.0), (&vec_ids, plan.vector_weight)],
                    RRF_K,
                );
                let best = total / (RRF_K + 1.0);
                let order = raw.iter().map(|&(id, r)| (id, scale(r, best))).collect();
                (order, Some(raw.into_iter().collect()))
            }
            FusionMethod::Score => {
                let raw = weighted_score_fusion(&[(&lex, 1.0), (&vec, plan.vector_weight)]);
                let order = raw
                    .into_iter()
                    .map(|(id, f)| (id, scale(f, total)))
                    .collect();
                (order, None)
            }
        };
        Self {
            order,
            lexical_norm: min_max_normalised(&lex).into_iter().collect(),
            vector_norm: min_max_normalised(&vec).into_iter().collect(),
            lexical: lex.into_iter().collect(),
            vector: vec.into_iter().collect(),
            rrf,
            neighbour: HashMap::new(),
        }
    }

    /// Lends the neighbours of `links` (`(source, neighbour)` rowids) a share of their
    /// sources' fused scores and re-sorts ([`crate::neighbours::share`]; signal
    /// `neighbour`).
    pub fn share_with_neighbours(&mut self, links: &[(i64, i64)], weight: f64) {
        let (order, shares) = crate::neighbours::share(&self.order, links, weight);
        self.order = order;
        self.neighbour = shares;
    }

    /// Rowids of the fused candidates.
    pub fn rowids(&self) -> Vec<i64> {
        self.order.iter().map(|x| x.0).collect()
    }

    /// The signals of one candidate before trust and decay: raw and normalised list
    /// scores, the fused score, and the raw rank fusion score when it ran.
    fn signals(&self, rowid: i64, fused: f64) -> BTreeMap<String, f64> {
        let mut signals = BTreeMap::new();
        let lists = [
            ("bm25", &self.lexical),
            ("bm25Norm", &self.lexical_norm),
            ("vector", &self.vector),
            ("vectorNorm", &self.vector_norm),
        ];
        for (name, list) in lists {
            if let Some(v) = list.get(&rowid) {
                signals.insert(name.to_owned(), *v);
            }
        }
        if let Some(r) = self.rrf.as_ref().and_then(|m| m.get(&rowid)) {
            signals.insert("rrf".to_owned(), *r);
        }
        if let Some(n) = self.neighbour.get(&rowid) {
            signals.insert("neighbour".to_owned(), *n);
        }
        signals.insert("fused".to_owned(), fused);
        signals
    }

    /// The hits: each candidate's signals, the trust (and, when asked, decay) multipliers,
    /// insights capped below what they cite, trusted records before quarantined ones, the
    /// best `top_k`. Also returns the rowids of the facts among them (whose recall a
    /// backend records).
    pub fn rank(
        &self,
        plan: &SearchPlan,
        o: &MemorySearchOptions,
        rows: &HashMap<i64, ItemRow>,
        now: i64,
        config: &MemoryConfig,
    ) -> Result<(Vec<MemoryHit>, Vec<i64>)> {
        let decay = o.decay.unwrap_or(false);
        let mut scored: Vec<(f64, BTreeMap<String, f64>, &ItemRow)> = Vec::new();
        for (rowid, fused) in &self.order {
            let Some(row) = rows.get(rowid) else { continue };
            let mut signals = self.signals(*rowid, *fused);
            let trust = trust_multiplier(row.status(), row.provenance());
            signals.insert("trust".to_owned(), trust);
            let mut score = fused * trust;
            if decay {
                let r = retention(now, row, &config.maintenance);
                signals.insert("decay".to_owned(), r);
                score *= r;
            }
            scored.push((score, signals, row));
        }
        cap_insights(&mut scored);
        // A quarantined record is never ranked above a trusted one, whatever its score.
        let quarantined = |row: &ItemRow| row.status() == MemoryStatus::Quarantined;
        scored.sort_by(|a, b| {
            quarantined(a.2)
                .cmp(&quarantined(b.2))
                .then(b.0.total_cmp(&a.0))
        });
        scored.truncate(plan.top_k);
        let mut hits = Vec::with_capacity(scored.len());
        for (score, signals, row) in &scored {
            hits.push(MemoryHit {
                record: row.to_item()?,
                score: *score,
                signals: signals.clone(),
            });
        }
        let facts = scored
            .iter()
            .filter(|(_, _, r)| r.kind == "semantic")
            .map(|(_, _, r)| r.rowid)
            .collect();
        Ok((hits, facts))
    }
}

/// Insights rank below the facts they cite: an insight scoring at or above a cited record
/// among the candidates is lowered just under it (signal `citedBelow`).
fn cap_insights(scored: &mut [(f64, BTreeMap<String, f64>, &ItemRow)]) {
    let by_id: HashMap<&str, f64> = scored.iter().map(|(s, _, r)| (r.id.as_str(), *s)).collect();
    let mut caps: Vec<(usize, f64)> = Vec::new();
    for (i, (score, _, row)) in scored.iter().enumerate() {
        if row.kind != "insight" {
            continue;
        }
        let cites: Vec<String> = row
            .body_json
            .as_deref()
            .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
            .and_then(|b| b.get("cites").cloned())
            .and_then(|c| serde_json::from_value(c).ok())
            .unwrap_or_default();
        let floor = cites
            .iter()
            .filter_map(|c| by_id.get(c.as_str()))
            .fold(f64::INFINITY, |m, s| m.min(*s));
        if floor.is_finite() && *score >= floor {
            // Strictly below, also when the floor is 0 (score fusion gives a list's last
            // candidate 0).
            caps.push((i, floor - floor.abs().max(1e-9) * 1e-3));
        }
    }
    for (i, cap) in caps {
        scored[i].0 = cap;
        scored[i].1.insert("citedBelow".to_owned(), cap);
    }
}

/// One-hop expansion, the shared tail: the facts `extra` (rowids in the order found) that
/// `admitted` lets through, at most as many as there are hits, appended below the hits
/// with signal `hop` = 1 at half the lowest hit's score.
pub fn append_hops(
    hits: &mut Vec<MemoryHit>,
    extra: &[i64],
    admitted: &HashSet<i64>,
    rows: &HashMap<i64, ItemRow>,
) -> Result<()> {
    let floor = hits.iter().map(|h| h.score).fold(f64::INFINITY, f64::min);
    let limit = hits.len().max(1);
    let base = if floor.is_finite() { floor * 0.5 } else { 0.0 };
    for rowid in extra.iter().filter(|r| admitted.contains(r)).take(limit) {
        if let Some(row) = rows.get(rowid) {
            let mut signals = BTreeMap::new();
            signals.insert("hop".to_owned(), 1.0);
            hits.push(MemoryHit {
                record: row.to_item()?,
                score: base,
                signals,
            });
        }
    }
    Ok(())
}
