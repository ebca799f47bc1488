//! The entity graph: resolver (NFKC + case/space folding, lexical match first), single-level
//! merges with a ledger, exact unmerge, fact links and one-hop expansion.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use crate::entity_writes::{self, EntityStore, EntityTable, MergeRow, NewEntityRow};
use crate::error::{MemoryError, Result};
use crate::rules::columns::{ENTITY_COLUMNS, entity_from};
use crate::rules::entities::Resolver;
use crate::sqlite::items::ItemRow;
use crate::sqlite::{SqliteMemory, ledger};
use crate::types::*;

fn from_row(r: &Row<'_>) -> rusqlite::Result<GraphEntity> {
    entity_from(r)
}

fn load(conn: &Connection, id: &str) -> Result<GraphEntity> {
    conn.query_row(
        &format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?1"),
        params![id],
        from_row,
    )
    .optional()?
    .ok_or_else(|| MemoryError::not_found("entity", id))
}

impl EntityStore for SqliteMemory {
    fn resolver(&self) -> Resolver<'_> {
        self.parts.resolver()
    }

    fn read_entities<T>(&self, f: impl FnOnce(&mut dyn EntityTable) -> Result<T>) -> Result<T> {
        f(&mut EntityRows(&self.lock()))
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
    tx: &Connection,
    now: i64,
    row: &ItemRow,
    resolver: Resolver<'_>,
) -> Result<()> {
    entity_writes::link_fact(&mut EntityRows(tx), now, row, resolver)
}

/// Ids of every entity in the root's group (the root and those merged into it).
fn group(conn: &Connection, root: &str) -> Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT id FROM entities WHERE id = ?1 OR merged_into = ?1")?;
    let rows = stmt.query_map(params![root], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn facts_of_group(conn: &Connection, root: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT f.fact_id FROM fact_entities f JOIN memory_items i ON i.id = f.fact_id \
         WHERE f.entity_id IN (SELECT id FROM entities WHERE id = ?1 OR merged_into = ?1) \
         AND i.deleted_at IS NULL AND i.superseded_by IS NULL ORDER BY i.rowid",
    )?;
    let rows = stmt.query_map(params![root], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The entity and merge-ledger tables of one SQLite transaction.
struct EntityRows<'a>(&'a Connection);

impl EntityTable for EntityRows<'_> {
    fn load(&mut self, id: &str) -> Result<GraphEntity> {
        load(self.0, id)
    }

    fn group(&mut self, root: &str) -> Result<Vec<String>> {
        group(self.0, root)
    }

    fn move_group(&mut self, from_root: &str, into_root: &str, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE entities SET merged_into = ?1, updated_at = ?2 WHERE id = ?3 OR merged_into = ?3",
            params![into_root, now, from_root],
        )?;
        Ok(())
    }

    fn set_root(&mut self, id: &str, root: Option<&str>, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE entities SET merged_into = ?1, updated_at = ?2 WHERE id = ?3",
            params![root, now, id],
        )?;
        Ok(())
    }

    fn live_merges(&mut self) -> Result<Vec<MergeRow>> {
        let mut stmt = self.0.prepare(
            "SELECT seq, entity_id, into_id, moved_json FROM entity_merges WHERE action = 'merge' AND undone_at IS NULL ORDER BY seq DESC",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok(MergeRow {
                    seq: r.get(0)?,
                    entity_id: r.get(1)?,
                    into_id: r.get(2)?,
                    moved_json: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    fn mark_undone(&mut self, seq: i64, now: i64) -> Result<()> {
        self.0.execute(
            "UPDATE entity_merges SET undone_at = ?1 WHERE seq = ?2",
            params![now, seq],
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
            "INSERT INTO entity_merges (at, action, entity_id, into_id, moved_json, actor) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![now, action, entity_id, into_id, moved_json, by.as_str()],
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
        ledger::append(self.0, now, subject_id, action, by, reason, Some(detail))
    }

    fn find_named(&mut self, user_id: &str, normalized: &str) -> Result<Option<GraphEntity>> {
        Ok(self
            .0
            .query_row(
                &format!(
                    "SELECT {ENTITY_COLUMNS} FROM entities WHERE user_id = ?1 AND normalized_name = ?2 \
                     ORDER BY merged_into IS NOT NULL, rowid LIMIT 1"
                ),
                params![user_id, normalized],
                from_row,
            )
            .optional()?)
    }

    fn root_vectors(&mut self, user_id: &str, key: &str) -> Result<Vec<(String, Vec<f32>)>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT e.id, v.vec FROM entity_vectors v JOIN entities e ON e.id = v.entity_id \
             WHERE v.embedder = ?1 AND e.user_id = ?2 AND e.merged_into IS NULL ORDER BY e.rowid",
        )?;
        let rows = stmt
            .query_map(params![key, user_id], |r| {
                let blob: Vec<u8> = r.get(1)?;
                Ok((r.get(0)?, crate::sqlite::vectors::from_blob(&blob)))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    fn insert_entity(&mut self, e: &NewEntityRow<'_>, now: i64) -> Result<()> {
        self.0.execute(
            "INSERT INTO entities (id, user_id, name, normalized_name, merged_into, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![e.id, e.user_id, e.name, e.normalized_name, e.merged_into, now],
        )?;
        Ok(())
    }

    fn store_entity_vector(&mut self, id: &str, key: &str, vector: &[f32]) -> Result<()> {
        self.0.execute(
            "INSERT OR REPLACE INTO entity_vectors (entity_id, embedder, vec) VALUES (?1, ?2, ?3)",
            params![id, key, crate::sqlite::vectors::to_blob(vector)],
        )?;
        Ok(())
    }

    fn list(&mut self, user_id: &str) -> Result<Vec<GraphEntity>> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {ENTITY_COLUMNS} FROM entities WHERE user_id = ?1 ORDER BY rowid"
        ))?;
        let rows = stmt.query_map(params![user_id], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn facts_of_group(&mut self, root: &str) -> Result<Vec<String>> {
        facts_of_group(self.0, root)
    }

    fn link(&mut self, fact_id: &str, entity_id: &str, role: EntityRole) -> Result<()> {
        self.0.execute(
            "INSERT OR REPLACE INTO fact_entities (fact_id, entity_id, role) VALUES (?1, ?2, ?3)",
            params![fact_id, entity_id, role.as_str()],
        )?;
        Ok(())
    }
}
