//! The SQLite side of the vector mirror ([`crate::vectors`]): catching up from
//! `memory_vectors`.

use rusqlite::{Connection, params};

use crate::error::Result;
pub use crate::vectors::*;

/// Brings `cache` up to date for `embedder` from the file.
pub fn refresh(
    cache: &mut VectorCache,
    conn: &Connection,
    embedder: &str,
    dim: usize,
) -> Result<()> {
    cache.reset_for(embedder, dim);
    let mut stmt = conn.prepare_cached(
        "SELECT id, item_rowid, vec FROM memory_vectors WHERE embedder = ?1 AND id > ?2 ORDER BY id",
    )?;
    let mut rows = stmt.query(params![embedder, cache.last_id])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let rowid: i64 = row.get(1)?;
        let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
        cache.push(id, rowid, blob);
    }
    Ok(())
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
        refresh(&mut cache, &conn, "e", 6).unwrap();
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
