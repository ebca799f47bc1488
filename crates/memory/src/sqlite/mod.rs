//! The embedded default backend: one SQLite file (`$MINDGATE_HOME/memory.db`), WAL, mode
//! 0600, numbered migrations, append-only rows with tombstones and a history ledger.

pub(crate) mod belief;
pub(crate) mod entities;
pub(crate) mod item_table;
pub(crate) mod items;
pub(crate) mod ledger;
mod maintenance;
pub mod migrations;
mod reembed;
mod review;
mod search;
mod transfer;
mod vectors;
pub(crate) mod working;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use mindgate_embed::Embedder;
use mindgate_home::private_fs;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::error::{MemoryError, Result};
use crate::parts::StoreParts;

pub use crate::config::{FusionDefaults, MemoryConfig, OpenOptions};
pub use crate::maintenance::{MaintenanceConfig, MaintenanceReport, retention};
pub use crate::reembed::ReembedProgress;
pub use crate::rules::belief::FactAt;
pub use crate::rules::listing::{ItemFilter, MAX_LIST};
pub use crate::transfer::{EXPORT_FORMAT, EXPORT_VERSION, MAX_IMPORT_LINE, TransferReport};

/// The SQLite memory store.
pub struct SqliteMemory {
    conn: Mutex<Connection>,
    parts: StoreParts,
}

impl std::fmt::Debug for SqliteMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteMemory")
            .field("embedder", &self.parts.embedder_key)
            .finish_non_exhaustive()
    }
}

impl SqliteMemory {
    /// Opens (creating it, mode 0600, parent 0700) and migrates the database file.
    ///
    /// Refused with [`MemoryError::EmbedderMismatch`] when the file's vectors were made by
    /// another embedder than `options.embedder` (re-embed with [`SqliteMemory::reembed`]
    /// from a store opened with [`SqliteMemory::open_for_reembed`]).
    pub fn open(path: &Path, options: OpenOptions) -> Result<Self> {
        prepare_path(path)?;
        let conn = Connection::open(path)?;
        Self::from_connection(conn, options, true)
    }

    /// Opens the file without the embedder check, for re-embedding it.
    pub fn open_for_reembed(path: &Path, options: OpenOptions) -> Result<Self> {
        prepare_path(path)?;
        let conn = Connection::open(path)?;
        Self::from_connection(conn, options, false)
    }

    /// A private in-memory store (tests, benchmarks).
    pub fn open_in_memory(options: OpenOptions) -> Result<Self> {
        Self::from_connection(Connection::open_in_memory()?, options, true)
    }

    fn from_connection(mut conn: Connection, options: OpenOptions, check: bool) -> Result<Self> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        migrations::migrate(&mut conn)?;
        if check {
            check_embedder(&conn, options.embedder.as_deref())?;
        }
        Ok(Self {
            conn: Mutex::new(conn),
            parts: StoreParts::new(options),
        })
    }

    /// The store's tunables.
    pub fn config(&self) -> &MemoryConfig {
        &self.parts.config
    }

    /// The fusion of a search whose options do not say: the configured one, else the
    /// active embedder's default.
    pub fn fusion_defaults(&self) -> FusionDefaults {
        self.parts.fusion_defaults()
    }

    /// The active embedder's id (`<provider>:<model>@<dim>`).
    pub fn embedder_id(&self) -> Option<&str> {
        self.parts.embedder_key.as_deref()
    }

    /// The embedder the file's vectors belong to, if any.
    pub fn stored_embedder(&self) -> Result<Option<String>> {
        stored_embedder(&self.lock())
    }

    /// Number of ledger rows (the whole store).
    pub fn ledger_len(&self) -> Result<i64> {
        ledger::count(&self.lock())
    }

    /// Number of rows of every kind, live or not (nothing is ever removed).
    pub fn row_count(&self) -> Result<i64> {
        Ok(self
            .lock()
            .query_row("SELECT COUNT(*) FROM memory_items", [], |r| r.get(0))?)
    }

    /// Drops the in-memory vector cache (it is rebuilt from the file on the next search).
    pub(crate) fn clear_vector_cache(&self) {
        self.parts
            .vectors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    pub(crate) fn now(&self) -> i64 {
        self.parts.now()
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one immediate transaction; nothing is written when it fails.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>, i64) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let now = self.now();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let out = f(&tx, now)?;
        tx.commit()?;
        Ok(out)
    }

    /// Embeds texts with the active embedder (none: `None`).
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>> {
        crate::vectors::embed(self.parts.embedder.as_deref(), texts)
    }

    /// Stores a vector for an item under the active embedder and records the embedder.
    pub(crate) fn store_vector(tx: &Connection, key: &str, rowid: i64, vec: &[f32]) -> Result<()> {
        tx.execute(
            "INSERT OR REPLACE INTO memory_vectors (item_rowid, embedder, vec) VALUES (?1, ?2, ?3)",
            params![rowid, key, vectors::to_blob(vec)],
        )?;
        tx.execute(
            "INSERT OR IGNORE INTO memory_meta (key, value) VALUES ('embedder', ?1)",
            params![key],
        )?;
        Ok(())
    }
}

pub(crate) fn stored_embedder(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM memory_meta WHERE key = 'embedder'",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

fn check_embedder(conn: &Connection, embedder: Option<&dyn Embedder>) -> Result<()> {
    let (Some(stored), Some(active)) = (stored_embedder(conn)?, embedder) else {
        return Ok(());
    };
    let id = active.id();
    if stored != id.to_string() {
        return Err(MemoryError::EmbedderMismatch {
            stored,
            active: id.to_string(),
            provider: id.provider,
        });
    }
    Ok(())
}

/// Creates the parent directory (mode 0700) and the file (mode 0600) if needed.
fn prepare_path(path: &Path) -> Result<()> {
    let io = |source| MemoryError::Io {
        path: path.to_path_buf(),
        source,
    };
    private_fs::create_private_parent(path).map_err(io)?;
    private_fs::create_private_file(path).map_err(io)?;
    private_fs::set_private(path).map_err(io)
}
