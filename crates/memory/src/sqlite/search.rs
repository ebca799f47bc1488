//! Hybrid search: BM25 over FTS5, exact cosine over the active embedder's vectors,
//! reciprocal rank fusion, trust and decay multipliers, every filter inside the queries.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use crate::error::{MemoryError, Result};
use crate::fusion::{RRF_K, weighted_reciprocal_rank_fusion, weighted_score_fusion};
use crate::lexical::fts_query;
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{ITEM_COLUMNS, ItemRow, MAX_TEXT_CHARS, check_id};
use crate::sqlite::maintenance::retention;
use crate::time::parse_opt;
use crate::trust::trust_multiplier;
use crate::types::*;

/// Most hits one search returns.
pub const MAX_TOP_K: usize = 1000;
/// Default hits.
pub const DEFAULT_TOP_K: usize = 10;

/// Kinds searched when the options name none.
const SEARCHABLE: [MemoryKind; 5] = [
    MemoryKind::Semantic,
    MemoryKind::Episodic,
    MemoryKind::Procedural,
    MemoryKind::Insight,
    MemoryKind::Session,
];

/// A WHERE clause over `memory_items i` with its positional parameters.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    pub sql: String,
    pub params: Vec<SqlValue>,
    /// Transaction-time instant, when the read is historical.
    pub known_at: Option<i64>,
}

impl Filter {
    fn push(&mut self, clause: &str) {
        if !self.sql.is_empty() {
            self.sql.push_str(" AND ");
        }
        self.sql.push_str(clause);
    }

    /// Builds the filter of a search (validating every option).
    pub fn from_options(o: &MemorySearchOptions, kinds: &[MemoryKind]) -> Result<Self> {
        let mut f = Self::default();
        let user = o
            .user_id
            .as_deref()
            .ok_or_else(|| MemoryError::invalid("userId", "a search needs a userId scope"))?;
        check_id("userId", user)?;
        f.push("i.user_id = ?");
        f.params.push(SqlValue::Text(user.to_owned()));
        if let Some(agent) = &o.agent_id {
            check_id("agentId", agent)?;
            f.push("i.agent_id = ?");
            f.params.push(SqlValue::Text(agent.clone()));
        }
        if let Some(session) = &o.session_id {
            check_id("sessionId", session)?;
            f.push("i.session_id = ?");
            f.params.push(SqlValue::Text(session.clone()));
        }
        let list = kinds
            .iter()
            .map(|k| format!("'{}'", k.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        f.push(&format!("i.kind IN ({list})"));
        for tag in o.tags.iter().flatten() {
            f.push(
                "EXISTS (SELECT 1 FROM memory_tags t WHERE t.tag = ? AND t.item_rowid = i.rowid)",
            );
            f.params.push(SqlValue::Text(tag.clone()));
        }
        if let Some(range) = &o.date_range {
            if let Some(from) = parse_opt("dateRange.from", range.from.as_deref())? {
                f.push("i.created_at >= ?");
                f.params.push(SqlValue::Integer(from));
            }
            if let Some(to) = parse_opt("dateRange.to", range.to.as_deref())? {
                f.push("i.created_at <= ?");
                f.params.push(SqlValue::Integer(to));
            }
        }
        let archived = o.include_archived.unwrap_or(false);
        let quarantined = o.include_quarantined.unwrap_or(false);
        match parse_opt("knownAt", o.known_at.as_deref())? {
            Some(k) => {
                f.known_at = Some(k);
                f.push("i.created_at <= ? AND (i.deleted_at IS NULL OR i.deleted_at > ?) AND (i.superseded_at IS NULL OR i.superseded_at > ?)");
                f.params.extend([k, k, k].map(SqlValue::Integer));
                if !archived {
                    f.push("(i.archived_at IS NULL OR i.archived_at > ?)");
                    f.params.push(SqlValue::Integer(k));
                }
                if !quarantined {
                    f.push("i.active_since IS NOT NULL AND i.active_since <= ?");
                    f.params.push(SqlValue::Integer(k));
                }
            }
            None => {
                f.push("i.deleted_at IS NULL AND i.superseded_by IS NULL");
                if !archived {
                    f.push("i.archived_at IS NULL");
                }
                if !quarantined {
                    f.push("i.status = 'active'");
                }
            }
        }
        if let Some(a) = parse_opt("asOf", o.as_of.as_deref())? {
            f.push(
                "(CASE i.kind \
                 WHEN 'semantic' THEN (i.valid_from IS NULL OR i.valid_from <= ?) AND (i.valid_to IS NULL OR i.valid_to > ?) \
                 WHEN 'episodic' THEN i.started_at <= ? \
                 ELSE i.created_at <= ? END)",
            );
            f.params.extend([a, a, a, a].map(SqlValue::Integer));
        }
        Ok(f)
    }

    /// The rowids among `candidates` that pass the filter.
    pub fn admit(&self, conn: &Connection, candidates: &[i64]) -> Result<HashSet<i64>> {
        if candidates.is_empty() {
            return Ok(HashSet::new());
        }
        let list = candidates
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        // NOT INDEXED: look the candidates up by rowid. Left to itself the planner may walk
        // the scope index over every row of the user instead (100k rows for 256 candidates).
        let sql = format!(
            "SELECT i.rowid FROM memory_items i NOT INDEXED WHERE i.rowid IN ({list}) AND {}",
            self.sql
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(self.params.iter()), |r| {
            r.get::<_, i64>(0)
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// Loads rows by rowid.
pub(crate) fn load_rows(conn: &Connection, rowids: &[i64]) -> Result<HashMap<i64, ItemRow>> {
    if rowids.is_empty() {
        return Ok(HashMap::new());
    }
    let list = rowids
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let sql = format!("SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.rowid IN ({list})");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], ItemRow::from_row)?;
    let mut out = HashMap::new();
    for row in rows {
        let row = row?;
        out.insert(row.rowid, row);
    }
    Ok(out)
}

/// The lexical list: `(rowid, −bm25)`, best first, only rows passing the filter.
///
/// The full-text index alone ranks its best matches first (no join: the filter is then
/// checked by rowid on that slice only); when fewer than `pool` of them pass and the index
/// has more, the ranked matches are joined with the filter in one query. Either way the
/// filter applies before the cut, and the order (bm25, then rowid) is the same.
fn lexical(
    conn: &Connection,
    query: &str,
    filter: &Filter,
    pool: usize,
) -> Result<Vec<(i64, f64)>> {
    let Some(matcher) = fts_query(query) else {
        return Ok(Vec::new());
    };
    let slice = (pool * 4).max(256);
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, -bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ?1 \
         ORDER BY bm25(memory_fts), rowid LIMIT ?2",
    )?;
    let ranked: Vec<(i64, f64)> = stmt
        .query_map(rusqlite::params![matcher, slice as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let ids: Vec<i64> = ranked.iter().map(|x| x.0).collect();
    let admitted = filter.admit(conn, &ids)?;
    let out: Vec<(i64, f64)> = ranked
        .iter()
        .filter(|x| admitted.contains(&x.0))
        .take(pool)
        .copied()
        .collect();
    if out.len() == pool || ranked.len() < slice {
        return Ok(out);
    }
    let sql = format!(
        "SELECT i.rowid, -bm25(memory_fts) FROM memory_fts JOIN memory_items i ON i.rowid = memory_fts.rowid \
         WHERE memory_fts MATCH ? AND {} ORDER BY bm25(memory_fts), i.rowid LIMIT {pool}",
        filter.sql
    );
    let mut params = Vec::with_capacity(filter.params.len() + 1);
    params.push(SqlValue::Text(matcher));
    params.extend(filter.params.iter().cloned());
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(params.iter()), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl SqliteMemory {
    /// The vector list: `(rowid, cosine)`, best first, only rows passing the filter. Walks
    /// the exact ranking in growing slices until `pool` rows pass or none are left, so the
    /// filter is applied before the cut, never after.
    fn vector(
        &self,
        conn: &Connection,
        query_vec: &[f32],
        filter: &Filter,
        pool: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let (Some(key), Some(embedder)) = (&self.embedder_key, &self.embedder) else {
            return Ok(Vec::new());
        };
        let mut cache = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        cache.refresh(conn, key, embedder.id().dimension)?;
        let mut scores = cache.scores(query_vec);
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
            let admitted = filter.admit(conn, &ids)?;
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

    /// Searches the kinds `fixed` (or the options' kinds, or every searchable kind).
    pub(crate) fn search_kinds(
        &self,
        o: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
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
            .unwrap_or(self.config.default_candidate_pool)
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
        let defaults = self.fusion_defaults();
        let fusion = o.fusion.unwrap_or(defaults.method);
        let vector_weight = o.vector_weight.unwrap_or(defaults.vector_weight);
        if !vector_weight.is_finite() || !(0.0..=10.0).contains(&vector_weight) {
            return Err(MemoryError::invalid(
                "vectorWeight",
                "must be a number in [0, 10]",
            ));
        }
        let query_vec = if mode != SearchMode::Lexical && !o.query.trim().is_empty() {
            self.embed(&[o.query.as_str()])?.and_then(|mut v| v.pop())
        } else {
            None
        };
        let now = self.now();
        let conn = self.lock();
        let lex = if mode != SearchMode::Vector {
            lexical(&conn, &o.query, &filter, pool)?
        } else {
            Vec::new()
        };
        let vec = match &query_vec {
            Some(q) => self.vector(&conn, q, &filter, pool)?,
            None => Vec::new(),
        };
        let lex_ids: Vec<i64> = lex.iter().map(|x| x.0).collect();
        let vec_ids: Vec<i64> = vec.iter().map(|x| x.0).collect();
        let fused = match fusion {
            FusionMethod::Rrf => weighted_reciprocal_rank_fusion(
                &[(&lex_ids, 1.0), (&vec_ids, vector_weight)],
                RRF_K,
            ),
            FusionMethod::Score => weighted_score_fusion(&[(&lex, 1.0), (&vec, vector_weight)]),
        };
        let fusion_signal = match fusion {
            FusionMethod::Rrf => "rrf",
            FusionMethod::Score => "fused",
        };
        let bm25: HashMap<i64, f64> = lex.into_iter().collect();
        let cosine: HashMap<i64, f64> = vec.into_iter().collect();
        let ids: Vec<i64> = fused.iter().map(|x| x.0).collect();
        let rows = load_rows(&conn, &ids)?;
        let decay = o.decay.unwrap_or(false);
        let mut scored: Vec<(f64, BTreeMap<String, f64>, &ItemRow)> = Vec::new();
        for (rowid, rrf) in &fused {
            let Some(row) = rows.get(rowid) else { continue };
            let mut signals = BTreeMap::new();
            if let Some(b) = bm25.get(rowid) {
                signals.insert("bm25".to_owned(), *b);
            }
            if let Some(c) = cosine.get(rowid) {
                signals.insert("vector".to_owned(), *c);
            }
            signals.insert(fusion_signal.to_owned(), *rrf);
            let trust = trust_multiplier(row.status(), row.provenance());
            signals.insert("trust".to_owned(), trust);
            let mut score = rrf * trust;
            if decay {
                let r = retention(now, row, &self.config.maintenance);
                signals.insert("decay".to_owned(), r);
                score *= r;
            }
            scored.push((score, signals, row));
        }
        cap_insights(&mut scored);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(top_k);
        let mut hits = Vec::with_capacity(scored.len());
        for (score, signals, row) in &scored {
            hits.push(MemoryHit {
                record: row.to_item()?,
                score: *score,
                signals: signals.clone(),
            });
        }
        if o.expand_entities.unwrap_or(false) {
            self.expand_hits(&conn, &filter, &mut hits)?;
        }
        if self.config.record_access && filter.known_at.is_none() {
            let facts: Vec<String> = scored
                .iter()
                .filter(|(_, _, r)| r.kind == "semantic")
                .map(|(_, _, r)| r.rowid.to_string())
                .collect();
            if !facts.is_empty() {
                conn.execute(
                    &format!(
                        "UPDATE memory_items SET strength = strength + 0.1, last_accessed_at = ?1 WHERE rowid IN ({})",
                        facts.join(",")
                    ),
                    [now],
                )?;
            }
        }
        Ok(hits)
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
