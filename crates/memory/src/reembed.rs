//! Re-embedding every record with the store's active embedder, once for both backends:
//! what is embedded (every record with text, live or not, so historical reads keep their
//! vectors; every entity name), in batches of [`BATCH`] (one transaction each, so an
//! interrupted run keeps what it stored and a second run resumes), the progress it
//! reports, and the switch at the end (the active embedder becomes the store's, the other
//! embedders' record vectors are dropped, one `reembed` ledger row).

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};

/// Rows embedded per batch (and per transaction).
pub const BATCH: usize = 64;

/// Progress of a re-embed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReembedProgress {
    /// Records embedded so far.
    pub done: usize,
    /// Records to embed.
    pub total: usize,
}

/// What a backend reads and writes for a re-embed.
pub(crate) trait ReembedStore {
    /// `(rowid, indexed text)` of every record with text and no vector under `key`, in
    /// insertion order.
    fn items_without_vectors(&self, key: &str) -> Result<Vec<(i64, String)>>;
    /// Stores record vectors under `key` in one transaction.
    fn store_item_vectors(&self, key: &str, vectors: &[(i64, &[f32])]) -> Result<()>;
    /// `(id, name)` of every entity with no vector under `key`, in insertion order.
    fn entities_without_vectors(&self, key: &str) -> Result<Vec<(String, String)>>;
    /// Stores entity name vectors under `key` in one transaction.
    fn store_entity_vectors(&self, key: &str, vectors: &[(String, &[f32])]) -> Result<()>;
    /// In one transaction: makes `key` the store's embedder, drops the other embedders'
    /// record vectors and appends the store's `reembed` ledger row with the detail
    /// `detail(previous embedder)` gives.
    fn switch_embedder(&self, key: &str, detail: &dyn Fn(Option<String>) -> Value) -> Result<()>;
    /// Embeds texts with the active embedder.
    fn embed(&self, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>>;
    /// Drops the in-memory vector mirror.
    fn clear_vector_cache(&self);
}

/// Re-embeds the store with the embedder `key` names (see the module docs); returns how
/// many records were embedded.
pub(crate) fn reembed(
    store: &dyn ReembedStore,
    key: Option<&str>,
    progress: &mut dyn FnMut(ReembedProgress),
) -> Result<usize> {
    let key = key
        .ok_or_else(|| MemoryError::invalid("embedder", "re-embedding needs an active embedder"))?;
    let todo = store.items_without_vectors(key)?;
    let total = todo.len();
    progress(ReembedProgress { done: 0, total });
    let mut done = 0;
    for chunk in todo.chunks(BATCH) {
        let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
        let vecs = store.embed(&texts)?.unwrap_or_default();
        let rows: Vec<(i64, &[f32])> = chunk
            .iter()
            .zip(&vecs)
            .map(|((rowid, _), v)| (*rowid, v.as_slice()))
            .collect();
        store.store_item_vectors(key, &rows)?;
        done += chunk.len();
        progress(ReembedProgress { done, total });
    }
    let entities = store.entities_without_vectors(key)?;
    for chunk in entities.chunks(BATCH) {
        let names: Vec<&str> = chunk.iter().map(|(_, n)| n.as_str()).collect();
        let vecs = store.embed(&names)?.unwrap_or_default();
        let rows: Vec<(String, &[f32])> = chunk
            .iter()
            .zip(&vecs)
            .map(|((id, _), v)| (id.clone(), v.as_slice()))
            .collect();
        store.store_entity_vectors(key, &rows)?;
    }
    store.switch_embedder(
        key,
        &|previous| json!({ "from": previous, "to": key, "embedded": total }),
    )?;
    store.clear_vector_cache();
    Ok(total)
}
