//! Semantic memory: facts with valid time, supersession chains and history.

use rusqlite::Transaction;

use crate::error::{MemoryError, Result};
use crate::rules::row::fact_of;
use crate::rules::semantic::{check_supersedable, fact_row, next_version};
use crate::rules::writes::{fact_chain, link_supersession};
use crate::sqlite::items::{self, Insert, ItemRow};
use crate::sqlite::{SqliteMemory, entities, ledger};
use crate::store::SemanticMemory;
use crate::types::*;

pub(crate) struct Semantic<'a>(pub &'a SqliteMemory);

impl SqliteMemory {
    /// Inserts a validated fact row with its vector and entity links.
    pub(crate) fn insert_fact(
        &self,
        tx: &Transaction<'_>,
        now: i64,
        fact: &NewFact,
        mut row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        row.kind = MemoryKind::Semantic.as_str().to_owned();
        let stored = items::insert(
            tx,
            now,
            "fact",
            Insert {
                row,
                meta: fact.meta.clone(),
                detail: None,
            },
        )?;
        if let (Some(key), Some(v)) = (&self.embedder_key, vector) {
            Self::store_vector(tx, key, stored.rowid, v)?;
        }
        entities::link_fact(tx, now, &stored, self.resolver())?;
        Ok(stored)
    }

    /// Embeds `texts` in batches (none when no embedder is active).
    pub(crate) fn embed_all(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        crate::vectors::embed_all(self.embedder.as_deref(), texts)
    }
}

impl SemanticMemory for Semantic<'_> {
    fn remember(&self, fact: NewFact) -> Result<Fact> {
        let mut facts = self.remember_many(vec![fact])?;
        facts
            .pop()
            .ok_or_else(|| MemoryError::Conflict("nothing was stored".to_owned()))
    }

    fn remember_many(&self, facts: Vec<NewFact>) -> Result<Vec<Fact>> {
        let s = self.0;
        let rows = facts.iter().map(fact_row).collect::<Result<Vec<_>>>()?;
        let indexed: Vec<String> = rows.iter().map(items::index_text).collect();
        let texts: Vec<&str> = indexed.iter().map(String::as_str).collect();
        let vectors = s.embed_all(&texts)?;
        let stored = s.write(|tx, now| {
            let mut out = Vec::with_capacity(rows.len());
            for ((fact, row), vector) in facts.iter().zip(rows).zip(&vectors) {
                out.push(s.insert_fact(tx, now, fact, row, vector.as_deref())?);
            }
            Ok(out)
        })?;
        stored
            .iter()
            .map(|r| r.to_item().and_then(fact_of))
            .collect()
    }

    fn get(&self, id: &str) -> Result<Fact> {
        let row = items::load_kind(&self.0.lock(), id, MemoryKind::Semantic, "fact")?;
        fact_of(row.to_item()?)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Semantic))
    }

    fn supersede(&self, old_id: &str, new: NewFact, reason: &str) -> Result<Fact> {
        let s = self.0;
        let row = fact_row(&new)?;
        let vector = s
            .embed_all(&[items::index_text(&row).as_str()])?
            .pop()
            .flatten();
        let stored = s.write(|tx, now| {
            let old = items::load_kind(tx, old_id, MemoryKind::Semantic, "fact")?;
            check_supersedable(&old, &new)?;
            let row = next_version(&old, row);
            let stored = s.insert_fact(tx, now, &new, row, vector.as_deref())?;
            link_supersession(
                &mut items::ItemRows(tx),
                now,
                &old,
                &stored.id,
                reason,
                new.meta.by,
            )?;
            Ok(stored.id)
        })?;
        self.get(&stored)
    }

    fn forget(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let row = items::load_kind(tx, id, MemoryKind::Semantic, "fact")?;
            tombstone(tx, now, &row, "forget", reason, by)
        })
    }

    fn history(&self, id: &str) -> Result<FactHistory> {
        let conn = self.0.lock();
        let start = items::load_kind(&conn, id, MemoryKind::Semantic, "fact")?;
        let chain = fact_chain(start, |id| items::load(&conn, id))?;
        let mut events = Vec::new();
        for row in &chain {
            events.extend(ledger::for_subject(&conn, &row.id)?);
        }
        events.sort_by_key(|e| e.seq);
        let chain = chain
            .iter()
            .map(|r| r.to_item().and_then(fact_of))
            .collect::<Result<Vec<_>>>()?;
        Ok(FactHistory { chain, events })
    }
}

/// Writes a tombstone on a live row, with the ledger row.
pub(crate) fn tombstone(
    tx: &Transaction<'_>,
    now: i64,
    row: &ItemRow,
    action: &str,
    reason: &str,
    by: Actor,
) -> Result<()> {
    crate::rules::writes::tombstone(&mut items::ItemRows(tx), now, row, action, reason, by)
}
