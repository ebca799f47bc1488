//! The entity graph's writes, once for both backends: resolving a name to its root (the
//! folded key first, then — with a real embedder — the nearest root by name embedding at
//! or above the threshold, the new surface form minted as an alias merged into it, with a
//! ledger row, so it can be unmerged; else a new root), linking a fact's subject and
//! object, and merges: a merge moves the source's whole group (its
//! root and everything merged into it) under the target's root, single-level, with a
//! merge-ledger row holding each moved entity's previous root; an unmerge undoes the
//! latest live merge that moved an entity, exactly, and only while nothing it moved has
//! changed since. A backend provides the statements ([`EntityTable`]) and runs these inside
//! its write transaction.

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::rules::entities::{Resolver, normalize_name};
use crate::rules::row::{ItemRow, check_id, mint_id};
use crate::store::EntityGraph;
use crate::types::{Actor, EntityRole, GraphEntity};
use crate::vectors::dot;

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
pub(crate) trait EntityTable {
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
        reason: Option<&str>,
        detail: Value,
    ) -> Result<()>;
    /// The user's entity with the folded name `normalized`: a root first, else the oldest.
    fn find_named(&mut self, user_id: &str, normalized: &str) -> Result<Option<GraphEntity>>;
    /// `(id, name vector)` of the user's roots under the embedder `key`, oldest first.
    fn root_vectors(&mut self, user_id: &str, key: &str) -> Result<Vec<(String, Vec<f32>)>>;
    /// Inserts an entity.
    fn insert_entity(&mut self, entity: &NewEntityRow<'_>, now: i64) -> Result<()>;
    /// Stores an entity's name vector under `key`.
    fn store_entity_vector(&mut self, id: &str, key: &str, vector: &[f32]) -> Result<()>;
    /// Links a fact to an entity in a role (replacing the role's previous link).
    fn link(&mut self, fact_id: &str, entity_id: &str, role: EntityRole) -> Result<()>;
    /// Every entity of the user, oldest first.
    fn list(&mut self, user_id: &str) -> Result<Vec<GraphEntity>>;
    /// Ids of the live, current facts linked to any entity of the root's group, oldest first.
    fn facts_of_group(&mut self, root: &str) -> Result<Vec<String>>;
}

/// A backend's entity graph: its resolver and its connection.
pub(crate) trait EntityStore {
    /// The resolver of this store ([`Resolver::of`]).
    fn resolver(&self) -> Resolver<'_>;
    /// Runs `f` over the store's connection (no transaction: reads).
    fn read_entities<T>(&self, f: impl FnOnce(&mut dyn EntityTable) -> Result<T>) -> Result<T>;
    /// Runs `f` in one write transaction at the instant `now` it is given.
    fn write_entities<T>(
        &self,
        f: impl FnOnce(&mut dyn EntityTable, i64) -> Result<T>,
    ) -> Result<T>;
}

/// The entity graph of a store.
pub(crate) struct Entities<'a, S>(pub &'a S);

impl<S: EntityStore> EntityGraph for Entities<'_, S> {
    fn resolve(&self, user_id: &str, name: &str) -> Result<GraphEntity> {
        let resolver = self.0.resolver();
        self.0
            .write_entities(|db, now| resolve(db, now, user_id, name, resolver))
    }

    fn get(&self, id: &str) -> Result<GraphEntity> {
        self.0.read_entities(|db| db.load(id))
    }

    fn list(&self, user_id: &str) -> Result<Vec<GraphEntity>> {
        self.0.read_entities(|db| db.list(user_id))
    }

    fn merge(&self, from: &str, into: &str, by: Actor) -> Result<GraphEntity> {
        self.0
            .write_entities(|db, now| merge(db, now, from, into, by))
    }

    fn unmerge(&self, id: &str, by: Actor) -> Result<GraphEntity> {
        self.0.write_entities(|db, now| unmerge(db, now, id, by))
    }

    fn facts_for(&self, entity_id: &str) -> Result<Vec<String>> {
        self.0.read_entities(|db| {
            let entity = db.load(entity_id)?;
            let root = root_of(db, entity)?;
            db.facts_of_group(&root.id)
        })
    }
}

/// An entity row to insert.
pub(crate) struct NewEntityRow<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub name: &'a str,
    pub normalized_name: &'a str,
    pub merged_into: Option<&'a str>,
}

/// The closest root of the user by name embedding, with its cosine.
fn nearest_root(
    db: &mut dyn EntityTable,
    user_id: &str,
    key: &str,
    vec: &[f32],
) -> Result<Option<(String, f32)>> {
    let mut best: Option<(String, f32)> = None;
    for (id, other) in db.root_vectors(user_id, key)? {
        if other.len() != vec.len() {
            continue;
        }
        let cos = dot(&other, vec);
        if best.as_ref().is_none_or(|(_, b)| cos > *b) {
            best = Some((id, cos));
        }
    }
    Ok(best)
}

/// The root entity for `name` (see the module docs).
pub(crate) fn resolve(
    db: &mut dyn EntityTable,
    now: i64,
    user_id: &str,
    name: &str,
    resolver: Resolver<'_>,
) -> Result<GraphEntity> {
    check_id("userId", user_id)?;
    check_id("name", name.trim())?;
    let norm = normalize_name(name);
    if norm.is_empty() {
        return Err(MemoryError::invalid("name", "must not be empty"));
    }
    if let Some(entity) = db.find_named(user_id, &norm)? {
        return root_of(db, entity);
    }
    let mut alias_of = None;
    let mut vector = None;
    if let Some((embedder, key)) = resolver.semantic {
        let v = embedder.embed(&[name.trim()])?.pop().unwrap_or_default();
        if let Some((root, cos)) = nearest_root(db, user_id, key, &v)?
            && cos >= resolver.threshold
        {
            alias_of = Some((root, cos));
        }
        vector = Some((key, v));
    }
    let id = mint_id("ent");
    db.insert_entity(
        &NewEntityRow {
            id: &id,
            user_id,
            name: name.trim(),
            normalized_name: &norm,
            merged_into: alias_of.as_ref().map(|a| a.0.as_str()),
        },
        now,
    )?;
    db.ledger(
        now,
        &id,
        "create",
        Actor::Agent,
        None,
        json!({ "kind": "entity", "name": name.trim() }),
    )?;
    if let Some((key, v)) = &vector {
        db.store_entity_vector(&id, key, v)?;
    }
    if let Some((root, cos)) = &alias_of {
        let moved = json!([{ "id": id, "mergedInto": null }]).to_string();
        db.record(now, "merge", &id, root, &moved, Actor::Agent)?;
        db.ledger(
            now,
            &id,
            "merge",
            Actor::Agent,
            Some("embedding similarity"),
            json!({ "into": root, "cosine": cos, "moved": [id] }),
        )?;
        return db.load(root);
    }
    db.load(&id)
}

/// Links a new fact's subject and object to their root entities.
pub(crate) fn link_fact(
    db: &mut dyn EntityTable,
    now: i64,
    row: &ItemRow,
    resolver: Resolver<'_>,
) -> Result<()> {
    for (role, name) in [
        (EntityRole::Subject, &row.subject),
        (EntityRole::Object, &row.object),
    ] {
        if let Some(name) = name.as_deref().filter(|n| !normalize_name(n).is_empty()) {
            let entity = resolve(db, now, &row.user_id, name, resolver)?;
            db.link(&row.id, &entity.id, role)?;
        }
    }
    Ok(())
}

/// The entity's root (itself when it is one).
pub(crate) fn root_of(db: &mut dyn EntityTable, entity: GraphEntity) -> Result<GraphEntity> {
    match &entity.merged_into {
        Some(root) => db.load(root),
        None => Ok(entity),
    }
}

/// Merges the group of `from` into the group of `into`; returns the target root.
pub(crate) fn merge(
    db: &mut dyn EntityTable,
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
        None,
        json!({ "into": target.id, "moved": moved }),
    )?;
    db.load(&target.id)
}

/// Undoes the latest live merge that moved `id`; returns the root it restored.
pub(crate) fn unmerge(
    db: &mut dyn EntityTable,
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
        None,
        json!({ "from": merge.into_id, "undoes": merge.seq }),
    )?;
    db.load(&merge.entity_id)
}
