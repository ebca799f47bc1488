//! The `memory_items` row: validation, insertion (trust gate, tags, full-text, vector,
//! ledger) and the mapping back to typed records.

use rusqlite::{OptionalExtension, Row, Transaction, params};
use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::sqlite::ledger;
use crate::time::format_ms;
use crate::trust;
use crate::types::*;

/// Longest text a record may carry, in characters.
pub const MAX_TEXT_CHARS: usize = 32_000;
/// Longest id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Most tags on a record.
pub const MAX_TAGS: usize = 64;

/// The columns read by [`ItemRow::from_row`], with the table alias `i`.
pub const ITEM_COLUMNS: &str = "i.rowid, i.id, i.kind, i.user_id, i.agent_id, i.session_id, \
    i.sensitivity, i.text, i.tags_json, i.provenance, i.status, i.quarantine_reason, \
    i.active_since, i.created_at, i.updated_at, i.deleted_at, i.delete_reason, i.archived_at, \
    i.importance, i.confidence, i.strength, i.last_accessed_at, i.valid_from, i.valid_to, \
    i.supersedes, i.superseded_by, i.superseded_at, i.subject, i.predicate, i.object, \
    i.started_at, i.ended_at, i.priority, i.success_count, i.salience, i.sequence, i.body_json";

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
}

impl ItemRow {
    /// Reads a row selected with [`ITEM_COLUMNS`].
    pub fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            rowid: r.get(0)?,
            id: r.get(1)?,
            kind: r.get(2)?,
            user_id: r.get(3)?,
            agent_id: r.get(4)?,
            session_id: r.get(5)?,
            sensitivity: r.get(6)?,
            text: r.get(7)?,
            tags_json: r.get(8)?,
            provenance: r.get(9)?,
            status: r.get(10)?,
            quarantine_reason: r.get(11)?,
            active_since: r.get(12)?,
            created_at: r.get(13)?,
            updated_at: r.get(14)?,
            deleted_at: r.get(15)?,
            delete_reason: r.get(16)?,
            archived_at: r.get(17)?,
            importance: r.get(18)?,
            confidence: r.get(19)?,
            strength: r.get(20)?,
            last_accessed_at: r.get(21)?,
            valid_from: r.get(22)?,
            valid_to: r.get(23)?,
            supersedes: r.get(24)?,
            superseded_by: r.get(25)?,
            superseded_at: r.get(26)?,
            subject: r.get(27)?,
            predicate: r.get(28)?,
            object: r.get(29)?,
            started_at: r.get(30)?,
            ended_at: r.get(31)?,
            priority: r.get(32)?,
            success_count: r.get(33)?,
            salience: r.get(34)?,
            sequence: r.get(35)?,
            body_json: r.get(36)?,
        })
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

/// Loads one row by id (any state).
pub fn load(tx: &rusqlite::Connection, id: &str) -> Result<Option<ItemRow>> {
    let sql = format!("SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.id = ?1");
    Ok(tx
        .query_row(&sql, params![id], ItemRow::from_row)
        .optional()?)
}

/// Loads one row by id and kind, or a `NotFound` error naming `what`.
pub fn load_kind(
    conn: &rusqlite::Connection,
    id: &str,
    kind: MemoryKind,
    what: &'static str,
) -> Result<ItemRow> {
    match load(conn, id)? {
        Some(row) if row.kind() == Some(kind) => Ok(row),
        _ => Err(MemoryError::not_found(what, id)),
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

/// Validates the common write fields, applies the trust gate, and inserts the row with its
/// tags, full-text entry and ledger rows. Returns the stored row.
pub fn insert(tx: &Transaction<'_>, now: i64, prefix: &str, mut ins: Insert) -> Result<ItemRow> {
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
    if load(tx, &id)?.is_some() {
        return Err(MemoryError::Duplicate(id));
    }
    let indexed = index_text(&ins.row);
    let verdict = trust::gate(meta.provenance, &indexed);
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
    tx.execute(
        "INSERT INTO memory_items (id, kind, user_id, agent_id, session_id, sensitivity, text, \
         tags_json, provenance, status, quarantine_reason, active_since, created_at, importance, \
         confidence, strength, valid_from, valid_to, supersedes, subject, predicate, object, \
         started_at, ended_at, priority, success_count, salience, sequence, body_json) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
         ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)",
        params![
            row.id,
            row.kind,
            row.user_id,
            row.agent_id,
            row.session_id,
            row.sensitivity,
            row.text,
            row.tags_json,
            row.provenance,
            row.status,
            row.quarantine_reason,
            row.active_since,
            row.created_at,
            row.importance,
            row.confidence,
            row.strength,
            row.valid_from,
            row.valid_to,
            row.supersedes,
            row.subject,
            row.predicate,
            row.object,
            row.started_at,
            row.ended_at,
            row.priority,
            row.success_count,
            row.salience,
            row.sequence,
            row.body_json,
        ],
    )?;
    row.rowid = tx.last_insert_rowid();
    for tag in &tags {
        tx.execute(
            "INSERT OR IGNORE INTO memory_tags (item_rowid, tag) VALUES (?1, ?2)",
            params![row.rowid, tag],
        )?;
    }
    tx.execute(
        "INSERT INTO memory_fts (rowid, text) VALUES (?1, ?2)",
        params![row.rowid, indexed],
    )?;
    let mut detail = json!({ "kind": row.kind, "status": row.status });
    if let (Some(extra), Some(obj)) = (ins.detail.take(), detail.as_object_mut())
        && let Value::Object(extra) = extra
    {
        obj.extend(extra);
    }
    ledger::append(tx, now, &row.id, "create", meta.by, None, Some(detail))?;
    if let Some(reason) = &verdict.reason {
        ledger::append(
            tx,
            now,
            &row.id,
            "quarantine",
            meta.by,
            Some(reason),
            Some(json!({ "flags": verdict.flags })),
        )?;
    }
    Ok(ins.row)
}
