//! The append-only history ledger (`memory_history`).

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::error::Result;
use crate::rules::columns::{HISTORY_COLUMNS, history_from};
use crate::types::{Actor, HistoryEntry};

/// Appends one ledger row.
pub fn append(
    conn: &Connection,
    at: i64,
    subject_id: &str,
    action: &str,
    actor: Actor,
    reason: Option<&str>,
    detail: Option<Value>,
) -> Result<()> {
    conn.execute(
        "INSERT INTO memory_history (at, subject_id, action, actor, reason, detail_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            at,
            subject_id,
            action,
            actor.as_str(),
            reason,
            detail.map(|d| d.to_string()),
        ],
    )?;
    Ok(())
}

/// Every ledger row about `subject_id`, in order.
pub fn for_subject(conn: &Connection, subject_id: &str) -> Result<Vec<HistoryEntry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {HISTORY_COLUMNS}, detail_json FROM memory_history \
             WHERE subject_id = ?1 ORDER BY seq"
    ))?;
    let rows = stmt.query_map(params![subject_id], entry_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Ledger rows after `after_seq` (every subject), at most `limit`, in order.
pub fn since(conn: &Connection, after_seq: i64, limit: usize) -> Result<Vec<HistoryEntry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {HISTORY_COLUMNS}, detail_json FROM memory_history \
             WHERE seq > ?1 ORDER BY seq LIMIT ?2"
    ))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![after_seq, limit], entry_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn entry_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryEntry> {
    history_from(r)
}

/// Number of ledger rows (tests check that no operation loses history).
pub fn count(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT COUNT(*) FROM memory_history", [], |r| r.get(0))?)
}
