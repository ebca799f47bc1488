//! The PostgreSQL backend (`--memory-db postgres://…`): the same memory model, trust gate,
//! bi-temporal reads and hybrid search as [`crate::SqliteMemory`], for several Mindgate
//! instances sharing one database. It runs the same contract suite.
//!
//! What it shares with SQLite is not copied: the row and its insert rule
//! ([`crate::rules`]), the search plan, filter SQL, vector walk and fusion
//! ([`crate::hybrid`]), the vector mirror ([`crate::vectors`]), the validation of every
//! tier's input. What differs: full text is a `tsvector` ranked by `ts_rank` (English
//! stemming) instead of FTS5's BM25, so lexical scores — not the rules that combine them —
//! differ; every write transaction takes one advisory lock, so writes from several
//! instances are serialised exactly as SQLite's single writer serialises them (sequence
//! numbers, duplicate ids, one root per entity name, vector ids in commit order).

mod entities;
mod items;
mod maintenance;
mod migrations;
mod reembed;
mod review;
mod search;
mod tiers;
mod transfer;
mod working;

use std::sync::{Mutex, MutexGuard};

use mindgate_pg::PostgresUrl;
use postgres::{Client, GenericClient, Transaction};

use crate::config::{FusionDefaults, MemoryConfig, OpenOptions};
use crate::error::{MemoryError, Result};
use crate::parts::StoreParts;

pub use migrations::{MIGRATIONS, SCHEMA_VERSION};

/// The memory store on PostgreSQL.
pub struct PgMemory {
    client: Mutex<Client>,
    parts: StoreParts,
    target: String,
    /// How to reconnect when the server closed the connection (a restart, a failover).
    url: PostgresUrl,
    /// The schema [`PgMemory::connect_scratch`] made, dropped with the store.
    scratch: Option<String>,
}

impl Drop for PgMemory {
    fn drop(&mut self) {
        if let Some(schema) = &self.scratch {
            let mut client = self.lock();
            if let Err(e) = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            {
                tracing::warn!(schema, error = %e, "could not drop a scratch memory schema");
            }
        }
    }
}

/// A connection, or [`MemoryError::PostgresConnect`] naming `host:port/db` and the cause.
fn open_client(url: &PostgresUrl) -> Result<Client> {
    mindgate_pg::connect(url).map_err(MemoryError::PostgresConnect)
}

impl std::fmt::Debug for PgMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgMemory")
            .field("target", &self.target)
            .field("embedder", &self.parts.embedder_key)
            .finish_non_exhaustive()
    }
}

impl PgMemory {
    /// Connects (TLS as the URL's `sslmode` says), migrates and checks that the stored
    /// vectors belong to `options.embedder`.
    ///
    /// Errors: an unreachable or refusing server ([`MemoryError::PostgresConnect`], naming
    /// `host:port/db` and the cause), a schema newer than this build, another embedder's
    /// vectors ([`MemoryError::EmbedderMismatch`]).
    pub fn connect(url: &PostgresUrl, options: OpenOptions) -> Result<Self> {
        Self::connect_with(url.clone(), options, None, true)
    }

    /// Connects without the embedder check, for re-embedding the store with
    /// [`PgMemory::reembed`].
    pub fn connect_for_reembed(url: &PostgresUrl, options: OpenOptions) -> Result<Self> {
        Self::connect_with(url.clone(), options, None, false)
    }

    /// A private store in a fresh schema (`mindgate_scratch_<random>`) of the database
    /// `url` names, dropped with the store: benchmarks and tests on a shared server.
    pub fn connect_scratch(url: &PostgresUrl, options: OpenOptions) -> Result<Self> {
        let schema = format!("mindgate_scratch_{:016x}", rand::random::<u64>());
        open_client(url)?.batch_execute(&format!("CREATE SCHEMA {schema}"))?;
        Self::connect_with(url.with_search_path(&schema), options, Some(schema), true)
    }

    fn connect_with(
        url: PostgresUrl,
        options: OpenOptions,
        scratch: Option<String>,
        check_embedder: bool,
    ) -> Result<Self> {
        let target = url.target();
        let mut client = open_client(&url)?;
        migrations::migrate(&mut client)?;
        if check_embedder
            && let (Some(stored), Some(active)) = (stored_embedder(&mut client)?, &options.embedder)
        {
            let id = active.id();
            if stored != id.to_string() {
                return Err(MemoryError::EmbedderMismatch {
                    stored,
                    active: id.to_string(),
                    provider: id.provider,
                });
            }
        }
        Ok(Self {
            client: Mutex::new(client),
            parts: StoreParts::new(options),
            target,
            url,
            scratch,
        })
    }

    /// The scratch schema of a store opened with [`PgMemory::connect_scratch`].
    pub fn scratch_schema(&self) -> Option<&str> {
        self.scratch.as_deref()
    }

    /// Where the store lives: `host:port/db` (no credentials).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The store's tunables.
    pub fn config(&self) -> &MemoryConfig {
        &self.parts.config
    }

    /// The active embedder's id (`<provider>:<model>@<dim>`).
    pub fn embedder_id(&self) -> Option<&str> {
        self.parts.embedder_key.as_deref()
    }

    /// The fusion of a search whose options do not say: the configured one, else the
    /// active embedder's default.
    pub fn fusion_defaults(&self) -> FusionDefaults {
        self.parts.fusion_defaults()
    }

    /// Number of ledger rows (the whole store).
    pub fn ledger_len(&self) -> Result<i64> {
        Ok(self
            .lock()
            .query_one("SELECT COUNT(*) FROM memory_history", &[])?
            .try_get(0)?)
    }

    /// Number of rows of every kind, live or not (nothing is ever removed).
    pub fn row_count(&self) -> Result<i64> {
        Ok(self
            .lock()
            .query_one("SELECT COUNT(*) FROM memory_items", &[])?
            .try_get(0)?)
    }

    /// Drops the in-memory vector mirror (it is rebuilt from the database on the next
    /// search).
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

    /// The connection, reconnected first when the server closed it (the attempt failing
    /// leaves the closed one, whose next query then fails with the cause).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Client> {
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if client.is_closed() {
            match mindgate_pg::connect(&self.url) {
                Ok(fresh) => {
                    tracing::info!(target = %self.target, "reconnected to the memory database");
                    *client = fresh;
                }
                Err(e) => {
                    tracing::warn!(target = %self.target, error = %e, "memory database still unreachable");
                }
            }
        }
        client
    }

    /// Runs `f` in one transaction holding the store's write lock; nothing is written
    /// when it fails.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&mut Transaction<'_>, i64) -> Result<T>,
    ) -> Result<T> {
        let mut client = self.lock();
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&migrations::LOCK_KEY])?;
        let now = self.now();
        let out = f(&mut tx, now)?;
        tx.commit()?;
        Ok(out)
    }

    /// Embeds `texts` in batches (each `None` when no embedder is active).
    pub(crate) fn embed_all(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        self.parts.embed_all(texts)
    }

    /// Stores a vector for an item under the active embedder and records the embedder.
    pub(crate) fn store_vector(
        &self,
        c: &mut impl GenericClient,
        rowid: i64,
        vec: Option<&[f32]>,
    ) -> Result<()> {
        let (Some(key), Some(vec)) = (&self.parts.embedder_key, vec) else {
            return Ok(());
        };
        c.execute(
            "INSERT INTO memory_vectors (item_rowid, embedder, vec) VALUES ($1, $2, $3) \
             ON CONFLICT (embedder, item_rowid) DO UPDATE SET vec = EXCLUDED.vec",
            &[&rowid, key, &crate::vectors::to_blob(vec)],
        )?;
        c.execute(
            "INSERT INTO memory_meta (key, value) VALUES ('embedder', $1) ON CONFLICT (key) DO NOTHING",
            &[key],
        )?;
        Ok(())
    }
}

pub(crate) fn stored_embedder(client: &mut impl GenericClient) -> Result<Option<String>> {
    Ok(client
        .query_opt("SELECT value FROM memory_meta WHERE key = 'embedder'", &[])?
        .map(|r| r.try_get(0))
        .transpose()?)
}

/// Sets a `memory_meta` value.
pub(crate) fn set_meta(client: &mut impl GenericClient, key: &str, value: &str) -> Result<()> {
    client.execute(
        "INSERT INTO memory_meta (key, value) VALUES ($1, $2) \
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&key, &value],
    )?;
    Ok(())
}

/// The `memory_meta` value of `key`.
pub(crate) fn meta(client: &mut impl GenericClient, key: &str) -> Result<Option<String>> {
    Ok(client
        .query_opt("SELECT value FROM memory_meta WHERE key = $1", &[&key])?
        .map(|r| r.try_get(0))
        .transpose()?)
}
