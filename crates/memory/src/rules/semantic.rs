//! The semantic tier's rules: what a new fact may be and what superseding one means.

use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::rules::row::{ItemRow, MAX_TEXT_CHARS, check_id, check_text, check_unit};
use crate::time::parse_opt;
use crate::types::*;

/// Validates a new fact and builds its row.
pub(crate) fn fact_row(fact: &NewFact) -> Result<ItemRow> {
    check_text("text", &fact.text)?;
    check_unit("importance", fact.importance)?;
    check_unit("confidence", fact.confidence)?;
    let valid_from = parse_opt("validFrom", fact.valid_from.as_deref())?;
    let valid_to = parse_opt("validTo", fact.valid_to.as_deref())?;
    if let (Some(from), Some(to)) = (valid_from, valid_to)
        && from >= to
    {
        return Err(MemoryError::invalid("validTo", "must be after validFrom"));
    }
    if let Some(c) = &fact.context
        && c.chars().count() > MAX_TEXT_CHARS
    {
        return Err(MemoryError::invalid(
            "context",
            format!("at most {} characters", MAX_TEXT_CHARS),
        ));
    }
    for (field, value) in [
        ("subject", &fact.subject),
        ("predicate", &fact.predicate),
        ("object", &fact.object),
    ] {
        if let Some(v) = value {
            check_id(field, v)?;
        }
    }
    Ok(ItemRow {
        kind: MemoryKind::Semantic.as_str().to_owned(),
        text: fact.text.clone(),
        importance: fact.importance,
        confidence: fact.confidence,
        valid_from,
        valid_to,
        subject: fact.subject.clone(),
        predicate: fact.predicate.clone(),
        object: fact.object.clone(),
        body_json: fact
            .context
            .as_ref()
            .map(|c| json!({ "context": c }).to_string()),
        ..ItemRow::default()
    })
}

/// Refuses to supersede a forgotten fact, one already superseded (only the newest version
/// is), or another user's — the rule both backends supersede with.
pub(crate) fn check_supersedable(old: &ItemRow, new: &NewFact) -> Result<()> {
    let old_id = &old.id;
    if old.deleted_at.is_some() {
        return Err(MemoryError::Conflict(format!("fact {old_id} is forgotten")));
    }
    if let Some(by) = &old.superseded_by {
        return Err(MemoryError::Conflict(format!(
            "fact {old_id} is already superseded by {by}; supersede the newest version"
        )));
    }
    if old.user_id != new.meta.scope.user_id {
        return Err(MemoryError::invalid(
            "userId",
            "must be the superseded fact's owner",
        ));
    }
    Ok(())
}

/// Makes `row` the next version of `old`: it names `old`, and it arrives quarantined when
/// `old` is (superseding a quarantined fact never promotes it: only a person's validation
/// does).
pub(crate) fn next_version(old: &ItemRow, mut row: ItemRow) -> ItemRow {
    row.supersedes = Some(old.id.clone());
    if old.status() == MemoryStatus::Quarantined {
        row.status = MemoryStatus::Quarantined.as_str().to_owned();
        row.quarantine_reason = Some(format!("supersedes quarantined fact {}", old.id));
    }
    row
}
