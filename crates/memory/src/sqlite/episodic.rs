//! Episodic memory: summarised stretches of activity.

use crate::error::{MemoryError, Result};
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{self, Insert, ItemRow, check_text, check_unit};
use crate::store::EpisodicMemory;
use crate::time::parse_time;
use crate::types::*;

pub(crate) struct Episodic<'a>(pub &'a SqliteMemory);

fn episode_of(item: MemoryItem) -> Result<Episode> {
    match item {
        MemoryItem::Episode(e) => Ok(e),
        other => Err(MemoryError::not_found("episode", other.id())),
    }
}

impl EpisodicMemory for Episodic<'_> {
    fn put(&self, episode: NewEpisode) -> Result<Episode> {
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
        let s = self.0;
        let vector = s.embed_all(&[episode.summary.as_str()])?.pop().flatten();
        let row = ItemRow {
            kind: MemoryKind::Episodic.as_str().to_owned(),
            text: episode.summary.clone(),
            importance: episode.importance,
            started_at: Some(started),
            ended_at: Some(ended),
            ..ItemRow::default()
        };
        let stored = s.write(|tx, now| {
            let stored = items::insert(
                tx,
                now,
                "episode",
                Insert {
                    row,
                    meta: episode.meta.clone(),
                    detail: None,
                },
            )?;
            if let (Some(key), Some(v)) = (&s.embedder_key, &vector) {
                SqliteMemory::store_vector(tx, key, stored.rowid, v)?;
            }
            Ok(stored)
        })?;
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
