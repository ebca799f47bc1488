//! Episodic memory: summarised stretches of activity.

use rusqlite::Transaction;

use crate::error::Result;
use crate::rules::episodic::episode_row;
use crate::rules::row::episode_of;
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{self, Insert, ItemRow};
use crate::store::EpisodicMemory;
use crate::types::*;

pub(crate) struct Episodic<'a>(pub &'a SqliteMemory);

impl SqliteMemory {
    /// Inserts a validated episode row with its vector.
    pub(crate) fn insert_episode(
        &self,
        tx: &Transaction<'_>,
        now: i64,
        meta: &WriteMeta,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let stored = items::insert(
            tx,
            now,
            "episode",
            Insert {
                row,
                meta: meta.clone(),
                detail: None,
            },
        )?;
        if let (Some(key), Some(v)) = (&self.embedder_key, vector) {
            SqliteMemory::store_vector(tx, key, stored.rowid, v)?;
        }
        Ok(stored)
    }
}

impl EpisodicMemory for Episodic<'_> {
    fn put(&self, episode: NewEpisode) -> Result<Episode> {
        let row = episode_row(&episode)?;
        let s = self.0;
        let vector = s.embed_all(&[episode.summary.as_str()])?.pop().flatten();
        let stored =
            s.write(|tx, now| s.insert_episode(tx, now, &episode.meta, row, vector.as_deref()))?;
        episode_of(stored.to_item()?)
    }

    fn get(&self, id: &str) -> Result<Episode> {
        episode_of(
            items::load_kind(&self.0.lock(), id, MemoryKind::Episodic, "episode")?.to_item()?,
        )
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Episodic))
    }
}
