//! Insights: citations are mandatory and must name live records; salience votes prune.

use rusqlite::{Transaction, params};
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::rules::insights::{START_SALIENCE, insight_insert, prepare};
use crate::rules::row::insight_of;
use crate::sqlite::items::{self, ITEM_COLUMNS, ItemRow, check_id};
use crate::sqlite::semantic::tombstone;
use crate::sqlite::{SqliteMemory, ledger};
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
        if delta == 0 || delta.abs() > 100 {
            return Err(MemoryError::invalid(
                "delta",
                "must be a non-zero step of at most 100",
            ));
        }
        self.0.write(|tx, now| {
            let row = items::load_kind(tx, id, MemoryKind::Insight, "insight")?;
            if row.deleted_at.is_some() {
                return Err(MemoryError::Conflict(format!("insight {id} is pruned")));
            }
            let salience = row.salience.unwrap_or(START_SALIENCE) + delta;
            tx.execute(
                "UPDATE memory_items SET salience = ?1, updated_at = ?2 WHERE rowid = ?3",
                params![salience, now, row.rowid],
            )?;
            ledger::append(
                tx,
                now,
                id,
                "vote",
                by,
                None,
                Some(json!({ "delta": delta, "salience": salience })),
            )?;
            if salience <= 0 {
                tombstone(tx, now, &row, "prune", "salience fell to zero", by)?;
            }
            Ok(())
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
