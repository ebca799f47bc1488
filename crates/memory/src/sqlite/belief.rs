//! A fact's versions at an instant, on both time axes: which versions of its supersession
//! chain the store believed at `knownAt` (transaction time — exactly the filter a search
//! with that `knownAt` applies), and which version held at `asOf` (valid time) as known
//! then. The inspector's as-of / known-at sliders ask this; they never re-derive it.

use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};

use super::search::admit;
use crate::error::Result;
use crate::hybrid::Filter;
use crate::sqlite::SqliteMemory;
use crate::store::{MemoryStore, SemanticMemory};
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

impl SqliteMemory {
    /// The versions of fact `id`'s chain believed at `known_at` and valid at `as_of` (both
    /// ISO-8601, default now). Errors: unknown id or not a fact (`NotFound`), an unparsable
    /// time (`Invalid`).
    pub fn fact_at(&self, id: &str, as_of: Option<&str>, known_at: Option<&str>) -> Result<FactAt> {
        let as_of_ms = parse_opt("asOf", as_of)?;
        let known_ms = parse_opt("knownAt", known_at)?;
        let chain = self.semantic().history(id)?.chain;
        let now = self.now();
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
        let conn = self.lock();
        let rowids = chain_rowids(&conn, &chain)?;
        let admitted = admit(
            &conn,
            &filter,
            &rowids.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
        )?;
        let believed = rowids
            .iter()
            .filter(|(r, _)| admitted.contains(r))
            .map(|(_, id)| id.clone())
            .collect();
        let valid_then = valid_at(&conn, &rowids, a, k)?;
        let valid = chain
            .iter()
            .rev()
            .find(|f| valid_then.contains(&f.record.id))
            .map(|f| f.record.id.clone());
        Ok(FactAt {
            as_of: format_ms(a),
            known_at: format_ms(k),
            believed,
            valid,
        })
    }
}

/// `(rowid, id)` of every version, in chain order.
fn chain_rowids(conn: &rusqlite::Connection, chain: &[Fact]) -> Result<Vec<(i64, String)>> {
    let mut out = Vec::with_capacity(chain.len());
    let mut stmt = conn.prepare("SELECT rowid FROM memory_items WHERE id = ?1")?;
    for f in chain {
        let rowid: i64 = stmt.query_row([&f.record.id], |r| r.get(0))?;
        out.push((rowid, f.record.id.clone()));
    }
    Ok(out)
}

/// Ids among `rows` stored, trusted and not tombstoned by `k` whose validity window
/// contains `a`.
fn valid_at(
    conn: &rusqlite::Connection,
    rows: &[(i64, String)],
    a: i64,
    k: i64,
) -> Result<std::collections::HashSet<String>> {
    if rows.is_empty() {
        return Ok(Default::default());
    }
    let list = rows
        .iter()
        .map(|(r, _)| r.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let sql = format!(
        "SELECT id FROM memory_items WHERE rowid IN ({list}) \
         AND created_at <= ?1 AND (deleted_at IS NULL OR deleted_at > ?1) \
         AND active_since IS NOT NULL AND active_since <= ?1 \
         AND (valid_from IS NULL OR valid_from <= ?2) AND (valid_to IS NULL OR valid_to > ?2)"
    );
    let mut stmt = conn.prepare(&sql)?;
    let ids = stmt
        .query_map(
            params_from_iter([SqlValue::Integer(k), SqlValue::Integer(a)]),
            |r| r.get::<_, String>(0),
        )?
        .collect::<rusqlite::Result<_>>()?;
    Ok(ids)
}
