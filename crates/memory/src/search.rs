//! The search pipeline, written once for every backend: the plan ([`SearchPlan`]), the
//! query's embedding, the lexical and vector lists with the filter applied before the cut,
//! the fusion, the session neighbours' share ([`crate::neighbours`]) and the ranking
//! ([`Fused`]), the one-hop entity expansion and the
//! strengthen-on-access update ([`crate::recall`]). A backend answers the statements
//! ([`SearchReads`]) on its locked connection: full text ranked its way (FTS5's BM25 or
//! PostgreSQL's `ts_rank`), the filter checked by rowid, rows by rowid, the vector mirror's
//! catch-up and the entity lookups.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use mindgate_embed::Embedder;

use crate::config::{FusionDefaults, MemoryConfig};
use crate::error::Result;
use crate::feedback;
use crate::hybrid::{Fused, SearchPlan, append_hops, vector_list};
use crate::rules::filter::Filter;
use crate::rules::row::ItemRow;
use crate::time::Clock;
use crate::types::*;
use crate::vectors::VectorCache;

/// The statements one search runs, on a backend's locked connection.
pub(crate) trait SearchReads {
    /// The lexical list: `(rowid, score)`, best first, only rows passing `filter`, at most
    /// `pool`.
    fn lexical(&mut self, query: &str, filter: &Filter, pool: usize) -> Result<Vec<(i64, f64)>>;
    /// The rowids among `candidates` that pass `filter`.
    fn admit(&mut self, filter: &Filter, candidates: &[i64]) -> Result<HashSet<i64>>;
    /// Brings the vector mirror up to date for `embedder` (rows with `id > last seen`).
    fn refresh_vectors(
        &mut self,
        cache: &mut VectorCache,
        embedder: &str,
        dim: usize,
    ) -> Result<()>;
    /// Rows by rowid.
    fn load_rows(&mut self, rowids: &[i64]) -> Result<HashMap<i64, ItemRow>>;
    /// The root entities a fact names (subject, object).
    fn fact_roots(&mut self, fact_id: &str) -> Result<Vec<String>>;
    /// Ids of the live facts linked to any entity of the root's group, in rowid order.
    fn facts_of_group(&mut self, root: &str) -> Result<Vec<String>>;
    /// The records remembered nearest before and after `rowid` (at most `window` on each
    /// side, nearest first) by the same user, of the same kind, in the same session; none
    /// when it has no session ([`crate::neighbours`]).
    fn neighbours(&mut self, rowid: i64, window: usize) -> Result<Vec<i64>>;
    /// The rowid of a record id, if stored.
    fn rowid_of(&mut self, id: &str) -> Result<Option<i64>>;
    /// Strengthens `facts` recalled by `by` ([`crate::recall::strengthen`]), in one
    /// transaction.
    fn record_recall(&mut self, facts: &[i64], by: Actor, now: i64) -> Result<()>;
}

/// What a search needs from the store besides its connection.
pub(crate) struct SearchStore<'a> {
    pub config: &'a MemoryConfig,
    pub fusion: FusionDefaults,
    pub clock: &'a dyn Clock,
    pub embedder: Option<&'a dyn Embedder>,
    pub embedder_key: Option<&'a str>,
    pub vectors: &'a Mutex<VectorCache>,
}

/// Searches the kinds `fixed` (or the options' kinds, or every searchable kind). The query
/// is embedded before `reads` opens the connection.
pub(crate) fn search<R: SearchReads>(
    store: SearchStore<'_>,
    o: &MemorySearchOptions,
    fixed: Option<MemoryKind>,
    reads: impl FnOnce() -> R,
) -> Result<Vec<MemoryHit>> {
    let plan = SearchPlan::new(o, fixed, store.config, store.fusion)?;
    let query_vec = if plan.embeds(&o.query) {
        crate::vectors::embed_query(store.embedder, &o.query)?
    } else {
        None
    };
    let now = store.clock.now_ms();
    let mut reads = reads();
    let lex = if plan.lexical() {
        let first = reads.lexical(&o.query, &plan.filter, plan.pool)?;
        let docs = o.query_feedback.unwrap_or(store.config.query_feedback);
        if docs > 0 && !first.is_empty() {
            feedback_pass(&mut reads, &o.query, &plan, first, docs)?
        } else {
            first
        }
    } else {
        Vec::new()
    };
    let vec = match (&query_vec, store.embedder_key, store.embedder) {
        (Some(q), Some(key), Some(embedder)) => {
            let mut cache = store.vectors.lock().unwrap_or_else(|p| p.into_inner());
            reads.refresh_vectors(&mut cache, key, embedder.id().dimension)?;
            vector_list(&cache, q, plan.pool, plan.vector_floor, |ids| {
                reads.admit(&plan.filter, ids)
            })?
        }
        _ => Vec::new(),
    };
    let mut fused = Fused::new(&plan, lex, vec);
    if plan.neighbour_weight > 0.0 && plan.neighbour_window > 0 {
        neighbour_pass(&mut reads, &plan, &mut fused)?;
    }
    let rows = reads.load_rows(&fused.rowids())?;
    let (mut hits, facts) = fused.rank(&plan, o, &rows, now, store.config)?;
    if o.expand_entities.unwrap_or(false) {
        expand_hits(&mut reads, &plan.filter, &mut hits)?;
    }
    if let Some(by) = o.recall_by
        && store.config.record_access
        && plan.filter.known_at.is_none()
        && !facts.is_empty()
    {
        reads.record_recall(&facts, by, now)?;
    }
    Ok(hits)
}

/// The feedback pass ([`crate::feedback`]): the words of the best `docs` rows of `first`
/// expand the query, searched again and fused with `first`.
fn feedback_pass(
    reads: &mut impl SearchReads,
    query: &str,
    plan: &SearchPlan,
    first: Vec<(i64, f64)>,
    docs: usize,
) -> Result<Vec<(i64, f64)>> {
    let top: Vec<i64> = first.iter().take(docs).map(|x| x.0).collect();
    let rows = reads.load_rows(&top)?;
    let texts: Vec<&str> = top
        .iter()
        .filter_map(|id| rows.get(id).map(|r| r.text.as_str()))
        .collect();
    let extra = feedback::expansion_terms(query, &texts, feedback::FEEDBACK_TERMS);
    if extra.is_empty() {
        return Ok(first);
    }
    let expanded = feedback::expanded_query(query, &extra);
    let second = reads.lexical(&expanded, &plan.filter, plan.pool)?;
    Ok(feedback::fuse(&first, &second, plan.pool))
}

/// Neighbour context ([`crate::neighbours`]): the session neighbours of the best
/// [`crate::neighbours::SOURCES`] fused candidates, admitted by the search's filter, get a
/// share of their scores.
fn neighbour_pass(
    reads: &mut impl SearchReads,
    plan: &SearchPlan,
    fused: &mut Fused,
) -> Result<()> {
    let mut links: Vec<(i64, i64)> = Vec::new();
    for &(source, score) in fused.order.iter().take(crate::neighbours::SOURCES) {
        if score <= 0.0 {
            continue;
        }
        for n in reads.neighbours(source, plan.neighbour_window)? {
            links.push((source, n));
        }
    }
    if links.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = links.iter().map(|l| l.1).collect();
    let admitted = reads.admit(&plan.filter, &ids)?;
    links.retain(|l| admitted.contains(&l.1));
    fused.share_with_neighbours(&links, plan.neighbour_weight);
    Ok(())
}

/// One-hop expansion: live facts sharing an entity with a fact hit, admitted by the same
/// filter, appended below the hits ([`append_hops`]).
fn expand_hits(
    reads: &mut impl SearchReads,
    filter: &Filter,
    hits: &mut Vec<MemoryHit>,
) -> Result<()> {
    let present: HashSet<String> = hits.iter().map(|h| h.record.id().to_owned()).collect();
    let mut roots: Vec<String> = Vec::new();
    for hit in hits
        .iter()
        .filter(|h| matches!(h.record, MemoryItem::Fact(_)))
    {
        for root in reads.fact_roots(hit.record.id())? {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    let mut extra_ids: Vec<String> = Vec::new();
    for root in &roots {
        for fact in reads.facts_of_group(root)? {
            if !present.contains(&fact) && !extra_ids.contains(&fact) {
                extra_ids.push(fact);
            }
        }
    }
    let mut rowids = Vec::new();
    for id in &extra_ids {
        if let Some(rowid) = reads.rowid_of(id)? {
            rowids.push(rowid);
        }
    }
    let admitted = reads.admit(filter, &rowids)?;
    let rows = reads.load_rows(&rowids)?;
    append_hops(hits, &rowids, &admitted, &rows)
}
