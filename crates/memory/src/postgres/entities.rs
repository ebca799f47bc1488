//! The entity graph in PostgreSQL: the resolver (folded key first, then name embeddings
//! with a real embedder), single-level merges with a ledger, exact unmerge, fact links and
//! one-hop expansion. Name folding and the resolver's rule are SQLite's.

use postgres::{GenericClient, Row};
use serde_json::Value;

use crate::entity_writes::{self, EntityStore, EntityTable, MergeRow, NewEntityRow};
use crate::error::{MemoryError, Result};
use crate::postgres::PgMemory;
use crate::postgres::items::ledger_append;
use crate::rules::columns::{ENTITY_COLUMNS, entity_from};
use crate::rules::entities::Resolver;
use crate::rules::row::ItemRow;
use crate::types::*;
use crate::vectors::{from_blob, to_blob};

fn from_row(r: &Row) -> Result<GraphEntity> {
    Ok(entity_from(r)?)
}

fn load(c: &mut impl GenericClient, id: &str) -> Result<GraphEntity> {
    c.query_opt(
        &format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE id = $1"),
        &[&id],
    )?
    .as_ref()
    .map(from_row)
    .transpose()?
    .ok_or_else(|| MemoryError::not_found("entity", id))
}

impl EntityStore for PgMemory {
    fn resolver(&self) -> Resolver<'_> {
        self.parts.resolver()
    }

    fn read_entities<T>(&self, f: impl FnOnce(&mut dyn EntityTable) -> Result<T>) -> Result<T> {
        f(&mut EntityRows(&mut *self.lock()))
    }

    fn write_entities<T>(
        &self,
        f: impl FnOnce(&mut dyn EntityTable, i64) -> Result<T>,
    ) -> Result<T> {
        self.write(|tx, now| f(&mut EntityRows(tx), now))
    }
}

/// Links a new fact's subject and object to their root entities ([`entity_writes::link_fact`]).
pub(crate) fn link_fact(
    tx: &mut impl GenericClient,
    now: i64,
    row: &ItemRow,
    resolver: Resolver<'_>,
) -> Result<()> {
    entity_writes::link_fact(&mut EntityRows(tx), now, row, resolver)
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

pub(crate) fn facts_of_group(c: &mut impl GenericClient, root: &str) -> Result<Vec<String>> {
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
struct EntityRows<'a, C: GenericClient>(&'a mut C);

impl<C: GenericClient> EntityTable for EntityRows<'_, C> {
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
        reason: Option<&str>,
        detail: Value,
    ) -> Result<()> {
        ledger_append(self.0, now, subject_id, action, by, reason, Some(detail))
    }

    fn find_named(&mut self, user_id: &str, normalized: &str) -> Result<Option<GraphEntity>> {
        self.0
            .query_opt(
                &format!(
                    "SELECT {ENTITY_COLUMNS} FROM entities WHERE user_id = $1 AND normalized_name = $2 \
                     ORDER BY merged_into IS NOT NULL, rowid LIMIT 1"
                ),
                &[&user_id, &normalized],
            )?
            .as_ref()
            .map(from_row)
            .transpose()
    }

    fn root_vectors(&mut self, user_id: &str, key: &str) -> Result<Vec<(String, Vec<f32>)>> {
        self.0
            .query(
                "SELECT e.id, v.vec FROM entity_vectors v JOIN entities e ON e.id = v.entity_id \
                 WHERE v.embedder = $1 AND e.user_id = $2 AND e.merged_into IS NULL ORDER BY e.rowid",
                &[&key, &user_id],
            )?
            .iter()
            .map(|r| {
                let blob: &[u8] = r.try_get(1)?;
                Ok((r.try_get(0)?, from_blob(blob)))
            })
            .collect()
    }

    fn insert_entity(&mut self, e: &NewEntityRow<'_>, now: i64) -> Result<()> {
        self.0.execute(
            "INSERT INTO entities (id, user_id, name, normalized_name, merged_into, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &e.id,
                &e.user_id,
                &e.name,
                &e.normalized_name,
                &e.merged_into,
                &now,
            ],
        )?;
        Ok(())
    }

    fn store_entity_vector(&mut self, id: &str, key: &str, vector: &[f32]) -> Result<()> {
        self.0.execute(
            "INSERT INTO entity_vectors (entity_id, embedder, vec) VALUES ($1, $2, $3) \
             ON CONFLICT (embedder, entity_id) DO UPDATE SET vec = EXCLUDED.vec",
            &[&id, &key, &to_blob(vector)],
        )?;
        Ok(())
    }

    fn list(&mut self, user_id: &str) -> Result<Vec<GraphEntity>> {
        self.0
            .query(
                &format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE user_id = $1 ORDER BY rowid"),
                &[&user_id],
            )?
            .iter()
            .map(from_row)
            .collect()
    }

    fn facts_of_group(&mut self, root: &str) -> Result<Vec<String>> {
        facts_of_group(self.0, root)
    }

    fn link(&mut self, fact_id: &str, entity_id: &str, role: EntityRole) -> Result<()> {
        self.0.execute(
            "INSERT INTO fact_entities (fact_id, entity_id, role) VALUES ($1, $2, $3) \
             ON CONFLICT (fact_id, role) DO UPDATE SET entity_id = EXCLUDED.entity_id",
            &[&fact_id, &entity_id, &role.as_str()],
        )?;
        Ok(())
    }
}
