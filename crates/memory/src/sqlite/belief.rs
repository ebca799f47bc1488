//! A fact's versions at an instant, on both time axes: which versions of its supersession
//! chain the store believed at `knownAt` (transaction time — exactly the filter a search
//! with that `knownAt` applies), and which version held at `asOf` (valid time) as known
//! then. The inspector's as-of / known-at sliders ask this; they never re-derive it.

use std::collections::HashSet;

use super::search::admit;
use crate::error::Result;
use crate::rules::belief::{ChainReads, FactAt, fact_at_rule};
use crate::rules::filter::Filter;
use crate::sqlite::SqliteMemory;
use crate::store::{MemoryStore, SemanticMemory};
use crate::types::*;

impl SqliteMemory {
    /// The versions of fact `id`'s chain believed at `known_at` and valid at `as_of` (both
    /// ISO-8601, default now). Errors: unknown id or not a fact (`NotFound`), an unparsable
    /// time (`Invalid`).
    pub fn fact_at(&self, id: &str, as_of: Option<&str>, known_at: Option<&str>) -> Result<FactAt> {
        fact_at_rule(
            |id| Ok(self.semantic().history(id)?.chain),
            self.now(),
            id,
            as_of,
            known_at,
            || SqliteChainReads(self.lock()),
        )
    }
}

/// The SQLite side of [`ChainReads`], on the store's locked connection.
struct SqliteChainReads<'a>(std::sync::MutexGuard<'a, rusqlite::Connection>);

impl ChainReads for SqliteChainReads<'_> {
    fn rowids(&mut self, chain: &[Fact]) -> Result<Vec<(i64, String)>> {
        let mut out = Vec::with_capacity(chain.len());
        let mut stmt = self
            .0
            .prepare("SELECT rowid FROM memory_items WHERE id = ?1")?;
        for f in chain {
            let rowid: i64 = stmt.query_row([&f.record.id], |r| r.get(0))?;
            out.push((rowid, f.record.id.clone()));
        }
        Ok(out)
    }

    fn admit(&mut self, filter: &Filter, candidates: &[i64]) -> Result<HashSet<i64>> {
        admit(&self.0, filter, candidates)
    }
}
