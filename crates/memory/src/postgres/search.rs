//! Hybrid search in PostgreSQL: `ts_rank` over the `tsvector` with the filter in the same
//! query, the filter checked by rowid for the vector walk; the pipeline (plan, vector
//! walk, fusion, entity hop, access update) is [`crate::search`]'s, the same as SQLite's.

use std::collections::{HashMap, HashSet};
use std::sync::MutexGuard;

use postgres::types::ToSql;
use postgres::{Client, GenericClient, Transaction};

use crate::error::Result;
use crate::lexical::query_terms;
use crate::postgres::PgMemory;
use crate::postgres::entities::facts_of_group;
use crate::postgres::items::{ITEM_COLUMNS, TS_CONFIG, query_rows};
use crate::recall::RecallWrites;
use crate::rules::filter::{Filter, FilterValue};
use crate::rules::row::ItemRow;
use crate::search::{SearchReads, search};
use crate::types::*;
use crate::vectors::VectorCache;

/// The filter's SQL with its `?` placeholders numbered from `$first`.
pub(crate) fn numbered(sql: &str, first: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = first;
    for ch in sql.chars() {
        if ch == '?' {
            out.push('$');
            out.push_str(&n.to_string());
            n += 1;
        } else {
            out.push(ch);
        }
    }
    out
}

/// The filter's parameters, in order.
pub(crate) fn filter_params(filter: &Filter) -> Vec<&(dyn ToSql + Sync)> {
    value_params(&filter.params)
}

/// Parameters as the driver takes them.
pub(crate) fn value_params(values: &[FilterValue]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| match v {
            FilterValue::Text(t) => t as &(dyn ToSql + Sync),
            FilterValue::Integer(i) => i as &(dyn ToSql + Sync),
        })
        .collect()
}

/// The rowids among `candidates` that pass `filter`.
pub(crate) fn admit(
    c: &mut impl GenericClient,
    filter: &Filter,
    candidates: &[i64],
) -> Result<HashSet<i64>> {
    if candidates.is_empty() {
        return Ok(HashSet::new());
    }
    let sql = format!(
        "SELECT i.rowid FROM memory_items i WHERE i.rowid = ANY($1) AND {}",
        numbered(&filter.sql, 2)
    );
    let ids = candidates.to_vec();
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&ids];
    params.extend(filter_params(filter));
    c.query(&sql, &params)?
        .iter()
        .map(|r| Ok(r.try_get::<_, i64>(0)?))
        .collect()
}

/// Loads rows by rowid.
pub(crate) fn load_rows(
    c: &mut impl GenericClient,
    rowids: &[i64],
) -> Result<HashMap<i64, ItemRow>> {
    if rowids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!("SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.rowid = ANY($1)");
    let ids = rowids.to_vec();
    Ok(query_rows(c, &sql, &[&ids])?
        .into_iter()
        .map(|r| (r.rowid, r))
        .collect())
}

/// The lexical list: `(rowid, ts_rank)`, best first (then by rowid), only rows passing the
/// filter, which applies inside the ranked query, before the cut. The query is the same
/// content words as SQLite's FTS5 query, OR-ed (`websearch_to_tsquery` never fails on
/// input).
fn lexical(
    c: &mut impl GenericClient,
    query: &str,
    filter: &Filter,
    pool: usize,
) -> Result<Vec<(i64, f64)>> {
    let terms = query_terms(query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let matcher = terms.join(" or ");
    let sql = format!(
        "SELECT i.rowid, ts_rank(i.search_text, q)::float8 AS rank \
         FROM memory_items i, websearch_to_tsquery('{TS_CONFIG}', $1) q \
         WHERE i.search_text @@ q AND {} ORDER BY rank DESC, i.rowid LIMIT $2",
        numbered(&filter.sql, 3)
    );
    let limit = i64::try_from(pool).unwrap_or(i64::MAX);
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&matcher, &limit];
    params.extend(filter_params(filter));
    c.query(&sql, &params)?
        .iter()
        .map(|r| Ok((r.try_get::<_, i64>(0)?, r.try_get::<_, f64>(1)?)))
        .collect()
}

/// Brings the vector mirror up to date for `embedder`.
fn refresh(
    cache: &mut VectorCache,
    c: &mut impl GenericClient,
    embedder: &str,
    dim: usize,
) -> Result<()> {
    cache.reset_for(embedder, dim);
    let rows = c.query(
        "SELECT id, item_rowid, vec FROM memory_vectors WHERE embedder = $1 AND id > $2 ORDER BY id",
        &[&embedder, &cache.last_id],
    )?;
    for row in rows {
        let blob: &[u8] = row.try_get(2)?;
        cache.push(row.try_get(0)?, row.try_get(1)?, blob);
    }
    Ok(())
}

impl PgMemory {
    /// Searches the kinds `fixed` (or the options' kinds, or every searchable kind):
    /// [`crate::search::search`] over this database.
    pub(crate) fn search_kinds(
        &self,
        o: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
        search(self.parts.search_store(), o, fixed, || {
            PgSearch(self.lock())
        })
    }
}

/// The nearest earlier records of a record's user, kind and session
/// ([`SearchReads::neighbours`]): the `$2` entries of the neighbour index (`session_id`,
/// `user_id`, `kind`, `rowid`: migration 4) just below the record's own, in index order,
/// kept when they share its session, user and kind. Written as a row comparison ordered by
/// every column of the index so that only that index can answer it, a bounded range read
/// backwards from the record. As a join on the session (with the index or without) the
/// planner walked the primary key from the record and filtered every row until it met the
/// session: ≈ 90,000 rows for a record with no earlier neighbour in a 100k store.
const NEIGHBOURS_BEFORE: &str = "SELECT n.rowid FROM memory_items h CROSS JOIN LATERAL \
     (SELECT m.rowid, m.session_id, m.user_id, m.kind FROM memory_items m \
     WHERE m.session_id IS NOT NULL \
     AND (m.session_id, m.user_id, m.kind, m.rowid) < (h.session_id, h.user_id, h.kind, h.rowid) \
     ORDER BY m.session_id DESC, m.user_id DESC, m.kind DESC, m.rowid DESC LIMIT $2) n \
     WHERE h.rowid = $1 AND n.session_id = h.session_id AND n.user_id = h.user_id \
     AND n.kind = h.kind ORDER BY n.rowid DESC";

/// The nearest later ones.
const NEIGHBOURS_AFTER: &str = "SELECT n.rowid FROM memory_items h CROSS JOIN LATERAL \
     (SELECT m.rowid, m.session_id, m.user_id, m.kind FROM memory_items m \
     WHERE m.session_id IS NOT NULL \
     AND (m.session_id, m.user_id, m.kind, m.rowid) > (h.session_id, h.user_id, h.kind, h.rowid) \
     ORDER BY m.session_id, m.user_id, m.kind, m.rowid LIMIT $2) n \
     WHERE h.rowid = $1 AND n.session_id = h.session_id AND n.user_id = h.user_id \
     AND n.kind = h.kind ORDER BY n.rowid";

/// The PostgreSQL side of [`SearchReads`], on the store's connection.
struct PgSearch<'a>(MutexGuard<'a, Client>);

impl SearchReads for PgSearch<'_> {
    fn lexical(&mut self, query: &str, filter: &Filter, pool: usize) -> Result<Vec<(i64, f64)>> {
        lexical(&mut *self.0, query, filter, pool)
    }

    fn admit(&mut self, filter: &Filter, candidates: &[i64]) -> Result<HashSet<i64>> {
        admit(&mut *self.0, filter, candidates)
    }

    fn refresh_vectors(
        &mut self,
        cache: &mut VectorCache,
        embedder: &str,
        dim: usize,
    ) -> Result<()> {
        refresh(cache, &mut *self.0, embedder, dim)
    }

    fn load_rows(&mut self, rowids: &[i64]) -> Result<HashMap<i64, ItemRow>> {
        load_rows(&mut *self.0, rowids)
    }

    fn fact_roots(&mut self, fact_id: &str) -> Result<Vec<String>> {
        self.0
            .query(
                "SELECT COALESCE(e.merged_into, e.id) FROM fact_entities f \
                 JOIN entities e ON e.id = f.entity_id WHERE f.fact_id = $1 ORDER BY f.role",
                &[&fact_id],
            )?
            .iter()
            .map(|r| Ok(r.try_get::<_, String>(0)?))
            .collect()
    }

    fn neighbours(&mut self, rowid: i64, window: usize) -> Result<Vec<i64>> {
        let mut out = Vec::new();
        let limit = window as i64;
        for sql in [NEIGHBOURS_BEFORE, NEIGHBOURS_AFTER] {
            for r in self.0.query(sql, &[&rowid, &limit])? {
                out.push(r.try_get::<_, i64>(0)?);
            }
        }
        Ok(out)
    }

    fn facts_of_group(&mut self, root: &str) -> Result<Vec<String>> {
        facts_of_group(&mut *self.0, root)
    }

    fn rowid_of(&mut self, id: &str) -> Result<Option<i64>> {
        match self
            .0
            .query_opt("SELECT rowid FROM memory_items WHERE id = $1", &[&id])?
        {
            Some(r) => Ok(Some(r.try_get::<_, i64>(0)?)),
            None => Ok(None),
        }
    }

    /// In one transaction; the upsert's row lock makes instances sharing the database
    /// count one window.
    fn record_recall(&mut self, facts: &[i64], by: Actor, now: i64) -> Result<()> {
        let mut tx = self.0.transaction()?;
        crate::recall::strengthen(&mut RecallRows(&mut tx), facts, by, now)?;
        tx.commit()?;
        Ok(())
    }
}

/// The access update's statements in one PostgreSQL transaction.
struct RecallRows<'a, 'c>(&'a mut Transaction<'c>);

impl RecallWrites for RecallRows<'_, '_> {
    fn claim(&mut self, facts: &[i64], principal: &str, now: i64, since: i64) -> Result<Vec<i64>> {
        let claimed = self.0.query(
            "INSERT INTO memory_recalls (item_rowid, principal, at) \
             SELECT unnest($1::BIGINT[]), $2, $3 \
             ON CONFLICT (item_rowid, principal) DO UPDATE SET at = excluded.at \
             WHERE memory_recalls.at <= $4 RETURNING item_rowid",
            &[&facts, &principal, &now, &since],
        )?;
        Ok(claimed
            .iter()
            .map(|r| r.try_get::<_, i64>(0))
            .collect::<std::result::Result<Vec<_>, _>>()?)
    }

    fn strengthen(&mut self, rowids: &[i64], amount: f64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET strength = strength + $1, last_accessed_at = $2 \
             WHERE rowid = ANY($3)",
            &[&amount, &now, &rowids],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The neighbour lookups read the neighbour index (migration 4) as a bounded range from
    /// the record, not the primary key filtered row by row, on a store of 20,000 records in
    /// sessions of 1,000 whose record 10,000 is alone in its session (the worst case of the
    /// join on the session: every row on one side of it read); at a session's edge they
    /// stop.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn neighbour_lookups_are_a_range_of_the_neighbour_index() {
        let Some(schema) = mindgate_testkit::PgSchema::create("mgplan") else {
            return;
        };
        let mut client = mindgate_testkit::pg_client(schema.url());
        crate::postgres::migrations::migrate(&mut client).unwrap();
        client
            .batch_execute(
                "INSERT INTO memory_items (id, kind, user_id, session_id, text, created_at, search_text) \
                 SELECT 'i' || g, 'semantic', 'u', \
                 CASE WHEN g = 10000 THEN 'alone' ELSE 's' || (g / 1000) END, 't', 0, ''::tsvector \
                 FROM generate_series(1, 20000) g; ANALYZE memory_items;",
            )
            .unwrap();
        for sql in [NEIGHBOURS_BEFORE, NEIGHBOURS_AFTER] {
            let plan: Vec<String> = client
                .query(&format!("EXPLAIN {sql}"), &[&10_000i64, &2i64])
                .unwrap()
                .iter()
                .map(|r| r.get::<_, String>(0))
                .collect();
            let plan = plan.join("\n");
            assert!(plan.contains("using memory_items_neighbours"), "{plan}");
            assert!(
                !plan.contains("memory_items_pkey on memory_items m"),
                "{plan}"
            );
            let found = client.query(sql, &[&10_000i64, &2i64]).unwrap();
            assert!(found.is_empty(), "alone in its session");
        }
        let near: Vec<i64> = client
            .query(NEIGHBOURS_BEFORE, &[&5_500i64, &2i64])
            .unwrap()
            .iter()
            .map(|r| r.get::<_, i64>(0))
            .collect();
        assert_eq!(near, vec![5_499, 5_498]);
        // At a session's edge only its own records come back (record 2,000 opens session
        // 2; 1,999 closes session 1).
        let mut edge = |sql: &str, rowid: i64| -> Vec<i64> {
            client
                .query(sql, &[&rowid, &2i64])
                .unwrap()
                .iter()
                .map(|r| r.get::<_, i64>(0))
                .collect()
        };
        assert_eq!(edge(NEIGHBOURS_BEFORE, 2_000), Vec::<i64>::new());
        assert_eq!(edge(NEIGHBOURS_AFTER, 1_999), Vec::<i64>::new());
        assert_eq!(edge(NEIGHBOURS_AFTER, 2_000), vec![2_001, 2_002]);
    }
}
