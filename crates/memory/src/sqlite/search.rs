//! Hybrid search in SQLite: BM25 over FTS5 and the filter checked by rowid; the pipeline
//! (plan, vector walk, fusion, entity hop, access update) is [`crate::search`]'s, the same
//! as PostgreSQL's.

use std::collections::{HashMap, HashSet};

use rusqlite::types::{ToSqlOutput, Value as SqlValue};
use std::sync::MutexGuard;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;
use crate::lexical::fts_query;
use crate::recall::RecallWrites;
use crate::rules::filter::{Filter, FilterValue};
use crate::search::{SearchReads, search};
use crate::sqlite::SqliteMemory;
use crate::sqlite::entities::facts_of_group;
use crate::sqlite::items::{ITEM_COLUMNS, ItemRow};
use crate::types::*;
use crate::vectors::VectorCache;

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
    /// Searches the kinds `fixed` (or the options' kinds, or every searchable kind):
    /// [`crate::search::search`] over this file.
    pub(crate) fn search_kinds(
        &self,
        o: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
        search(self.parts.search_store(), o, fixed, || {
            SqliteSearch(self.lock())
        })
    }
}

/// The nearest earlier records of a record's user, kind and session
/// ([`SearchReads::neighbours`]). `INDEXED BY` the neighbour index (`session_id`,
/// `user_id`, `kind`, then the rowid: migration 7), a bounded range read backwards from
/// the record: left to itself the planner may walk the scope index over every record of
/// the user (`user_id`, `kind`) and check the session on each row.
const NEIGHBOURS_BEFORE: &str = "SELECT n.rowid FROM memory_items h \
     JOIN memory_items n INDEXED BY memory_items_neighbours \
     ON n.session_id = h.session_id AND n.user_id = h.user_id AND n.kind = h.kind \
     WHERE h.rowid = ?1 AND n.rowid < ?1 ORDER BY n.rowid DESC LIMIT ?2";

/// The nearest later ones.
const NEIGHBOURS_AFTER: &str = "SELECT n.rowid FROM memory_items h \
     JOIN memory_items n INDEXED BY memory_items_neighbours \
     ON n.session_id = h.session_id AND n.user_id = h.user_id AND n.kind = h.kind \
     WHERE h.rowid = ?1 AND n.rowid > ?1 ORDER BY n.rowid LIMIT ?2";

/// The SQLite side of [`SearchReads`], on the store's locked connection.
struct SqliteSearch<'a>(MutexGuard<'a, Connection>);

impl SearchReads for SqliteSearch<'_> {
    fn lexical(&mut self, query: &str, filter: &Filter, pool: usize) -> Result<Vec<(i64, f64)>> {
        lexical(&self.0, query, filter, pool)
    }

    fn admit(&mut self, filter: &Filter, candidates: &[i64]) -> Result<HashSet<i64>> {
        admit(&self.0, filter, candidates)
    }

    fn refresh_vectors(
        &mut self,
        cache: &mut VectorCache,
        embedder: &str,
        dim: usize,
    ) -> Result<()> {
        super::vectors::refresh(cache, &self.0, embedder, dim)
    }

    fn load_rows(&mut self, rowids: &[i64]) -> Result<HashMap<i64, ItemRow>> {
        load_rows(&self.0, rowids)
    }

    fn fact_roots(&mut self, fact_id: &str) -> Result<Vec<String>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT COALESCE(e.merged_into, e.id) FROM fact_entities f JOIN entities e ON e.id = f.entity_id WHERE f.fact_id = ?1",
        )?;
        let roots = stmt.query_map(params![fact_id], |r| r.get::<_, String>(0))?;
        Ok(roots.collect::<rusqlite::Result<_>>()?)
    }

    fn facts_of_group(&mut self, root: &str) -> Result<Vec<String>> {
        facts_of_group(&self.0, root)
    }

    fn neighbours(&mut self, rowid: i64, window: usize) -> Result<Vec<i64>> {
        let mut out = Vec::new();
        for sql in [NEIGHBOURS_BEFORE, NEIGHBOURS_AFTER] {
            let mut stmt = self.0.prepare_cached(sql)?;
            let rows = stmt.query_map(params![rowid, window as i64], |r| r.get::<_, i64>(0))?;
            for r in rows {
                out.push(r?);
            }
        }
        Ok(out)
    }

    fn rowid_of(&mut self, id: &str) -> Result<Option<i64>> {
        Ok(self
            .0
            .query_row(
                "SELECT rowid FROM memory_items WHERE id = ?1",
                params![id],
                |r| r.get::<_, i64>(0),
            )
            .optional()?)
    }

    fn record_recall(&mut self, facts: &[i64], by: Actor, now: i64) -> Result<()> {
        let tx = self.0.unchecked_transaction()?;
        crate::recall::strengthen(&mut RecallRows(&tx), facts, by, now)?;
        tx.commit()?;
        Ok(())
    }
}

/// The access update's statements in one SQLite transaction.
struct RecallRows<'a, 'c>(&'a rusqlite::Transaction<'c>);

impl RecallWrites for RecallRows<'_, '_> {
    fn claim(&mut self, facts: &[i64], principal: &str, now: i64, since: i64) -> Result<Vec<i64>> {
        let mut claim = self.0.prepare_cached(
            "INSERT INTO memory_recalls (item_rowid, principal, at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (item_rowid, principal) DO UPDATE SET at = excluded.at \
             WHERE memory_recalls.at <= ?4 RETURNING item_rowid",
        )?;
        let mut claimed = Vec::new();
        for rowid in facts {
            if let Some(r) = claim
                .query_row(params![rowid, principal, now, since], |r| {
                    r.get::<_, i64>(0)
                })
                .optional()?
            {
                claimed.push(r);
            }
        }
        Ok(claimed)
    }

    fn strengthen(&mut self, rowids: &[i64], amount: f64, now: i64) -> Result<()> {
        let mut strengthen = self.0.prepare_cached(
            "UPDATE memory_items SET strength = strength + ?1, last_accessed_at = ?2 WHERE rowid = ?3",
        )?;
        for rowid in rowids {
            strengthen.execute(params![amount, now, rowid])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The neighbour lookups read the neighbour index as a bounded range (a covering
    /// index search that stops after `LIMIT` rows), never the whole session sorted.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn neighbour_lookups_are_a_range_of_the_neighbour_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::sqlite::migrations::migrate(&mut conn).unwrap();
        for sql in [NEIGHBOURS_BEFORE, NEIGHBOURS_AFTER] {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let plan: Vec<String> = stmt
                .query_map(params![1, 2], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let plan = plan.join("\n");
            assert!(
                plan.contains("COVERING INDEX memory_items_neighbours (session_id=? AND user_id=? AND kind=? AND rowid"),
                "{plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "{plan}");
        }
    }
}
