//! The `memory_items` row in SQLite: reading it, loading by id, and insertion (tags,
//! full-text, ledger) of what [`crate::rules::row::prepare_insert`] accepted.

use rusqlite::{OptionalExtension, Row, params};

pub use crate::rules::row::*;

use crate::error::Result;
use crate::rules::columns::{Column, Columns, item_from};
use crate::rules::writes::ItemWrites;
use crate::sqlite::ledger;
use crate::types::*;

/// The columns read by [`crate::sqlite::items::item_from_row`], with the table alias `i`.
pub const ITEM_COLUMNS: &str = "i.rowid, i.id, i.kind, i.user_id, i.agent_id, i.session_id, \
    i.sensitivity, i.text, i.tags_json, i.provenance, i.status, i.quarantine_reason, \
    i.active_since, i.created_at, i.updated_at, i.deleted_at, i.delete_reason, i.archived_at, \
    i.importance, i.confidence, i.strength, i.last_accessed_at, i.valid_from, i.valid_to, \
    i.supersedes, i.superseded_by, i.superseded_at, i.subject, i.predicate, i.object, \
    i.started_at, i.ended_at, i.priority, i.success_count, i.salience, i.sequence, i.body_json, \
    i.conflicts_json, i.conflict_decision_json";

impl Columns for Row<'_> {
    type Error = rusqlite::Error;
    fn get<T: Column>(&self, i: usize) -> std::result::Result<T, Self::Error> {
        Row::get(self, i)
    }
}

/// Reads a row selected with [`ITEM_COLUMNS`] ([`item_from`]).
pub fn item_from_row(r: &Row<'_>) -> rusqlite::Result<ItemRow> {
    item_from(r)
}

/// Loads one row by id (any state).
pub fn load(tx: &rusqlite::Connection, id: &str) -> Result<Option<ItemRow>> {
    let sql = format!("SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.id = ?1");
    Ok(tx.query_row(&sql, params![id], item_from_row).optional()?)
}

/// Inserts what [`prepare_insert`] accepts, with its tags, full-text entry and ledger
/// rows. Returns the stored row.
pub fn insert(tx: &rusqlite::Connection, now: i64, prefix: &str, ins: Insert) -> Result<ItemRow> {
    let Prepared {
        mut row,
        tags,
        indexed,
        create_detail,
        quarantine,
        by,
    } = prepare_insert(now, prefix, ins, |id| Ok(load(tx, id)?.is_some()))?;
    tx.execute(
        "INSERT INTO memory_items (id, kind, user_id, agent_id, session_id, sensitivity, text, \
         tags_json, provenance, status, quarantine_reason, active_since, created_at, importance, \
         confidence, strength, valid_from, valid_to, supersedes, subject, predicate, object, \
         started_at, ended_at, priority, success_count, salience, sequence, body_json) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
         ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)",
        params![
            row.id,
            row.kind,
            row.user_id,
            row.agent_id,
            row.session_id,
            row.sensitivity,
            row.text,
            row.tags_json,
            row.provenance,
            row.status,
            row.quarantine_reason,
            row.active_since,
            row.created_at,
            row.importance,
            row.confidence,
            row.strength,
            row.valid_from,
            row.valid_to,
            row.supersedes,
            row.subject,
            row.predicate,
            row.object,
            row.started_at,
            row.ended_at,
            row.priority,
            row.success_count,
            row.salience,
            row.sequence,
            row.body_json,
        ],
    )?;
    row.rowid = tx.last_insert_rowid();
    for tag in &tags {
        tx.execute(
            "INSERT OR IGNORE INTO memory_tags (item_rowid, tag) VALUES (?1, ?2)",
            params![row.rowid, tag],
        )?;
    }
    tx.execute(
        "INSERT INTO memory_fts (rowid, text) VALUES (?1, ?2)",
        params![row.rowid, indexed],
    )?;
    ledger::append(tx, now, &row.id, "create", by, None, Some(create_detail))?;
    if let Some((reason, detail)) = quarantine {
        ledger::append(
            tx,
            now,
            &row.id,
            "quarantine",
            by,
            Some(&reason),
            Some(detail),
        )?;
    }
    Ok(row)
}

/// The SQLite side of [`ItemWrites`], on a connection inside a write transaction.
pub(crate) struct ItemRows<'a>(pub &'a rusqlite::Connection);

impl ItemWrites for ItemRows<'_> {
    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        reason: Option<&str>,
        detail: Option<serde_json::Value>,
    ) -> Result<()> {
        ledger::append(self.0, now, subject_id, action, by, reason, detail)
    }

    fn mark_deleted(&mut self, rowid: i64, reason: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET deleted_at = ?1, delete_reason = ?2, updated_at = ?1 WHERE rowid = ?3",
            params![now, reason, rowid],
        )?;
        Ok(())
    }

    fn mark_superseded(&mut self, rowid: i64, by_id: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET superseded_by = ?1, superseded_at = ?2, updated_at = ?2 WHERE rowid = ?3",
            params![by_id, now, rowid],
        )?;
        Ok(())
    }

    fn quarantine(&mut self, rowid: i64, reason: &str) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET status = 'quarantined', quarantine_reason = ?1, active_since = NULL WHERE rowid = ?2",
            params![reason, rowid],
        )?;
        Ok(())
    }

    fn set_success_count(&mut self, rowid: i64, count: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET success_count = ?1, updated_at = ?2 WHERE rowid = ?3",
            params![count, now, rowid],
        )?;
        Ok(())
    }

    fn activate(&mut self, rowid: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET status = 'active', active_since = ?1, updated_at = ?1 WHERE rowid = ?2",
            params![now, rowid],
        )?;
        Ok(())
    }

    fn release(&mut self, rowid: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET status = 'active', quarantine_reason = NULL, active_since = ?1, updated_at = ?1 WHERE rowid = ?2",
            params![now, rowid],
        )?;
        Ok(())
    }

    fn set_salience(&mut self, rowid: i64, salience: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET salience = ?1, updated_at = ?2 WHERE rowid = ?3",
            params![salience, now, rowid],
        )?;
        Ok(())
    }

    fn set_conflicts(&mut self, rowid: i64, conflicts_json: Option<&str>) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET conflicts_json = ?1, conflict_decision_json = NULL WHERE rowid = ?2",
            params![conflicts_json, rowid],
        )?;
        Ok(())
    }

    fn set_conflict_decision(&mut self, rowid: i64, decision_json: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET conflict_decision_json = ?1, updated_at = ?2 WHERE rowid = ?3",
            params![decision_json, now, rowid],
        )?;
        Ok(())
    }

    fn set_supersedes(&mut self, rowid: i64, old_id: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET supersedes = ?1, updated_at = ?2 WHERE rowid = ?3",
            params![old_id, now, rowid],
        )?;
        Ok(())
    }
}
