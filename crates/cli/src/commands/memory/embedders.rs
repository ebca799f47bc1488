//! Embedder names on the command line → embedders.

use std::sync::Arc;

use anyhow::bail;
use mindgate_embed::Embedder;

/// The embedder a `--embedder` name asks for (`none`: no vectors, lexical search only).
pub fn by_name(name: &str) -> anyhow::Result<Option<Arc<dyn Embedder>>> {
    match name {
        "none" => Ok(None),
        "builtin" | "minilm" | "openai" => {
            bail!("the {name} embedder is not part of this build yet; use --embedder none")
        }
        other => bail!("unknown embedder {other:?}: expected builtin, minilm, openai or none"),
    }
}
