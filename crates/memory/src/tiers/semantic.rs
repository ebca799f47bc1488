//! The semantic tier: facts remembered in batches (all or none), superseded by newer
//! versions, forgotten with a tombstone and read back with their version chain.

use crate::error::{MemoryError, Result};
use crate::rules::conflicts::{hold_supersession, supersede_hold};
use crate::rules::row::{ItemRow, fact_of, index_text};
use crate::rules::semantic::{check_supersedable, fact_row, next_version};
use crate::rules::writes::{fact_chain, link_supersession, tombstone};
use crate::store::SemanticMemory;
use crate::tiers::{ItemStore, embed_one, insert_fact, load_kind};
use crate::types::*;

/// The semantic tier of a store.
pub(crate) struct Semantic<'a, S>(pub &'a S);

impl<S: ItemStore> Semantic<'_, S> {
    /// Embeds and inserts the validated rows of `facts` (one each) in one transaction.
    fn insert_rows(&self, facts: Vec<NewFact>, rows: Vec<ItemRow>) -> Result<Vec<Fact>> {
        let indexed: Vec<String> = rows.iter().map(index_text).collect();
        let texts: Vec<&str> = indexed.iter().map(String::as_str).collect();
        let vectors = self.0.embed_all(&texts)?;
        let stored = self.0.write_items(|db, now| {
            let mut out = Vec::with_capacity(rows.len());
            for ((fact, row), vector) in facts.iter().zip(rows).zip(&vectors) {
                out.push(insert_fact(db, now, fact, row, vector.as_deref())?);
            }
            Ok(out)
        })?;
        stored
            .iter()
            .map(|r| r.to_item().and_then(fact_of))
            .collect()
    }
}

impl<S: ItemStore> SemanticMemory for Semantic<'_, S> {
    fn remember(&self, fact: NewFact) -> Result<Fact> {
        let mut facts = self.remember_many_unchecked(vec![fact])?;
        facts
            .pop()
            .ok_or_else(|| MemoryError::Conflict("nothing was stored".to_owned()))
    }

    fn remember_many_unchecked(&self, facts: Vec<NewFact>) -> Result<Vec<Fact>> {
        let rows = facts.iter().map(fact_row).collect::<Result<Vec<_>>>()?;
        self.insert_rows(facts, rows)
    }

    fn remember_quarantined(&self, fact: NewFact, reason: &str) -> Result<Fact> {
        let mut row = fact_row(&fact)?;
        row.status = MemoryStatus::Quarantined.as_str().to_owned();
        row.quarantine_reason = Some(reason.to_owned());
        self.insert_rows(vec![fact], vec![row])?
            .pop()
            .ok_or_else(|| MemoryError::Conflict("nothing was stored".to_owned()))
    }

    fn get(&self, id: &str) -> Result<Fact> {
        let row = self
            .0
            .read_items(|db| load_kind(db, id, MemoryKind::Semantic, "fact"))?;
        fact_of(row.to_item()?)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Semantic))
    }

    fn supersede(&self, old_id: &str, new: NewFact, reason: &str) -> Result<Fact> {
        let row = fact_row(&new)?;
        let text = index_text(&row);
        let vector = embed_one(self.0, &text)?;
        // The status the trust gate would land the new version in (prepare_insert's verdict).
        let gated = crate::trust::gate(new.meta.provenance, &text).status;
        let stored = self.0.write_items(|db, now| {
            let old = load_kind(db, old_id, MemoryKind::Semantic, "fact")?;
            check_supersedable(&old, &new)?;
            let hold = supersede_hold(
                &old.id,
                (old.provenance(), old.status()),
                (new.meta.provenance, gated),
            );
            if let Some(why) = hold {
                // Not applied: held for a person (rules::conflicts, the module's head); the
                // gate's own reasons come first (prepare_insert keeps this one after them).
                let mut row = row;
                row.status = MemoryStatus::Quarantined.as_str().to_owned();
                row.quarantine_reason = Some(why);
                let stored = insert_fact(db, now, &new, row, vector.as_deref())?;
                hold_supersession(db.writes(), now, &stored, &old, reason, new.meta.by)?;
                return Ok(stored.id);
            }
            let row = next_version(&old, row);
            let stored = insert_fact(db, now, &new, row, vector.as_deref())?;
            link_supersession(db.writes(), now, &old, &stored.id, reason, new.meta.by)?;
            Ok(stored.id)
        })?;
        self.get(&stored)
    }

    fn forget(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        self.0.write_items(|db, now| {
            let row = load_kind(db, id, MemoryKind::Semantic, "fact")?;
            tombstone(db.writes(), now, &row, "forget", reason, by)
        })
    }

    fn history(&self, id: &str) -> Result<FactHistory> {
        let (chain, mut events) = self.0.read_items(|db| {
            let start = load_kind(db, id, MemoryKind::Semantic, "fact")?;
            let chain = fact_chain(start, |id| db.load(id))?;
            let mut events = Vec::new();
            for row in &chain {
                events.extend(db.ledger_for(&row.id)?);
            }
            Ok((chain, events))
        })?;
        events.sort_by_key(|e| e.seq);
        let chain = chain
            .iter()
            .map(|r| r.to_item().and_then(fact_of))
            .collect::<Result<Vec<_>>>()?;
        Ok(FactHistory { chain, events })
    }
}
