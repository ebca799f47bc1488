//! Working memory: labelled, char-bounded blocks. A block's value changes in place; every
//! change (with the previous value) is a ledger row, and deletion is a tombstone.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::sqlite::items::{check_id, check_scope, mint_id};
use crate::sqlite::{SqliteMemory, ledger};
use crate::store::WorkingMemory;
use crate::time::format_ms;
use crate::types::*;

pub(crate) struct Working<'a>(pub &'a SqliteMemory);

/// Largest character limit a block may declare.
pub const MAX_CHAR_LIMIT: u32 = 100_000;

const COLUMNS: &str = "rowid, id, user_id, agent_id, session_id, label, description, value, \
    char_limit, read_only, created_at, updated_at, deleted_at";

struct BlockRow {
    rowid: i64,
    block: Block,
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<BlockRow> {
    let created: i64 = r.get(10)?;
    let updated: Option<i64> = r.get(11)?;
    let deleted: Option<i64> = r.get(12)?;
    let read_only: bool = r.get(9)?;
    Ok(BlockRow {
        rowid: r.get(0)?,
        block: Block {
            record: MemoryRecord {
                id: r.get(1)?,
                kind: MemoryKind::Working,
                user_id: r.get(2)?,
                agent_id: r.get(3)?,
                session_id: r.get(4)?,
                sensitivity: Sensitivity::Internal,
                created_at: format_ms(created),
                updated_at: updated.map(format_ms),
                deleted_at: deleted.map(format_ms),
                tags: None,
            },
            label: r.get(5)?,
            description: r.get(6)?,
            value: r.get(7)?,
            char_limit: r.get(8)?,
            read_only: read_only.then_some(true),
        },
    })
}

fn live(conn: &Connection, user_id: &str, label: &str) -> Result<Option<BlockRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM working_blocks WHERE user_id = ?1 AND label = ?2 AND deleted_at IS NULL"),
            params![user_id, label],
            from_row,
        )
        .optional()?)
}

/// Refuses a value longer than the block's limit.
pub(crate) fn check_fits(label: &str, value: &str, limit: u32) -> Result<()> {
    let len = value.chars().count();
    if len > limit as usize {
        return Err(MemoryError::OverLimit {
            label: label.to_owned(),
            limit,
            len,
        });
    }
    Ok(())
}

/// Refuses an empty search text for `replace` (checked before any read).
pub(crate) fn check_replace(old: &str) -> Result<()> {
    if old.is_empty() {
        return Err(MemoryError::invalid("old", "must not be empty"));
    }
    Ok(())
}

/// `value` with the first `old` replaced by `new`; a conflict when `old` is not in it.
pub(crate) fn replaced(label: &str, value: &str, old: &str, new: &str) -> Result<String> {
    if !value.contains(old) {
        return Err(MemoryError::Conflict(format!(
            "working block {label:?} does not contain the text to replace"
        )));
    }
    Ok(value.replacen(old, new, 1))
}

impl Working<'_> {
    /// Sets a live, writable block's value (the shared tail of append / replace).
    fn set_value(
        &self,
        user_id: &str,
        label: &str,
        by: Actor,
        change: impl FnOnce(&str) -> Result<String>,
    ) -> Result<Block> {
        self.0.write(|tx, now| {
            let row = live(tx, user_id, label)?
                .ok_or_else(|| MemoryError::not_found("working block", label))?;
            if row.block.read_only == Some(true) {
                return Err(MemoryError::ReadOnlyBlock {
                    label: label.to_owned(),
                });
            }
            let value = change(&row.block.value)?;
            check_fits(label, &value, row.block.char_limit)?;
            tx.execute(
                "UPDATE working_blocks SET value = ?1, updated_at = ?2 WHERE rowid = ?3",
                params![value, now, row.rowid],
            )?;
            ledger::append(
                tx,
                now,
                &row.block.record.id,
                "block.upsert",
                by,
                None,
                Some(json!({ "label": label, "before": row.block.value, "after": value })),
            )?;
            let mut block = row.block;
            block.value = value;
            block.record.updated_at = Some(format_ms(now));
            Ok(block)
        })
    }
}

impl WorkingMemory for Working<'_> {
    fn list(&self, user_id: &str) -> Result<Vec<Block>> {
        check_id("userId", user_id)?;
        let conn = self.0.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM working_blocks WHERE user_id = ?1 AND deleted_at IS NULL ORDER BY label"
        ))?;
        let rows = stmt.query_map(params![user_id], from_row)?;
        Ok(rows
            .map(|r| r.map(|b| b.block))
            .collect::<rusqlite::Result<_>>()?)
    }

    fn get(&self, user_id: &str, label: &str) -> Result<Block> {
        live(&self.0.lock(), user_id, label)?
            .map(|b| b.block)
            .ok_or_else(|| MemoryError::not_found("working block", label))
    }

    fn upsert(&self, new: NewBlock) -> Result<Block> {
        check_scope(&new.scope)?;
        check_id("label", &new.label)?;
        let limit = new.char_limit.unwrap_or(self.0.config.default_char_limit);
        if limit == 0 || limit > MAX_CHAR_LIMIT {
            return Err(MemoryError::invalid(
                "charLimit",
                format!("must be 1 to {MAX_CHAR_LIMIT}"),
            ));
        }
        check_fits(&new.label, &new.value, limit)?;
        let user = new.scope.user_id.clone();
        let label = new.label.clone();
        self.0.write(|tx, now| {
            match live(tx, &user, &label)? {
                Some(row) => {
                    if row.block.read_only == Some(true) {
                        return Err(MemoryError::ReadOnlyBlock { label: label.clone() });
                    }
                    tx.execute(
                        "UPDATE working_blocks SET value = ?1, description = ?2, char_limit = ?3, read_only = ?4, updated_at = ?5 WHERE rowid = ?6",
                        params![new.value, new.description, limit, new.read_only, now, row.rowid],
                    )?;
                    ledger::append(tx, now, &row.block.record.id, "block.upsert", new.by, None, Some(json!({ "label": label, "before": row.block.value, "after": new.value, "charLimit": limit })))?;
                }
                None => {
                    let id = mint_id("block");
                    tx.execute(
                        "INSERT INTO working_blocks (id, user_id, agent_id, session_id, label, description, value, char_limit, read_only, created_at) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                        params![id, user, new.scope.agent_id, new.scope.session_id, label, new.description, new.value, limit, new.read_only, now],
                    )?;
                    ledger::append(tx, now, &id, "block.upsert", new.by, None, Some(json!({ "label": label, "before": null, "after": new.value, "charLimit": limit })))?;
                }
            }
            live(tx, &user, &label)?.map(|b| b.block).ok_or_else(|| MemoryError::not_found("working block", label.clone()))
        })
    }

    fn append(&self, user_id: &str, label: &str, text: &str, by: Actor) -> Result<Block> {
        self.set_value(user_id, label, by, |old| Ok(format!("{old}{text}")))
    }

    fn replace(
        &self,
        user_id: &str,
        label: &str,
        old: &str,
        new: &str,
        by: Actor,
    ) -> Result<Block> {
        check_replace(old)?;
        self.set_value(user_id, label, by, |value| replaced(label, value, old, new))
    }

    fn delete(&self, user_id: &str, label: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let row = live(tx, user_id, label)?
                .ok_or_else(|| MemoryError::not_found("working block", label))?;
            if row.block.read_only == Some(true) {
                return Err(MemoryError::ReadOnlyBlock {
                    label: label.to_owned(),
                });
            }
            tx.execute(
                "UPDATE working_blocks SET deleted_at = ?1 WHERE rowid = ?2",
                params![now, row.rowid],
            )?;
            ledger::append(
                tx,
                now,
                &row.block.record.id,
                "block.delete",
                by,
                None,
                Some(json!({ "label": label, "before": row.block.value })),
            )
        })
    }
}
