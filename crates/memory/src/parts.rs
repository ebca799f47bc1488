//! What both backends hold besides their connection — the clock, the embedder and its id,
//! the vector mirror, the tunables — and what is derived from them, written once: the
//! fusion defaults, the entity resolver, embedding batches and the search store.

use std::sync::{Arc, Mutex};

use mindgate_embed::Embedder;

use crate::config::{FusionDefaults, MemoryConfig, OpenOptions};
use crate::error::Result;
use crate::rules::entities::Resolver;
use crate::search::SearchStore;
use crate::time::Clock;
use crate::vectors::VectorCache;

/// A store's clock, embedder, vector mirror and tunables.
pub(crate) struct StoreParts {
    /// Where "now" comes from.
    pub clock: Arc<dyn Clock>,
    /// The active embedder (none: lexical search only).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The active embedder's id (`<provider>:<model>@<dim>`).
    pub embedder_key: Option<String>,
    /// The in-memory mirror of the stored vectors.
    pub vectors: Mutex<VectorCache>,
    /// Tunables.
    pub config: MemoryConfig,
}

impl StoreParts {
    /// The parts of a store opened with `options`.
    pub(crate) fn new(options: OpenOptions) -> Self {
        let embedder_key = options.embedder.as_ref().map(|e| e.id().to_string());
        StoreParts {
            clock: options.clock,
            embedder: options.embedder,
            embedder_key,
            vectors: Mutex::new(VectorCache::default()),
            config: options.config,
        }
    }

    /// The instant now, epoch milliseconds.
    pub(crate) fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The configured fusion defaults, else those of the active embedder.
    pub(crate) fn fusion_defaults(&self) -> FusionDefaults {
        self.config.default_fusion.unwrap_or_else(|| {
            FusionDefaults::for_embedder(self.embedder.as_ref().map(|e| e.id().provider).as_deref())
        })
    }

    /// The entity resolver of this store ([`Resolver::of`]).
    pub(crate) fn resolver(&self) -> Resolver<'_> {
        Resolver::of(
            self.embedder.as_ref(),
            self.embedder_key.as_ref(),
            self.config.entity_merge_cosine,
        )
    }

    /// Embeds `texts` in batches (none when no embedder is active).
    pub(crate) fn embed_all(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        crate::vectors::embed_all(self.embedder.as_deref(), texts)
    }

    /// What [`crate::search::search`] reads of this store besides its connection.
    pub(crate) fn search_store(&self) -> SearchStore<'_> {
        SearchStore {
            config: &self.config,
            fusion: self.fusion_defaults(),
            clock: self.clock.as_ref(),
            embedder: self.embedder.as_deref(),
            embedder_key: self.embedder_key.as_deref(),
            vectors: &self.vectors,
        }
    }
}
