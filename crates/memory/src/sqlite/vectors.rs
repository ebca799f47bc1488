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
    /// Brings the mirror up to date for `embedder`.
    pub fn refresh(&mut self, conn: &Connection, embedder: &str, dim: usize) -> Result<()> {
        if self.embedder.as_deref() != Some(embedder) || self.dim != dim {
            *self = Self {
                embedder: Some(embedder.to_owned()),
                dim,
                columns: vec![Vec::new(); dim],
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
            let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
            self.last_id = id;
            if blob.len() != dim * 4 {
                tracing::warn!(
                    rowid,
                    bytes = blob.len(),
                    dim,
                    "skipping a vector of the wrong dimension"
                );
                continue;
            }
            self.rowids.push(rowid);
            for (column, c) in self.columns.iter_mut().zip(blob.chunks_exact(4)) {
                column.push(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            }
        }
        Ok(())
    }

    /// Vectors mirrored.
    fn len(&self) -> usize {
        self.rowids.len()
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

    #[test]
    #[allow(clippy::unwrap_used)]
    fn column_scan_matches_row_dot_products() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE memory_vectors (id INTEGER PRIMARY KEY, item_rowid INTEGER, embedder TEXT, vec BLOB)",
        )
        .unwrap();
        let rows: Vec<Vec<f32>> = (0..5)
            .map(|i| (0..6).map(|d| ((i * 7 + d * 3) % 5) as f32 - 2.0).collect())
            .collect();
        for (i, v) in rows.iter().enumerate() {
            conn.execute(
                "INSERT INTO memory_vectors (item_rowid, embedder, vec) VALUES (?1, 'e', ?2)",
                params![i as i64 + 100, to_blob(v)],
            )
            .unwrap();
        }
        // A vector of the wrong dimension is skipped, not mirrored.
        conn.execute(
            "INSERT INTO memory_vectors (item_rowid, embedder, vec) VALUES (999, 'e', ?1)",
            params![to_blob(&[1.0, 2.0])],
        )
        .unwrap();
        let mut cache = VectorCache::default();
        cache.refresh(&conn, "e", 6).unwrap();
        assert_eq!(cache.rowids, vec![100, 101, 102, 103, 104]);
        // A sparse query (zeros skipped) and a dense one both give every row's dot product.
        for query in [
            vec![0.0, 1.5, 0.0, 0.0, -0.5, 0.0],
            vec![0.3, -1.0, 2.0, 0.5, 1.0, -0.2],
        ] {
            let scores = cache.scores(&query);
            assert_eq!(scores.len(), 5);
            for (score, i) in scores {
                let want = dot(&rows[i as usize], &query);
                assert!((score - want).abs() < 1e-5, "{score} vs {want}");
            }
        }
        assert!(cache.scores(&[1.0]).is_empty(), "wrong query dimension");
    }
}
