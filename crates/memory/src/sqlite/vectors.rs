//! Vectors: f32 blobs per embedder in `memory_vectors`, mirrored in memory for an exact
//! cosine scan in safe Rust. The mirror catches up incrementally (`id > last seen`) before
//! each search, so rows written by another process are seen too.

use rusqlite::{Connection, params};

use crate::error::Result;

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

/// The in-memory mirror of one embedder's vectors.
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
    /// Vectors, `dim` values each, back to back.
    pub data: Vec<f32>,
}

impl VectorCache {
    /// Brings the mirror up to date for `embedder`.
    pub fn refresh(&mut self, conn: &Connection, embedder: &str, dim: usize) -> Result<()> {
        if self.embedder.as_deref() != Some(embedder) || self.dim != dim {
            *self = Self {
                embedder: Some(embedder.to_owned()),
                dim,
                ..Self::default()
            };
        }
        let mut stmt = conn.prepare_cached(
            "SELECT id, item_rowid, vec FROM memory_vectors WHERE embedder = ?1 AND id > ?2 ORDER BY id",
        )?;
        let mut rows = stmt.query(params![embedder, self.last_id])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let rowid: i64 = row.get(1)?;
            let blob: Vec<u8> = row.get(2)?;
            let vec = from_blob(&blob);
            self.last_id = id;
            if vec.len() != dim {
                tracing::warn!(
                    rowid,
                    len = vec.len(),
                    dim,
                    "skipping a vector of the wrong dimension"
                );
                continue;
            }
            self.rowids.push(rowid);
            self.data.extend_from_slice(&vec);
        }
        Ok(())
    }

    /// Forgets everything (after a re-embed).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Cosine of `query` (unit length) against every vector: `(score, index)` pairs.
    pub fn scores(&self, query: &[f32]) -> Vec<(f32, u32)> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        self.data
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(i, v)| (dot(v, query), i as u32))
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_dot_matches() {
        let v = vec![0.5f32, -1.25, 3.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(from_blob(&to_blob(&v)), v);
        let naive: f32 = v.iter().map(|x| x * x).sum();
        assert!((dot(&v, &v) - naive).abs() < 1e-4);
    }
}
