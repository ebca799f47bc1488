//! The wire shapes of `/api/memory/...` the client sends and reads, in the API's camelCase.
//!
//! They mirror the argument and view types of `mindgate_memory::agent` (the one core the
//! server's handlers call) without depending on that crate: the SDK speaks only the HTTP
//! contract documented in `docs/http-api.md` ("Memory"). Records stay [`serde_json::Value`]
//! so a new record field never breaks an agent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Options of a memory search: every field of `GET /api/memory/search`.
///
/// Build with [`SearchOptions::new`] and set what you need; `None` fields are left to the
/// server's defaults. `tags` and `kinds` are sent comma-separated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchOptions {
    /// The text to search for (required, not blank).
    pub query: String,
    /// Owner; `None` → the client's user, else the server's `--memory-user`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Agent scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Session scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Most hits returned (server limit 1,000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<usize>,
    /// Only records carrying every one of these tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Start of the date range (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_from: Option<String>,
    /// End of the date range (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_to: Option<String>,
    /// Include archived records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_archived: Option<bool>,
    /// Include quarantined records (inspector use).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_quarantined: Option<bool>,
    /// Valid time: facts true then (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Transaction time: what the store held then (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_at: Option<String>,
    /// Record kinds: `semantic`, `episodic`, `procedural`, `insight`, `session`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    /// `hybrid`, `lexical` or `vector`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Candidates fetched per signal before fusion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_pool: Option<usize>,
    /// Weight of the vector signal (finite, ≥ 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_weight: Option<f64>,
    /// Least cosine similarity a vector candidate needs to count as evidence, in [0, 1]
    /// (default: the server's, calibrated for its embedder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_floor: Option<f64>,
    /// Apply time decay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decay: Option<bool>,
    /// Expand through the entity graph.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expand_entities: Option<bool>,
}

impl SearchOptions {
    /// Options searching for `query`, everything else at the server's defaults.
    pub fn new(query: impl Into<String>) -> Self {
        SearchOptions {
            query: query.into(),
            ..SearchOptions::default()
        }
    }

    /// Sets the number of hits.
    #[must_use]
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.top_k = Some(top_k);
        self
    }

    /// Sets the owner.
    #[must_use]
    pub fn user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }

    /// The query-string pairs of `GET /api/memory/search` (lists comma-separated).
    pub(crate) fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = vec![("query", self.query.clone())];
        let mut text = |key: &'static str, value: &Option<String>| {
            if let Some(v) = value {
                pairs.push((key, v.clone()));
            }
        };
        text("userId", &self.user_id);
        text("agentId", &self.agent_id);
        text("sessionId", &self.session_id);
        text("dateFrom", &self.date_from);
        text("dateTo", &self.date_to);
        text("asOf", &self.as_of);
        text("knownAt", &self.known_at);
        text("mode", &self.mode);
        let lists = [("tags", &self.tags), ("kinds", &self.kinds)];
        let numbers = [
            ("topK", self.top_k.map(|n| n.to_string())),
            ("candidatePool", self.candidate_pool.map(|n| n.to_string())),
            ("vectorWeight", self.vector_weight.map(|w| w.to_string())),
            ("vectorFloor", self.vector_floor.map(|f| f.to_string())),
        ];
        let flags = [
            ("includeArchived", self.include_archived),
            ("includeQuarantined", self.include_quarantined),
            ("decay", self.decay),
            ("expandEntities", self.expand_entities),
        ];
        for (key, list) in lists {
            if let Some(list) = list {
                pairs.push((key, list.join(",")));
            }
        }
        for (key, number) in numbers {
            if let Some(n) = number {
                pairs.push((key, n));
            }
        }
        for (key, flag) in flags {
            if let Some(f) = flag {
                pairs.push((key, f.to_string()));
            }
        }
        pairs
    }
}

/// One search hit (`HitView`): the record, its score and the signals behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    /// Record id.
    pub id: String,
    /// Record kind (`semantic`, `episodic`, …).
    pub kind: String,
    /// Its text.
    pub text: String,
    /// Final score (higher first).
    pub score: f64,
    /// The signals behind the score (`bm25`, `vector`, `fused` or `rrf`, `trust`, `decay`, `hop`).
    #[serde(default)]
    pub signals: BTreeMap<String, f64>,
    /// Where it came from (`user`, `extraction`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
    /// Retrieval-trust state (`validated`, `quarantined`, …).
    pub status: String,
    /// The viewer route of the record (`#/memory/<kind>/<id>`).
    #[serde(default)]
    pub link: String,
    /// The whole record, as the server sent it.
    #[serde(default)]
    pub record: Value,
}

/// A fact to remember (`POST /api/memory/facts`; also the new version of a supersede).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RememberArgs {
    /// Owner; `None` → the client's user, else the server's `--memory-user`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Agent scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Session scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The fact.
    pub text: String,
    /// Subject of an s/p/o triple.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Predicate of an s/p/o triple.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicate: Option<String>,
    /// Object of an s/p/o triple.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Start of valid time (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// End of valid time (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    /// Importance in 0..=1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    /// Confidence in 0..=1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// `user` (default), `extraction`, `reflection` or `induction` (the last three land quarantined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
}

impl RememberArgs {
    /// A fact with this text, everything else at the server's defaults.
    pub fn new(text: impl Into<String>) -> Self {
        RememberArgs {
            text: text.into(),
            ..RememberArgs::default()
        }
    }
}

/// The body of `POST /api/memory/records/:id/supersede`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SupersedeBody<'a> {
    pub reason: &'a str,
    #[serde(flatten)]
    pub fact: &'a RememberArgs,
}

/// A record's history (`GET /api/memory/records/:id/history`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// A fact's whole supersession chain (other records: the record alone).
    #[serde(default)]
    pub chain: Vec<Value>,
    /// The ledger of every version (`HistoryEntry`: `{seq, at, subjectId, action, actor, …}`).
    #[serde(default)]
    pub events: Vec<Value>,
}
