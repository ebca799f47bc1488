//! Text embedders for Mindgate's agent memory, behind one trait.
//!
//! An [`Embedder`] turns texts into L2-normalised `f32` vectors of a fixed
//! dimension. Each embedder has a stable id `<provider>:<model>@<dim>` under which
//! the memory store files its vectors, so vectors of two embedders never mix.
//!
//! Nothing is downloaded at run time: model files come from a directory the user
//! points at (or imported into the Mindgate home).
//!
//! - [`BuiltinEmbedder`]: deterministic hashed word and character n-grams, zero
//!   configuration, the default.
//! - `MiniLmEmbedder` (feature `minilm`): all-MiniLM-L6-v2 in process with candle, from
//!   a model directory or a model imported with [`import_model`].
//! - `OpenAiEmbedder` (feature `openai`): any OpenAI-compatible `/v1/embeddings`
//!   endpoint ([`OpenAiConfig`]).
//!
//! [`select`] picks the active one from an [`EmbedderConfig`]; [`plan`] says which it
//! would be, and why, without loading it.

mod builtin;
#[cfg(feature = "minilm")]
mod minilm;
pub mod models;
pub mod openai;
pub mod select;

pub use builtin::{
    BUILTIN_DIMENSION, BUILTIN_MODEL, BUILTIN_PROVIDER, BuiltinEmbedder, is_stop_word,
};
#[cfg(feature = "minilm")]
pub use minilm::{MAX_TOKENS, MINILM_PROVIDER, MiniLmEmbedder};
pub use models::{
    ImportReport, ImportedModel, KNOWN_MODELS, KnownModel, MINILM_L6_V2, ModelManifest,
    import_model, imported_models, models_dir,
};
#[cfg(feature = "openai")]
pub use openai::OpenAiEmbedder;
pub use openai::{OPENAI_PROVIDER, OpenAiConfig};
pub use select::{EmbedderConfig, EmbedderKind, Selection, load, plan, select};

use std::fmt;

/// Why an embedder could not produce vectors.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model files are missing, unreadable or do not match what was expected.
    #[error("embedding model unavailable: {0}")]
    Model(String),
    /// The input could not be embedded (for example, it could not be tokenised).
    #[error("cannot embed input: {0}")]
    Input(String),
    /// A remote embedding endpoint failed or answered something unusable.
    #[error("embedding endpoint failed: {0}")]
    Remote(String),
}

impl EmbedError {
    /// The code a view answers this error with: a model or endpoint that cannot serve is
    /// `unavailable`, an input it cannot embed `bad_request`.
    pub fn code(&self) -> mindgate_errors::ErrorCode {
        match self {
            EmbedError::Model(_) | EmbedError::Remote(_) => mindgate_errors::ErrorCode::Unavailable,
            EmbedError::Input(_) => mindgate_errors::ErrorCode::BadRequest,
        }
    }
}

/// The stable identity of an embedder: `<provider>:<model>@<dim>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EmbedderId {
    /// Provider, e.g. `builtin`, `minilm`, `openai`.
    pub provider: String,
    /// Model name within the provider.
    pub model: String,
    /// Vector dimension.
    pub dimension: usize,
}

impl fmt::Display for EmbedderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}@{}", self.provider, self.model, self.dimension)
    }
}

/// Something that turns texts into L2-normalised vectors of one fixed dimension.
pub trait Embedder: Send + Sync {
    /// The embedder's identity; vectors are stored under `id().to_string()`.
    fn id(&self) -> EmbedderId;

    /// Embeds a batch of texts: one vector of `id().dimension` values per text, in order,
    /// each of unit length (or all zeros for a text with nothing to embed).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// The vector dimension (`id().dimension`).
    fn dimension(&self) -> usize {
        self.id().dimension
    }

    /// Embeds one text (a query, say).
    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(&[text])?
            .pop()
            .ok_or_else(|| EmbedError::Input("the embedder returned no vector".to_owned()))
    }

    /// Embeds a search query. Asymmetric models (e5, nomic-embed) embed a query and the
    /// texts it is matched against differently; [`embed`](Self::embed) is for the stored
    /// texts. The default embeds the query as any text ([`embed_one`](Self::embed_one)).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_one(text)
    }

    /// How many texts one [`embed`](Self::embed) call should carry for best throughput;
    /// callers may pass more or fewer.
    fn preferred_batch(&self) -> usize {
        64
    }
}

/// Cosine similarity of two vectors (their dot product divided by both norms);
/// 0 when either is all zeros or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// Scales `v` to unit length in place; leaves an all-zero vector as it is.
pub fn l2_normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in v {
            *x /= norm;
        }
    }
}
