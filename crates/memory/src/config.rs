//! What a store is opened with, whatever its backend: the clock, the embedder and the
//! tunables, and the fusion a search uses when it does not say.

use std::sync::Arc;

use mindgate_embed::Embedder;

use crate::maintenance::MaintenanceConfig;
use crate::time::{Clock, SystemClock};
use crate::types::FusionMethod;

/// Tunables of a store.
#[derive(Debug, Clone)]
pub struct MemoryConfig {
    /// Verified successes that promote a quarantined induced procedure (default 3).
    pub promote_after_successes: u32,
    /// Character limit of a block created without one (default 2000).
    pub default_char_limit: u32,
    /// Cosine at or above which the entity resolver merges a new name into an existing
    /// entity, when an embedder is active (default 0.92).
    pub entity_merge_cosine: f32,
    /// Candidates taken from each list before fusion when a search does not say (20).
    pub default_candidate_pool: usize,
    /// How a search that does not say fuses its lists (`None`: the active embedder's
    /// default, [`FusionDefaults::for_embedder`]).
    pub default_fusion: Option<FusionDefaults>,
    /// Record recall on returned facts (strength +0.1, `lastAccessedAt`); default on.
    pub record_access: bool,
    /// Decay and eviction.
    pub maintenance: MaintenanceConfig,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            promote_after_successes: 3,
            default_char_limit: 2000,
            entity_merge_cosine: 0.92,
            default_candidate_pool: 20,
            default_fusion: None,
            record_access: true,
            maintenance: MaintenanceConfig::default(),
        }
    }
}

/// The fusion a search uses when its options do not say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionDefaults {
    /// Rank or score fusion.
    pub method: FusionMethod,
    /// Weight of the vector list (the lexical list weighs 1).
    pub vector_weight: f64,
}

impl FusionDefaults {
    /// The default for an embedder provider (`builtin`, `minilm`, `openai`, …; `None` when
    /// no embedder is active), chosen from LoCoMo runs on the dev half only (the crate
    /// README's table): score fusion beat rank fusion with MiniLM at every weight tried;
    /// MiniLM vectors help most at a quarter of the lexical weight, while the builtin
    /// hashed n-grams only break ties (0.05).
    pub fn for_embedder(provider: Option<&str>) -> Self {
        let vector_weight = match provider {
            Some(mindgate_embed::BUILTIN_PROVIDER) | None => 0.05,
            Some(_) => 0.25,
        };
        Self {
            method: FusionMethod::Score,
            vector_weight,
        }
    }
}

/// How to open a store.
pub struct OpenOptions {
    /// Where "now" comes from.
    pub clock: Arc<dyn Clock>,
    /// The active embedder (none: lexical search only).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Tunables.
    pub config: MemoryConfig,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            embedder: None,
            config: MemoryConfig::default(),
        }
    }
}

impl OpenOptions {
    /// With this embedder.
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// With this clock.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}
