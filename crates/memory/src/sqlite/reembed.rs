//! Re-embedding on SQLite: the reads and writes the shared rule of [`crate::reembed`]
//! runs over.

use rusqlite::params;
use serde_json::Value;

use crate::error::Result;
use crate::reembed::{self, ReembedProgress, ReembedStore};
use crate::sqlite::{SqliteMemory, ledger};
use crate::types::Actor;

impl ReembedStore for SqliteMemory {
    fn items_without_vectors(&self, key: &str) -> Result<Vec<(i64, String)>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT i.rowid, i.text || COALESCE(char(10) || json_extract(i.body_json, '$.context'), '') FROM memory_items i WHERE trim(i.text) <> '' AND NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.embedder = ?1 AND v.item_rowid = i.rowid) ORDER BY i.rowid",
        )?;
        Ok(stmt
            .query_map(params![key], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn store_item_vectors(&self, key: &str, vectors: &[(i64, &[f32])]) -> Result<()> {
        self.write(|tx, _| {
            for (rowid, v) in vectors {
                tx.execute(
                    "INSERT OR REPLACE INTO memory_vectors (item_rowid, embedder, vec) VALUES (?1, ?2, ?3)",
                    params![rowid, key, super::vectors::to_blob(v)],
                )?;
            }
            Ok(())
        })
    }

    fn entities_without_vectors(&self, key: &str) -> Result<Vec<(String, String)>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT e.id, e.name FROM entities e WHERE NOT EXISTS \
             (SELECT 1 FROM entity_vectors v WHERE v.embedder = ?1 AND v.entity_id = e.id) ORDER BY e.rowid",
        )?;
        Ok(stmt
            .query_map(params![key], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn store_entity_vectors(&self, key: &str, vectors: &[(String, &[f32])]) -> Result<()> {
        self.write(|tx, _| {
            for (id, v) in vectors {
                tx.execute(
                    "INSERT OR REPLACE INTO entity_vectors (entity_id, embedder, vec) VALUES (?1, ?2, ?3)",
                    params![id, key, super::vectors::to_blob(v)],
                )?;
            }
            Ok(())
        })
    }

    fn switch_embedder(&self, key: &str, detail: &dyn Fn(Option<String>) -> Value) -> Result<()> {
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
                Some(detail(previous)),
            )
        })
    }

    fn embed(&self, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>> {
        SqliteMemory::embed(self, texts)
    }

    fn clear_vector_cache(&self) {
        SqliteMemory::clear_vector_cache(self);
    }
}

impl SqliteMemory {
    /// Embeds every record (live or not, so historical reads keep their vectors) with the
    /// active embedder, then makes it the store's embedder and drops the other embedders'
    /// vectors ([`crate::reembed`]). Interrupted runs leave the old embedder in charge;
    /// running again resumes.
    pub fn reembed(&self, mut progress: impl FnMut(ReembedProgress)) -> Result<usize> {
        let key = self.parts.embedder_key.clone();
        reembed::reembed(self, key.as_deref(), &mut progress)
    }
}
