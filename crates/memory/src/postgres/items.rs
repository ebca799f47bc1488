//! The `memory_items` row and the history ledger in PostgreSQL: reading a row, loading by
//! id, insertion of what [`crate::rules::row::prepare_insert`] accepted (tags, `tsvector`,
//! ledger), tombstones.

use postgres::types::ToSql;
use postgres::{GenericClient, Row};
use serde_json::Value;

use crate::error::Result;
use crate::rules::columns::{Column, Columns, HISTORY_COLUMNS, history_from, item_from};
use crate::rules::row::{Insert, ItemRow, Prepared, prepare_insert};
use crate::rules::writes::ItemWrites;
use crate::types::*;

/// The text search configuration of the index and of queries.
pub const TS_CONFIG: &str = "english";

/// The columns read by [`item_from_row`], with the table alias `i` (JSON read as text).
pub const ITEM_COLUMNS: &str = "i.rowid, i.id, i.kind, i.user_id, i.agent_id, i.session_id, \
    i.sensitivity, i.text, i.tags_json::text, i.provenance, i.status, i.quarantine_reason, \
    i.active_since, i.created_at, i.updated_at, i.deleted_at, i.delete_reason, i.archived_at, \
    i.importance, i.confidence, i.strength, i.last_accessed_at, i.valid_from, i.valid_to, \
    i.supersedes, i.superseded_by, i.superseded_at, i.subject, i.predicate, i.object, \
    i.started_at, i.ended_at, i.priority, i.success_count, i.salience, i.sequence, \
    i.body_json::text, i.conflicts_json::text, i.conflict_decision_json::text";

impl Columns for Row {
    type Error = postgres::Error;
    fn get<T: Column>(&self, i: usize) -> std::result::Result<T, Self::Error> {
        self.try_get(i)
    }
}

/// Reads a row selected with [`ITEM_COLUMNS`] ([`item_from`]).
pub fn item_from_row(r: &Row) -> Result<ItemRow> {
    Ok(item_from(r)?)
}

/// Rows of a query selecting [`ITEM_COLUMNS`].
pub fn query_rows(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<ItemRow>> {
    c.query(sql, params)?.iter().map(item_from_row).collect()
}

/// Loads one row by id (any state).
pub fn load(c: &mut impl GenericClient, id: &str) -> Result<Option<ItemRow>> {
    let sql = format!("SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.id = $1");
    c.query_opt(&sql, &[&id])?
        .as_ref()
        .map(item_from_row)
        .transpose()
}

/// Inserts what [`prepare_insert`] accepts, with its tags, full-text vector and ledger
/// rows. Returns the stored row.
pub fn insert(c: &mut impl GenericClient, now: i64, prefix: &str, ins: Insert) -> Result<ItemRow> {
    let mut exists = |id: &str| -> Result<bool> {
        Ok(
            c.query_opt("SELECT 1 FROM memory_items WHERE id = $1", &[&id])?
                .is_some(),
        )
    };
    let taken = match &ins.meta.id {
        Some(id) => exists(id)?,
        None => false,
    };
    let Prepared {
        mut row,
        tags,
        indexed,
        create_detail,
        quarantine,
        by,
    } = prepare_insert(now, prefix, ins, |_| Ok(taken))?;
    let inserted = c.query_one(
        "INSERT INTO memory_items (id, kind, user_id, agent_id, session_id, sensitivity, text, \
         tags_json, provenance, status, quarantine_reason, active_since, created_at, importance, \
         confidence, strength, valid_from, valid_to, supersedes, subject, predicate, object, \
         started_at, ended_at, priority, success_count, salience, sequence, body_json, \
         search_text) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, \
         $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29::text::jsonb, \
         to_tsvector($30::text::regconfig, $31)) RETURNING rowid",
        &[
            &row.id,
            &row.kind,
            &row.user_id,
            &row.agent_id,
            &row.session_id,
            &row.sensitivity,
            &row.text,
            &row.tags_json,
            &row.provenance,
            &row.status,
            &row.quarantine_reason,
            &row.active_since,
            &row.created_at,
            &row.importance,
            &row.confidence,
            &row.strength,
            &row.valid_from,
            &row.valid_to,
            &row.supersedes,
            &row.subject,
            &row.predicate,
            &row.object,
            &row.started_at,
            &row.ended_at,
            &row.priority,
            &row.success_count,
            &row.salience,
            &row.sequence,
            &row.body_json,
            &TS_CONFIG,
            &indexed,
        ],
    )?;
    row.rowid = inserted.try_get(0)?;
    for tag in &tags {
        c.execute(
            "INSERT INTO memory_tags (item_rowid, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&row.rowid, tag],
        )?;
    }
    ledger_append(c, now, &row.id, "create", by, None, Some(create_detail))?;
    if let Some((reason, detail)) = quarantine {
        ledger_append(
            c,
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

/// Appends one ledger row.
pub fn ledger_append(
    c: &mut impl GenericClient,
    at: i64,
    subject_id: &str,
    action: &str,
    actor: Actor,
    reason: Option<&str>,
    detail: Option<Value>,
) -> Result<()> {
    c.execute(
        "INSERT INTO memory_history (at, subject_id, action, actor, reason, detail_json) \
         VALUES ($1, $2, $3, $4, $5, $6::text::jsonb)",
        &[
            &at,
            &subject_id,
            &action,
            &actor.as_str(),
            &reason,
            &detail.map(|d| d.to_string()),
        ],
    )?;
    Ok(())
}

/// Every ledger row about `subject_id`, in order.
pub fn ledger_for(c: &mut impl GenericClient, subject_id: &str) -> Result<Vec<HistoryEntry>> {
    ledger_rows(
        c,
        &format!(
            "SELECT {HISTORY_COLUMNS}, detail_json::text FROM memory_history \
             WHERE subject_id = $1 ORDER BY seq"
        ),
        &[&subject_id],
    )
}

/// Ledger rows of a query selecting `seq, at, subject_id, action, actor, reason, detail`.
pub fn ledger_rows(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<HistoryEntry>> {
    c.query(sql, params)?
        .iter()
        .map(|r| Ok(history_from(r)?))
        .collect()
}

/// The PostgreSQL side of [`ItemWrites`], on a client inside a write transaction.
pub(crate) struct ItemRows<'a, C: GenericClient>(pub &'a mut C);

impl<C: GenericClient> ItemWrites for ItemRows<'_, C> {
    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        reason: Option<&str>,
        detail: Option<Value>,
    ) -> Result<()> {
        ledger_append(self.0, now, subject_id, action, by, reason, detail)
    }

    fn mark_deleted(&mut self, rowid: i64, reason: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET deleted_at = $1, delete_reason = $2, updated_at = $1 WHERE rowid = $3",
            &[&now, &reason, &rowid],
        )?;
        Ok(())
    }

    fn mark_superseded(&mut self, rowid: i64, by_id: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET superseded_by = $1, superseded_at = $2, updated_at = $2 WHERE rowid = $3",
            &[&by_id, &now, &rowid],
        )?;
        Ok(())
    }

    fn quarantine(&mut self, rowid: i64, reason: &str) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET status = 'quarantined', quarantine_reason = $1, active_since = NULL WHERE rowid = $2",
            &[&reason, &rowid],
        )?;
        Ok(())
    }

    fn set_success_count(&mut self, rowid: i64, count: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET success_count = $1, updated_at = $2 WHERE rowid = $3",
            &[&count, &now, &rowid],
        )?;
        Ok(())
    }

    fn activate(&mut self, rowid: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET status = 'active', active_since = $1, updated_at = $1 WHERE rowid = $2",
            &[&now, &rowid],
        )?;
        Ok(())
    }

    fn release(&mut self, rowid: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET status = 'active', quarantine_reason = NULL, active_since = $1, updated_at = $1 WHERE rowid = $2",
            &[&now, &rowid],
        )?;
        Ok(())
    }

    fn set_salience(&mut self, rowid: i64, salience: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET salience = $1, updated_at = $2 WHERE rowid = $3",
            &[&salience, &now, &rowid],
        )?;
        Ok(())
    }

    fn set_conflicts(&mut self, rowid: i64, conflicts_json: Option<&str>) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET conflicts_json = $1::text::jsonb, conflict_decision_json = NULL WHERE rowid = $2",
            &[&conflicts_json, &rowid],
        )?;
        Ok(())
    }

    fn set_conflict_decision(&mut self, rowid: i64, decision_json: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET conflict_decision_json = $1::text::jsonb, updated_at = $2 WHERE rowid = $3",
            &[&decision_json, &now, &rowid],
        )?;
        Ok(())
    }

    fn set_supersedes(&mut self, rowid: i64, old_id: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET supersedes = $1, updated_at = $2 WHERE rowid = $3",
            &[&old_id, &now, &rowid],
        )?;
        Ok(())
    }
}
