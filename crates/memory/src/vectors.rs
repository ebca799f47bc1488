//! Vectors, the same for every backend: little-endian f32 blobs per embedder (a `BLOB`
//! in SQLite, a `bytea` in PostgreSQL), mirrored in memory for an exact cosine scan in safe
//! Rust. A backend's refresh feeds the mirror the rows with `id > last seen` before each
//! search, so rows written by another process (or instance) are seen too.

use mindgate_embed::Embedder;

use crate::error::{MemoryError, Result};

/// Encodes a vector as little-endian f32 bytes.
pub fn to_blob(vec: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vec.len() * 4);
    for v in vec {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Decodes little-endian f32 bytes (a trailing partial value is ignored).
pub fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The in-memory mirror of one embedder's vectors, stored dimension-major (one column of
/// `len()` values per dimension) so a scan touches only the query's non-zero dimensions:
/// the builtin embedder's hashed n-gram vectors are sparse (a short query sets a tenth of
/// them), and a dense query streams the same bytes as a row-major scan would.
#[derive(Debug, Default)]
pub struct VectorCache {
    /// Which embedder the mirror holds.
    pub embedder: Option<String>,
    /// Dimension.
    pub dim: usize,
    /// Highest `memory_vectors.id` mirrored.
    pub last_id: i64,
    /// Item rowid of each vector.
    pub rowids: Vec<i64>,
    /// `dim` columns: `columns[d][i]` is value `d` of vector `i`.
    columns: Vec<Vec<f32>>,
}

impl VectorCache {
    /// Makes the mirror one of `embedder`'s vectors of `dim` (emptied when it held another).
    pub fn reset_for(&mut self, embedder: &str, dim: usize) {
        if self.embedder.as_deref() != Some(embedder) || self.dim != dim {
            *self = Self {
                embedder: Some(embedder.to_owned()),
                dim,
                columns: vec![Vec::new(); dim],
                ..Self::default()
            };
        }
    }

    /// Mirrors one stored vector (`id` is its row id, increasing); one of the wrong
    /// dimension is skipped with a warning.
    pub fn push(&mut self, id: i64, rowid: i64, blob: &[u8]) {
        self.last_id = self.last_id.max(id);
        if blob.len() != self.dim * 4 {
            tracing::warn!(
                rowid,
                bytes = blob.len(),
                dim = self.dim,
                "skipping a vector of the wrong dimension"
            );
            return;
        }
        self.rowids.push(rowid);
        for (column, c) in self.columns.iter_mut().zip(blob.chunks_exact(4)) {
            column.push(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        }
    }

    /// Vectors mirrored.
    pub fn len(&self) -> usize {
        self.rowids.len()
    }

    /// True when nothing is mirrored.
    pub fn is_empty(&self) -> bool {
        self.rowids.is_empty()
    }

    /// Forgets everything (after a re-embed).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Cosine of `query` (unit length) against every vector: `(score, index)` pairs.
    /// Exact: every vector is scored over every dimension where the query is non-zero
    /// (the others add nothing to a dot product).
    pub fn scores(&self, query: &[f32]) -> Vec<(f32, u32)> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut acc = vec![0.0f32; self.len()];
        for (column, &q) in self.columns.iter().zip(query) {
            if q == 0.0 {
                continue;
            }
            axpy(&mut acc, q, column);
        }
        acc.into_iter()
            .enumerate()
            .map(|(i, s)| (s, i as u32))
            .collect()
    }
}

/// `acc[i] += a · x[i]`, written so the compiler vectorises it.
fn axpy(acc: &mut [f32], a: f32, x: &[f32]) {
    for (y, x) in acc.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// Dot product (cosine of unit vectors), written so the compiler vectorises it.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let chunks = a.len() / 8;
    for c in 0..chunks {
        let (x, y) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..a.len().min(b.len()) {
        sum += a[i] * b[i];
    }
    sum
}
/// Most texts embedded in one call.
const EMBED_BATCH: usize = 64;

/// Embeds texts with `embedder` (none: `None`); an embedder that answers another number of
/// vectors than texts is an error.
pub fn embed(embedder: Option<&dyn Embedder>, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>> {
    match embedder {
        Some(e) if !texts.is_empty() => {
            let vecs = e.embed(texts)?;
            if vecs.len() != texts.len() {
                return Err(MemoryError::Conflict(format!(
                    "the embedder returned {} vectors for {} texts",
                    vecs.len(),
                    texts.len()
                )));
            }
            Ok(Some(vecs))
        }
        _ => Ok(None),
    }
}

/// Embeds a search query with `embedder` ([`Embedder::embed_query`]; none: `None`).
pub fn embed_query(embedder: Option<&dyn Embedder>, query: &str) -> Result<Option<Vec<f32>>> {
    Ok(embedder.map(|e| e.embed_query(query)).transpose()?)
}

/// Embeds `texts` in batches (each `None` when no embedder is active).
pub fn embed_all(embedder: Option<&dyn Embedder>, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(EMBED_BATCH) {
        match embed(embedder, chunk)? {
            Some(vecs) => out.extend(vecs.into_iter().map(Some)),
            None => out.extend(chunk.iter().map(|_| None)),
        }
    }
    Ok(out)
}
