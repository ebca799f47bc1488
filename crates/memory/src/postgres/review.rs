//! Listing reads in PostgreSQL (the inspector's and the agent surfaces'): records by kind
//! and state with [`ItemFilter`]'s SQL, the quarantine queue, the users, the ledger after a
//! position, and a fact's versions at an instant (the search filter of `knownAt`).

use std::collections::HashSet;

use crate::error::Result;
use crate::hybrid::{Filter, FilterValue};
use crate::postgres::PgMemory;
use crate::postgres::items::{ITEM_COLUMNS, query_rows};
use crate::postgres::search::{admit, numbered, value_params};
use crate::record::ItemRow;
use crate::sqlite::{FactAt, ItemFilter, MAX_LIST};
use crate::store::{MemoryStore, SemanticMemory};
use crate::time::{format_ms, parse_opt};
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
                "SELECT user_id FROM memory_items UNION SELECT user_id FROM working_blocks \
                 UNION SELECT user_id FROM entities ORDER BY 1 COLLATE \"C\" LIMIT 10000",
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
            "SELECT seq, at, subject_id, action, actor, reason, detail_json::text FROM memory_history \
             WHERE seq > $1 ORDER BY seq LIMIT $2",
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
    /// rule of [`crate::SqliteMemory::fact_at`]).
    pub fn fact_at(&self, id: &str, as_of: Option<&str>, known_at: Option<&str>) -> Result<FactAt> {
        let as_of_ms = parse_opt("asOf", as_of)?;
        let known_ms = parse_opt("knownAt", known_at)?;
        let chain = self.semantic().history(id)?.chain;
        let now = self.now();
        let a = as_of_ms.unwrap_or(now);
        let k = known_ms.unwrap_or(now);
        let Some(first) = chain.first() else {
            return Ok(FactAt {
                as_of: format_ms(a),
                known_at: format_ms(k),
                believed: Vec::new(),
                valid: None,
            });
        };
        let options = MemorySearchOptions {
            user_id: Some(first.record.user_id.clone()),
            known_at: known_ms.map(format_ms),
            ..MemorySearchOptions::default()
        };
        let filter = Filter::from_options(&options, &[MemoryKind::Semantic])?;
        let mut client = self.lock();
        let c = &mut *client;
        let mut rowids: Vec<(i64, String)> = Vec::with_capacity(chain.len());
        for f in &chain {
            let row = c.query_one(
                "SELECT rowid FROM memory_items WHERE id = $1",
                &[&f.record.id],
            )?;
            rowids.push((row.try_get(0)?, f.record.id.clone()));
        }
        let ids: Vec<i64> = rowids.iter().map(|(r, _)| *r).collect();
        let admitted = admit(c, &filter, &ids)?;
        let believed = rowids
            .iter()
            .filter(|(r, _)| admitted.contains(r))
            .map(|(_, id)| id.clone())
            .collect();
        let valid_filter = Filter {
            sql: "i.created_at <= ? AND (i.deleted_at IS NULL OR i.deleted_at > ?) \
                  AND i.active_since IS NOT NULL AND i.active_since <= ? \
                  AND (i.valid_from IS NULL OR i.valid_from <= ?) AND (i.valid_to IS NULL OR i.valid_to > ?)"
                .to_owned(),
            params: [k, k, k, a, a].map(FilterValue::Integer).to_vec(),
            known_at: None,
        };
        let valid_then: HashSet<i64> = admit(c, &valid_filter, &ids)?;
        let valid = chain
            .iter()
            .zip(&rowids)
            .rev()
            .find(|(_, (r, _))| valid_then.contains(r))
            .map(|(f, _)| f.record.id.clone());
        Ok(FactAt {
            as_of: format_ms(a),
            known_at: format_ms(k),
            believed,
            valid,
        })
    }
}
