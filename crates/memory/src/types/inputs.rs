//! What callers hand the store to write: one input type per record kind.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::records::{Actor, MemoryProvenance, Sensitivity};

/// Who owns a write: user, and optionally agent and session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Owner.
    pub user_id: String,
    /// Agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl Scope {
    /// A user-wide scope.
    pub fn user(user_id: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            ..Self::default()
        }
    }

    /// The same scope within a session.
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// The same scope for an agent.
    pub fn with_agent(mut self, agent_id: impl Into<String>) -> Self {
        self.agent_id = Some(agent_id.into());
        self
    }
}

/// Fields every record write carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteMeta {
    /// Owner scope.
    #[serde(flatten)]
    pub scope: Scope,
    /// Caller-chosen id (1–128 printable characters); minted when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Sensitivity.
    #[serde(default)]
    pub sensitivity: Sensitivity,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Provenance (absent: first-party).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<MemoryProvenance>,
    /// Who writes it (for the ledger).
    #[serde(default)]
    pub by: Actor,
}

impl WriteMeta {
    /// A write in `scope` by the agent, first-party.
    pub fn new(scope: Scope) -> Self {
        Self {
            scope,
            ..Self::default()
        }
    }
}

/// A fact to remember.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewFact {
    /// Scope, id, tags, provenance, actor.
    #[serde(flatten)]
    pub meta: WriteMeta,
    /// The statement.
    pub text: String,
    /// Subject entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Relation label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<String>,
    /// Object entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Confidence in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Importance in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    /// Valid from, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// Valid to, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    /// Text indexed and embedded with the fact but not part of it (contextual retrieval:
    /// e.g. the message a conversational turn replies to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl NewFact {
    /// A first-party fact by the agent.
    pub fn new(scope: Scope, text: impl Into<String>) -> Self {
        Self {
            meta: WriteMeta::new(scope),
            text: text.into(),
            ..Self::default()
        }
    }
}

/// An episode to store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewEpisode {
    /// Scope, id, tags, provenance, actor.
    #[serde(flatten)]
    pub meta: WriteMeta,
    /// The summary.
    pub summary: String,
    /// Earliest event, ISO-8601.
    pub started_at: String,
    /// Latest event, ISO-8601.
    pub ended_at: String,
    /// Importance in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
}

/// A rule to author, or an induced procedure (with `steps`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewRule {
    /// Scope, id, tags, provenance, actor.
    #[serde(flatten)]
    pub meta: WriteMeta,
    /// The standing order.
    pub text: String,
    /// When it applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Higher first.
    #[serde(default)]
    pub priority: f64,
    /// Steps of an induced procedure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<String>>,
    /// Variables of an induced procedure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<String>>,
    /// The concrete values each variable took in the trajectory it was induced from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable_values: Option<BTreeMap<String, Vec<String>>>,
    /// Success criteria of an induced procedure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<Vec<String>>,
}

/// An insight to persist (needs at least one citation of a live record).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewInsight {
    /// Scope, id, tags, provenance (default `reflection`), actor.
    #[serde(flatten)]
    pub meta: WriteMeta,
    /// The observation.
    pub text: String,
    /// Ids of the supporting records.
    pub cites: Vec<String>,
}

/// A working block to create or overwrite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewBlock {
    /// Owner scope.
    #[serde(flatten)]
    pub scope: Scope,
    /// Label.
    pub label: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The value.
    pub value: String,
    /// Character limit (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub char_limit: Option<u32>,
    /// Refuse later writes.
    #[serde(default)]
    pub read_only: bool,
    /// Who writes it.
    #[serde(default)]
    pub by: Actor,
}

/// A person's decision on a fact's open conflicts (`POST /api/memory/records/{id}/conflict`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecideArgs {
    /// `supersede_old`, `keep_both` or `reject`.
    pub decision: super::records::ConflictDecision,
    /// Why (the ledger's reason; the tombstone's when rejecting). Default: the decision
    /// and the ids it contradicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Validate text the injection heuristics flag (supersede or keep both a quarantined
    /// fact), recorded as forced.
    #[serde(default)]
    pub force: bool,
}
