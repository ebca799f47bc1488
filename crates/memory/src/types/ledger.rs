//! The history ledger and the small answer types of store operations.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::records::{Actor, ConflictDecided, Fact};

/// One row of the append-only history ledger: what changed, when, why and by whom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// Ledger position (increasing).
    pub seq: i64,
    /// When, ISO-8601.
    pub at: String,
    /// The record, block, attachment or entity the change is about.
    pub subject_id: String,
    /// What happened: `create`, `supersede`, `superseded`, `forget`, `quarantine`, `validate`,
    /// `reject`, `archive`, `access`, `vote`, `outcome`, `promote`, `merge`, `unmerge`,
    /// `block.upsert`, `block.delete`, `attach`, `detach`, `reembed`, `evict`, `conflict`
    /// (a fact's conflicts found and stored), `conflict.decide` (a person's decision on them).
    pub action: String,
    /// Who.
    pub actor: Actor,
    /// Why, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Action-specific detail (previous values, counts, forced-by …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
}

/// What `session.push` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PushReceipt {
    /// The stored message's id.
    pub message_id: String,
    /// Its position in the session, from 1.
    pub sequence: u64,
    /// When it was stored, ISO-8601.
    pub persisted_at: String,
}

/// A fact's supersession chain and ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FactHistory {
    /// Every version, oldest first (the asked-for fact is one of them).
    pub chain: Vec<Fact>,
    /// Every ledger row about any version, in order.
    pub events: Vec<HistoryEntry>,
}

/// What a decision on a fact's conflicts answers: the decision as stored, the fact after it
/// and the facts it contradicted, after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictOutcome {
    /// The decision.
    pub decided: ConflictDecided,
    /// The fact whose conflicts were decided.
    pub fact: Fact,
    /// The facts it contradicted.
    pub others: Vec<Fact>,
}
