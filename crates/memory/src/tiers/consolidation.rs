//! The write of a consolidation on any store: the inserts the shared rule of
//! [`crate::rules::consolidation`] runs over, in one write transaction of the store (so a
//! consolidation of the same session on another instance is refereed by the same mark
//! check).

use crate::error::Result;
use crate::rules::consolidation::{
    self as rule, ConsolidationBatch, ConsolidationWrites, ConsolidationWritten, read_mark,
};
use crate::rules::row::ItemRow;
use crate::tiers::{ItemStore, ItemTable, insert_episode, insert_fact, insert_insight};
use crate::types::*;

/// The consolidation's statements on one item table.
struct Writes<'a>(&'a mut dyn ItemTable);

impl ConsolidationWrites for Writes<'_> {
    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        self.0.meta(key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.0.set_meta(key, value)
    }

    fn insert_episode(
        &mut self,
        now: i64,
        meta: &WriteMeta,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        insert_episode(self.0, now, meta, row, vector)
    }

    fn insert_fact(
        &mut self,
        now: i64,
        fact: &NewFact,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        insert_fact(self.0, now, fact, row, vector)
    }

    fn insert_insight(
        &mut self,
        now: i64,
        text: &str,
        cites: &[String],
        meta: &WriteMeta,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        insert_insight(self.0, now, text, cites, meta, vector)
    }
}

/// The last message sequence of a session already consolidated, if any.
pub(crate) fn consolidation_mark(
    store: &impl ItemStore,
    user_id: &str,
    session_id: &str,
) -> Result<Option<u64>> {
    store.read_items(|db| read_mark(user_id, session_id, |key| db.meta(key)))
}

/// Writes a consolidation in one transaction: every record is checked (and embedded)
/// first; any refusal writes nothing.
pub(crate) fn write_consolidation(
    store: &impl ItemStore,
    batch: ConsolidationBatch,
) -> Result<ConsolidationWritten> {
    let prepared = rule::prepare(batch, |texts| store.embed_all(texts))?;
    let rows = store.write_items(|db, now| rule::write(&mut Writes(db), now, prepared))?;
    rule::written(rows)
}
