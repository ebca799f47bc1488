//! The blocking HTTP client of OpenAI-compatible endpoints.

use serde::Deserialize;
use tracing::debug;

use super::route::{Route, excerpt};
use super::{DEFAULT_TIMEOUT, OPENAI_PROVIDER, OpenAiConfig};
use crate::{EmbedError, Embedder, EmbedderId, l2_normalise};

/// Largest answer body read (a batch of 64 × 3072-dim vectors as JSON is ≈ 4 MB).
const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

/// An embedder that calls an OpenAI-compatible endpoint; its id is
/// `openai:<model>@<dim>`. Vectors are L2-normalised here whatever the endpoint returns;
/// empty texts embed to zeros without a request (the OpenAI API refuses them).
#[derive(Debug)]
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    endpoint: String,
    dimension: usize,
    route: Route,
}

impl OpenAiEmbedder {
    /// Checks the configuration and, unless it names the dimension, asks the endpoint
    /// once (one short text) to learn it.
    pub fn connect(config: OpenAiConfig) -> Result<Self, EmbedError> {
        let route = config.endpoint.route("embeddings", DEFAULT_TIMEOUT)?;
        let endpoint = route.url().to_owned();
        let mut embedder = Self {
            dimension: config.dimension.unwrap_or(0),
            config,
            endpoint,
            route,
        };
        if embedder.dimension == 0 {
            let probe = embedder.request(&["dimension probe"], Role::Document)?;
            let dimension = probe.first().map(Vec::len).unwrap_or(0);
            if dimension == 0 {
                return Err(EmbedError::Remote(format!(
                    "{} answered an empty embedding",
                    embedder.endpoint
                )));
            }
            debug!(endpoint = %embedder.endpoint, dimension, "learned the embedding dimension");
            embedder.dimension = dimension;
        }
        Ok(embedder)
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// One request for `texts` (all non-empty): the vectors in input order, unchecked
    /// for dimension and not normalised.
    fn request(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut body = serde_json::json!({ "model": self.config.endpoint.model, "input": texts });
        if let Some(types) = &self.config.input_type {
            body["input_type"] = serde_json::Value::from(match role {
                Role::Query => types.query.as_str(),
                Role::Document => types.document.as_str(),
            });
        }
        let text = self
            .route
            .post(&body, MAX_ANSWER_BYTES)
            .map_err(|e| EmbedError::Remote(e.0))?;
        let answer: EmbeddingsAnswer = serde_json::from_str(&text).map_err(|err| {
            EmbedError::Remote(format!(
                "{} answered a body that is not an embeddings answer ({err}): {}",
                self.endpoint,
                excerpt(&text)
            ))
        })?;
        if answer.data.len() != texts.len() {
            return Err(EmbedError::Remote(format!(
                "{} answered {} embeddings for {} texts",
                self.endpoint,
                answer.data.len(),
                texts.len()
            )));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in answer.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            match slots.get_mut(index) {
                Some(slot @ None) => *slot = Some(item.embedding),
                _ => {
                    return Err(EmbedError::Remote(format!(
                        "{} answered a missing, repeated or out-of-range index {index}",
                        self.endpoint
                    )));
                }
            }
        }
        Ok(slots.into_iter().flatten().collect())
    }

    /// Embeds `texts` in batches as `role` (see [`Embedder::embed`]).
    fn embed_as(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = vec![vec![0.0f32; self.dimension]; texts.len()];
        let wanted: Vec<usize> = (0..texts.len())
            .filter(|i| !texts[*i].trim().is_empty())
            .collect();
        for chunk in wanted.chunks(self.config.batch.max(1)) {
            let batch: Vec<&str> = chunk.iter().map(|i| texts[*i]).collect();
            let vectors = self.request(&batch, role)?;
            for (i, mut vector) in chunk.iter().zip(vectors) {
                if vector.len() != self.dimension {
                    return Err(EmbedError::Remote(format!(
                        "{} answered a {}-dimensional vector; {} expected for {}",
                        self.endpoint,
                        vector.len(),
                        self.dimension,
                        self.id()
                    )));
                }
                l2_normalise(&mut vector);
                out[*i] = vector;
            }
        }
        Ok(out)
    }
}

/// What a text is embedded as: a search query or a stored text.
#[derive(Debug, Clone, Copy)]
enum Role {
    Query,
    Document,
}

impl Embedder for OpenAiEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId {
            provider: OPENAI_PROVIDER.to_owned(),
            model: self.config.endpoint.model.clone(),
            dimension: self.dimension,
        }
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_as(texts, Role::Document)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_as(&[text], Role::Query)?
            .pop()
            .ok_or_else(|| EmbedError::Input("the embedder returned no vector".to_owned()))
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn preferred_batch(&self) -> usize {
        self.config.batch.max(1)
    }
}

#[derive(Deserialize)]
struct EmbeddingsAnswer {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    index: Option<usize>,
}
