//! Hybrid search in SQLite: BM25 over FTS5 and the filter checked by rowid; the plan, the
//! exact vector walk and the fusion are [`crate::hybrid`]'s, the same as PostgreSQL's.

use std::collections::{HashMap, HashSet};

use rusqlite::types::{ToSqlOutput, Value as SqlValue};
use rusqlite::{Connection, OptionalExtension};

use crate::error::Result;
use crate::hybrid::{Filter, FilterValue, Fused, SearchPlan, vector_list};
use crate::lexical::fts_query;
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{ITEM_COLUMNS, ItemRow};
use crate::types::*;

impl rusqlite::ToSql for FilterValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            FilterValue::Text(t) => ToSqlOutput::Owned(SqlValue::Text(t.clone())),
            FilterValue::Integer(i) => ToSqlOutput::Owned(SqlValue::Integer(*i)),
        })
    }
}

/// The rowids among `candidates` that pass `filter`.
pub(crate) fn admit(
    conn: &Connection,
    filter: &Filter,
    candidates: &[i64],
) -> Result<HashSet<i64>> {
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
        filter.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(filter.params.iter()), |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
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
    let rows = stmt.query_map([], crate::sqlite::items::item_from_row)?;
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
    let admitted = admit(conn, filter, &ids)?;
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
    params.push(FilterValue::Text(matcher));
    params.extend(filter.params.iter().cloned());
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(params.iter()), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl SqliteMemory {
    /// Searches the kinds `fixed` (or the options' kinds, or every searchable kind).
    pub(crate) fn search_kinds(
        &self,
        o: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
        let plan = SearchPlan::new(o, fixed, &self.config, self.fusion_defaults())?;
        let query_vec = if plan.embeds(&o.query) {
            self.embed(&[o.query.as_str()])?.and_then(|mut v| v.pop())
        } else {
            None
        };
        let now = self.now();
        let conn = self.lock();
        let lex = if plan.lexical() {
            lexical(&conn, &o.query, &plan.filter, plan.pool)?
        } else {
            Vec::new()
        };
        let vec = match (&query_vec, &self.embedder_key, &self.embedder) {
            (Some(q), Some(key), Some(embedder)) => {
                let mut cache = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
                super::vectors::refresh(&mut cache, &conn, key, embedder.id().dimension)?;
                vector_list(&cache, q, plan.pool, |ids| admit(&conn, &plan.filter, ids))?
            }
            _ => Vec::new(),
        };
        let fused = Fused::new(&plan, lex, vec);
        let rows = load_rows(&conn, &fused.rowids())?;
        let (mut hits, facts) = fused.rank(&plan, o, &rows, now, &self.config)?;
        if o.expand_entities.unwrap_or(false) {
            self.expand_hits(&conn, &plan.filter, &mut hits)?;
        }
        if let Some(by) = o.recall_by
            && self.config.record_access
            && plan.filter.known_at.is_none()
            && !facts.is_empty()
        {
            record_recall(&conn, &facts, by, now)?;
        }
        Ok(hits)
    }
}

/// Strengthens each of `facts` that `by` has not strengthened within the recall window
/// (`crate::recall`), in one transaction.
fn record_recall(conn: &Connection, facts: &[i64], by: Actor, now: i64) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    {
        let mut claim = tx.prepare_cached(
            "INSERT INTO memory_recalls (item_rowid, principal, at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (item_rowid, principal) DO UPDATE SET at = excluded.at \
             WHERE memory_recalls.at <= ?4 RETURNING item_rowid",
        )?;
        let mut strengthen = tx.prepare_cached(
            "UPDATE memory_items SET strength = strength + ?1, last_accessed_at = ?2 WHERE rowid = ?3",
        )?;
        let since = crate::recall::window_start(now);
        for rowid in facts {
            let claimed = claim
                .query_row(rusqlite::params![rowid, by.as_str(), now, since], |r| {
                    r.get::<_, i64>(0)
                })
                .optional()?;
            if claimed.is_some() {
                strengthen.execute(rusqlite::params![
                    crate::recall::RECALL_STRENGTH,
                    now,
                    rowid
                ])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}
