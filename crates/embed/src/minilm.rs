//! all-MiniLM-L6-v2 run in process with candle (CPU): BERT encoder, mean pooling over
//! the attention mask, L2 normalisation — the sentence-transformers recipe.
//!
//! The weights are read into memory and loaded with candle's buffered safetensors loader
//! (the workspace forbids `unsafe`, so no memory map), after their sha256 was checked
//! against [`KNOWN_MODELS`](crate::KNOWN_MODELS).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};
use tracing::debug;

use crate::models::{
    CONFIG_FILE, KNOWN_MODELS, KnownModel, MANIFEST_FILE, TOKENIZER_FILE, WEIGHTS_FILE,
    identify_weights, read_manifest, sha256_hex,
};
use crate::{EmbedError, Embedder, EmbedderId, l2_normalise};

/// The provider name of in-process MiniLM models.
pub const MINILM_PROVIDER: &str = "minilm";
/// Longest input, in tokens (all-MiniLM-L6-v2's `max_seq_length`); longer texts are cut.
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass.
const FORWARD_BATCH: usize = 32;

/// all-MiniLM-L6-v2 in process; its id is `minilm:all-MiniLM-L6-v2@384`.
pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    known: KnownModel,
    dir: PathBuf,
    load_time: Duration,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("model", &self.known.name)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl MiniLmEmbedder {
    /// Loads the model in `dir` (`config.json`, `tokenizer.json`, `model.safetensors`).
    ///
    /// The weights must be a known model's: a directory imported by Mindgate is trusted
    /// by its manifest's sha256 when the file size agrees nothing changed since; any other
    /// directory has its weights hashed at load.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let started = Instant::now();
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path)
                .map_err(|err| EmbedError::Model(format!("cannot read {}: {err}", path.display())))
        };
        let config_bytes = read(CONFIG_FILE)?;
        let config: Config = serde_json::from_slice(&config_bytes).map_err(|err| {
            EmbedError::Model(format!(
                "{} is not a BERT configuration: {err}",
                dir.join(CONFIG_FILE).display()
            ))
        })?;
        let weights = read(WEIGHTS_FILE)?;
        let known = identify(dir, &weights)?;
        if config.hidden_size != known.dimension {
            return Err(EmbedError::Model(format!(
                "{CONFIG_FILE} in {} says hidden_size {}, but {} is {}-dimensional",
                dir.display(),
                config.hidden_size,
                known.name,
                known.dimension
            )));
        }

        let tokenizer_bytes = read(TOKENIZER_FILE)?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes).map_err(|err| {
            EmbedError::Model(format!(
                "cannot load {}: {err}",
                dir.join(TOKENIZER_FILE).display()
            ))
        })?;
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|err| EmbedError::Model(format!("cannot set truncation: {err}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token: "[PAD]".to_owned(),
            ..PaddingParams::default()
        }));

        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DTYPE, &device)
            .map_err(|err| model_error(dir, err))?;
        let model = BertModel::load(vb, &config).map_err(|err| model_error(dir, err))?;
        let load_time = started.elapsed();
        debug!(dir = %dir.display(), ?load_time, "loaded {}", known.name);
        Ok(Self {
            model,
            tokenizer,
            device,
            known,
            dir: dir.to_path_buf(),
            load_time,
        })
    }

    /// The directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How long [`load`](Self::load) took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// One forward pass over `texts` (non-empty): their mean-pooled, normalised vectors.
    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|err| EmbedError::Input(format!("cannot tokenise: {err}")))?;
        let batch = encodings.len();
        let length = encodings.first().map(|e| e.get_ids().len()).unwrap_or(0);
        let mut ids = Vec::with_capacity(batch * length);
        let mut mask = Vec::with_capacity(batch * length);
        for encoding in &encodings {
            if encoding.get_ids().len() != length {
                return Err(EmbedError::Input(
                    "the tokenizer did not pad the batch to one length".to_owned(),
                ));
            }
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let inference = |err: candle_core::Error| {
            EmbedError::Model(format!("{} inference failed: {err}", self.known.name))
        };
        let ids = Tensor::from_vec(ids, (batch, length), &self.device).map_err(inference)?;
        let mask = Tensor::from_vec(mask, (batch, length), &self.device).map_err(inference)?;
        let type_ids = ids.zeros_like().map_err(inference)?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(inference)?;
        let weights = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(inference)?;
        let summed = hidden
            .broadcast_mul(&weights)
            .and_then(|t| t.sum(1))
            .map_err(inference)?;
        let counts = weights.sum(1).map_err(inference)?;
        let mean = summed.broadcast_div(&counts).map_err(inference)?;
        let mut rows: Vec<Vec<f32>> = mean.to_vec2().map_err(inference)?;
        for row in &mut rows {
            l2_normalise(row);
        }
        Ok(rows)
    }
}

impl Embedder for MiniLmEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId {
            provider: MINILM_PROVIDER.to_owned(),
            model: self.known.name.to_owned(),
            dimension: self.known.dimension,
        }
    }

    /// Texts are grouped by length into forward passes of up to 32 (less padding);
    /// whitespace-only texts embed to zeros.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = vec![vec![0.0f32; self.known.dimension]; texts.len()];
        let mut order: Vec<usize> = (0..texts.len())
            .filter(|i| !texts[*i].trim().is_empty())
            .collect();
        order.sort_by_key(|i| texts[*i].len());
        for chunk in order.chunks(FORWARD_BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|i| texts[*i]).collect();
            for (i, vector) in chunk.iter().zip(self.forward(&batch)?) {
                out[*i] = vector;
            }
        }
        Ok(out)
    }

    fn dimension(&self) -> usize {
        self.known.dimension
    }

    fn preferred_batch(&self) -> usize {
        FORWARD_BATCH
    }
}

/// Which known model `weights` are: by the manifest of an imported directory (if the
/// size agrees), else by hashing them.
fn identify(dir: &Path, weights: &[u8]) -> Result<KnownModel, EmbedError> {
    if dir.join(MANIFEST_FILE).is_file() {
        let manifest = read_manifest(dir)?;
        if manifest.weights_bytes == weights.len() as u64
            && let Ok(known) = identify_weights(&manifest.weights_sha256, KNOWN_MODELS)
        {
            return Ok(known);
        }
    }
    identify_weights(&sha256_hex(weights), KNOWN_MODELS).map_err(|err| match err {
        EmbedError::Model(message) => EmbedError::Model(format!("{}: {message}", dir.display())),
        other => other,
    })
}

fn model_error(dir: &Path, err: candle_core::Error) -> EmbedError {
    EmbedError::Model(format!(
        "cannot load the weights in {}: {err}",
        dir.join(WEIGHTS_FILE).display()
    ))
}
