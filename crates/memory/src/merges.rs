//! Entity merges, once for both backends: a merge moves the source's whole group (its
//! root and everything merged into it) under the target's root, single-level, with a
//! merge-ledger row holding each moved entity's previous root; an unmerge undoes the
//! latest live merge that moved an entity, exactly, and only while nothing it moved has
//! changed since. A backend provides the statements ([`MergeTable`]) and runs these inside
//! its write transaction.

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::types::{Actor, GraphEntity};

/// A live `merge` row of the merge ledger.
pub(crate) struct MergeRow {
    pub seq: i64,
    /// The root that was merged.
    pub entity_id: String,
    /// The root it was merged into.
    pub into_id: String,
    /// `[{"id", "mergedInto"}]`: every moved entity and its root before the merge.
    pub moved_json: String,
}

/// The statements of the entity and merge-ledger tables, as one backend writes them.
pub(crate) trait MergeTable {
    /// An entity by id (`NotFound` when none).
    fn load(&mut self, id: &str) -> Result<GraphEntity>;
    /// Ids of the root's group (the root and those merged into it), oldest first.
    fn group(&mut self, root: &str) -> Result<Vec<String>>;
    /// Moves the group of `from_root` under `into_root`.
    fn move_group(&mut self, from_root: &str, into_root: &str, now: i64) -> Result<()>;
    /// Sets one entity's root (`None`: it is a root).
    fn set_root(&mut self, id: &str, root: Option<&str>, now: i64) -> Result<()>;
    /// The live `merge` rows, newest first.
    fn live_merges(&mut self) -> Result<Vec<MergeRow>>;
    /// Marks a merge row undone.
    fn mark_undone(&mut self, seq: i64, now: i64) -> Result<()>;
    /// Appends a merge-ledger row.
    fn record(
        &mut self,
        now: i64,
        action: &str,
        entity_id: &str,
        into_id: &str,
        moved_json: &str,
        by: Actor,
    ) -> Result<()>;
    /// Appends a history-ledger row.
    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        detail: Value,
    ) -> Result<()>;
}

/// The entity's root (itself when it is one).
pub(crate) fn root_of(db: &mut dyn MergeTable, entity: GraphEntity) -> Result<GraphEntity> {
    match &entity.merged_into {
        Some(root) => db.load(root),
        None => Ok(entity),
    }
}

/// Merges the group of `from` into the group of `into`; returns the target root.
pub(crate) fn merge(
    db: &mut dyn MergeTable,
    now: i64,
    from: &str,
    into: &str,
    by: Actor,
) -> Result<GraphEntity> {
    let source = db.load(from)?;
    let source = root_of(db, source)?;
    let target = db.load(into)?;
    let target = root_of(db, target)?;
    if source.user_id != target.user_id {
        return Err(MemoryError::invalid(
            "into",
            "entities of different users never merge",
        ));
    }
    if source.id == target.id {
        return Err(MemoryError::Conflict(format!(
            "{from} and {into} are already one entity"
        )));
    }
    let moved = db.group(&source.id)?;
    let before: Vec<Value> = moved
        .iter()
        .map(|id| {
            let merged_into = if *id == source.id {
                Value::Null
            } else {
                Value::String(source.id.clone())
            };
            json!({ "id": id, "mergedInto": merged_into })
        })
        .collect();
    db.move_group(&source.id, &target.id, now)?;
    db.record(
        now,
        "merge",
        &source.id,
        &target.id,
        &Value::Array(before).to_string(),
        by,
    )?;
    db.ledger(
        now,
        &source.id,
        "merge",
        by,
        json!({ "into": target.id, "moved": moved }),
    )?;
    db.load(&target.id)
}

/// Undoes the latest live merge that moved `id`; returns the root it restored.
pub(crate) fn unmerge(
    db: &mut dyn MergeTable,
    now: i64,
    id: &str,
    by: Actor,
) -> Result<GraphEntity> {
    let entity = db.load(id)?;
    if entity.merged_into.is_none() {
        return Err(MemoryError::Conflict(format!(
            "entity {id} is a root; nothing to unmerge"
        )));
    }
    let source = Value::String(entity.id);
    let merge = db
        .live_merges()?
        .into_iter()
        .find(|m| {
            serde_json::from_str::<Vec<Value>>(&m.moved_json)
                .map(|moved| moved.iter().any(|e| e["id"] == source))
                .unwrap_or(false)
        })
        .ok_or_else(|| MemoryError::Conflict(format!("no merge of {id} to undo")))?;
    let moved: Vec<Value> = serde_json::from_str(&merge.moved_json).map_err(|e| {
        MemoryError::Conflict(format!("merge ledger row {} is unreadable: {e}", merge.seq))
    })?;
    for m in &moved {
        let mid = m["id"].as_str().unwrap_or_default();
        if db.load(mid)?.merged_into.as_deref() != Some(merge.into_id.as_str()) {
            return Err(MemoryError::Conflict(format!(
                "entity {mid} changed after that merge; undo the later merges first"
            )));
        }
    }
    for m in &moved {
        db.set_root(
            m["id"].as_str().unwrap_or_default(),
            m["mergedInto"].as_str(),
            now,
        )?;
    }
    db.mark_undone(merge.seq, now)?;
    db.record(
        now,
        "unmerge",
        &merge.entity_id,
        &merge.into_id,
        &merge.moved_json,
        by,
    )?;
    db.ledger(
        now,
        &merge.entity_id,
        "unmerge",
        by,
        json!({ "from": merge.into_id, "undoes": merge.seq }),
    )?;
    db.load(&merge.entity_id)
}
