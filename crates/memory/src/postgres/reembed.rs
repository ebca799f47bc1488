//! Re-embedding on PostgreSQL: the reads and writes the shared rule of
//! [`crate::reembed`] runs over; each batch is one transaction under the store's write
//! lock.

use serde_json::Value;

use crate::error::Result;
use crate::postgres::items::ledger_append;
use crate::postgres::{PgMemory, meta, set_meta};
use crate::reembed::{self, ReembedProgress, ReembedStore};
use crate::types::Actor;

impl ReembedStore for PgMemory {
    fn items_without_vectors(&self, key: &str) -> Result<Vec<(i64, String)>> {
        self.lock()
            .query(
                "SELECT i.rowid, i.text || COALESCE(E'\\n' || (i.body_json->>'context'), '') \
                 FROM memory_items i WHERE trim(i.text) <> '' AND NOT EXISTS \
                 (SELECT 1 FROM memory_vectors v WHERE v.embedder = $1 AND v.item_rowid = i.rowid) \
                 ORDER BY i.rowid",
                &[&key],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    fn store_item_vectors(&self, key: &str, vectors: &[(i64, &[f32])]) -> Result<()> {
        self.write(|tx, _| {
            for (rowid, v) in vectors {
                tx.execute(
                    "INSERT INTO memory_vectors (item_rowid, embedder, vec) VALUES ($1, $2, $3) \
                     ON CONFLICT (embedder, item_rowid) DO UPDATE SET vec = EXCLUDED.vec",
                    &[rowid, &key, &crate::vectors::to_blob(v)],
                )?;
            }
            Ok(())
        })
    }

    fn entities_without_vectors(&self, key: &str) -> Result<Vec<(String, String)>> {
        self.lock()
            .query(
                "SELECT e.id, e.name FROM entities e WHERE NOT EXISTS \
                 (SELECT 1 FROM entity_vectors v WHERE v.embedder = $1 AND v.entity_id = e.id) \
                 ORDER BY e.rowid",
                &[&key],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    fn store_entity_vectors(&self, key: &str, vectors: &[(String, &[f32])]) -> Result<()> {
        self.write(|tx, _| {
            for (id, v) in vectors {
                tx.execute(
                    "INSERT INTO entity_vectors (entity_id, embedder, vec) VALUES ($1, $2, $3) \
                     ON CONFLICT (embedder, entity_id) DO UPDATE SET vec = EXCLUDED.vec",
                    &[id, &key, &crate::vectors::to_blob(v)],
                )?;
            }
            Ok(())
        })
    }

    fn switch_embedder(&self, key: &str, detail: &dyn Fn(Option<String>) -> Value) -> Result<()> {
        self.write(|tx, now| {
            let previous = meta(tx, "embedder")?;
            tx.execute("DELETE FROM memory_vectors WHERE embedder <> $1", &[&key])?;
            set_meta(tx, "embedder", key)?;
            ledger_append(
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
        crate::vectors::embed(self.parts.embedder.as_deref(), texts)
    }

    fn clear_vector_cache(&self) {
        PgMemory::clear_vector_cache(self);
    }
}

impl PgMemory {
    /// Embeds every record (live or not) and entity name with the active embedder, then
    /// makes it the store's embedder and drops the other embedders' vectors
    /// ([`crate::reembed`]). Open the store with [`PgMemory::connect_for_reembed`].
    /// Interrupted runs leave the old embedder in charge; running again resumes.
    pub fn reembed(&self, mut progress: impl FnMut(ReembedProgress)) -> Result<usize> {
        let key = self.parts.embedder_key.clone();
        reembed::reembed(self, key.as_deref(), &mut progress)
    }
}
