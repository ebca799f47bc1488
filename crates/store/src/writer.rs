//! The single writer: one thread, one connection, batched transactions.
//!
//! Producers hand events to [`Writer::try_append`] / [`Writer::append`]; the
//! thread drains whatever is queued (up to [`WriterConfig::max_batch`] operations)
//! and commits it in one transaction, then reports what was *actually inserted*
//! (duplicates removed by `INSERT OR IGNORE`) to the commit hook.
//!
//! # Durability
//!
//! * A graceful stop ([`Writer::close`]) commits everything queued before it.
//! * A process crash loses what was queued but not committed: at most
//!   [`WriterConfig::channel_capacity`] queued operations plus one batch in
//!   flight ([`WriterConfig::max_batch`]). In practice that is the few
//!   milliseconds of traffic since the last commit, because the thread commits
//!   as soon as the queue is empty. Real clients replay their ring buffer on
//!   reconnect, and replays are deduplicated, so a restarted server usually
//!   recovers them.
//! * Committed transactions survive a process crash (WAL). With
//!   `synchronous=NORMAL` an operating-system crash or power loss may roll back
//!   the transactions committed since the last WAL checkpoint.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{Result, StoreError};
use crate::ingest::NewEvent;
use mindgate_pg::Database;

mod sqlite_db;
mod thread;

pub use crate::backend::write_db::{Committed, EventsWanted, Retention};
use crate::backend::write_db::{WriteDb, random_id};
use thread::State;

/// A flush asked for by [`Writer::flush_later`], not yet waited on.
#[derive(Debug)]
pub struct PendingFlush(mpsc::Receiver<()>);

impl PendingFlush {
    /// Blocks until everything queued before the flush was asked is committed.
    pub fn wait(self) -> Result<()> {
        self.0.recv().map_err(|_| StoreError::WriterGone)
    }
}

/// Tuning of the writer.
#[derive(Clone)]
pub struct WriterConfig {
    /// Operations that may wait for the writer before producers feel back-pressure.
    pub channel_capacity: usize,
    /// Most operations committed in one transaction.
    pub max_batch: usize,
    /// When set and it answers `false` (asked *after* each commit, so a
    /// subscriber that registers before reading the database never misses an
    /// event), the commit hook gets no [`Committed::events`], which saves
    /// building them. `None`: always built.
    pub events_wanted: Option<EventsWanted>,
    /// Mark the runs left `running` as `abandoned` on open (the default: right for the
    /// one process that writes the database). `false` for a writer beside live
    /// instances, such as `mindgate import` into a shared PostgreSQL database.
    pub reconcile_on_open: bool,
    /// The instance this writer belongs to, when several servers share one PostgreSQL
    /// database: every run it writes is stamped with it (`runs.instance_id`), it is the
    /// writer's id in its commit announcements, and opening does not mark `running` runs
    /// `abandoned` (other live instances may be receiving them; see
    /// [`Writer::abandon_orphans`]). `None`: a random writer id and today's
    /// reconciliation at open. Ignored on SQLite (one server per file).
    pub instance_id: Option<String>,
    /// SQLite: stored events the search indexer may be behind before the writer waits for
    /// it at its next transaction (at most [`SEARCH_WAIT_PER_BATCH`] each time), so the
    /// unindexed tail a search scans stays bounded under sustained ingest.
    pub search_backlog_limit: i64,
}

/// Longest the writer waits for the search indexer before one transaction: a stalled
/// indexer slows ingest, never stops it.
pub const SEARCH_WAIT_PER_BATCH: std::time::Duration = std::time::Duration::from_secs(2);

impl std::fmt::Debug for WriterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterConfig")
            .field("channel_capacity", &self.channel_capacity)
            .field("max_batch", &self.max_batch)
            .field("events_wanted", &self.events_wanted.is_some())
            .field("reconcile_on_open", &self.reconcile_on_open)
            .field("instance_id", &self.instance_id)
            .field("search_backlog_limit", &self.search_backlog_limit)
            .finish()
    }
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            channel_capacity: 32_768,
            max_batch: 8_192,
            events_wanted: None,
            reconcile_on_open: true,
            instance_id: None,
            search_backlog_limit: 100_000,
        }
    }
}

/// Runs deleted per pruning transaction (keeps each one short for ingest).
const PRUNE_CHUNK: u32 = 50;

/// Most distinct event types the store interns; events of further new
/// (unknown) types are refused and counted in [`WriterStats::refused_rows`].
pub const MAX_EVENT_TYPES: usize = 4_096;

/// Rows per multi-row `INSERT` of events known to be new.
const INSERT_CHUNK: usize = 32;

/// Called on the writer thread after every commit that changed something.
pub type CommitHook = Box<dyn Fn(Committed) + Send + 'static>;

/// Why [`Writer::try_append`] did not queue an event.
#[derive(Debug)]
pub enum TryAppendError {
    /// The queue is full; the event is handed back.
    Full(Box<NewEvent>),
    /// The writer has stopped.
    Gone,
}

/// Rows the writer could not store, by cause (see [`Writer::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Events refused before any write: a `seq` above [`MAX_STORED_SEQ`]
    /// (SQLite integers are signed 64-bit), or a new type beyond [`MAX_EVENT_TYPES`].
    pub refused_rows: u64,
    /// Operations that failed on their own after their batch failed; the
    /// batch's other operations were committed without them.
    pub failed_rows: u64,
    /// Batches whose transaction failed and were re-applied one operation at a time.
    pub isolated_batches: u64,
    /// Transactions before which the writer waited for the search indexer (its backlog
    /// was above [`WriterConfig::search_backlog_limit`]).
    pub search_waits: u64,
}

#[derive(Debug, Default)]
struct Counters {
    refused_rows: AtomicU64,
    failed_rows: AtomicU64,
    isolated_batches: AtomicU64,
    search_waits: AtomicU64,
}

enum Op {
    Event(Box<NewEvent>),
    Abandon {
        run_ids: Vec<String>,
        at: i64,
        reply: SyncSender<usize>,
    },
    AbandonOrphans {
        live: Vec<String>,
        at: i64,
        reply: SyncSender<Vec<String>>,
    },
    Delete {
        run_id: String,
        reply: SyncSender<bool>,
    },
    Prune {
        retention: Retention,
        now: i64,
        reply: SyncSender<Vec<String>>,
    },
    Flush(SyncSender<()>),
    Stop(SyncSender<()>),
}

/// Handle to the writer thread. Cheap to clone; every clone feeds the same thread.
#[derive(Clone)]
pub struct Writer {
    tx: SyncSender<Op>,
    thread: Arc<Mutex<Option<JoinHandle<()>>>>,
    database: Arc<Database>,
    counters: Arc<Counters>,
    id: Arc<str>,
    stale: Arc<Mutex<StaleRuns>>,
}

/// Runs another writer changed since this one cached them (see [`Writer::forget_runs`]).
#[derive(Debug, Default)]
pub(crate) struct StaleRuns {
    /// Their ids.
    pub(crate) ids: std::collections::HashSet<String>,
    /// Every cached run (another writer's changes may have been missed).
    pub(crate) all: bool,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("database", &self.database.to_string())
            .finish()
    }
}

/// What [`Writer::open`] did to the existing data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// Runs a previous process left `running`, now `abandoned`.
    pub reconciled: Vec<String>,
}

impl Writer {
    /// Opens (creating if needed) the database at `path`, marks runs left
    /// `running` by a previous process as `abandoned`, and starts the thread.
    pub fn open(
        path: &Path,
        config: WriterConfig,
        hook: Option<CommitHook>,
    ) -> Result<(Writer, OpenReport)> {
        Self::open_database(&Database::Sqlite(path.to_path_buf()), config, hook)
    }

    /// Opens `database` (a SQLite file, created if needed, or a PostgreSQL database,
    /// migrated to the current schema), marks runs left `running` by a previous
    /// process as `abandoned` (unless [`WriterConfig::reconcile_on_open`] is off, or on
    /// PostgreSQL with a [`WriterConfig::instance_id`]: see [`Writer::abandon_orphans`]),
    /// and starts the thread.
    pub fn open_database(
        database: &Database,
        config: WriterConfig,
        hook: Option<CommitHook>,
    ) -> Result<(Writer, OpenReport)> {
        let id: Arc<str> = match &config.instance_id {
            Some(instance) => Arc::from(instance.as_str()),
            None => Arc::from(random_id().as_str()),
        };
        let counters = Arc::new(Counters::default());
        let mut db: Box<dyn WriteDb> = match database {
            Database::Sqlite(path) => Box::new(sqlite_db::SqliteWriteDb::open(
                path,
                config.search_backlog_limit,
                Arc::clone(&counters),
            )?),
            Database::Postgres(url) => Box::new(crate::pg::writer::PgWriteDb::open(
                url,
                &id,
                config.instance_id.as_deref(),
            )?),
        };
        let shared = database.is_postgres() && config.instance_id.is_some();
        let reconciled = if config.reconcile_on_open && !shared {
            db.reconcile(crate::now_ms())?
        } else {
            Vec::new()
        };
        if !reconciled.is_empty() {
            tracing::info!(
                count = reconciled.len(),
                "runs left running by a previous process marked abandoned"
            );
        }
        let (tx, rx) = mpsc::sync_channel(config.channel_capacity.max(1));
        let stale = Arc::new(Mutex::new(StaleRuns::default()));
        let mut state = State::new(
            db,
            config.events_wanted.clone(),
            Arc::clone(&counters),
            Arc::clone(&stale),
        )?;
        let max_batch = config.max_batch.max(1);
        let thread = std::thread::Builder::new()
            .name("mindgate-store-writer".to_owned())
            .spawn(move || state.run(rx, max_batch, hook))
            .map_err(|source| StoreError::Io {
                path: database
                    .sqlite_path()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                source,
            })?;
        Ok((
            Writer {
                tx,
                thread: Arc::new(Mutex::new(Some(thread))),
                database: Arc::new(database.clone()),
                counters,
                id,
                stale,
            },
            OpenReport { reconciled },
        ))
    }

    /// Tells the writer that another writer of the same database changed these runs
    /// (a follower heard it): it re-reads them before writing them again, instead of
    /// writing counters it cached before the other writer's change. Never blocks.
    pub fn forget_runs(&self, run_ids: impl IntoIterator<Item = String>) {
        if let Ok(mut stale) = self.stale.lock() {
            stale.ids.extend(run_ids);
        }
    }

    /// [`Writer::forget_runs`] for every run (another writer's changes may have been
    /// missed, e.g. while a follower was reconnecting).
    pub fn forget_all_runs(&self) {
        if let Ok(mut stale) = self.stale.lock() {
            stale.all = true;
            stale.ids.clear();
        }
    }

    /// The database file (empty for a PostgreSQL database: see [`Writer::database`]).
    pub fn path(&self) -> &Path {
        self.database.sqlite_path().unwrap_or(Path::new(""))
    }

    /// The database this writer writes.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// This writer's id in its commit announcements (PostgreSQL): its
    /// [`WriterConfig::instance_id`], else a random id. A [`crate::Follower`] given it
    /// skips this writer's own commits.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the writer refused or lost so far (since it was opened).
    pub fn stats(&self) -> WriterStats {
        WriterStats {
            refused_rows: self.counters.refused_rows.load(Ordering::Relaxed),
            failed_rows: self.counters.failed_rows.load(Ordering::Relaxed),
            isolated_batches: self.counters.isolated_batches.load(Ordering::Relaxed),
            search_waits: self.counters.search_waits.load(Ordering::Relaxed),
        }
    }

    /// Queues an event without blocking.
    pub fn try_append(&self, event: NewEvent) -> std::result::Result<(), TryAppendError> {
        match self.tx.try_send(Op::Event(Box::new(event))) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Op::Event(ev))) => Err(TryAppendError::Full(ev)),
            Err(_) => Err(TryAppendError::Gone),
        }
    }

    /// Queues an event, blocking while the queue is full.
    pub fn append(&self, event: NewEvent) -> Result<()> {
        self.tx
            .send(Op::Event(Box::new(event)))
            .map_err(|_| StoreError::WriterGone)
    }

    /// Asks for a flush without waiting: [`PendingFlush::wait`] then blocks until
    /// everything queued before this call is committed. A producer that waits on the
    /// flush it asked a few thousand events ago keeps at most that many events queued
    /// (the OTLP receiver does, so one large request never fills the whole queue).
    pub fn flush_later(&self) -> Result<PendingFlush> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.tx
            .send(Op::Flush(reply))
            .map_err(|_| StoreError::WriterGone)?;
        Ok(PendingFlush(wait))
    }

    /// Blocks until everything queued before this call is committed.
    pub fn flush(&self) -> Result<()> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.tx
            .send(Op::Flush(reply))
            .map_err(|_| StoreError::WriterGone)?;
        wait.recv().map_err(|_| StoreError::WriterGone)
    }

    /// Marks these runs `abandoned` if they are still `running`. Returns how many changed.
    pub fn abandon(&self, run_ids: Vec<String>) -> Result<usize> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.tx
            .send(Op::Abandon {
                run_ids,
                at: crate::now_ms(),
                reply,
            })
            .map_err(|_| StoreError::WriterGone)?;
        wait.recv().map_err(|_| StoreError::WriterGone)
    }

    /// Marks `abandoned` the `running` runs that no live instance owns: on PostgreSQL,
    /// those whose `runs.instance_id` (the instance that last wrote them) is unset or
    /// not in `live_instances`. Goes through the writer thread, so the change reaches
    /// the commit hook and is announced like any other. Returns the abandoned run ids.
    /// On SQLite (one server per file, reconciled at open) it changes nothing. A run that
    /// receives an event again is `running` again.
    pub fn abandon_orphans(&self, live_instances: Vec<String>) -> Result<Vec<String>> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.tx
            .send(Op::AbandonOrphans {
                live: live_instances,
                at: crate::now_ms(),
                reply,
            })
            .map_err(|_| StoreError::WriterGone)?;
        wait.recv().map_err(|_| StoreError::WriterGone)
    }

    /// Deletes a run and its events. Returns whether it existed.
    pub fn delete_run(&self, run_id: &str) -> Result<bool> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.tx
            .send(Op::Delete {
                run_id: run_id.to_owned(),
                reply,
            })
            .map_err(|_| StoreError::WriterGone)?;
        wait.recv().map_err(|_| StoreError::WriterGone)
    }

    /// Deletes finished runs (any status but `running`) beyond `retention`:
    /// those not among the newest [`Retention::keep_runs`] runs by start, and
    /// those whose last activity (finish, else last event) is older than
    /// [`Retention::keep_days`]. Running runs are never deleted. Works in short
    /// transactions so ingest keeps flowing; deletions reach the commit hook as
    /// [`Committed::deleted`]. Returns the deleted run ids.
    pub fn prune(&self, retention: Retention) -> Result<Vec<String>> {
        let mut deleted = Vec::new();
        if retention == Retention::KEEP_ALL {
            return Ok(deleted);
        }
        let now = crate::now_ms();
        loop {
            let (reply, wait) = mpsc::sync_channel(1);
            self.tx
                .send(Op::Prune {
                    retention,
                    now,
                    reply,
                })
                .map_err(|_| StoreError::WriterGone)?;
            let chunk = wait.recv().map_err(|_| StoreError::WriterGone)?;
            let done = chunk.len() < PRUNE_CHUNK as usize;
            deleted.extend(chunk);
            if done {
                return Ok(deleted);
            }
        }
    }

    /// Whether the writer thread has stopped (closed, or ended by a panic).
    pub fn is_stopped(&self) -> bool {
        self.thread
            .lock()
            .map(|h| h.as_ref().is_none_or(JoinHandle::is_finished))
            .unwrap_or(true)
    }

    /// Commits everything queued and stops the thread. Idempotent.
    pub fn close(&self) -> Result<()> {
        let (reply, wait) = mpsc::sync_channel(1);
        if self.tx.send(Op::Stop(reply)).is_ok() {
            let _ = wait.recv();
        }
        let handle = self.thread.lock().ok().and_then(|mut h| h.take());
        if let Some(handle) = handle {
            let _ = handle.join();
        }
        Ok(())
    }
}
