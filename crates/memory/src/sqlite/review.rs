//! Listing reads for the inspector and the agent surfaces: records by kind and state (the
//! quarantine queue is one such list), the users of a store, and the ledger after a
//! position (the live feed of memory changes).

use rusqlite::params_from_iter;

use crate::error::{MemoryError, Result};
use crate::hybrid::FilterValue;
use crate::sqlite::items::{ITEM_COLUMNS, ItemRow};
use crate::sqlite::{SqliteMemory, ledger};
use crate::types::*;

/// Most rows one list returns.
pub const MAX_LIST: usize = 1000;

/// Which records [`SqliteMemory::list_items`] returns, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemFilter {
    /// Only this owner.
    pub user_id: Option<String>,
    /// Only records scoped to this agent.
    pub agent_id: Option<String>,
    /// Only records scoped to this session.
    pub session_id: Option<String>,
    /// Only this kind (working blocks are not items: use the working tier).
    pub kind: Option<MemoryKind>,
    /// Only this retrieval state.
    pub status: Option<MemoryStatus>,
    /// Also tombstoned (forgotten, rejected, pruned) records.
    pub include_deleted: bool,
    /// Also superseded facts.
    pub include_superseded: bool,
    /// Most rows (default 100, at most [`MAX_LIST`]).
    pub limit: Option<usize>,
    /// Rows skipped first.
    pub offset: Option<usize>,
}

impl ItemFilter {
    /// The WHERE clause over `memory_items i` (one `?` per parameter, in order), its
    /// parameters, the limit and the offset — the same SQL in both backends.
    pub(crate) fn to_sql(&self) -> Result<(String, Vec<FilterValue>, usize, i64)> {
        let limit = self.limit.unwrap_or(100);
        if limit == 0 || limit > MAX_LIST {
            return Err(MemoryError::invalid(
                "limit",
                format!("between 1 and {MAX_LIST}"),
            ));
        }
        let mut clauses = vec!["i.kind <> 'working'".to_owned()];
        let mut args: Vec<FilterValue> = Vec::new();
        let mut text = |clause: &str, value: &str, clauses: &mut Vec<String>| {
            args.push(FilterValue::Text(value.to_owned()));
            clauses.push(clause.to_owned());
        };
        if let Some(user) = &self.user_id {
            text("i.user_id = ?", user, &mut clauses);
        }
        if let Some(agent) = &self.agent_id {
            text("i.agent_id = ?", agent, &mut clauses);
        }
        if let Some(session) = &self.session_id {
            text("i.session_id = ?", session, &mut clauses);
        }
        if let Some(kind) = self.kind {
            if kind == MemoryKind::Working || kind == MemoryKind::Shared {
                return Err(MemoryError::invalid(
                    "kind",
                    format!("`{kind}` records are not listed here"),
                ));
            }
            text("i.kind = ?", kind.as_str(), &mut clauses);
        }
        if let Some(status) = self.status {
            text("i.status = ?", status.as_str(), &mut clauses);
        }
        if !self.include_deleted {
            clauses.push("i.deleted_at IS NULL".to_owned());
        }
        if !self.include_superseded {
            clauses.push("i.superseded_by IS NULL".to_owned());
        }
        let offset = i64::try_from(self.offset.unwrap_or(0)).unwrap_or(i64::MAX);
        Ok((clauses.join(" AND "), args, limit, offset))
    }
}

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
