//! The write of a consolidation on SQLite: the inserts the shared rule of
//! [`crate::consolidate::write`] runs over.

use rusqlite::{OptionalExtension, Transaction, params};

use crate::error::Result;
use crate::rules::consolidation::{
    self as rule, ConsolidationBatch, ConsolidationWrites, ConsolidationWritten, read_mark,
};
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::ItemRow;
use crate::types::*;

struct Writes<'a, 'c> {
    store: &'a SqliteMemory,
    tx: &'a Transaction<'c>,
}

fn meta(conn: &rusqlite::Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM memory_meta WHERE key = ?1",
            params![key],
            |r| r.get(0),
        )
        .optional()?)
}

impl ConsolidationWrites for Writes<'_, '_> {
    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        meta(self.tx, key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.tx.execute(
            "INSERT OR REPLACE INTO memory_meta (key, value) VALUES (?1, ?2)",
            params![key, value],
        )?;
        Ok(())
    }

    fn insert_episode(
        &mut self,
        now: i64,
        meta: &WriteMeta,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        self.store.insert_episode(self.tx, now, meta, row, vector)
    }

    fn insert_fact(
        &mut self,
        now: i64,
        fact: &NewFact,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        self.store.insert_fact(self.tx, now, fact, row, vector)
    }

    fn insert_insight(
        &mut self,
        now: i64,
        text: &str,
        cites: &[String],
        meta: &WriteMeta,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        self.store
            .insert_insight(self.tx, now, text, cites, meta, vector)
    }
}

impl SqliteMemory {
    /// The last message sequence of a session already consolidated, if any.
    pub(crate) fn consolidation_mark(
        &self,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<u64>> {
        let conn = self.lock();
        read_mark(user_id, session_id, |key| meta(&conn, key))
    }

    /// Writes a consolidation in one transaction: every record is checked (and embedded)
    /// first; any refusal writes nothing.
    pub(crate) fn write_consolidation(
        &self,
        batch: ConsolidationBatch,
    ) -> Result<ConsolidationWritten> {
        let prepared = rule::prepare(batch, |texts| self.embed_all(texts))?;
        let rows =
            self.write(|tx, now| rule::write(&mut Writes { store: self, tx }, now, prepared))?;
        rule::written(rows)
    }
}
