//! The `memory_items` row shared by every backend: the typed record it maps to, the
//! checks of the common write fields, id minting, the indexed text, and what the trust gate
//! decides before a backend writes the row ([`prepare_insert`]).

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::time::format_ms;
use crate::trust;
use crate::types::*;

/// Longest text a record may carry, in characters.
pub const MAX_TEXT_CHARS: usize = 32_000;
/// Longest id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Most tags on a record.
pub const MAX_TAGS: usize = 64;

/// One row of `memory_items`, every column.
#[derive(Debug, Clone, Default)]
pub struct ItemRow {
    pub rowid: i64,
    pub id: String,
    pub kind: String,
    pub user_id: String,
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
    pub sensitivity: String,
    pub text: String,
    pub tags_json: Option<String>,
    pub provenance: Option<String>,
    pub status: String,
    pub quarantine_reason: Option<String>,
    pub active_since: Option<i64>,
    pub created_at: i64,
    pub updated_at: Option<i64>,
    pub deleted_at: Option<i64>,
    pub delete_reason: Option<String>,
    pub archived_at: Option<i64>,
    pub importance: Option<f64>,
    pub confidence: Option<f64>,
    pub strength: f64,
    pub last_accessed_at: Option<i64>,
    pub valid_from: Option<i64>,
    pub valid_to: Option<i64>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    pub superseded_at: Option<i64>,
    pub subject: Option<String>,
    pub predicate: Option<String>,
    pub object: Option<String>,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub priority: Option<f64>,
    pub success_count: Option<i64>,
    pub salience: Option<i64>,
    pub sequence: Option<i64>,
    pub body_json: Option<String>,
    /// The ids of the active facts this fact contradicted, as a JSON array (none: no conflict).
    pub conflicts_json: Option<String>,
    /// A person's decision on those conflicts ([`ConflictDecided`] as JSON), once made.
    pub conflict_decision_json: Option<String>,
}

impl ItemRow {
    /// The ids of the facts this one was found to contradict (its stored `conflictsWith`;
    /// none when nothing is stored or what is stored does not read as a list of ids).
    pub fn conflicts_with(&self) -> Vec<String> {
        self.conflicts_json
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or_default()
    }

    /// The kind.
    pub fn kind(&self) -> Option<MemoryKind> {
        MemoryKind::parse(&self.kind)
    }

    /// The status.
    pub fn status(&self) -> MemoryStatus {
        MemoryStatus::parse(&self.status).unwrap_or(MemoryStatus::Active)
    }

    /// The provenance.
    pub fn provenance(&self) -> Option<MemoryProvenance> {
        self.provenance.as_deref().and_then(MemoryProvenance::parse)
    }

    fn body(&self) -> Value {
        self.body_json
            .as_deref()
            .and_then(|b| serde_json::from_str(b).ok())
            .unwrap_or(Value::Null)
    }

    fn record(&self, kind: MemoryKind) -> MemoryRecord {
        MemoryRecord {
            id: self.id.clone(),
            kind,
            user_id: self.user_id.clone(),
            agent_id: self.agent_id.clone(),
            session_id: self.session_id.clone(),
            sensitivity: Sensitivity::parse(&self.sensitivity).unwrap_or_default(),
            created_at: format_ms(self.created_at),
            updated_at: self.updated_at.map(format_ms),
            deleted_at: self.deleted_at.map(format_ms),
            tags: self
                .tags_json
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok()),
            state: RecordState::of(
                self.deleted_at.is_some(),
                self.superseded_by.is_some(),
                self.status(),
            ),
        }
    }

    fn trust(&self) -> TrustState {
        TrustState {
            provenance: self.provenance(),
            status: Some(self.status()),
            quarantine_reason: self.quarantine_reason.clone(),
            delete_reason: self.delete_reason.clone(),
            archived_at: self.archived_at.map(format_ms),
        }
    }

    /// The typed record.
    pub fn to_item(&self) -> Result<MemoryItem> {
        let kind = self.kind().ok_or_else(|| {
            MemoryError::Conflict(format!(
                "record {} has unknown kind {:?}",
                self.id, self.kind
            ))
        })?;
        let body = self.body();
        let strings = |key: &str| -> Option<Vec<String>> {
            body.get(key)
                .and_then(|v| serde_json::from_value(v.clone()).ok())
        };
        Ok(match kind {
            MemoryKind::Semantic => MemoryItem::Fact(Fact {
                record: self.record(kind),
                text: self.text.clone(),
                subject: self.subject.clone(),
                predicate: self.predicate.clone(),
                object: self.object.clone(),
                confidence: self.confidence,
                importance: self.importance,
                valid_from: self.valid_from.map(format_ms),
                valid_to: self.valid_to.map(format_ms),
                supersedes: self.supersedes.clone(),
                superseded_by: self.superseded_by.clone(),
                superseded_at: self.superseded_at.map(format_ms),
                strength: Some(self.strength),
                last_accessed_at: self.last_accessed_at.map(format_ms),
                context: body
                    .get("context")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                conflicts_with: self.conflicts_with(),
                conflict_decision: self
                    .conflict_decision_json
                    .as_deref()
                    .and_then(|d| serde_json::from_str(d).ok()),
                trust: self.trust(),
            }),
            MemoryKind::Episodic => MemoryItem::Episode(Episode {
                record: self.record(kind),
                summary: self.text.clone(),
                started_at: format_ms(self.started_at.unwrap_or(self.created_at)),
                ended_at: format_ms(self.ended_at.unwrap_or(self.created_at)),
                importance: self.importance,
                trust: self.trust(),
            }),
            MemoryKind::Procedural => MemoryItem::Rule(Rule {
                record: self.record(kind),
                text: self.text.clone(),
                condition: body
                    .get("condition")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                priority: self.priority.unwrap_or(0.0),
                steps: strings("steps"),
                variables: strings("variables"),
                variable_values: body
                    .get("variableValues")
                    .and_then(|v| serde_json::from_value(v.clone()).ok()),
                success_criteria: strings("successCriteria"),
                success_count: self.success_count.and_then(|c| u32::try_from(c).ok()),
                trust: self.trust(),
            }),
            MemoryKind::Insight => MemoryItem::Insight(Insight {
                record: self.record(kind),
                text: self.text.clone(),
                cites: strings("cites").unwrap_or_default(),
                salience: self.salience.unwrap_or(0),
                trust: self.trust(),
            }),
            MemoryKind::Session => MemoryItem::Message(SessionMessage {
                record: self.record(kind),
                sequence: self
                    .sequence
                    .and_then(|s| u64::try_from(s).ok())
                    .unwrap_or(0),
                role: body
                    .get("role")
                    .and_then(Value::as_str)
                    .and_then(MessageRole::parse)
                    .unwrap_or(MessageRole::User),
                content: body
                    .get("content")
                    .and_then(|c| serde_json::from_value(c.clone()).ok())
                    .unwrap_or_else(|| MessageContentValue::Text(self.text.clone())),
                tool_calls: body
                    .get("toolCalls")
                    .and_then(|c| serde_json::from_value(c.clone()).ok()),
                tool_call_id: body
                    .get("toolCallId")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                trust: self.trust(),
            }),
            MemoryKind::Working | MemoryKind::Shared => {
                return Err(MemoryError::Conflict(format!(
                    "record {} has kind {kind}, which is not stored as an item",
                    self.id
                )));
            }
        })
    }
}

/// Checks a required text field.
pub fn check_text(field: &'static str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(MemoryError::invalid(field, "must not be empty"));
    }
    let len = text.chars().count();
    if len > MAX_TEXT_CHARS {
        return Err(MemoryError::invalid(
            field,
            format!("{len} characters; at most {MAX_TEXT_CHARS}"),
        ));
    }
    Ok(())
}

/// Checks an id or scope key.
pub fn check_id(field: &'static str, id: &str) -> Result<()> {
    let len = id.chars().count();
    if len == 0 || len > MAX_ID_CHARS {
        return Err(MemoryError::invalid(
            field,
            format!("must have 1 to {MAX_ID_CHARS} characters"),
        ));
    }
    if id.chars().any(char::is_control) {
        return Err(MemoryError::invalid(
            field,
            "must not contain control characters",
        ));
    }
    Ok(())
}

/// Checks a score in `[0, 1]`.
pub fn check_unit(field: &'static str, value: Option<f64>) -> Result<()> {
    match value {
        Some(v) if !v.is_finite() || !(0.0..=1.0).contains(&v) => Err(MemoryError::invalid(
            field,
            format!("{v} is not a number in [0, 1]"),
        )),
        _ => Ok(()),
    }
}

/// Checks a scope.
pub fn check_scope(scope: &Scope) -> Result<()> {
    check_id("userId", &scope.user_id)?;
    if let Some(a) = &scope.agent_id {
        check_id("agentId", a)?;
    }
    if let Some(s) = &scope.session_id {
        check_id("sessionId", s)?;
    }
    Ok(())
}

/// Mints a record id with a kind prefix.
pub fn mint_id(prefix: &str) -> String {
    format!(
        "{prefix}_{:016x}{:08x}",
        rand::random::<u64>(),
        rand::random::<u32>()
    )
}

/// The text indexed (and scanned by the trust gate) for a row: its text plus any
/// retrieval `context` of its body.
pub fn index_text(row: &ItemRow) -> String {
    let context = row
        .body_json
        .as_deref()
        .and_then(|b| serde_json::from_str::<Value>(b).ok())
        .and_then(|b| b.get("context").and_then(Value::as_str).map(str::to_owned));
    match context {
        Some(c) => format!("{}\n{c}", row.text),
        None => row.text.clone(),
    }
}

/// What [`insert`] writes: the row (without rowid) and the text the trust gate scans.
pub struct Insert {
    pub row: ItemRow,
    pub meta: WriteMeta,
    /// Extra ledger detail.
    pub detail: Option<Value>,
}

/// What a backend writes for an [`Insert`] once [`prepare_insert`] accepted it.
pub struct Prepared {
    /// The row to store (without rowid), status and quarantine reason decided.
    pub row: ItemRow,
    /// Sorted, deduplicated tags.
    pub tags: Vec<String>,
    /// The full-text indexed text ([`index_text`]).
    pub indexed: String,
    /// The ledger's `create` detail.
    pub create_detail: Value,
    /// The ledger's `quarantine` row (reason, detail) when the gate quarantined it.
    pub quarantine: Option<(String, Value)>,
    /// Who writes it.
    pub by: Actor,
}

/// Validates the common write fields of `ins` (scope, tags, id) and applies the trust
/// gate; `exists` says whether an id is already taken. The one rule both backends insert
/// with.
pub fn prepare_insert(
    now: i64,
    prefix: &str,
    mut ins: Insert,
    exists: impl FnOnce(&str) -> Result<bool>,
) -> Result<Prepared> {
    let meta = &ins.meta;
    check_scope(&meta.scope)?;
    if meta.tags.len() > MAX_TAGS {
        return Err(MemoryError::invalid("tags", format!("at most {MAX_TAGS}")));
    }
    for tag in &meta.tags {
        check_id("tags", tag)?;
    }
    let id = match &meta.id {
        Some(id) => {
            check_id("id", id)?;
            id.clone()
        }
        None => mint_id(prefix),
    };
    if exists(&id)? {
        return Err(MemoryError::Duplicate(id));
    }
    let indexed = index_text(&ins.row);
    // A row that arrives quarantined (a new version of a quarantined fact) stays so.
    let inherited = (ins.row.status() == MemoryStatus::Quarantined)
        .then(|| ins.row.quarantine_reason.clone())
        .flatten();
    let verdict = trust::gate(meta.provenance, &indexed).inheriting(inherited);
    let row = &mut ins.row;
    row.id = id;
    row.user_id = meta.scope.user_id.clone();
    row.agent_id = meta.scope.agent_id.clone();
    row.session_id = meta.scope.session_id.clone();
    row.sensitivity = meta.sensitivity.as_str().to_owned();
    row.provenance = meta.provenance.map(|p| p.as_str().to_owned());
    row.status = verdict.status.as_str().to_owned();
    row.quarantine_reason = verdict.reason.clone();
    row.active_since = (verdict.status == MemoryStatus::Active).then_some(now);
    row.created_at = now;
    row.strength = 1.0;
    let mut tags = meta.tags.clone();
    tags.sort();
    tags.dedup();
    row.tags_json = (!tags.is_empty()).then(|| serde_json::to_string(&tags).unwrap_or_default());
    let mut create_detail = json!({ "kind": row.kind, "status": row.status });
    if let (Some(extra), Some(obj)) = (ins.detail.take(), create_detail.as_object_mut())
        && let Value::Object(extra) = extra
    {
        obj.extend(extra);
    }
    let quarantine = verdict
        .reason
        .clone()
        .map(|reason| (reason, json!({ "flags": verdict.flags })));
    Ok(Prepared {
        by: ins.meta.by,
        row: ins.row,
        tags,
        indexed,
        create_detail,
        quarantine,
    })
}

/// The typed record as its tier's type, or `NotFound` naming the tier.
pub(crate) fn fact_of(item: MemoryItem) -> Result<Fact> {
    match item {
        MemoryItem::Fact(f) => Ok(f),
        other => Err(MemoryError::not_found("fact", other.id())),
    }
}

/// The typed record as its tier's type, or `NotFound` naming the tier.
pub(crate) fn episode_of(item: MemoryItem) -> Result<Episode> {
    match item {
        MemoryItem::Episode(e) => Ok(e),
        other => Err(MemoryError::not_found("episode", other.id())),
    }
}

/// The typed record as its tier's type, or `NotFound` naming the tier.
pub(crate) fn rule_of(item: MemoryItem) -> Result<Rule> {
    match item {
        MemoryItem::Rule(r) => Ok(r),
        other => Err(MemoryError::not_found("rule", other.id())),
    }
}

/// The typed record as its tier's type, or `NotFound` naming the tier.
pub(crate) fn insight_of(item: MemoryItem) -> Result<Insight> {
    match item {
        MemoryItem::Insight(i) => Ok(i),
        other => Err(MemoryError::not_found("insight", other.id())),
    }
}
