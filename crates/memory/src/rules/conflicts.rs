//! Conflicts between facts (issue 28, item 3), written once for every backend over the
//! store's contract: a fact whose predicate is **single-valued** (one object at a time:
//! where someone lives, works, their email, …) conflicts with each active, current fact of
//! the same user whose subject resolves to the same entity and whose object resolves to a
//! different one. Names resolve through the entity graph: folded
//! ([`super::entities::normalize_name`]) and mapped to their root, so an alias merged
//! into an entity is that entity, not a conflict.

use std::collections::HashMap;

use crate::error::Result;
use crate::rules::entities::normalize_name;
use crate::store::{EntityGraph, MemoryStore, SemanticMemory};
use crate::types::*;

/// Predicates that hold one object at a time unless configured otherwise
/// (`MemoryConfig::single_valued_predicates` adds to them).
pub const DEFAULT_SINGLE_VALUED: [&str; 10] = [
    "lives_in",
    "works_at",
    "email",
    "phone",
    "birthday",
    "seat_preference",
    "born_in",
    "nationality",
    "spouse",
    "employer",
];

/// A predicate folded for comparison: lowercase, spaces and hyphens as underscores.
pub fn fold_predicate(predicate: &str) -> String {
    predicate
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == ' ' || c == '-' { '_' } else { c })
        .collect()
}

/// True when `predicate` is single-valued: in the default list or in `extra`.
pub fn is_single_valued(predicate: &str, extra: &[String]) -> bool {
    let p = fold_predicate(predicate);
    DEFAULT_SINGLE_VALUED.contains(&p.as_str()) || extra.iter().any(|e| fold_predicate(e) == p)
}

/// The ids of the active, current facts `fact` conflicts with (oldest first; none when
/// its predicate is not single-valued or it has no subject or object).
pub fn conflicts_with<S: MemoryStore>(
    store: &S,
    fact: &Fact,
    extra: &[String],
) -> Result<Vec<String>> {
    let (Some(subject), Some(predicate), Some(object)) =
        (&fact.subject, &fact.predicate, &fact.object)
    else {
        return Ok(Vec::new());
    };
    if !is_single_valued(predicate, extra) {
        return Ok(Vec::new());
    }
    let entities = store.entities().list(&fact.record.user_id)?;
    let roots: HashMap<String, String> = entities
        .iter()
        .map(|e| {
            let root = e.merged_into.clone().unwrap_or_else(|| e.id.clone());
            (e.normalized_name.clone(), root)
        })
        .collect();
    let resolve = |name: &str| {
        let folded = normalize_name(name);
        roots.get(&folded).cloned().unwrap_or(folded)
    };
    let subject_root = resolve(subject);
    let object_root = resolve(object);
    let Some(entity) = entities.iter().find(|e| e.id == subject_root) else {
        return Ok(Vec::new());
    };
    let predicate = fold_predicate(predicate);
    let mut out = Vec::new();
    for id in store.entities().facts_for(&entity.id)? {
        if id == fact.record.id || fact.supersedes.as_deref() == Some(id.as_str()) {
            continue;
        }
        let other = store.semantic().get(&id)?;
        let current = other.record.deleted_at.is_none()
            && other.superseded_by.is_none()
            && other.trust.status.unwrap_or(MemoryStatus::Active) == MemoryStatus::Active;
        let same_question = other.predicate.as_deref().map(fold_predicate)
            == Some(predicate.clone())
            && other.subject.as_deref().map(resolve) == Some(subject_root.clone());
        let other_answer = other.object.as_deref().map(resolve);
        if current && same_question && other_answer.is_some_and(|o| o != object_root) {
            out.push(id);
        }
    }
    Ok(out)
}
