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
    /// Predicates single-valued besides [`crate::rules::conflicts::DEFAULT_SINGLE_VALUED`]
    /// (`MINDGATE_MEMORY_SINGLE_VALUED`, comma-separated, where the store is opened for the
    /// server, MCP and CLI).
    pub single_valued_predicates: Vec<String>,
    /// Lexical hits whose words expand the query for a second lexical pass
    /// ([`crate::feedback`]) when a search does not say; 0 turns the pass off.
    pub query_feedback: usize,
    /// Share of a hit's score given to its neighbours in the same session when a search
    /// does not say ([`crate::neighbours`], default [`crate::neighbours::DEFAULT_WEIGHT`]);
    /// 0 turns neighbour context off.
    pub neighbour_weight: f64,
    /// Neighbours on each side of a hit that share its score (default
    /// [`crate::neighbours::DEFAULT_WINDOW`]).
    pub neighbour_window: usize,
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
            single_valued_predicates: Vec::new(),
            query_feedback: 0,
            neighbour_weight: crate::neighbours::DEFAULT_WEIGHT,
            neighbour_window: crate::neighbours::DEFAULT_WINDOW,
        }
    }
}

/// The vector floor of the builtin hashed n-gram embedder: unrelated texts share few
/// n-grams, so their cosines sit near 0; on the LoCoMo dev half a floor of 0.1 costs no
/// recall (crates/memory/README.md).
pub const BUILTIN_VECTOR_FLOOR: f64 = 0.1;

/// The vector floor of a trained embedder (MiniLM, OpenAI-compatible): their cosines between
/// unrelated English sentences sit around 0.0–0.2; measured on the LoCoMo dev half with
/// MiniLM (crates/memory/README.md).
pub const TRAINED_VECTOR_FLOOR: f64 = 0.2;

/// The fusion a search uses when its options do not say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionDefaults {
    /// Rank or score fusion.
    pub method: FusionMethod,
    /// Weight of the vector list (the lexical list weighs 1).
    pub vector_weight: f64,
    /// Least cosine a vector candidate needs to count as evidence (below it, a record
    /// without a lexical match is never a hit).
    pub vector_floor: f64,
}

impl FusionDefaults {
    /// The default for an embedder provider (`builtin`, `minilm`, `openai`, …; `None` when
    /// no embedder is active), chosen from LoCoMo runs on the dev half only (the crate
    /// README's table): score fusion beat rank fusion with MiniLM at every weight tried;
    /// MiniLM vectors help most at a quarter of the lexical weight, while the builtin
    /// hashed n-grams only break ties (0.05). The vector floor is calibrated the same way
    /// ([`BUILTIN_VECTOR_FLOOR`], [`TRAINED_VECTOR_FLOOR`]).
    pub fn for_embedder(provider: Option<&str>) -> Self {
        let (vector_weight, vector_floor) = match provider {
            Some(mindgate_embed::BUILTIN_PROVIDER) | None => (0.05, BUILTIN_VECTOR_FLOOR),
            Some(_) => (0.25, TRAINED_VECTOR_FLOOR),
        };
        Self {
            method: FusionMethod::Score,
            vector_weight,
            vector_floor,
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
