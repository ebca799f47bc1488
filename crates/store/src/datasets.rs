//! Datasets: named, versioned collections of examples — `{input, expected?, metadata,
//! source}` — made from stored runs (a node instance's input and output, or a run's agent
//! input and final output: [`source`]) or written by hand, exported and imported as JSON
//! Lines ([`jsonl`]).
//!
//! Every edit (examples added, updated or removed, an import, a delete) makes a new
//! version of the dataset, and every earlier version stays readable: an example row keeps
//! the version it entered and the version it left (`dataset_examples.from_version` /
//! `to_version`), so version `v` is the rows with `from_version <= v` and no
//! `to_version <= v`. The log of versions (`dataset_versions`) says what each did, when
//! and by whom. Both backends (SQLite schema 6, PostgreSQL migration 7). The rules a
//! dataset name or an example must follow are checked once, here, for every surface
//! (HTTP, MCP, the CLI, an import).

mod backend;
pub mod jsonl;
pub mod source;
mod unmigrated;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::annotations::Author;
use crate::error::{Result, StoreError};

pub(crate) use backend::{
    DatasetDb, DatasetRow, PG_TABLES, PgDatasets, SQLITE_TABLES, SqliteDatasets,
};
pub(crate) use unmigrated::{NoDatasets, has_tables};

/// Longest dataset name (bytes).
pub const MAX_NAME_BYTES: usize = 128;
/// Longest example id (bytes).
pub const MAX_EXAMPLE_ID_BYTES: usize = 64;
/// Largest input, expected output or metadata of one example (bytes of JSON each).
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;
/// Most examples one version of a dataset holds.
pub const MAX_EXAMPLES: usize = 100_000;
/// Most examples one add or one import brings.
pub const MAX_BATCH: usize = 10_000;

/// Where an example came from: a run, or one node instance of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExampleSource {
    /// The run.
    pub run_id: String,
    /// The node (`None`: the whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// The node instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
}

/// One example of a dataset, as stored and exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Example {
    /// Its id (`ex_` and 16 hex digits when the store made it), kept by edits and imports.
    pub id: String,
    /// What goes in.
    pub input: Value,
    /// What should come out (absent: nothing expected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// Free fields (an object).
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The run (and node instance) it was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ExampleSource>,
    /// Who added it.
    pub added_by: Author,
    /// When it was added or last changed (epoch ms).
    pub updated_at: i64,
}

/// What a new example says (its id, author and time are given by the store).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewExample {
    /// What goes in.
    pub input: Value,
    /// What should come out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// Free fields (an object).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
    /// The run it was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ExampleSource>,
}

/// What an add brings: examples written out, or one taken from a run (`from`: the run,
/// or a node instance of it, [`source::example_of`]) with `metadata` beside it — the body
/// of `POST /api/datasets/{name}/examples`, and what every surface sends.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddExamples {
    /// Examples as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<NewExample>,
    /// A run, or a node (and instance) of it, to take an example from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<ExampleSource>,
    /// The metadata of the example taken `from` the run.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn double<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Option<Value>>, D::Error> {
    Option::<Value>::deserialize(d).map(Some)
}

/// An edit of one example: each field given replaces the stored one (`expected: null`
/// clears it).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExamplePatch {
    /// The input (`null` is refused, not ignored).
    #[serde(default, deserialize_with = "present")]
    pub input: Option<Value>,
    /// The expected output.
    #[serde(default, deserialize_with = "double")]
    pub expected: Option<Option<Value>>,
    /// The metadata.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// A dataset at one version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dataset {
    /// Its name.
    pub name: String,
    /// The version shown.
    pub version: u32,
    /// Its newest version.
    pub latest: u32,
    /// How many examples the version shown holds.
    pub examples: u64,
    /// When it was made (epoch ms).
    pub created_at: i64,
    /// When it last changed (epoch ms).
    pub updated_at: i64,
    /// When it was deleted (its history is kept; lists leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
}

/// What one version of a dataset did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatasetVersion {
    /// The version it made.
    pub version: u32,
    /// `add`, `update`, `remove`, `import` or `delete`.
    pub action: String,
    /// The examples it touched (for an import or a delete: none listed).
    pub example_ids: Vec<String>,
    /// How many examples the version holds.
    pub examples: u64,
    /// When (epoch ms).
    pub at: i64,
    /// Who.
    pub by: Author,
}

pub(crate) fn bad(message: impl Into<String>) -> StoreError {
    StoreError::BadDataset {
        message: message.into(),
    }
}

pub(crate) fn missing(message: impl Into<String>) -> StoreError {
    StoreError::NoDataset {
        message: message.into(),
    }
}

/// Checks a dataset name: 1 to [`MAX_NAME_BYTES`] bytes of letters, digits, `.`, `_` and
/// `-`, starting with a letter or a digit (it is a path segment of the HTTP API and a
/// file name's natural stem).
pub fn check_name(name: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if name.len() > MAX_NAME_BYTES || !starts_well || !name.chars().all(ok_char) {
        return Err(bad(format!(
            "dataset name {name:?}: 1 to {MAX_NAME_BYTES} letters, digits, '.', '_' or '-', \
             starting with a letter or a digit"
        )));
    }
    Ok(())
}

fn check_value(field: &str, v: &Value) -> Result<()> {
    if v.to_string().len() > MAX_VALUE_BYTES {
        return Err(bad(format!(
            "{field}: larger than {MAX_VALUE_BYTES} bytes of JSON"
        )));
    }
    Ok(())
}

fn check_id_text(field: &str, id: &str, max: usize) -> Result<()> {
    if id.is_empty() || id.len() > max || id.contains('\0') {
        return Err(bad(format!("{field}: 1 to {max} bytes without NUL")));
    }
    Ok(())
}

impl Example {
    /// Checks what it says (the rules every surface shares).
    pub(crate) fn check_fields(&self) -> Result<()> {
        let id_ok = self
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if self.id.is_empty() || self.id.len() > MAX_EXAMPLE_ID_BYTES || !id_ok {
            return Err(bad(format!(
                "example id {:?}: 1 to {MAX_EXAMPLE_ID_BYTES} letters, digits, '_', '-' or '.'",
                self.id
            )));
        }
        if self.input.is_null() {
            return Err(bad("input: an example needs an input (not null)"));
        }
        check_value("input", &self.input)?;
        if let Some(e) = &self.expected {
            check_value("expected", e)?;
        }
        check_value("metadata", &Value::Object(self.metadata.clone()))?;
        if let Some(s) = &self.source {
            check_id_text("source.runId", &s.run_id, crate::MAX_RUN_ID_BYTES)?;
            for (field, id) in [
                ("source.nodeId", &s.node_id),
                ("source.instanceId", &s.instance_id),
            ] {
                if let Some(id) = id {
                    check_id_text(field, id, crate::MAX_ID_BYTES)?;
                }
            }
            if s.instance_id.is_some() && s.node_id.is_none() {
                return Err(bad("source.instanceId needs source.nodeId"));
            }
        }
        Ok(())
    }

    /// A new example by `by`, now, under a fresh id.
    pub(crate) fn made(new: NewExample, by: &Author, now: i64) -> Example {
        Example {
            id: new_id(),
            // `null` is what an absent or empty expected output reads as.
            expected: new.expected.filter(|e| !e.is_null()),
            input: new.input,
            metadata: new.metadata,
            source: new.source,
            added_by: by.clone(),
            updated_at: now,
        }
    }

    pub(crate) fn apply(&mut self, patch: ExamplePatch) {
        if let Some(v) = patch.input {
            self.input = v;
        }
        if let Some(v) = patch.expected {
            self.expected = v.filter(|e| !e.is_null());
        }
        if let Some(v) = patch.metadata {
            self.metadata = v;
        }
    }
}

/// A fresh example id.
fn new_id() -> String {
    format!("ex_{:016x}", rand::random::<u64>())
}
