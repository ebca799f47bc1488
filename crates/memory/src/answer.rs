//! What a search answers on every surface (HTTP, MCP, CLI): its hits, the time filters it
//! applied (echoed as the instants the store read them), and — when a time filter left
//! nothing of what the query matches — why nothing came back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::backend::Memory;
use crate::error::Result;
use crate::route::viewer_route;
use crate::store::MemoryStore;
use crate::time::{format_ms, parse_opt};
use crate::types::*;

/// A search's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    /// The hits, best first.
    pub hits: Vec<HitView>,
    /// The valid-time instant applied (ISO-8601, as read), when the search had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// The transaction-time instant applied (ISO-8601, as read), when the search had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_at: Option<String>,
    /// Why there are no hits when the time filters excluded records the query matches
    /// (none when the query matches nothing at any time, or when there are hits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_because: Option<String>,
}

impl SearchAnswer {
    /// The hits alone (no time filter echoed).
    pub fn hits_only(hits: Vec<HitView>) -> Self {
        Self {
            hits,
            as_of: None,
            known_at: None,
            empty_because: None,
        }
    }

    /// One line naming the time filters applied (`asOf …, knownAt …`), if any.
    pub fn time_text(&self) -> Option<String> {
        let parts: Vec<String> = [("asOf", &self.as_of), ("knownAt", &self.known_at)]
            .into_iter()
            .filter_map(|(name, at)| at.as_ref().map(|t| format!("{name} {t}")))
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Runs `options` and answers with the time filters it applied; when it finds nothing
/// under a time filter, the same query without the time filters (read-only: nothing is
/// recalled) says how many records it would match, and so why nothing came back.
pub fn answer(store: &Memory, options: &MemorySearchOptions) -> Result<SearchAnswer> {
    let as_of = parse_opt("asOf", options.as_of.as_deref())?.map(format_ms);
    let known_at = parse_opt("knownAt", options.known_at.as_deref())?.map(format_ms);
    let hits: Vec<HitView> = store
        .search(options)?
        .into_iter()
        .map(HitView::of)
        .collect();
    let empty_because = if hits.is_empty() && (as_of.is_some() || known_at.is_some()) {
        let mut timeless = options.clone();
        timeless.as_of = None;
        timeless.known_at = None;
        timeless.recall_by = None;
        let matched = store.search(&timeless)?.len();
        (matched > 0).then(|| excluded_text(matched, as_of.as_deref(), known_at.as_deref()))
    } else {
        None
    };
    Ok(SearchAnswer {
        hits,
        as_of,
        known_at,
        empty_because,
    })
}

fn excluded_text(matched: usize, as_of: Option<&str>, known_at: Option<&str>) -> String {
    let records = if matched == 1 {
        "record matches"
    } else {
        "records match"
    };
    let when = match (as_of, known_at) {
        (Some(a), Some(k)) => format!("valid at asOf {a} as known at knownAt {k}"),
        (Some(a), None) => format!("valid at asOf {a}"),
        (None, Some(k)) => format!("stored and believed at knownAt {k}"),
        (None, None) => "left".to_owned(),
    };
    format!("{matched} {records} the query without the time filters, but none was {when}")
}

/// What the agent surfaces show of one hit: the record, why it was recalled (`signals`),
/// its trust state, and where the viewer shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HitView {
    /// Record id.
    pub id: String,
    /// Record kind.
    pub kind: MemoryKind,
    /// Its text (fact, summary, rule, insight or message text).
    pub text: String,
    /// Final score (higher first).
    pub score: f64,
    /// The signals behind the score (`bm25`, `vector`, `fused` or `rrf`, `trust`, `decay`, `hop`).
    pub signals: BTreeMap<String, f64>,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<MemoryProvenance>,
    /// Retrieval-trust state.
    pub status: MemoryStatus,
    /// The viewer route of the record (`#/memory/<kind>/<id>`).
    pub link: String,
    /// The whole record.
    pub record: MemoryItem,
}

impl HitView {
    /// The view of a hit.
    pub fn of(hit: MemoryHit) -> Self {
        let record = hit.record;
        Self {
            id: record.id().to_owned(),
            kind: record.record().kind,
            text: record.text(),
            score: hit.score,
            signals: hit.signals,
            provenance: record.trust().provenance,
            status: record.trust().status.unwrap_or(MemoryStatus::Active),
            link: viewer_route(record.record().kind, record.id()),
            record,
        }
    }

    /// The signals as one readable line, `name value` pairs in name order
    /// (`bm25 3.120, fused 0.871, trust 1.000`): what the CLI and the MCP text show.
    pub fn signals_text(&self) -> String {
        self.signals
            .iter()
            .map(|(name, value)| format!("{name} {value:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
