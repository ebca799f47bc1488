//! Annotations: what a person (or an agent) says about a run or one node instance — a
//! verdict (thumbs up or down), a score, labels and a comment — and the results of
//! `mindgate check` (kind [`AnnotationKind::Check`]).
//!
//! Each annotation is stored whole as JSON beside the columns the filters read (run, node,
//! kind, verdict, score, labels), in both backends (`annotations`, SQLite schema 5 and
//! PostgreSQL migration 6). An edit or a delete keeps what was there before in
//! `annotation_history` (one row per version), so nothing said is lost; a deleted
//! annotation is kept, marked `deletedAt`, and left out of the lists unless asked for.
//! The rules a new annotation or an edit must follow are checked once, here
//! ([`NewAnnotation::check`]), for every surface (HTTP, MCP, the CLI, an import).

mod backend;
mod unmigrated;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::{Result, StoreError};
pub use crate::model::Verdict;

pub(crate) use backend::{
    AnnotationDb, PG_TABLES, PgAnnotations, SQLITE_TABLES, SqliteAnnotations, pg_run_filter,
    sqlite_run_filter,
};
pub(crate) use unmigrated::{NoAnnotations, has_tables};

/// Most labels one annotation carries.
pub const MAX_LABELS: usize = 32;
/// Longest label (bytes).
pub const MAX_LABEL_BYTES: usize = 64;
/// Longest comment (bytes).
pub const MAX_COMMENT_BYTES: usize = 16 * 1024;
/// Largest check result (bytes of JSON).
pub const MAX_CHECK_BYTES: usize = 512 * 1024;
/// Most annotations one list answers.
pub const MAX_LIST: u32 = 1_000;

/// What an annotation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationKind {
    /// A person's or an agent's note: verdict, score, labels, comment.
    #[default]
    Note,
    /// The result of `mindgate check` (its rules and outcomes in `check`).
    Check,
}

impl AnnotationKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationKind::Note => "note",
            AnnotationKind::Check => "check",
        }
    }
}

/// Who wrote an annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthorKind {
    /// A person: the viewer or the CLI with the control token, or the CLI on the file.
    Person,
    /// An agent: the agent token (MCP, the SDKs).
    Agent,
}

/// Who wrote an annotation, and a name they gave (optional).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    /// Person or agent.
    pub kind: AuthorKind,
    /// A name (`$USER`, `ci`, an agent's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Author {
    /// A person, unnamed.
    pub fn person() -> Author {
        Author {
            kind: AuthorKind::Person,
            name: None,
        }
    }

    /// An agent, unnamed.
    pub fn agent() -> Author {
        Author {
            kind: AuthorKind::Agent,
            name: None,
        }
    }
}

/// One stored annotation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotation {
    /// Its id (`ann_` and 16 hex digits).
    pub id: String,
    /// The run it is about.
    pub run_id: String,
    /// The node it is about (`None`: the whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// The node instance it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// Note or check.
    #[serde(default)]
    pub kind: AnnotationKind,
    /// Thumbs up or down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// A score (0–1 unless it is named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The name of a named numeric score (any finite value then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_name: Option<String>,
    /// Free tags.
    #[serde(default)]
    pub labels: Vec<String>,
    /// A comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// A check's result (kind `check`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Value>,
    /// Who wrote it.
    pub author: Author,
    /// When it was made (epoch ms).
    pub created_at: i64,
    /// When it last changed (epoch ms).
    pub updated_at: i64,
    /// 1, then one more per edit or delete.
    pub version: u32,
    /// When it was deleted (kept in the history; left out of lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
}

/// What a new annotation says (its id, author and times are given by the store).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewAnnotation {
    /// The run.
    pub run_id: String,
    /// The node (`None`: the run).
    #[serde(default)]
    pub node_id: Option<String>,
    /// The node instance.
    #[serde(default)]
    pub instance_id: Option<String>,
    /// Note (default) or check.
    #[serde(default)]
    pub kind: AnnotationKind,
    /// Thumbs up or down.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// A score.
    #[serde(default)]
    pub score: Option<f64>,
    /// The name of a named numeric score.
    #[serde(default)]
    pub score_name: Option<String>,
    /// Free tags.
    #[serde(default)]
    pub labels: Vec<String>,
    /// A comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// A check's result.
    #[serde(default)]
    pub check: Option<Value>,
}

fn double<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> std::result::Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// An edit: each field given replaces the stored one (`null` clears it).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnnotationPatch {
    /// The verdict.
    #[serde(default, deserialize_with = "double")]
    pub verdict: Option<Option<Verdict>>,
    /// The score.
    #[serde(default, deserialize_with = "double")]
    pub score: Option<Option<f64>>,
    /// The score's name.
    #[serde(default, deserialize_with = "double")]
    pub score_name: Option<Option<String>>,
    /// The labels.
    #[serde(default)]
    pub labels: Option<Vec<String>>,
    /// The comment.
    #[serde(default, deserialize_with = "double")]
    pub comment: Option<Option<String>>,
}

/// Which annotations [`RunStore::list_annotations`] answers.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationFilter {
    /// Of this run.
    pub run_id: Option<String>,
    /// Of this node.
    pub node_id: Option<String>,
    /// Carrying this label.
    pub label: Option<String>,
    /// Of this kind.
    pub kind: Option<AnnotationKind>,
    /// Deleted ones too.
    #[serde(default)]
    pub include_deleted: bool,
    /// At most this many (default and cap [`MAX_LIST`]).
    pub limit: Option<u32>,
}

/// One earlier version of an annotation, kept when it was edited or deleted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationVersion {
    /// What happened to it: `edit` or `delete`.
    pub action: String,
    /// When (epoch ms).
    pub at: i64,
    /// Who did it.
    pub by: Author,
    /// The annotation as it was before.
    pub before: Annotation,
}

fn bad(message: impl Into<String>) -> StoreError {
    StoreError::BadAnnotation {
        message: message.into(),
    }
}

fn check_labels(labels: &[String]) -> Result<Vec<String>> {
    if labels.len() > MAX_LABELS {
        return Err(bad(format!("more than {MAX_LABELS} labels")));
    }
    let mut out: Vec<String> = Vec::with_capacity(labels.len());
    for label in labels {
        let label = label.trim();
        if label.is_empty() || label.len() > MAX_LABEL_BYTES || label.contains('\0') {
            return Err(bad(format!(
                "label {label:?}: a label is 1 to {MAX_LABEL_BYTES} bytes without NUL"
            )));
        }
        if !out.iter().any(|l| l == label) {
            out.push(label.to_owned());
        }
    }
    Ok(out)
}

fn check_text(field: &str, text: Option<&str>, max: usize) -> Result<()> {
    match text {
        Some(t) if t.len() > max || t.contains('\0') => {
            Err(bad(format!("{field}: at most {max} bytes without NUL")))
        }
        _ => Ok(()),
    }
}

fn check_score(score: Option<f64>, name: Option<&str>) -> Result<()> {
    match score {
        Some(s) if !s.is_finite() => Err(bad("score: not a finite number")),
        Some(s) if name.is_none() && !(0.0..=1.0).contains(&s) => Err(bad(format!(
            "score {s}: from 0 to 1 (give scoreName for another scale)"
        ))),
        _ => Ok(()),
    }
}

impl Annotation {
    /// Checks what it says (the rules every surface shares).
    pub(crate) fn check_fields(&mut self) -> Result<()> {
        self.labels = check_labels(&self.labels)?;
        check_text("comment", self.comment.as_deref(), MAX_COMMENT_BYTES)?;
        check_text("scoreName", self.score_name.as_deref(), MAX_LABEL_BYTES)?;
        check_score(self.score, self.score_name.as_deref())?;
        for (field, id) in [("nodeId", &self.node_id), ("instanceId", &self.instance_id)] {
            check_text(field, id.as_deref(), crate::MAX_ID_BYTES)?;
        }
        if self.instance_id.is_some() && self.node_id.is_none() {
            return Err(bad("instanceId needs nodeId"));
        }
        if let Some(check) = &self.check {
            if self.kind != AnnotationKind::Check {
                return Err(bad("check: only an annotation of kind check carries one"));
            }
            if check.to_string().len() > MAX_CHECK_BYTES {
                return Err(bad(format!("check: larger than {MAX_CHECK_BYTES} bytes")));
            }
        }
        let says_something = self.verdict.is_some()
            || self.score.is_some()
            || !self.labels.is_empty()
            || self
                .comment
                .as_deref()
                .is_some_and(|c| !c.trim().is_empty())
            || self.check.is_some();
        if !says_something {
            return Err(bad(
                "an annotation needs a verdict, a score, a label, a comment or a check result",
            ));
        }
        Ok(())
    }

    pub(crate) fn apply(&mut self, patch: AnnotationPatch) {
        if let Some(v) = patch.verdict {
            self.verdict = v;
        }
        if let Some(v) = patch.score {
            self.score = v;
        }
        if let Some(v) = patch.score_name {
            self.score_name = v;
        }
        if let Some(v) = patch.labels {
            self.labels = v;
        }
        if let Some(v) = patch.comment {
            self.comment = v;
        }
    }
}

/// A fresh annotation id.
pub(crate) fn new_id() -> String {
    format!("ann_{:016x}", rand::random::<u64>())
}
