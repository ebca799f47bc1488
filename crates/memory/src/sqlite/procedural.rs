//! Procedural memory: authored rules and induced procedures with their success counter.

use rusqlite::params;

use crate::error::Result;
use crate::rules::procedural::rule_row;
use crate::rules::row::rule_of;
use crate::rules::writes::{quarantine_if_flagged, record_outcome};
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{self, ITEM_COLUMNS, Insert, check_id};
use crate::sqlite::semantic::tombstone;
use crate::store::ProceduralMemory;
use crate::types::*;

pub(crate) struct Procedural<'a>(pub &'a SqliteMemory);

impl ProceduralMemory for Procedural<'_> {
    fn add(&self, rule: NewRule) -> Result<Rule> {
        let (row, scanned) = rule_row(&rule)?;
        let s = self.0;
        let vector = s.embed_all(&[rule.text.as_str()])?.pop().flatten();
        let stored = s.write(|tx, now| {
            let stored = items::insert(
                tx,
                now,
                "rule",
                Insert {
                    row,
                    meta: rule.meta.clone(),
                    detail: None,
                },
            )?;
            // Steps and conditions are scanned too: flagged ones quarantine the rule.
            quarantine_if_flagged(
                &mut items::ItemRows(tx),
                now,
                &stored,
                &scanned,
                rule.meta.by,
            )?;
            if let (Some(key), Some(v)) = (&s.embedder_key, &vector) {
                SqliteMemory::store_vector(tx, key, stored.rowid, v)?;
            }
            Ok(stored.id)
        })?;
        self.get(&stored)
    }

    fn get(&self, id: &str) -> Result<Rule> {
        rule_of(items::load_kind(&self.0.lock(), id, MemoryKind::Procedural, "rule")?.to_item()?)
    }

    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Rule>> {
        check_id("userId", user_id)?;
        let conn = self.0.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = 'procedural' AND i.user_id = ?1 \
             AND i.deleted_at IS NULL AND (?2 OR i.status = 'active') ORDER BY i.priority DESC, i.rowid"
        ))?;
        let rows = stmt.query_map(
            params![user_id, include_quarantined],
            crate::sqlite::items::item_from_row,
        )?;
        let mut out = Vec::new();
        for row in rows {
            out.push(rule_of(row?.to_item()?)?);
        }
        Ok(out)
    }

    fn remove(&self, id: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let row = items::load_kind(tx, id, MemoryKind::Procedural, "rule")?;
            tombstone(tx, now, &row, "forget", "removed", by)
        })
    }

    fn record_outcome(&self, id: &str, success: bool, by: Actor) -> Result<Rule> {
        let threshold = i64::from(self.0.config.promote_after_successes);
        self.0.write(|tx, now| {
            let row = items::load_kind(tx, id, MemoryKind::Procedural, "rule")?;
            record_outcome(&mut items::ItemRows(tx), now, &row, success, by, threshold)
        })?;
        self.get(id)
    }
}
