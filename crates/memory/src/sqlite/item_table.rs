//! The item tiers on SQLite: the `memory_items` statements ([`ItemTable`]) and the
//! transaction ([`ItemStore`]) the shared rules of [`crate::tiers`] run over.

use rusqlite::{Connection, OptionalExtension, params};

use crate::entity_writes::EntityStore;
use crate::error::Result;
use crate::rules::row::{Insert, ItemRow};
use crate::rules::writes::ItemWrites;
use crate::sqlite::items::{self, ITEM_COLUMNS, ItemRows};
use crate::sqlite::{SqliteMemory, entities, ledger};
use crate::tiers::{ItemStore, ItemTable};
use crate::types::*;

/// The item table of one SQLite connection (a write transaction when writing).
struct Items<'a> {
    store: &'a SqliteMemory,
    rows: ItemRows<'a>,
}

impl<'a> Items<'a> {
    fn new(store: &'a SqliteMemory, conn: &'a Connection) -> Self {
        Items {
            store,
            rows: ItemRows(conn),
        }
    }
}

/// The `memory_meta` value of `key`.
pub(crate) fn meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM memory_meta WHERE key = ?1",
            params![key],
            |r| r.get(0),
        )
        .optional()?)
}

impl ItemTable for Items<'_> {
    fn load(&mut self, id: &str) -> Result<Option<ItemRow>> {
        items::load(self.rows.0, id)
    }

    fn list_live(
        &mut self,
        kind: MemoryKind,
        user_id: &str,
        include_quarantined: bool,
        order: &str,
    ) -> Result<Vec<ItemRow>> {
        let mut stmt = self.rows.0.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = ?1 AND i.user_id = ?2 \
             AND i.deleted_at IS NULL AND (?3 OR i.status = 'active') ORDER BY {order} DESC, i.rowid"
        ))?;
        let rows = stmt.query_map(
            params![kind.as_str(), user_id, include_quarantined],
            items::item_from_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn ledger_for(&mut self, subject_id: &str) -> Result<Vec<HistoryEntry>> {
        ledger::for_subject(self.rows.0, subject_id)
    }

    fn insert(
        &mut self,
        now: i64,
        prefix: &str,
        ins: Insert,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let stored = items::insert(self.rows.0, now, prefix, ins)?;
        if let (Some(key), Some(v)) = (&self.store.parts.embedder_key, vector) {
            SqliteMemory::store_vector(self.rows.0, key, stored.rowid, v)?;
        }
        Ok(stored)
    }

    fn link_fact(&mut self, now: i64, row: &ItemRow) -> Result<()> {
        entities::link_fact(self.rows.0, now, row, self.store.resolver())
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        meta(self.rows.0, key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.rows.0.execute(
            "INSERT OR REPLACE INTO memory_meta (key, value) VALUES (?1, ?2)",
            params![key, value],
        )?;
        Ok(())
    }

    fn last_sequence(&mut self, user_id: &str, session_id: &str) -> Result<Option<i64>> {
        Ok(self.rows.0.query_row(
            "SELECT MAX(sequence) FROM memory_items WHERE kind = 'session' AND session_id = ?1 \
             AND user_id = ?2",
            params![session_id, user_id],
            |r| r.get(0),
        )?)
    }

    fn session_messages(
        &mut self,
        user_id: &str,
        session_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<ItemRow>> {
        let mut stmt = self.rows.0.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = 'session' \
             AND i.session_id = ?1 AND i.user_id = ?4 AND i.sequence > ?2 \
             AND i.deleted_at IS NULL ORDER BY i.sequence LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![session_id, after, limit, user_id],
            items::item_from_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn attach(&mut self, record_id: &str, agent_id: &str, now: i64) -> Result<bool> {
        let added = self.rows.0.execute(
            "INSERT OR IGNORE INTO shared_attachments (item_id, agent_id, attached_at) \
             VALUES (?1, ?2, ?3)",
            params![record_id, agent_id, now],
        )?;
        Ok(added > 0)
    }

    fn detach(&mut self, record_id: &str, agent_id: &str, now: i64) -> Result<bool> {
        let ended = self.rows.0.execute(
            "UPDATE shared_attachments SET detached_at = ?1 WHERE item_id = ?2 AND agent_id = ?3 \
             AND detached_at IS NULL",
            params![now, record_id, agent_id],
        )?;
        Ok(ended > 0)
    }

    fn shared_with(&mut self, agent_id: &str) -> Result<Vec<ItemRow>> {
        let mut stmt = self.rows.0.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM shared_attachments s JOIN memory_items i ON i.id = s.item_id \
             WHERE s.agent_id = ?1 AND s.detached_at IS NULL AND i.deleted_at IS NULL \
             AND i.superseded_by IS NULL AND i.status = 'active' ORDER BY s.rowid"
        ))?;
        let rows = stmt.query_map(params![agent_id], items::item_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn count_live(&mut self, user_id: &str, kind: MemoryKind) -> Result<i64> {
        Ok(self.rows.0.query_row(
            "SELECT COUNT(*) FROM memory_items WHERE user_id = ?1 AND kind = ?2 \
             AND deleted_at IS NULL AND superseded_by IS NULL AND status = 'active' \
             AND archived_at IS NULL",
            params![user_id, kind.as_str()],
            |r| r.get(0),
        )?)
    }

    fn count_messages(&mut self, user_id: &str) -> Result<i64> {
        Ok(self.rows.0.query_row(
            "SELECT COUNT(*) FROM memory_items WHERE user_id = ?1 AND kind = 'session' \
             AND deleted_at IS NULL",
            params![user_id],
            |r| r.get(0),
        )?)
    }

    fn count_blocks(&mut self, user_id: &str) -> Result<i64> {
        Ok(self.rows.0.query_row(
            "SELECT COUNT(*) FROM working_blocks WHERE user_id = ?1 AND deleted_at IS NULL",
            params![user_id],
            |r| r.get(0),
        )?)
    }

    fn writes(&mut self) -> &mut dyn ItemWrites {
        &mut self.rows
    }
}

impl ItemStore for SqliteMemory {
    fn embed_all(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        self.parts.embed_all(texts)
    }

    fn search_kinds(
        &self,
        options: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
        SqliteMemory::search_kinds(self, options, fixed)
    }

    fn promote_after_successes(&self) -> u32 {
        self.parts.config.promote_after_successes
    }

    fn read_items<T>(&self, f: impl FnOnce(&mut dyn ItemTable) -> Result<T>) -> Result<T> {
        let conn = self.lock();
        f(&mut Items::new(self, &conn))
    }

    fn write_items<T>(&self, f: impl FnOnce(&mut dyn ItemTable, i64) -> Result<T>) -> Result<T> {
        self.write(|tx, now| f(&mut Items::new(self, tx), now))
    }
}
