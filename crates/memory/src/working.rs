//! Working memory's rules, once for both backends: labelled, char-bounded blocks whose
//! value changes in place; every change (with the previous value) is a ledger row, a
//! read-only block refuses every write, deletion is a tombstone. A backend provides the
//! block table's statements ([`BlockTable`]) and runs these inside its write transaction.

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::rules::columns::Columns;
use crate::rules::row::{check_id, check_scope, mint_id};
use crate::store::WorkingMemory;
use crate::time::format_ms;
use crate::types::*;

/// Largest character limit a block may declare.
pub const MAX_CHAR_LIMIT: u32 = 100_000;

/// A stored block and its row key.
pub(crate) struct BlockRow {
    pub rowid: i64,
    pub block: Block,
}

/// The statements of the block table, as one backend writes them.
pub(crate) trait BlockTable {
    /// The live block of `user_id` labelled `label`.
    fn live(&mut self, user_id: &str, label: &str) -> Result<Option<BlockRow>>;
    /// Sets a block's value.
    fn set_value(&mut self, rowid: i64, value: &str, now: i64) -> Result<()>;
    /// Overwrites a block's value, description, limit and read-only flag.
    fn overwrite(&mut self, rowid: i64, new: &NewBlock, limit: u32, now: i64) -> Result<()>;
    /// Inserts a new block with id `id`.
    fn insert(&mut self, id: &str, new: &NewBlock, limit: u32, now: i64) -> Result<()>;
    /// Tombstones a block.
    fn tombstone(&mut self, rowid: i64, now: i64) -> Result<()>;
    /// Appends a ledger row.
    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        detail: Value,
    ) -> Result<()>;
}

/// Refuses a value longer than the block's limit.
fn check_fits(label: &str, value: &str, limit: u32) -> Result<()> {
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

/// Refuses a block value that trips a trust heuristic its previous value did not
/// (`before`: `None` for a new block): blocks go into the prompt as they are and have no
/// quarantine, so flagged text is not stored. A value already flagged before this rule
/// existed stays editable.
fn check_clean(label: &str, before: Option<&str>, after: &str) -> Result<()> {
    let had = before.map(crate::trust::scan).unwrap_or_default();
    let new: Vec<&str> = crate::trust::scan(after)
        .into_iter()
        .filter(|flag| !had.contains(flag))
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    Err(MemoryError::FlaggedBlock {
        label: label.to_owned(),
        flags: new.join(", "),
    })
}

/// Refuses an empty search text for `replace` (checked before any read).
fn check_replace(old: &str) -> Result<()> {
    if old.is_empty() {
        return Err(MemoryError::invalid("old", "must not be empty"));
    }
    Ok(())
}

/// `value` with the first `old` replaced by `new`; a conflict when `old` is not in it.
fn replaced(label: &str, value: &str, old: &str, new: &str) -> Result<String> {
    if !value.contains(old) {
        return Err(MemoryError::Conflict(format!(
            "working block {label:?} does not contain the text to replace"
        )));
    }
    Ok(value.replacen(old, new, 1))
}

/// Checks an upsert before any transaction; returns the block's limit (`default` when the
/// input names none).
fn check_upsert(new: &NewBlock, default: u32) -> Result<u32> {
    check_scope(&new.scope)?;
    check_id("label", &new.label)?;
    let limit = new.char_limit.unwrap_or(default);
    if limit == 0 || limit > MAX_CHAR_LIMIT {
        return Err(MemoryError::invalid(
            "charLimit",
            format!("must be 1 to {MAX_CHAR_LIMIT}"),
        ));
    }
    check_fits(&new.label, &new.value, limit)?;
    Ok(limit)
}

fn live_writable(db: &mut dyn BlockTable, user_id: &str, label: &str) -> Result<BlockRow> {
    let row = db
        .live(user_id, label)?
        .ok_or_else(|| MemoryError::not_found("working block", label))?;
    writable(row, label)
}

fn writable(row: BlockRow, label: &str) -> Result<BlockRow> {
    if row.block.read_only == Some(true) {
        return Err(MemoryError::ReadOnlyBlock {
            label: label.to_owned(),
        });
    }
    Ok(row)
}

/// Writes a block checked by [`check_upsert`]: the live one overwritten, else a new one.
fn upsert(db: &mut dyn BlockTable, now: i64, new: &NewBlock, limit: u32) -> Result<Block> {
    let (user, label) = (&new.scope.user_id, &new.label);
    match db.live(user, label)? {
        Some(row) => {
            let row = writable(row, label)?;
            check_clean(label, Some(&row.block.value), &new.value)?;
            db.overwrite(row.rowid, new, limit, now)?;
            db.ledger(
                now,
                &row.block.record.id,
                "block.upsert",
                new.by,
                json!({ "label": label, "before": row.block.value, "after": new.value, "charLimit": limit }),
            )?;
        }
        None => {
            check_clean(label, None, &new.value)?;
            let id = mint_id("block");
            db.insert(&id, new, limit, now)?;
            db.ledger(
                now,
                &id,
                "block.upsert",
                new.by,
                json!({ "label": label, "before": null, "after": new.value, "charLimit": limit }),
            )?;
        }
    }
    db.live(user, label)?
        .map(|b| b.block)
        .ok_or_else(|| MemoryError::not_found("working block", label.clone()))
}

/// Sets a live, writable block's value to what `change` makes of it (append, replace).
fn set_value(
    db: &mut dyn BlockTable,
    now: i64,
    user_id: &str,
    label: &str,
    by: Actor,
    change: impl FnOnce(&str) -> Result<String>,
) -> Result<Block> {
    let row = live_writable(db, user_id, label)?;
    let value = change(&row.block.value)?;
    check_fits(label, &value, row.block.char_limit)?;
    check_clean(label, Some(&row.block.value), &value)?;
    db.set_value(row.rowid, &value, now)?;
    db.ledger(
        now,
        &row.block.record.id,
        "block.upsert",
        by,
        json!({ "label": label, "before": row.block.value, "after": value }),
    )?;
    let mut block = row.block;
    block.value = value;
    block.record.updated_at = Some(format_ms(now));
    Ok(block)
}

/// Tombstones a live, writable block.
fn delete(db: &mut dyn BlockTable, now: i64, user_id: &str, label: &str, by: Actor) -> Result<()> {
    let row = live_writable(db, user_id, label)?;
    db.tombstone(row.rowid, now)?;
    db.ledger(
        now,
        &row.block.record.id,
        "block.delete",
        by,
        json!({ "label": label, "before": row.block.value }),
    )
}

/// A backend's side of working memory: its block reads, and a write transaction over its
/// block table.
pub(crate) trait BlockStore {
    /// The limit of a block whose input names none.
    fn default_char_limit(&self) -> u32;
    /// One user's live blocks, by label (byte order).
    fn list_blocks(&self, user_id: &str) -> Result<Vec<Block>>;
    /// The live block of `user_id` labelled `label`.
    fn live_block(&self, user_id: &str, label: &str) -> Result<Option<BlockRow>>;
    /// Runs `f` in one write transaction over the block table; nothing is written when it
    /// fails.
    fn write_blocks<T>(&self, f: impl FnOnce(&mut dyn BlockTable, i64) -> Result<T>) -> Result<T>;
}

/// The working tier of a backend.
pub(crate) struct Working<'a, S>(pub &'a S);

impl<S: BlockStore> WorkingMemory for Working<'_, S> {
    fn list(&self, user_id: &str) -> Result<Vec<Block>> {
        check_id("userId", user_id)?;
        self.0.list_blocks(user_id)
    }

    fn get(&self, user_id: &str, label: &str) -> Result<Block> {
        self.0
            .live_block(user_id, label)?
            .map(|b| b.block)
            .ok_or_else(|| MemoryError::not_found("working block", label))
    }

    fn upsert(&self, new: NewBlock) -> Result<Block> {
        let limit = check_upsert(&new, self.0.default_char_limit())?;
        self.0.write_blocks(|db, now| upsert(db, now, &new, limit))
    }

    fn append(&self, user_id: &str, label: &str, text: &str, by: Actor) -> Result<Block> {
        self.0.write_blocks(|db, now| {
            set_value(db, now, user_id, label, by, |old| {
                Ok(format!("{old}{text}"))
            })
        })
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
        self.0.write_blocks(|db, now| {
            set_value(db, now, user_id, label, by, |value| {
                replaced(label, value, old, new)
            })
        })
    }

    fn delete(&self, user_id: &str, label: &str, by: Actor) -> Result<()> {
        self.0
            .write_blocks(|db, now| delete(db, now, user_id, label, by))
    }
}

/// The working-block columns [`block_from`] reads, in order.
pub(crate) const BLOCK_COLUMNS: &str = "rowid, id, user_id, agent_id, session_id, label, \
    description, value, char_limit, read_only, created_at, updated_at, deleted_at";

/// A working block selected with [`BLOCK_COLUMNS`].
pub(crate) fn block_from<R: Columns>(r: &R) -> std::result::Result<BlockRow, R::Error> {
    let created: i64 = r.get(10)?;
    let updated: Option<i64> = r.get(11)?;
    let deleted: Option<i64> = r.get(12)?;
    let read_only: bool = r.get(9)?;
    let limit: i64 = r.get(8)?;
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
                state: RecordState::of(deleted.is_some(), false, MemoryStatus::Active),
            },
            label: r.get(5)?,
            description: r.get(6)?,
            value: r.get(7)?,
            char_limit: u32::try_from(limit).unwrap_or(MAX_CHAR_LIMIT),
            read_only: read_only.then_some(true),
        },
    })
}
