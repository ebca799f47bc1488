//! The insight tier's rules: citations are mandatory, deduplicated and must name live
//! records of the insight's user.

use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::rules::row::{Insert, ItemRow, check_id, check_text};
use crate::types::*;

/// Salience of a new insight.
pub const START_SALIENCE: i64 = 2;
/// Most citations of one insight.
const MAX_CITES: usize = 256;

/// Validates a new insight: its deduplicated citations and its write fields (provenance
/// `reflection` unless told otherwise).
pub(crate) fn prepare(insight: &NewInsight) -> Result<(Vec<String>, WriteMeta)> {
    check_text("text", &insight.text)?;
    if insight.cites.is_empty() {
        return Err(MemoryError::invalid(
            "cites",
            "an insight needs at least one citation",
        ));
    }
    if insight.cites.len() > MAX_CITES {
        return Err(MemoryError::invalid(
            "cites",
            format!("at most {MAX_CITES}"),
        ));
    }
    let mut cites = Vec::new();
    for c in &insight.cites {
        check_id("cites", c)?;
        if !cites.contains(c) {
            cites.push(c.clone());
        }
    }
    let mut meta = insight.meta.clone();
    meta.provenance.get_or_insert(MemoryProvenance::Reflection);
    Ok((cites, meta))
}

/// What an insight of `text` citing `cites` inserts, once
/// each citation names a live record of its user (`load` reads a record by id, in the
/// caller's transaction) — the rule both backends insert insights with.
pub(crate) fn insight_insert(
    text: &str,
    cites: &[String],
    meta: &WriteMeta,
    mut load: impl FnMut(&str) -> Result<Option<ItemRow>>,
) -> Result<Insert> {
    for c in cites {
        let row = load(c)?
            .ok_or_else(|| MemoryError::invalid("cites", format!("{c:?} names no record")))?;
        if row.deleted_at.is_some() || row.superseded_by.is_some() {
            return Err(MemoryError::invalid(
                "cites",
                format!("{c:?} is not a live record"),
            ));
        }
        if row.user_id != meta.scope.user_id {
            return Err(MemoryError::invalid(
                "cites",
                format!("{c:?} belongs to another user"),
            ));
        }
    }
    Ok(Insert {
        row: ItemRow {
            kind: MemoryKind::Insight.as_str().to_owned(),
            text: text.to_owned(),
            salience: Some(START_SALIENCE),
            body_json: Some(json!({ "cites": cites }).to_string()),
            ..ItemRow::default()
        },
        meta: meta.clone(),
        detail: Some(json!({ "cites": cites })),
    })
}
