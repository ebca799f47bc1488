//! Text embedders for Mindgate's agent memory, behind one trait.
//!
//! An [`Embedder`] turns texts into L2-normalised `f32` vectors of a fixed
//! dimension. Each embedder has a stable id `<provider>:<model>@<dim>` under which
//! the memory store files its vectors, so vectors of two embedders never mix.
//!
//! Nothing is downloaded at run time: model files come from a directory the user
//! points at (or imported into the Mindgate home).

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
}
