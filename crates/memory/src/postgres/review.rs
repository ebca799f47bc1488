//! Listing reads in PostgreSQL (the inspector's and the agent surfaces'): records by kind
//! and state with [`ItemFilter`]'s SQL, the quarantine queue, the users, the ledger after a
//! position, and a fact's versions at an instant (the search filter of `knownAt`).

use std::collections::HashSet;

use crate::error::Result;
use crate::postgres::PgMemory;
use crate::postgres::items::{ITEM_COLUMNS, query_rows};
use crate::postgres::search::{admit, numbered, value_params};
use crate::rules::belief::FactAt;
use crate::rules::belief::{ChainReads, fact_at_rule};
use crate::rules::columns::HISTORY_COLUMNS;
use crate::rules::filter::Filter;
use crate::rules::listing::{ItemFilter, MAX_LIST};
use crate::rules::row::ItemRow;
use crate::store::{MemoryStore, SemanticMemory};
use crate::types::*;

impl PgMemory {
    /// Records matching `filter`, oldest first.
    pub fn list_items(&self, filter: &ItemFilter) -> Result<Vec<MemoryItem>> {
        let (clause, args, limit, offset) = filter.to_sql()?;
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE {} ORDER BY i.rowid LIMIT {limit} OFFSET {offset}",
            numbered(&clause, 1)
        );
        query_rows(&mut *self.lock(), &sql, &value_params(&args))?
            .iter()
            .map(ItemRow::to_item)
            .collect()
    }

    /// The quarantine queue: live quarantined records (of one user, when given), oldest first.
    pub fn quarantine_queue(
        &self,
        user_id: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<MemoryItem>> {
        self.list_items(&ItemFilter {
            user_id: user_id.map(str::to_owned),
            status: Some(MemoryStatus::Quarantined),
            limit,
            ..ItemFilter::default()
        })
    }

    /// Owners with any record, block or entity, sorted.
    pub fn users(&self) -> Result<Vec<String>> {
        self.lock()
            .query(
                "SELECT user_id FROM (SELECT user_id FROM memory_items UNION SELECT user_id \
                 FROM working_blocks UNION SELECT user_id FROM entities) u \
                 ORDER BY user_id COLLATE \"C\" LIMIT 10000",
                &[],
            )?
            .iter()
            .map(|r| Ok(r.try_get(0)?))
            .collect()
    }

    /// Ledger rows after position `after_seq` (every subject), at most `limit`, in order.
    pub fn ledger_since(&self, after_seq: i64, limit: usize) -> Result<Vec<HistoryEntry>> {
        let limit = i64::try_from(limit.clamp(1, MAX_LIST)).unwrap_or(1);
        crate::postgres::items::ledger_rows(
            &mut *self.lock(),
            &format!(
                "SELECT {HISTORY_COLUMNS}, detail_json::text FROM memory_history \
                 WHERE seq > $1 ORDER BY seq LIMIT $2"
            ),
            &[&after_seq, &limit],
        )
    }

    /// The latest ledger position (0 for an empty store).
    pub fn ledger_head(&self) -> Result<i64> {
        Ok(self
            .lock()
            .query_one(
                "SELECT COALESCE(MAX(seq), 0)::bigint FROM memory_history",
                &[],
            )?
            .try_get(0)?)
    }

    /// The embedder the database's vectors belong to, if any.
    pub fn stored_embedder(&self) -> Result<Option<String>> {
        super::stored_embedder(&mut *self.lock())
    }

    /// The versions of fact `id`'s chain believed at `known_at` and valid at `as_of` (the
    /// rule of [`crate::SqliteMemory::fact_at`], written once in `fact_at_rule`).
    pub fn fact_at(&self, id: &str, as_of: Option<&str>, known_at: Option<&str>) -> Result<FactAt> {
        fact_at_rule(
            |id| Ok(self.semantic().history(id)?.chain),
            self.now(),
            id,
            as_of,
            known_at,
            || PgChainReads(self.lock()),
        )
    }
}

/// The PostgreSQL side of [`ChainReads`], on the store's locked client.
struct PgChainReads<'a>(std::sync::MutexGuard<'a, postgres::Client>);

impl ChainReads for PgChainReads<'_> {
    fn rowids(&mut self, chain: &[Fact]) -> Result<Vec<(i64, String)>> {
        let mut out = Vec::with_capacity(chain.len());
        for f in chain {
            let row = self.0.query_one(
                "SELECT rowid FROM memory_items WHERE id = $1",
                &[&f.record.id],
            )?;
            out.push((row.try_get(0)?, f.record.id.clone()));
        }
        Ok(out)
    }

    fn admit(&mut self, filter: &Filter, candidates: &[i64]) -> Result<HashSet<i64>> {
        admit(&mut *self.0, filter, candidates)
    }
}
