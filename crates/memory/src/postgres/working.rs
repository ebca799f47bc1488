//! Working memory in PostgreSQL: labelled, char-bounded blocks (the rules are SQLite's:
//! limits checked by [`check_fits`], every change a ledger row, deletion a tombstone).

use postgres::{GenericClient, Row};
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::postgres::PgMemory;
use crate::postgres::items::ledger_append;
use crate::record::{check_id, check_scope, mint_id};
use crate::sqlite::working::{MAX_CHAR_LIMIT, check_fits, check_replace, replaced};
use crate::store::WorkingMemory;
use crate::time::format_ms;
use crate::types::*;

pub(crate) struct Working<'a>(pub &'a PgMemory);

const COLUMNS: &str = "rowid, id, user_id, agent_id, session_id, label, description, value, \
    char_limit, read_only, created_at, updated_at, deleted_at";

struct BlockRow {
    rowid: i64,
    block: Block,
}

fn from_row(r: &Row) -> Result<BlockRow> {
    let created: i64 = r.try_get(10)?;
    let updated: Option<i64> = r.try_get(11)?;
    let deleted: Option<i64> = r.try_get(12)?;
    let read_only: bool = r.try_get(9)?;
    let limit: i64 = r.try_get(8)?;
    Ok(BlockRow {
        rowid: r.try_get(0)?,
        block: Block {
            record: MemoryRecord {
                id: r.try_get(1)?,
                kind: MemoryKind::Working,
                user_id: r.try_get(2)?,
                agent_id: r.try_get(3)?,
                session_id: r.try_get(4)?,
                sensitivity: Sensitivity::Internal,
                created_at: format_ms(created),
                updated_at: updated.map(format_ms),
                deleted_at: deleted.map(format_ms),
                tags: None,
            },
            label: r.try_get(5)?,
            description: r.try_get(6)?,
            value: r.try_get(7)?,
            char_limit: u32::try_from(limit).unwrap_or(MAX_CHAR_LIMIT),
            read_only: read_only.then_some(true),
        },
    })
}

fn live(c: &mut impl GenericClient, user_id: &str, label: &str) -> Result<Option<BlockRow>> {
    c.query_opt(
        &format!(
            "SELECT {COLUMNS} FROM working_blocks WHERE user_id = $1 AND label = $2 AND deleted_at IS NULL"
        ),
        &[&user_id, &label],
    )?
    .as_ref()
    .map(from_row)
    .transpose()
}

fn writable(row: BlockRow, label: &str) -> Result<BlockRow> {
    if row.block.read_only == Some(true) {
        return Err(MemoryError::ReadOnlyBlock {
            label: label.to_owned(),
        });
    }
    Ok(row)
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
            let row = writable(row, label)?;
            let value = change(&row.block.value)?;
            check_fits(label, &value, row.block.char_limit)?;
            tx.execute(
                "UPDATE working_blocks SET value = $1, updated_at = $2 WHERE rowid = $3",
                &[&value, &now, &row.rowid],
            )?;
            ledger_append(
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
        self.0
            .lock()
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM working_blocks WHERE user_id = $1 AND deleted_at IS NULL ORDER BY label COLLATE \"C\""
                ),
                &[&user_id],
            )?
            .iter()
            .map(|r| from_row(r).map(|b| b.block))
            .collect()
    }

    fn get(&self, user_id: &str, label: &str) -> Result<Block> {
        live(&mut *self.0.lock(), user_id, label)?
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
        let limit_i64 = i64::from(limit);
        self.0.write(|tx, now| {
            match live(tx, &user, &label)? {
                Some(row) => {
                    let row = writable(row, &label)?;
                    tx.execute(
                        "UPDATE working_blocks SET value = $1, description = $2, char_limit = $3, \
                         read_only = $4, updated_at = $5 WHERE rowid = $6",
                        &[&new.value, &new.description, &limit_i64, &new.read_only, &now, &row.rowid],
                    )?;
                    ledger_append(
                        tx,
                        now,
                        &row.block.record.id,
                        "block.upsert",
                        new.by,
                        None,
                        Some(json!({ "label": label, "before": row.block.value, "after": new.value, "charLimit": limit })),
                    )?;
                }
                None => {
                    let id = mint_id("block");
                    tx.execute(
                        "INSERT INTO working_blocks (id, user_id, agent_id, session_id, label, \
                         description, value, char_limit, read_only, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                        &[
                            &id,
                            &user,
                            &new.scope.agent_id,
                            &new.scope.session_id,
                            &label,
                            &new.description,
                            &new.value,
                            &limit_i64,
                            &new.read_only,
                            &now,
                        ],
                    )?;
                    ledger_append(
                        tx,
                        now,
                        &id,
                        "block.upsert",
                        new.by,
                        None,
                        Some(json!({ "label": label, "before": null, "after": new.value, "charLimit": limit })),
                    )?;
                }
            }
            live(tx, &user, &label)?
                .map(|b| b.block)
                .ok_or_else(|| MemoryError::not_found("working block", label.clone()))
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
            let row = writable(row, label)?;
            tx.execute(
                "UPDATE working_blocks SET deleted_at = $1 WHERE rowid = $2",
                &[&now, &row.rowid],
            )?;
            ledger_append(
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
