//! Test helpers: a small deterministic embedder (hashed words and character trigrams) and
//! clocks. Not the product's builtin embedder; it only has to put similar texts near.

#![allow(dead_code)]

use mindgate_embed::{EmbedError, Embedder, EmbedderId};

/// Hashed bag of words and trigrams, L2-normalised.
pub struct TestEmbedder {
    pub dim: usize,
    pub model: &'static str,
}

impl TestEmbedder {
    pub fn new() -> Self {
        Self {
            dim: 64,
            model: "hash",
        }
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl Embedder for TestEmbedder {
    fn id(&self) -> EmbedderId {
        EmbedderId {
            provider: "test".into(),
            model: self.model.into(),
            dimension: self.dim,
        }
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                let lower = t.to_lowercase();
                // A token written `-word` points the other way (a negative cosine with
                // `word`, as trained embedders give opposite sentences).
                for token in lower.split_whitespace() {
                    let sign = if token.starts_with('-') { -1.0 } else { 1.0 };
                    for word in token
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| !w.is_empty())
                    {
                        v[(fnv(word.as_bytes()) % self.dim as u64) as usize] += sign;
                        let chars: Vec<char> = format!(" {word} ").chars().collect();
                        for w in chars.windows(3) {
                            let s: String = w.iter().collect();
                            v[(fnv(s.as_bytes()) % self.dim as u64) as usize] += 0.3 * sign;
                        }
                    }
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
                v
            })
            .collect())
    }
}

/// 2024-01-01T00:00:00Z in epoch ms.
pub const T0: i64 = 1_704_067_200_000;
/// One hour in ms.
pub const HOUR: i64 = 3_600_000;
