//! Search options and hits.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::records::{Actor, MemoryItem, MemoryKind};

/// A date range over `createdAt` (both ends inclusive), ISO-8601.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DateRange {
    /// Earliest `createdAt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Latest `createdAt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// Which ranked lists a search fuses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SearchMode {
    /// Lexical and vector lists fused with reciprocal rank fusion.
    #[default]
    Hybrid,
    /// BM25 over FTS5 only.
    Lexical,
    /// Cosine over the active embedder's vectors only.
    Vector,
}

/// How a hybrid search fuses its lexical and vector lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FusionMethod {
    /// Reciprocal rank fusion: each list adds `weight / (60 + rank)` (signal `rrf`; `fused`
    /// is it divided by the best score possible, 0–1).
    Rrf,
    /// Score fusion: each list's scores (−bm25, cosine) min-max normalised over the
    /// candidates it returned (signals `bm25Norm`, `vectorNorm`), then weighted and divided
    /// by the weights of the lists that returned candidates (signal `fused`, 0–1).
    Score,
}

/// Search options shared across tiers (the seed's, plus Mindgate's scope, kinds,
/// transaction time and fusion knobs). Every filter is applied inside the queries,
/// before `topK`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemorySearchOptions {
    /// Free text.
    pub query: String,
    /// Hits to return (default 10, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<usize>,
    /// Only records carrying every one of these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Only records created in this range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_range: Option<DateRange>,
    /// Also return archived records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_archived: Option<bool>,
    /// Also return quarantined records (inspector / validation path only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_quarantined: Option<bool>,
    /// Valid-time read: facts valid at this instant, episodes started by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Transaction-time read: what the store held at this instant (created before it,
    /// not yet superseded, forgotten, rejected or archived; trusted then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_at: Option<String>,
    /// Owner scope (required by the store for every search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Session scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only these kinds (default: facts, episodes, rules, insights and messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<MemoryKind>>,
    /// Which lists to fuse (default hybrid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SearchMode>,
    /// Candidates taken from each list before fusion (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_pool: Option<usize>,
    /// Weight of the vector list in the fusion, the lexical list weighing 1 (default: the
    /// store's, chosen for its embedder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_weight: Option<f64>,
    /// How the two lists are fused (default: the store's, chosen for its embedder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion: Option<FusionMethod>,
    /// Least cosine similarity a vector candidate needs to count as evidence, in [0, 1]
    /// (default: the store's, calibrated for its embedder: builtin 0.1, MiniLM 0.2). A
    /// record with no lexical match and a cosine below it is never a hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_floor: Option<f64>,
    /// Multiply scores by the decay retention (signal `decay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay: Option<bool>,
    /// Add facts one hop away over the entity graph (signal `hop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expand_entities: Option<bool>,
    /// Lexical hits whose words expand the query for a second lexical pass, fused with
    /// the first ([`crate::feedback`]; 0 off; default: the store's). In-process only.
    #[serde(skip)]
    #[schemars(skip)]
    pub query_feedback: Option<usize>,
    /// Share of a hit's score its neighbours get: the facts remembered just before and
    /// after it in the same session ([`crate::neighbours`]; 0 off; default: the store's).
    /// In-process only.
    #[serde(skip)]
    #[schemars(skip)]
    pub neighbour_weight: Option<f64>,
    /// Who recalls: the returned facts are strengthened once per this principal per
    /// [`crate::recall::RECALL_WINDOW_MS`]; `None` (the default, and an unauthenticated
    /// read) changes nothing. Never read from a request body or query: the surface sets it
    /// from the caller's credential.
    #[serde(skip)]
    #[schemars(skip)]
    pub recall_by: Option<Actor>,
}

impl MemorySearchOptions {
    /// Options for `query` within one user's memory.
    pub fn new(user_id: impl Into<String>, query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            user_id: Some(user_id.into()),
            ..Self::default()
        }
    }
}

/// One retrieval hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    /// The record.
    pub record: MemoryItem,
    /// Final score (higher first).
    pub score: f64,
    /// The signals behind `score`, a flat map of numbers (every key is documented in
    /// `docs/memory-search.md`): `bm25` (raw lexical score) and `bm25Norm`, `vector`
    /// (cosine) and `vectorNorm`, `fused` (0–1), `rrf` (rank fusion), `trust` (the
    /// multiplier), `decay` (when on), `hop` (entity expansion), `citedBelow`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub signals: BTreeMap<String, f64>,
}
