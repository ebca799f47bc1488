//! Listing reads for the inspector and the agent surfaces: records by kind and state (the
//! quarantine queue is one such list), the users of a store, and the ledger after a
//! position (the live feed of memory changes).

use rusqlite::params_from_iter;

use crate::error::Result;
use crate::rules::listing::{ItemFilter, MAX_LIST};
use crate::sqlite::items::{ITEM_COLUMNS, ItemRow};
use crate::sqlite::{SqliteMemory, ledger};
use crate::types::*;

impl SqliteMemory {
    /// Records matching `filter`, oldest first.
    pub fn list_items(&self, filter: &ItemFilter) -> Result<Vec<MemoryItem>> {
        let (clause, args, limit, offset) = filter.to_sql()?;
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE {clause} ORDER BY i.rowid LIMIT {limit} OFFSET {offset}"
        );
        let conn = self.lock();
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt
            .query_map(params_from_iter(args), crate::sqlite::items::item_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.iter().map(ItemRow::to_item).collect()
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
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT user_id FROM memory_items UNION SELECT user_id FROM working_blocks \
             UNION SELECT user_id FROM entities ORDER BY 1 LIMIT 10000",
        )?;
        Ok(stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?)
    }

    /// Ledger rows after position `after_seq` (every subject), at most `limit`, in order.
    pub fn ledger_since(&self, after_seq: i64, limit: usize) -> Result<Vec<HistoryEntry>> {
        ledger::since(&self.lock(), after_seq, limit.clamp(1, MAX_LIST))
    }

    /// The latest ledger position (0 for an empty store).
    pub fn ledger_head(&self) -> Result<i64> {
        Ok(self.lock().query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM memory_history",
            [],
            |r| r.get(0),
        )?)
    }
}
