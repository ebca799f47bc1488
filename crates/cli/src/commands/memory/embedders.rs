//! Embedder names on the command line → embedders, through `mindgate-embed`'s selection
//! (so `MINDGATE_MINILM_DIR`, the imported model and the OpenAI variables apply).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use mindgate_embed::{Embedder, EmbedderConfig, EmbedderKind};

/// The Mindgate home: `$MINDGATE_HOME`, else `~/.mindgate`.
pub fn home() -> anyhow::Result<PathBuf> {
    if let Some(h) = std::env::var_os("MINDGATE_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    Ok(dirs::home_dir()
        .context("no home directory: set MINDGATE_HOME")?
        .join(".mindgate"))
}

/// The embedder a `--embedder` name asks for (`none`: no vectors, lexical search only).
pub fn by_name(name: &str) -> anyhow::Result<Option<Arc<dyn Embedder>>> {
    if name.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let kind: EmbedderKind = name.parse()?;
    let mut config = EmbedderConfig::from_env(home()?)?;
    config.requested = Some(kind);
    let embedder =
        mindgate_embed::select(&config).with_context(|| format!("loading the {kind} embedder"))?;
    Ok(Some(Arc::from(embedder)))
}
