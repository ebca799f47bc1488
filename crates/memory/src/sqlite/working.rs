//! Working memory on SQLite: the block table's statements the shared rules of
//! [`crate::working`] run over.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use crate::error::Result;
use crate::sqlite::{SqliteMemory, ledger};
use crate::types::*;
use crate::working::{BLOCK_COLUMNS, BlockRow, BlockStore, BlockTable, block_from};

fn from_row(r: &Row<'_>) -> rusqlite::Result<BlockRow> {
    block_from(r)
}

fn live(conn: &Connection, user_id: &str, label: &str) -> Result<Option<BlockRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {BLOCK_COLUMNS} FROM working_blocks WHERE user_id = ?1 AND label = ?2 AND deleted_at IS NULL"),
            params![user_id, label],
            from_row,
        )
        .optional()?)
}

/// The block table of one SQLite transaction.
struct Blocks<'a>(&'a Connection);

impl BlockTable for Blocks<'_> {
    fn live(&mut self, user_id: &str, label: &str) -> Result<Option<BlockRow>> {
        live(self.0, user_id, label)
    }

    fn set_value(&mut self, rowid: i64, value: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE working_blocks SET value = ?1, updated_at = ?2 WHERE rowid = ?3",
            params![value, now, rowid],
        )?;
        Ok(())
    }

    fn overwrite(&mut self, rowid: i64, new: &NewBlock, limit: u32, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE working_blocks SET value = ?1, description = ?2, char_limit = ?3, read_only = ?4, updated_at = ?5 WHERE rowid = ?6",
            params![new.value, new.description, limit, new.read_only, now, rowid],
        )?;
        Ok(())
    }

    fn insert(&mut self, id: &str, new: &NewBlock, limit: u32, now: i64) -> Result<()> {
        self.0.execute(
            "INSERT INTO working_blocks (id, user_id, agent_id, session_id, label, description, value, char_limit, read_only, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                id,
                new.scope.user_id,
                new.scope.agent_id,
                new.scope.session_id,
                new.label,
                new.description,
                new.value,
                limit,
                new.read_only,
                now
            ],
        )?;
        Ok(())
    }

    fn tombstone(&mut self, rowid: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE working_blocks SET deleted_at = ?1 WHERE rowid = ?2",
            params![now, rowid],
        )?;
        Ok(())
    }

    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        detail: Value,
    ) -> Result<()> {
        ledger::append(self.0, now, subject_id, action, by, None, Some(detail))
    }
}

impl BlockStore for SqliteMemory {
    fn default_char_limit(&self) -> u32 {
        self.parts.config.default_char_limit
    }

    fn list_blocks(&self, user_id: &str) -> Result<Vec<Block>> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {BLOCK_COLUMNS} FROM working_blocks WHERE user_id = ?1 AND deleted_at IS NULL ORDER BY label"
        ))?;
        let rows = stmt.query_map(params![user_id], from_row)?;
        Ok(rows
            .map(|r| r.map(|b| b.block))
            .collect::<rusqlite::Result<_>>()?)
    }

    fn live_block(&self, user_id: &str, label: &str) -> Result<Option<BlockRow>> {
        live(&self.lock(), user_id, label)
    }

    fn write_blocks<T>(&self, f: impl FnOnce(&mut dyn BlockTable, i64) -> Result<T>) -> Result<T> {
        self.write(|tx, now| f(&mut Blocks(tx), now))
    }
}
