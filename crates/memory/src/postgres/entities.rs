//! The entity graph in PostgreSQL: the resolver (folded key first, then name embeddings
//! with a real embedder), single-level merges with a ledger, exact unmerge, fact links and
//! one-hop expansion. Name folding and the resolver's rule are SQLite's.

use std::collections::HashSet;

use postgres::{GenericClient, Row, Transaction};
use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::hybrid::{Filter, append_hops};
use crate::merges::{self, MergeRow, MergeTable};
use crate::postgres::PgMemory;
use crate::postgres::items::ledger_append;
use crate::postgres::search::{admit, load_rows};
use crate::record::{ItemRow, check_id, mint_id};
use crate::sqlite::entities::{Resolver, normalize_name};
use crate::store::EntityGraph;
use crate::time::format_ms;
use crate::types::*;
use crate::vectors::{dot, from_blob, to_blob};

pub(crate) struct Entities<'a>(pub &'a PgMemory);

const COLUMNS: &str = "id, user_id, name, normalized_name, merged_into, created_at, updated_at";

fn from_row(r: &Row) -> Result<GraphEntity> {
    let created: i64 = r.try_get(5)?;
    let updated: Option<i64> = r.try_get(6)?;
    Ok(GraphEntity {
        id: r.try_get(0)?,
        user_id: r.try_get(1)?,
        name: r.try_get(2)?,
        normalized_name: r.try_get(3)?,
        merged_into: r.try_get(4)?,
        created_at: format_ms(created),
        updated_at: updated.map(format_ms),
    })
}

fn load(c: &mut impl GenericClient, id: &str) -> Result<GraphEntity> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM entities WHERE id = $1"),
        &[&id],
    )?
    .as_ref()
    .map(from_row)
    .transpose()?
    .ok_or_else(|| MemoryError::not_found("entity", id))
}

fn root_of(c: &mut impl GenericClient, entity: GraphEntity) -> Result<GraphEntity> {
    match &entity.merged_into {
        Some(root) => load(c, root),
        None => Ok(entity),
    }
}

impl PgMemory {
    /// The resolver of this store ([`Resolver::of`]).
    pub(crate) fn resolver(&self) -> Resolver<'_> {
        Resolver::of(
            self.embedder.as_ref(),
            self.embedder_key.as_ref(),
            self.config.entity_merge_cosine,
        )
    }
}

/// The closest root of the user by name embedding, with its cosine.
fn nearest_root(
    c: &mut impl GenericClient,
    user_id: &str,
    key: &str,
    vec: &[f32],
) -> Result<Option<(String, f32)>> {
    let rows = c.query(
        "SELECT e.id, v.vec FROM entity_vectors v JOIN entities e ON e.id = v.entity_id \
         WHERE v.embedder = $1 AND e.user_id = $2 AND e.merged_into IS NULL ORDER BY e.rowid",
        &[&key, &user_id],
    )?;
    let mut best: Option<(String, f32)> = None;
    for row in rows {
        let id: String = row.try_get(0)?;
        let blob: &[u8] = row.try_get(1)?;
        let other = from_blob(blob);
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

/// The root entity for `name` (see the SQLite resolver): the folded key first, then the
/// nearest root by name embedding at or above the threshold (the new surface form minted
/// as an alias merged into it, with a ledger row), else a new root.
fn resolve_in(
    c: &mut impl GenericClient,
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
    let found = c
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM entities WHERE user_id = $1 AND normalized_name = $2 \
                 ORDER BY merged_into IS NOT NULL, rowid LIMIT 1"
            ),
            &[&user_id, &norm],
        )?
        .as_ref()
        .map(from_row)
        .transpose()?;
    if let Some(entity) = found {
        return root_of(c, entity);
    }
    let mut alias_of = None;
    let mut vector = None;
    if let Some((embedder, key)) = resolver.semantic {
        let v = embedder.embed(&[name.trim()])?.pop().unwrap_or_default();
        if let Some((root, cos)) = nearest_root(c, user_id, key, &v)?
            && cos >= resolver.threshold
        {
            alias_of = Some((root, cos));
        }
        vector = Some((key, v));
    }
    let id = mint_id("ent");
    c.execute(
        "INSERT INTO entities (id, user_id, name, normalized_name, merged_into, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &id,
            &user_id,
            &name.trim(),
            &norm,
            &alias_of.as_ref().map(|a| a.0.as_str()),
            &now,
        ],
    )?;
    ledger_append(
        c,
        now,
        &id,
        "create",
        Actor::Agent,
        None,
        Some(json!({ "kind": "entity", "name": name.trim() })),
    )?;
    if let Some((key, v)) = &vector {
        c.execute(
            "INSERT INTO entity_vectors (entity_id, embedder, vec) VALUES ($1, $2, $3) \
             ON CONFLICT (embedder, entity_id) DO UPDATE SET vec = EXCLUDED.vec",
            &[&id, key, &to_blob(v)],
        )?;
    }
    if let Some((root, cos)) = &alias_of {
        let moved = json!([{ "id": id, "mergedInto": null }]).to_string();
        c.execute(
            "INSERT INTO entity_merges (at, action, entity_id, into_id, moved_json, actor) \
             VALUES ($1, 'merge', $2, $3, $4::text::jsonb, 'agent')",
            &[&now, &id, root, &moved],
        )?;
        ledger_append(
            c,
            now,
            &id,
            "merge",
            Actor::Agent,
            Some("embedding similarity"),
            Some(json!({ "into": root, "cosine": cos, "moved": [id] })),
        )?;
        return load(c, root);
    }
    load(c, &id)
}

/// Links a new fact's subject and object to their root entities.
pub(crate) fn link_fact(
    c: &mut impl GenericClient,
    now: i64,
    row: &ItemRow,
    resolver: Resolver<'_>,
) -> Result<()> {
    for (role, name) in [
        (EntityRole::Subject, &row.subject),
        (EntityRole::Object, &row.object),
    ] {
        if let Some(name) = name.as_deref().filter(|n| !normalize_name(n).is_empty()) {
            let entity = resolve_in(c, now, &row.user_id, name, resolver)?;
            c.execute(
                "INSERT INTO fact_entities (fact_id, entity_id, role) VALUES ($1, $2, $3) \
                 ON CONFLICT (fact_id, role) DO UPDATE SET entity_id = EXCLUDED.entity_id",
                &[&row.id, &entity.id, &role.as_str()],
            )?;
        }
    }
    Ok(())
}

fn strings(c: &mut impl GenericClient, sql: &str, arg: &str) -> Result<Vec<String>> {
    c.query(sql, &[&arg])?
        .iter()
        .map(|r| Ok(r.try_get::<_, String>(0)?))
        .collect()
}

/// Ids of every entity in the root's group (the root and those merged into it).
fn group(c: &mut impl GenericClient, root: &str) -> Result<Vec<String>> {
    strings(
        c,
        "SELECT id FROM entities WHERE id = $1 OR merged_into = $1 ORDER BY rowid",
        root,
    )
}

fn facts_of_group(c: &mut impl GenericClient, root: &str) -> Result<Vec<String>> {
    strings(
        c,
        "SELECT f.fact_id FROM fact_entities f JOIN memory_items i ON i.id = f.fact_id \
         WHERE f.entity_id IN (SELECT id FROM entities WHERE id = $1 OR merged_into = $1) \
         AND i.deleted_at IS NULL AND i.superseded_by IS NULL \
         GROUP BY f.fact_id, i.rowid ORDER BY i.rowid",
        root,
    )
}

/// The entity and merge-ledger tables of one PostgreSQL transaction.
struct Merges<'a, 'c>(&'a mut Transaction<'c>);

impl MergeTable for Merges<'_, '_> {
    fn load(&mut self, id: &str) -> Result<GraphEntity> {
        load(self.0, id)
    }

    fn group(&mut self, root: &str) -> Result<Vec<String>> {
        group(self.0, root)
    }

    fn move_group(&mut self, from_root: &str, into_root: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE entities SET merged_into = $1, updated_at = $2 WHERE id = $3 OR merged_into = $3",
            &[&into_root, &now, &from_root],
        )?;
        Ok(())
    }

    fn set_root(&mut self, id: &str, root: Option<&str>, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE entities SET merged_into = $1, updated_at = $2 WHERE id = $3",
            &[&root, &now, &id],
        )?;
        Ok(())
    }

    fn live_merges(&mut self) -> Result<Vec<MergeRow>> {
        self.0
            .query(
                "SELECT seq, entity_id, into_id, moved_json::text FROM entity_merges \
                 WHERE action = 'merge' AND undone_at IS NULL ORDER BY seq DESC",
                &[],
            )?
            .iter()
            .map(|r| {
                let into_id: Option<String> = r.try_get(2)?;
                Ok(MergeRow {
                    seq: r.try_get(0)?,
                    entity_id: r.try_get(1)?,
                    into_id: into_id.unwrap_or_default(),
                    moved_json: r.try_get(3)?,
                })
            })
            .collect()
    }

    fn mark_undone(&mut self, seq: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE entity_merges SET undone_at = $1 WHERE seq = $2",
            &[&now, &seq],
        )?;
        Ok(())
    }

    fn record(
        &mut self,
        now: i64,
        action: &str,
        entity_id: &str,
        into_id: &str,
        moved_json: &str,
        by: Actor,
    ) -> Result<()> {
        self.0.execute(
            "INSERT INTO entity_merges (at, action, entity_id, into_id, moved_json, actor) \
             VALUES ($1, $2, $3, $4, $5::text::jsonb, $6)",
            &[
                &now,
                &action,
                &entity_id,
                &into_id,
                &moved_json,
                &by.as_str(),
            ],
        )?;
        Ok(())
    }

    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        detail: Value,
    ) -> Result<()> {
        ledger_append(self.0, now, subject_id, action, by, None, Some(detail))
    }
}

impl EntityGraph for Entities<'_> {
    fn resolve(&self, user_id: &str, name: &str) -> Result<GraphEntity> {
        let resolver = self.0.resolver();
        self.0
            .write(|tx, now| resolve_in(tx, now, user_id, name, resolver))
    }

    fn get(&self, id: &str) -> Result<GraphEntity> {
        load(&mut *self.0.lock(), id)
    }

    fn list(&self, user_id: &str) -> Result<Vec<GraphEntity>> {
        self.0
            .lock()
            .query(
                &format!("SELECT {COLUMNS} FROM entities WHERE user_id = $1 ORDER BY rowid"),
                &[&user_id],
            )?
            .iter()
            .map(from_row)
            .collect()
    }

    fn merge(&self, from: &str, into: &str, by: Actor) -> Result<GraphEntity> {
        self.0
            .write(|tx, now| merges::merge(&mut Merges(tx), now, from, into, by))
    }

    fn unmerge(&self, id: &str, by: Actor) -> Result<GraphEntity> {
        self.0
            .write(|tx, now| merges::unmerge(&mut Merges(tx), now, id, by))
    }

    fn facts_for(&self, entity_id: &str) -> Result<Vec<String>> {
        let mut client = self.0.lock();
        let c = &mut *client;
        let entity = load(c, entity_id)?;
        let root = root_of(c, entity)?;
        facts_of_group(c, &root.id)
    }
}

/// One-hop expansion: live facts sharing an entity with a fact hit, admitted by the same
/// filter, appended below the hits with signal `hop` = 1.
pub(crate) fn expand_hits(
    c: &mut impl GenericClient,
    filter: &Filter,
    hits: &mut Vec<MemoryHit>,
) -> Result<()> {
    let present: HashSet<String> = hits.iter().map(|h| h.record.id().to_owned()).collect();
    let mut roots: Vec<String> = Vec::new();
    for hit in hits
        .iter()
        .filter(|h| matches!(h.record, MemoryItem::Fact(_)))
    {
        for root in strings(
            c,
            "SELECT COALESCE(e.merged_into, e.id) FROM fact_entities f \
             JOIN entities e ON e.id = f.entity_id WHERE f.fact_id = $1 ORDER BY f.role",
            hit.record.id(),
        )? {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    let mut extra_ids: Vec<String> = Vec::new();
    for root in &roots {
        for fact in facts_of_group(c, root)? {
            if !present.contains(&fact) && !extra_ids.contains(&fact) {
                extra_ids.push(fact);
            }
        }
    }
    let mut rowids = Vec::new();
    for id in &extra_ids {
        if let Some(r) = c.query_opt("SELECT rowid FROM memory_items WHERE id = $1", &[id])? {
            rowids.push(r.try_get::<_, i64>(0)?);
        }
    }
    let admitted = admit(c, filter, &rowids)?;
    let rows = load_rows(c, &rowids)?;
    append_hops(hits, &rowids, &admitted, &rows)
}
