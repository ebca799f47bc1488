//! A fact's versions at an instant, on both time axes: which versions of its supersession
//! chain the store believed at `knownAt` (transaction time — exactly the filter a search
//! with that `knownAt` applies), and which version held at `asOf` (valid time) as known
//! then. The inspector's as-of / known-at sliders ask this; they never re-derive it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::rules::filter::Filter;
use crate::rules::temporal;
use crate::time::{format_ms, parse_opt};
use crate::types::*;

/// What [`SqliteMemory::fact_at`] answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FactAt {
    /// The valid-time instant asked about (now when not given), ISO-8601.
    pub as_of: String,
    /// The transaction-time instant asked about (now when not given), ISO-8601.
    pub known_at: String,
    /// Versions of the chain the store believed at `knownAt` (what a search with that
    /// `knownAt` could return), oldest first.
    pub believed: Vec<String>,
    /// The version that held at `asOf` as known at `knownAt`: the newest version stored,
    /// trusted and not tombstoned by `knownAt` whose validity window (`validFrom` ..
    /// `validTo`, open ends unbounded) contains `asOf`. A later version thus ends an earlier
    /// one's validity where its own begins. `None` when no version held then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<String>,
}

/// The two reads the belief rule needs from a backend.
pub(crate) trait ChainReads {
    /// `(rowid, id)` of every version, in chain order.
    fn rowids(&mut self, chain: &[Fact]) -> Result<Vec<(i64, String)>>;
    /// The rowids among `candidates` that pass `filter` (the search's own admission).
    fn admit(&mut self, filter: &Filter, candidates: &[i64]) -> Result<HashSet<i64>>;
}

/// The rule of `fact_at`, written once for every backend: `believed` is what a search
/// with that `knownAt` admits; `valid` the newest version stored, trusted and not
/// tombstoned by `knownAt` whose validity window contains `asOf`. `history` reads the
/// chain; `reads` opens the backend's connection once the chain is known.
pub(crate) fn fact_at_rule<R: ChainReads>(
    history: impl FnOnce(&str) -> Result<Vec<Fact>>,
    now: i64,
    id: &str,
    as_of: Option<&str>,
    known_at: Option<&str>,
    reads: impl FnOnce() -> R,
) -> Result<FactAt> {
    let as_of_ms = parse_opt("asOf", as_of)?;
    let known_ms = parse_opt("knownAt", known_at)?;
    let chain = history(id)?;
    let a = as_of_ms.unwrap_or(now);
    let k = known_ms.unwrap_or(now);
    let Some(first) = chain.first() else {
        return Ok(FactAt {
            as_of: format_ms(a),
            known_at: format_ms(k),
            believed: Vec::new(),
            valid: None,
        });
    };
    let options = MemorySearchOptions {
        user_id: Some(first.record.user_id.clone()),
        known_at: known_ms.map(format_ms),
        ..MemorySearchOptions::default()
    };
    let filter = Filter::from_options(&options, &[MemoryKind::Semantic])?;
    let mut reads = reads();
    let rowids = reads.rowids(&chain)?;
    let ids: Vec<i64> = rowids.iter().map(|(r, _)| *r).collect();
    let admitted = reads.admit(&filter, &ids)?;
    let believed = rowids
        .iter()
        .filter(|(r, _)| admitted.contains(r))
        .map(|(_, id)| id.clone())
        .collect();
    let valid_then = reads.admit(&temporal::answer_at(a, Some(k)), &ids)?;
    let valid = rowids
        .iter()
        .find(|(r, _)| valid_then.contains(r))
        .map(|(_, id)| id.clone());
    Ok(FactAt {
        as_of: format_ms(a),
        known_at: format_ms(k),
        believed,
        valid,
    })
}
