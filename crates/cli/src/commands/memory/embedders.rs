//! Embedder names on the command line → embedders, through `mindgate-embed`'s selection
//! (so `MINDGATE_MINILM_DIR`, the imported model and the OpenAI variables apply).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use mindgate_embed::{Embedder, EmbedderConfig, EmbedderKind};
use mindgate_home::Home;

/// The embedder a `--embedder` name asks for (`none`: no vectors, lexical search only).
pub fn by_name(name: &str) -> anyhow::Result<Option<Arc<dyn Embedder>>> {
    if name.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let kind: EmbedderKind = name.parse()?;
    let config = config(Some(kind), None)?;
    let embedder =
        mindgate_embed::select(&config).with_context(|| format!("loading the {kind} embedder"))?;
    Ok(Some(Arc::from(embedder)))
}

/// The embedder configuration of the Mindgate home and the environment, with an explicit
/// kind or model directory from the command line on top.
pub fn config(
    requested: Option<EmbedderKind>,
    model_dir: Option<PathBuf>,
) -> anyhow::Result<EmbedderConfig> {
    let mut config = EmbedderConfig::from_env(Home::from_env().root().to_path_buf())?;
    if requested.is_some() {
        config.requested = requested;
    }
    if model_dir.is_some() {
        config.minilm_dir = model_dir;
    }
    Ok(config)
}
