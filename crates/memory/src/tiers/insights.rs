//! The insight tier: insights added once each citation names a live record of their user,
//! voted on (salience), listed by salience.

use crate::error::Result;
use crate::rules::insights::prepare;
use crate::rules::row::{check_id, insight_of};
use crate::rules::writes::{check_vote, vote};
use crate::store::InsightMemory;
use crate::tiers::{ItemStore, embed_one, insert_insight, load_kind};
use crate::types::*;

/// The insight tier of a store.
pub(crate) struct Insights<'a, S>(pub &'a S);

impl<S: ItemStore> InsightMemory for Insights<'_, S> {
    fn add(&self, insight: NewInsight) -> Result<Insight> {
        let (cites, meta) = prepare(&insight)?;
        let vector = embed_one(self.0, &insight.text)?;
        let id = self.0.write_items(|db, now| {
            insert_insight(db, now, &insight.text, &cites, &meta, vector.as_deref())
                .map(|row| row.id)
        })?;
        self.get(&id)
    }

    fn get(&self, id: &str) -> Result<Insight> {
        let row = self
            .0
            .read_items(|db| load_kind(db, id, MemoryKind::Insight, "insight"))?;
        insight_of(row.to_item()?)
    }

    fn vote(&self, id: &str, delta: i64, by: Actor) -> Result<Insight> {
        check_vote(delta)?;
        self.0.write_items(|db, now| {
            let row = load_kind(db, id, MemoryKind::Insight, "insight")?;
            vote(db.writes(), now, &row, delta, by)
        })?;
        self.get(id)
    }

    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Insight>> {
        check_id("userId", user_id)?;
        let rows = self.0.read_items(|db| {
            db.list_live(
                MemoryKind::Insight,
                user_id,
                include_quarantined,
                "i.salience",
            )
        })?;
        rows.iter().map(|row| insight_of(row.to_item()?)).collect()
    }
}
