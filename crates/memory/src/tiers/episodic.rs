//! The episodic tier: episodes put with their vector, read back by id, searched.

use crate::error::Result;
use crate::rules::episodic::episode_row;
use crate::rules::row::episode_of;
use crate::store::EpisodicMemory;
use crate::tiers::{ItemStore, embed_one, insert_episode, load_kind};
use crate::types::*;

/// The episodic tier of a store.
pub(crate) struct Episodic<'a, S>(pub &'a S);

impl<S: ItemStore> EpisodicMemory for Episodic<'_, S> {
    fn put(&self, episode: NewEpisode) -> Result<Episode> {
        let row = episode_row(&episode)?;
        let vector = embed_one(self.0, &episode.summary)?;
        let stored = self.0.write_items(|db, now| {
            insert_episode(db, now, &episode.meta, row, vector.as_deref())
        })?;
        episode_of(stored.to_item()?)
    }

    fn get(&self, id: &str) -> Result<Episode> {
        let row = self
            .0
            .read_items(|db| load_kind(db, id, MemoryKind::Episodic, "episode"))?;
        episode_of(row.to_item()?)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Episodic))
    }
}
