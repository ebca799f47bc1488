//! The write of a consolidation on PostgreSQL: the inserts the shared rule of
//! [`crate::rules::consolidation`] runs over, in one transaction under the store's write
//! lock (so a consolidation of the same session on another instance is refereed by the
//! same mark check).

use postgres::Transaction;

use crate::error::Result;
use crate::postgres::{PgMemory, meta, set_meta};
use crate::rules::consolidation::{
    self as rule, ConsolidationBatch, ConsolidationWrites, ConsolidationWritten, read_mark,
};
use crate::rules::row::{Insert, ItemRow};
use crate::types::*;

struct Writes<'a, 'b, 'c> {
    store: &'a PgMemory,
    tx: &'b mut Transaction<'c>,
}

impl ConsolidationWrites for Writes<'_, '_, '_> {
    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        meta(self.tx, key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        set_meta(self.tx, key, value)
    }

    fn insert_episode(
        &mut self,
        now: i64,
        meta: &WriteMeta,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let ins = Insert {
            row,
            meta: meta.clone(),
            detail: None,
        };
        self.store
            .insert_with_vector(self.tx, now, "episode", ins, vector)
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

impl PgMemory {
    /// The last message sequence of a session already consolidated, if any.
    pub(crate) fn consolidation_mark(
        &self,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<u64>> {
        let mut client = self.lock();
        read_mark(user_id, session_id, |key| meta(&mut *client, key))
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
