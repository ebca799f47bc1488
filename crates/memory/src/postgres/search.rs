//! Hybrid search in PostgreSQL: `ts_rank` over the `tsvector` with the filter in the same
//! query, the filter checked by rowid for the vector walk; the plan, the walk and the
//! fusion are [`crate::hybrid`]'s, the same as SQLite's.

use std::collections::{HashMap, HashSet};

use postgres::GenericClient;
use postgres::types::ToSql;

use crate::error::Result;
use crate::hybrid::{Filter, FilterValue, Fused, SearchPlan, vector_list};
use crate::lexical::query_terms;
use crate::postgres::PgMemory;
use crate::postgres::items::{ITEM_COLUMNS, TS_CONFIG, query_rows};
use crate::record::ItemRow;
use crate::types::*;

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
    cache: &mut crate::vectors::VectorCache,
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
    /// Searches the kinds `fixed` (or the options' kinds, or every searchable kind).
    pub(crate) fn search_kinds(
        &self,
        o: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
        let plan = SearchPlan::new(o, fixed, &self.config, self.fusion_defaults())?;
        let query_vec = if plan.embeds(&o.query) {
            self.embed_one(&o.query)?
        } else {
            None
        };
        let now = self.now();
        let mut client = self.lock();
        let c = &mut *client;
        let lex = if plan.lexical() {
            lexical(c, &o.query, &plan.filter, plan.pool)?
        } else {
            Vec::new()
        };
        let vec = match (&query_vec, &self.embedder_key, &self.embedder) {
            (Some(q), Some(key), Some(embedder)) => {
                let mut cache = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
                refresh(&mut cache, c, key, embedder.id().dimension)?;
                vector_list(&cache, q, plan.pool, |ids| admit(c, &plan.filter, ids))?
            }
            _ => Vec::new(),
        };
        let fused = Fused::new(&plan, lex, vec);
        let rows = load_rows(c, &fused.rowids())?;
        let (mut hits, facts) = fused.rank(&plan, o, &rows, now, &self.config)?;
        if o.expand_entities.unwrap_or(false) {
            crate::postgres::entities::expand_hits(c, &plan.filter, &mut hits)?;
        }
        if let Some(by) = o.recall_by
            && self.config.record_access
            && plan.filter.known_at.is_none()
            && !facts.is_empty()
        {
            record_recall(c, &facts, by, now)?;
        }
        Ok(hits)
    }
}

/// Strengthens each of `facts` that `by` has not strengthened within the recall window
/// (`crate::recall`), in one transaction; the upsert's row lock makes instances sharing
/// the database count one window.
fn record_recall(c: &mut postgres::Client, facts: &[i64], by: Actor, now: i64) -> Result<()> {
    let mut tx = c.transaction()?;
    let since = crate::recall::window_start(now);
    let claimed = tx.query(
        "INSERT INTO memory_recalls (item_rowid, principal, at) \
         SELECT unnest($1::BIGINT[]), $2, $3 \
         ON CONFLICT (item_rowid, principal) DO UPDATE SET at = excluded.at \
         WHERE memory_recalls.at <= $4 RETURNING item_rowid",
        &[&facts, &by.as_str(), &now, &since],
    )?;
    let rowids = claimed
        .iter()
        .map(|r| r.try_get::<_, i64>(0))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if !rowids.is_empty() {
        tx.execute(
            "UPDATE memory_items SET strength = strength + $1, last_accessed_at = $2 \
             WHERE rowid = ANY($3)",
            &[&crate::recall::RECALL_STRENGTH, &now, &rowids],
        )?;
    }
    tx.commit()?;
    Ok(())
}
