//! The memory records of the Graphorin model (seed 003), JSON-stable with the seed's
//! camelCase field names. Timestamps are ISO-8601 strings (RFC 3339, UTC, millisecond
//! precision) exactly as they travel; the store keeps them as integers internally.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::{MessageContentValue, MessageRole, ToolCall};

use mindgate_errors::string_enum;

string_enum! {
    /// Kind of memory record: the six storage tiers plus the derived `insight`.
    MemoryKind {
        /// Labelled, char-bounded working blocks rendered into the prompt.
        Working = "working",
        /// Conversation messages.
        Session = "session",
        /// Summarised stretches of past activity.
        Episodic = "episodic",
        /// Atomic facts about the user or the world.
        Semantic = "semantic",
        /// Rules and induced procedures.
        Procedural = "procedural",
        /// Records shared with other agents.
        Shared = "shared",
        /// Reflection-synthesised observations citing their evidence.
        Insight = "insight",
    }
}

string_enum! {
    /// Where a memory came from. `user` and `tool` are first-party; `extraction`,
    /// `reflection` and `induction` are derived and land quarantined; `imported` is
    /// bulk-loaded from another store.
    MemoryProvenance {
        /// The human said it.
        User = "user",
        /// A tool the agent invoked returned it.
        Tool = "tool",
        /// A consolidator distilled it from a transcript.
        Extraction = "extraction",
        /// A synthesis pass inferred it.
        Reflection = "reflection",
        /// Distilled from a successful trajectory as a reusable workflow.
        Induction = "induction",
        /// Bulk-loaded from an external store.
        Imported = "imported",
        /// The agent asserted it through its memory tools (the default of an agent's write:
        /// an agent never speaks with a person's `user` voice). Active, ranked with the
        /// foreign discount — quarantined when it contradicts an active fact, as every
        /// provenance but `user` is (`crate::rules::conflicts`).
        Agent = "agent",
    }
}

impl MemoryProvenance {
    /// The provenance of a write by `by` that names none: `user` for a person, `agent` for
    /// the agent's memory tools, none for maintenance.
    pub fn default_for(by: Actor) -> Option<Self> {
        match by {
            Actor::User => Some(Self::User),
            Actor::Agent => Some(Self::Agent),
            Actor::Maintenance => None,
        }
    }

    /// Derived provenances land quarantined.
    pub fn is_derived(self) -> bool {
        matches!(self, Self::Extraction | Self::Reflection | Self::Induction)
    }

    /// First-party provenances (`user`, `tool`) rank without the foreign discount.
    pub fn is_first_party(self) -> bool {
        matches!(self, Self::User | Self::Tool)
    }
}

string_enum! {
    /// Retrieval-trust state: quarantine is a retrieval gate, never a delete.
    MemoryStatus {
        /// Eligible for default recall.
        Active = "active",
        /// Persisted and auditable, excluded from default recall until validated.
        Quarantined = "quarantined",
    }
}

string_enum! {
    /// Where a record stands, computed once from its row ([`RecordState::of`]) and shown by
    /// every surface (the inspector's pill, search hits, listings): a tombstone wins over a
    /// supersession, which wins over the retrieval-trust status.
    RecordState {
        /// Live, trusted, the current version.
        Active = "active",
        /// Live but held back from default recall until a person validates it.
        Quarantined = "quarantined",
        /// A newer version replaced it (kept for history and as-of reads).
        Superseded = "superseded",
        /// Forgotten, rejected, pruned or removed (a `deletedAt` tombstone).
        Tombstoned = "tombstoned",
    }
}

#[allow(clippy::derivable_impls)] // the enum comes from a macro
impl Default for RecordState {
    fn default() -> Self {
        Self::Active
    }
}

impl RecordState {
    /// The state of a record tombstoned or not, superseded or not, with `status`.
    pub fn of(deleted: bool, superseded: bool, status: MemoryStatus) -> Self {
        match (deleted, superseded, status) {
            (true, _, _) => Self::Tombstoned,
            (false, true, _) => Self::Superseded,
            (false, false, MemoryStatus::Quarantined) => Self::Quarantined,
            (false, false, MemoryStatus::Active) => Self::Active,
        }
    }
}

string_enum! {
    /// How sensitive a record is (the seed imports this type without defining it; Mindgate
    /// defines four levels).
    Sensitivity {
        /// May be shown anywhere.
        Public = "public",
        /// The default: the user's own memory.
        Internal = "internal",
        /// Personal data; shown to the user only.
        Confidential = "confidential",
        /// Credentials and the like; never rendered into a prompt.
        Secret = "secret",
    }
}

#[allow(clippy::derivable_impls)] // the enum comes from a macro
impl Default for Sensitivity {
    fn default() -> Self {
        Self::Internal
    }
}

string_enum! {
    /// Who made a change recorded in the history ledger.
    Actor {
        /// A person (the CLI, the viewer).
        User = "user",
        /// The agent, through its memory tools.
        Agent = "agent",
        /// A maintenance pass (decay, eviction, votes).
        Maintenance = "maintenance",
    }
}

#[allow(clippy::derivable_impls)] // the enum comes from a macro
impl Default for Actor {
    fn default() -> Self {
        Self::Agent
    }
}

string_enum! {
    /// A person's decision on a fact that contradicts active facts (`conflictsWith`).
    ConflictDecision {
        /// The new fact supersedes the ones it contradicts (it is validated when
        /// quarantined; they stop being current).
        SupersedeOld = "supersede_old",
        /// Both stay active; the conflict is marked resolved.
        KeepBoth = "keep_both",
        /// The new fact is rejected (a tombstone with the reason).
        Reject = "reject",
    }
}

/// A decision on a fact's conflicts as stored with the fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictDecided {
    /// What was decided.
    pub decision: ConflictDecision,
    /// The facts it was decided against (the `conflictsWith` of the decision).
    pub with: Vec<String>,
    /// When, ISO-8601.
    pub at: String,
    /// Who (always a person: `user`).
    pub by: Actor,
}

string_enum! {
    /// Role an entity plays in a fact's subject/predicate/object triple.
    EntityRole {
        /// The triple's subject.
        Subject = "subject",
        /// The triple's object.
        Object = "object",
    }
}

/// Fields shared by every memory record (the seed's `MemoryRecord`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryRecord {
    /// Record id.
    pub id: String,
    /// Record kind (the discriminator).
    pub kind: MemoryKind,
    /// Owner.
    pub user_id: String,
    /// Agent that wrote it, when scoped to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Session it belongs to, when scoped to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Sensitivity level.
    #[serde(default)]
    pub sensitivity: Sensitivity,
    /// When the store recorded it (transaction time), ISO-8601.
    pub created_at: String,
    /// Last change of its mutable state, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Soft-delete tombstone (forgotten, rejected, pruned), ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
    /// Free-form tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Where the record stands (derived from its row by the store, ignored on input).
    #[serde(default)]
    pub state: RecordState,
}

/// Trust state carried by facts, episodes, rules and insights (Mindgate additions to the
/// seed's `provenance`/`status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustState {
    /// Trust-provenance tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<MemoryProvenance>,
    /// Retrieval-trust state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MemoryStatus>,
    /// Why the row landed quarantined (derived provenance, or the injection heuristics hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine_reason: Option<String>,
    /// Why the row was tombstoned (forget / reject / prune reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_reason: Option<String>,
    /// Archived by maintenance (excluded from recall unless `includeArchived`), ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
}

/// Working-memory block: a labelled, char-bounded slot rendered into the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Block {
    /// Common fields (`kind` is `working`).
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// Label, unique per user among live blocks.
    pub label: String,
    /// What the block is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Current value.
    pub value: String,
    /// Maximum characters of `value`.
    pub char_limit: u32,
    /// Refuses writes when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// One semantic-memory fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    /// Common fields (`kind` is `semantic`).
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// The statement.
    pub text: String,
    /// Subject entity of the s/p/o triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Relation label of the triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<String>,
    /// Object entity of the triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Confidence in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Salience hint in `[0, 1]` (neutral 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    /// When the fact became true (valid time), ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// When the fact stopped being true (valid time), ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    /// Id of the fact this one supersedes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    /// Id of the fact that supersedes this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// When it was superseded (transaction time), ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_at: Option<String>,
    /// Decay strength (1 at write, +0.1 per counted recall: `crate::recall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f64>,
    /// Last recall, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_accessed_at: Option<String>,
    /// Retrieval context indexed with the fact but not part of the statement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Active facts this one contradicted when it was remembered or validated (same
    /// subject, a single-valued predicate, another object: `rules::conflicts`), stored with
    /// the fact; empty when it contradicted none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts_with: Vec<String>,
    /// A person's decision on those conflicts, once made (none while the conflict is open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict_decision: Option<Box<ConflictDecided>>,
    /// Trust state.
    #[serde(flatten)]
    pub trust: TrustState,
}

/// A summarised stretch of past activity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Episode {
    /// Common fields (`kind` is `episodic`).
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// The summary.
    pub summary: String,
    /// Earliest event, ISO-8601.
    pub started_at: String,
    /// Latest event, ISO-8601.
    pub ended_at: String,
    /// Importance in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    /// Trust state.
    #[serde(flatten)]
    pub trust: TrustState,
}

/// A procedural rule, or an induced procedure (with steps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Common fields (`kind` is `procedural`).
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// The standing order.
    pub text: String,
    /// When the rule applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Higher first.
    pub priority: f64,
    /// Value-abstracted steps of an induced procedure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<String>>,
    /// Variables abstracted from the trajectory (`{product}` …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<String>>,
    /// The concrete values each variable took in the trajectory (Mindgate's addition: what
    /// a person reviewing the procedure, or a reuse re-binding it, needs to see).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable_values: Option<BTreeMap<String, Vec<String>>>,
    /// Verifiable success criteria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<Vec<String>>,
    /// Verified successful reuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_count: Option<u32>,
    /// Trust state.
    #[serde(flatten)]
    pub trust: TrustState,
}

/// A reflection-synthesised observation with mandatory citations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Insight {
    /// Common fields (`kind` is `insight`).
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// The observation.
    pub text: String,
    /// Ids of the live records it was synthesised from (at least one).
    pub cites: Vec<String>,
    /// ExpeL-style salience counter (starts at 2, pruned at ≤ 0).
    pub salience: i64,
    /// Trust state.
    #[serde(flatten)]
    pub trust: TrustState,
}

/// One stored conversation message (the session tier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    /// Common fields (`kind` is `session`; `sessionId` is always set).
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// Position in the session, from 1.
    pub sequence: u64,
    /// Who spoke.
    pub role: MessageRole,
    /// The content, as pushed.
    pub content: MessageContentValue,
    /// Tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Trust state.
    #[serde(flatten)]
    pub trust: TrustState,
}

/// A canonical entity of the relation graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphEntity {
    /// Entity id.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// Display name as first observed.
    pub name: String,
    /// NFKC + case/space-folded key.
    pub normalized_name: String,
    /// The root this entity was merged into; absent on roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
    /// When it was minted, ISO-8601.
    pub created_at: String,
    /// Last merge/unmerge, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// Memory-tier counters surfaced to the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryMetadata {
    /// Live, active facts of the user.
    pub fact_count: u64,
    /// Live, active episodes of the user.
    pub episode_count: u64,
    /// Stored messages of the user.
    pub message_count: u64,
    /// Live, active rules.
    pub active_rule_count: u64,
    /// Live working blocks.
    pub working_block_count: u64,
    /// Last maintenance pass, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_consolidated_at: Option<String>,
    /// Free-form tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

/// Any searchable record, discriminated by its `kind` field.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum MemoryItem {
    /// A fact.
    Fact(Fact),
    /// An episode.
    Episode(Episode),
    /// A rule.
    Rule(Rule),
    /// An insight.
    Insight(Insight),
    /// A session message.
    Message(SessionMessage),
}

impl MemoryItem {
    /// The common fields.
    pub fn record(&self) -> &MemoryRecord {
        match self {
            Self::Fact(r) => &r.record,
            Self::Episode(r) => &r.record,
            Self::Rule(r) => &r.record,
            Self::Insight(r) => &r.record,
            Self::Message(r) => &r.record,
        }
    }

    /// The trust state.
    pub fn trust(&self) -> &TrustState {
        match self {
            Self::Fact(r) => &r.trust,
            Self::Episode(r) => &r.trust,
            Self::Rule(r) => &r.trust,
            Self::Insight(r) => &r.trust,
            Self::Message(r) => &r.trust,
        }
    }

    /// The record id.
    pub fn id(&self) -> &str {
        &self.record().id
    }

    /// The searchable text (fact/rule/insight text, episode summary, message text).
    pub fn text(&self) -> String {
        match self {
            Self::Fact(r) => r.text.clone(),
            Self::Episode(r) => r.summary.clone(),
            Self::Rule(r) => r.text.clone(),
            Self::Insight(r) => r.text.clone(),
            Self::Message(r) => r.content.plain_text(),
        }
    }
}

impl<'de> Deserialize<'de> for MemoryItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .and_then(MemoryKind::parse)
            .ok_or_else(|| D::Error::custom("a memory item needs a known `kind`"))?;
        let item = match kind {
            MemoryKind::Semantic => serde_json::from_value(value).map(Self::Fact),
            MemoryKind::Episodic => serde_json::from_value(value).map(Self::Episode),
            MemoryKind::Procedural => serde_json::from_value(value).map(Self::Rule),
            MemoryKind::Insight => serde_json::from_value(value).map(Self::Insight),
            MemoryKind::Session => serde_json::from_value(value).map(Self::Message),
            MemoryKind::Working | MemoryKind::Shared => {
                return Err(D::Error::custom(format!(
                    "`{kind}` records are not memory items"
                )));
            }
        };
        item.map_err(D::Error::custom)
    }
}
