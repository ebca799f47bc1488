//! Re-embedding every record with the store's active embedder.

use rusqlite::params;
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::sqlite::{SqliteMemory, ledger};
use crate::types::Actor;

/// Rows embedded per batch (and per transaction).
const BATCH: usize = 64;

/// Progress of a re-embed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReembedProgress {
    /// Records embedded so far.
    pub done: usize,
    /// Records to embed.
    pub total: usize,
}

impl SqliteMemory {
    /// Embeds every record (live or not, so historical reads keep their vectors) with the
    /// active embedder, then makes it the store's embedder and drops the other embedders'
    /// vectors. Interrupted runs leave the old embedder in charge; running again resumes.
    pub fn reembed(&self, mut progress: impl FnMut(ReembedProgress)) -> Result<usize> {
        let key = self.embedder_key.clone().ok_or_else(|| {
            MemoryError::invalid("embedder", "re-embedding needs an active embedder")
        })?;
        let todo: Vec<(i64, String)> = {
            let conn = self.lock();
            let mut stmt = conn.prepare(
                "SELECT i.rowid, i.text || COALESCE(char(10) || json_extract(i.body_json, '$.context'), '') FROM memory_items i WHERE trim(i.text) <> '' AND NOT EXISTS \
                 (SELECT 1 FROM memory_vectors v WHERE v.embedder = ?1 AND v.item_rowid = i.rowid) ORDER BY i.rowid",
            )?;
            stmt.query_map(params![key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        let total = todo.len();
        progress(ReembedProgress { done: 0, total });
        let mut done = 0;
        for chunk in todo.chunks(BATCH) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let vecs = self.embed(&texts)?.unwrap_or_default();
            self.write(|tx, _| {
                for ((rowid, _), v) in chunk.iter().zip(&vecs) {
                    tx.execute(
                        "INSERT OR REPLACE INTO memory_vectors (item_rowid, embedder, vec) VALUES (?1, ?2, ?3)",
                        params![rowid, key, super::vectors::to_blob(v)],
                    )?;
                }
                Ok(())
            })?;
            done += chunk.len();
            progress(ReembedProgress { done, total });
        }
        self.reembed_entities(&key)?;
        self.write(|tx, now| {
            let previous: Option<String> = tx
                .query_row(
                    "SELECT value FROM memory_meta WHERE key = 'embedder'",
                    [],
                    |r| r.get(0),
                )
                .ok();
            tx.execute(
                "DELETE FROM memory_vectors WHERE embedder <> ?1",
                params![key],
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO memory_meta (key, value) VALUES ('embedder', ?1)",
                params![key],
            )?;
            ledger::append(
                tx,
                now,
                "store",
                "reembed",
                Actor::User,
                None,
                Some(json!({ "from": previous, "to": key, "embedded": total })),
            )
        })?;
        self.vectors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        Ok(total)
    }

    /// Embeds the names of entities that have no vector under `key`.
    fn reembed_entities(&self, key: &str) -> Result<()> {
        let todo: Vec<(String, String)> = {
            let conn = self.lock();
            let mut stmt = conn.prepare(
                "SELECT e.id, e.name FROM entities e WHERE NOT EXISTS \
                 (SELECT 1 FROM entity_vectors v WHERE v.embedder = ?1 AND v.entity_id = e.id) ORDER BY e.rowid",
            )?;
            stmt.query_map(params![key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for chunk in todo.chunks(BATCH) {
            let names: Vec<&str> = chunk.iter().map(|(_, n)| n.as_str()).collect();
            let vecs = self.embed(&names)?.unwrap_or_default();
            self.write(|tx, _| {
                for ((id, _), v) in chunk.iter().zip(&vecs) {
                    tx.execute(
                        "INSERT OR REPLACE INTO entity_vectors (entity_id, embedder, vec) VALUES (?1, ?2, ?3)",
                        params![id, key, super::vectors::to_blob(v)],
                    )?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}
