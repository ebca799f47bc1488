//! The procedural tier: rules added (quarantined when their text, steps or conditions are
//! flagged), listed by priority, removed, and promoted by their recorded successes.

use crate::error::Result;
use crate::rules::procedural::rule_row;
use crate::rules::row::{Insert, check_id, rule_of};
use crate::rules::writes::{quarantine_if_flagged, record_outcome, tombstone};
use crate::store::ProceduralMemory;
use crate::tiers::{ItemStore, embed_one, load_kind};
use crate::types::*;

/// The procedural tier of a store.
pub(crate) struct Procedural<'a, S>(pub &'a S);

impl<S: ItemStore> ProceduralMemory for Procedural<'_, S> {
    fn add(&self, rule: NewRule) -> Result<Rule> {
        let (row, scanned) = rule_row(&rule)?;
        let vector = embed_one(self.0, &rule.text)?;
        let stored = self.0.write_items(|db, now| {
            let ins = Insert {
                row,
                meta: rule.meta.clone(),
                detail: None,
            };
            let stored = db.insert(now, "rule", ins, vector.as_deref())?;
            // Steps and conditions are scanned too: flagged ones quarantine the rule.
            quarantine_if_flagged(db.writes(), now, &stored, &scanned, rule.meta.by)?;
            Ok(stored.id)
        })?;
        self.get(&stored)
    }

    fn get(&self, id: &str) -> Result<Rule> {
        let row = self
            .0
            .read_items(|db| load_kind(db, id, MemoryKind::Procedural, "rule"))?;
        rule_of(row.to_item()?)
    }

    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Rule>> {
        check_id("userId", user_id)?;
        let rows = self.0.read_items(|db| {
            db.list_live(
                MemoryKind::Procedural,
                user_id,
                include_quarantined,
                "i.priority",
            )
        })?;
        rows.iter().map(|row| rule_of(row.to_item()?)).collect()
    }

    fn remove(&self, id: &str, by: Actor) -> Result<()> {
        self.0.write_items(|db, now| {
            let row = load_kind(db, id, MemoryKind::Procedural, "rule")?;
            tombstone(db.writes(), now, &row, "forget", "removed", by)
        })
    }

    fn record_outcome(&self, id: &str, success: bool, by: Actor) -> Result<Rule> {
        let threshold = i64::from(self.0.promote_after_successes());
        self.0.write_items(|db, now| {
            let row = load_kind(db, id, MemoryKind::Procedural, "rule")?;
            record_outcome(db.writes(), now, &row, success, by, threshold)
        })?;
        self.get(id)
    }
}
