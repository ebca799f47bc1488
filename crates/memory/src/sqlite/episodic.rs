//! Episodic memory: summarised stretches of activity.

use rusqlite::Transaction;

use crate::error::{MemoryError, Result};
use crate::record::episode_of;
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{self, Insert, ItemRow, check_text, check_unit};
use crate::store::EpisodicMemory;
use crate::time::parse_time;
use crate::types::*;

pub(crate) struct Episodic<'a>(pub &'a SqliteMemory);

/// Validates a new episode and builds its row.
pub(crate) fn episode_row(episode: &NewEpisode) -> Result<ItemRow> {
    check_text("summary", &episode.summary)?;
    check_unit("importance", episode.importance)?;
    let started = parse_time("startedAt", &episode.started_at)?;
    let ended = parse_time("endedAt", &episode.ended_at)?;
    if ended < started {
        return Err(MemoryError::invalid(
            "endedAt",
            "must not be before startedAt",
        ));
    }
    Ok(ItemRow {
        kind: MemoryKind::Episodic.as_str().to_owned(),
        text: episode.summary.clone(),
        importance: episode.importance,
        started_at: Some(started),
        ended_at: Some(ended),
        ..ItemRow::default()
    })
}

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
