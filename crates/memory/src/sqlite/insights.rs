//! Insights: citations are mandatory and must name live records; salience votes prune.

use rusqlite::{Transaction, params};

use crate::error::Result;
use crate::rules::insights::{insight_insert, prepare};
use crate::rules::row::insight_of;
use crate::rules::writes::{check_vote, vote};
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{self, ITEM_COLUMNS, ItemRow, check_id};
use crate::store::InsightMemory;
use crate::types::*;

pub(crate) struct Insights<'a>(pub &'a SqliteMemory);

impl SqliteMemory {
    /// Inserts a prepared insight once each citation names a live record of its user.
    pub(crate) fn insert_insight(
        &self,
        tx: &Transaction<'_>,
        now: i64,
        text: &str,
        cites: &[String],
        meta: &WriteMeta,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let ins = insight_insert(text, cites, meta, |c| items::load(tx, c))?;
        let stored = items::insert(tx, now, "insight", ins)?;
        if let (Some(key), Some(v)) = (&self.embedder_key, vector) {
            SqliteMemory::store_vector(tx, key, stored.rowid, v)?;
        }
        Ok(stored)
    }
}

impl InsightMemory for Insights<'_> {
    fn add(&self, insight: NewInsight) -> Result<Insight> {
        let (cites, meta) = prepare(&insight)?;
        let s = self.0;
        let vector = s.embed_all(&[insight.text.as_str()])?.pop().flatten();
        let id = s.write(|tx, now| {
            s.insert_insight(tx, now, &insight.text, &cites, &meta, vector.as_deref())
                .map(|row| row.id)
        })?;
        self.get(&id)
    }

    fn get(&self, id: &str) -> Result<Insight> {
        insight_of(items::load_kind(&self.0.lock(), id, MemoryKind::Insight, "insight")?.to_item()?)
    }

    fn vote(&self, id: &str, delta: i64, by: Actor) -> Result<Insight> {
        check_vote(delta)?;
        self.0.write(|tx, now| {
            let row = items::load_kind(tx, id, MemoryKind::Insight, "insight")?;
            vote(&mut items::ItemRows(tx), now, &row, delta, by)
        })?;
        self.get(id)
    }

    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Insight>> {
        check_id("userId", user_id)?;
        let conn = self.0.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = 'insight' AND i.user_id = ?1 \
             AND i.deleted_at IS NULL AND (?2 OR i.status = 'active') ORDER BY i.salience DESC, i.rowid"
        ))?;
        let rows = stmt.query_map(
            params![user_id, include_quarantined],
            crate::sqlite::items::item_from_row,
        )?;
        let mut out = Vec::new();
        for row in rows {
            out.push(insight_of(row?.to_item()?)?);
        }
        Ok(out)
    }
}
