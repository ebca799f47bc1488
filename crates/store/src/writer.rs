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

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use crate::error::{Result, StoreError};
use crate::ingest::{MAX_STORED_SEQ, NewEvent};
use crate::model::{RunState, RunSummary, StoredEvent};
use crate::schema;

mod rows;

use rows::{PendingRow, event_at, flush_rows, stored_event, truncated, write_run};

/// Asked after each commit: does anybody want [`Committed::events`]?
pub type EventsWanted = Arc<dyn Fn() -> bool + Send + Sync>;

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
}

impl std::fmt::Debug for WriterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterConfig")
            .field("channel_capacity", &self.channel_capacity)
            .field("max_batch", &self.max_batch)
            .field("events_wanted", &self.events_wanted.is_some())
            .finish()
    }
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            channel_capacity: 32_768,
            max_batch: 8_192,
            events_wanted: None,
        }
    }
}

/// What [`Writer::prune`] keeps. `0` in a field means no limit of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Keep the newest this many runs (by start); older finished runs go.
    pub keep_runs: u32,
    /// Finished runs whose last activity is older than this many days go.
    pub keep_days: u32,
}

impl Retention {
    /// Keeps everything.
    pub const KEEP_ALL: Retention = Retention {
        keep_runs: 0,
        keep_days: 0,
    };
}

impl Default for Retention {
    /// 200 runs, 30 days (the reference viewer's defaults).
    fn default() -> Self {
        Retention {
            keep_runs: 200,
            keep_days: 30,
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

/// What one commit changed, handed to the commit hook.
#[derive(Debug, Clone, Default)]
pub struct Committed {
    /// Newly stored events, in the order they were written.
    pub events: Vec<StoredEvent>,
    /// Runs created or changed by this commit (latest state).
    pub runs: Vec<RunSummary>,
    /// Runs deleted by this commit.
    pub deleted: Vec<String>,
}

impl Committed {
    fn is_empty(&self) -> bool {
        self.events.is_empty() && self.runs.is_empty() && self.deleted.is_empty()
    }
}

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
}

#[derive(Debug, Default)]
struct Counters {
    refused_rows: AtomicU64,
    failed_rows: AtomicU64,
    isolated_batches: AtomicU64,
}

enum Op {
    Event(Box<NewEvent>),
    Abandon {
        run_ids: Vec<String>,
        at: i64,
        reply: SyncSender<usize>,
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
    path: PathBuf,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").field("path", &self.path).finish()
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
        let conn = schema::open_writer(path)?;
        let now = crate::now_ms();
        let reconciled: Vec<String> = {
            let mut stmt = conn.prepare("SELECT id FROM runs WHERE status = 'running'")?;
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<std::result::Result<Vec<_>, _>>()?
        };
        if !reconciled.is_empty() {
            conn.execute(
                "UPDATE runs SET status = 'abandoned', finished_at = MAX(last_event_at, ?1) \
                 WHERE status = 'running'",
                params![now],
            )?;
            tracing::info!(
                count = reconciled.len(),
                "runs left running by a previous process marked abandoned"
            );
        }
        let (tx, rx) = mpsc::sync_channel(config.channel_capacity.max(1));
        // Checkpoints run on their own connection so a commit never waits for one
        // (an auto-checkpoint inside a commit costs milliseconds of latency).
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let checkpointer = spawn_checkpointer(path)?;
        conn.set_prepared_statement_cache_capacity(32);
        let counters = Arc::new(Counters::default());
        let mut state = State::new(
            conn,
            checkpointer,
            config.events_wanted.clone(),
            Arc::clone(&counters),
        )?;
        let max_batch = config.max_batch.max(1);
        let thread = std::thread::Builder::new()
            .name("mindgate-store-writer".to_owned())
            .spawn(move || state.run(rx, max_batch, hook))
            .map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok((
            Writer {
                tx,
                thread: Arc::new(Mutex::new(Some(thread))),
                path: path.to_path_buf(),
                counters,
            },
            OpenReport { reconciled },
        ))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the writer refused or lost so far (since it was opened).
    pub fn stats(&self) -> WriterStats {
        WriterStats {
            refused_rows: self.counters.refused_rows.load(Ordering::Relaxed),
            failed_rows: self.counters.failed_rows.load(Ordering::Relaxed),
            isolated_batches: self.counters.isolated_batches.load(Ordering::Relaxed),
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

/// A run as the writer tracks it between commits.
struct RunAcc {
    key: i64,
    summary: RunSummary,
    nodes: HashSet<String>,
    dirty: bool,
    /// Already listed in this transaction's touched runs.
    touched: bool,
}

impl RunAcc {
    /// Whether `seq` is certainly not stored yet: above every stored seq of the run.
    fn is_fresh(&self, seq: u64) -> bool {
        if seq > MAX_STORED_SEQ {
            return false; // never stored (refused before)
        }
        match self.summary.last_seq {
            Some(last) => seq > last,
            None => self.summary.counts.events == 0,
        }
    }
}

struct State {
    conn: Connection,
    runs: HashMap<String, RunAcc>,
    types: HashMap<String, i64>,
    events_wanted: Option<EventsWanted>,
    counters: Arc<Counters>,
    /// Set while a failed batch is re-applied one operation at a time: every
    /// row then takes the checked single-row insert (no freshness shortcut).
    exact: bool,
    /// Dropping it stops the checkpointer thread.
    _checkpointer: SyncSender<()>,
}

enum Reply {
    Abandon(SyncSender<usize>, usize),
    Delete(SyncSender<bool>, bool),
    Prune(SyncSender<Vec<String>>, Vec<String>),
    Unit(SyncSender<()>),
}

impl Reply {
    fn send(self) {
        match self {
            Reply::Abandon(tx, n) => drop(tx.send(n)),
            Reply::Delete(tx, b) => drop(tx.send(b)),
            Reply::Prune(tx, ids) => drop(tx.send(ids)),
            Reply::Unit(tx) => drop(tx.send(())),
        }
    }

    /// The answer for an operation that could not be applied (nothing changed).
    fn for_failed(op: &Op) -> Option<Reply> {
        match op {
            Op::Event(_) => None,
            Op::Abandon { reply, .. } => Some(Reply::Abandon(reply.clone(), 0)),
            Op::Delete { reply, .. } => Some(Reply::Delete(reply.clone(), false)),
            Op::Prune { reply, .. } => Some(Reply::Prune(reply.clone(), Vec::new())),
            Op::Flush(reply) | Op::Stop(reply) => Some(Reply::Unit(reply.clone())),
        }
    }
}

fn load_types(conn: &Connection) -> Result<HashMap<String, i64>> {
    let mut types = HashMap::new();
    let mut stmt = conn.prepare("SELECT code, name FROM event_types")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (code, name) = row?;
        types.insert(name, code);
    }
    Ok(types)
}

impl State {
    fn new(
        conn: Connection,
        checkpointer: SyncSender<()>,
        events_wanted: Option<EventsWanted>,
        counters: Arc<Counters>,
    ) -> Result<State> {
        let types = load_types(&conn)?;
        Ok(State {
            conn,
            runs: HashMap::new(),
            types,
            events_wanted,
            counters,
            exact: false,
            _checkpointer: checkpointer,
        })
    }

    fn run(&mut self, rx: Receiver<Op>, max_batch: usize, hook: Option<CommitHook>) {
        let mut stopping: Option<SyncSender<()>> = None;
        while stopping.is_none() {
            let Ok(first) = rx.recv() else { break };
            let mut ops = Vec::with_capacity(64);
            ops.push(first);
            while ops.len() < max_batch {
                match rx.try_recv() {
                    Ok(op) => ops.push(op),
                    Err(_) => break,
                }
            }
            for op in &ops {
                if let Op::Stop(reply) = op {
                    stopping = Some(reply.clone());
                }
            }
            let (committed, replies) = self.commit(ops, hook.is_some());
            if let Some(hook) = &hook
                && !committed.is_empty()
            {
                hook(committed);
            }
            for reply in replies {
                reply.send();
            }
            self.evict();
        }
        // Drain anything still queued after a stop so a graceful stop loses nothing.
        let rest: Vec<Op> = rx.try_iter().collect();
        if !rest.is_empty() {
            let (committed, replies) = self.commit(rest, hook.is_some());
            if let Some(hook) = &hook
                && !committed.is_empty()
            {
                hook(committed);
            }
            drop(replies);
        }
        if let Err(e) = self.conn.pragma_update(None, "wal_checkpoint", "TRUNCATE") {
            tracing::debug!(error = %e, "final checkpoint failed");
        }
        if let Some(reply) = stopping {
            let _ = reply.send(());
        }
    }

    /// Commits `ops` in one transaction. If that transaction fails, every
    /// operation is re-applied in its own transaction, so one bad row is
    /// isolated (counted in [`WriterStats::failed_rows`] and logged) and never
    /// costs the batch's other rows.
    fn commit(&mut self, ops: Vec<Op>, hooked: bool) -> (Committed, Vec<Reply>) {
        let mut committed = Committed::default();
        let mut replies = Vec::new();
        let error = match self.apply(&ops, &mut committed, &mut replies) {
            Ok(inserted) => {
                self.fill_events(hooked, &mut committed, ops, &inserted);
                return (committed, replies);
            }
            Err(e) => e,
        };
        let n = self
            .counters
            .isolated_batches
            .fetch_add(1, Ordering::Relaxed)
            + 1;
        tracing::warn!(
            error = %error,
            operations = ops.len(),
            failed_batches = n,
            "store batch failed; re-applying its operations one by one"
        );
        self.reset_caches();
        let mut committed = Committed::default();
        let mut replies = Vec::new();
        let mut inserted = Vec::new();
        self.exact = true;
        for (index, op) in ops.iter().enumerate() {
            let one = std::slice::from_ref(op);
            let mut single = Committed::default();
            let mut single_replies = Vec::new();
            match self.apply(one, &mut single, &mut single_replies) {
                Ok(rows) => {
                    if !rows.is_empty() {
                        inserted.push(index);
                    }
                    merge(&mut committed, single);
                    replies.extend(single_replies);
                }
                Err(e) => {
                    let failed = self.counters.failed_rows.fetch_add(1, Ordering::Relaxed) + 1;
                    match event_at(one, 0) {
                        Some(ev) => tracing::warn!(
                            error = %e,
                            run = %truncated(&ev.run_id),
                            seq = ev.seq,
                            failed_rows = failed,
                            "event could not be stored; the rest of its batch was"
                        ),
                        None => {
                            tracing::warn!(error = %e, failed_rows = failed, "store operation failed")
                        }
                    }
                    self.reset_caches();
                    replies.extend(Reply::for_failed(op));
                }
            }
        }
        self.exact = false;
        self.fill_events(hooked, &mut committed, ops, &inserted);
        (committed, replies)
    }

    /// Forgets what a rolled-back transaction may have left in the caches.
    fn reset_caches(&mut self) {
        self.runs.clear();
        match load_types(&self.conn) {
            Ok(types) => self.types = types,
            Err(e) => {
                tracing::warn!(error = %e, "could not reload event types");
                self.types.clear();
            }
        }
    }

    /// Hands the inserted events (indices into `ops`, ascending) to the commit
    /// hook when somebody wants them.
    fn fill_events(
        &self,
        hooked: bool,
        committed: &mut Committed,
        ops: Vec<Op>,
        inserted: &[usize],
    ) {
        if !hooked
            || inserted.is_empty()
            || self.events_wanted.as_ref().is_some_and(|wanted| !wanted())
        {
            return;
        }
        let mut wanted = inserted.iter().copied().peekable();
        committed.events.reserve(inserted.len());
        for (index, op) in ops.into_iter().enumerate() {
            if wanted.peek() != Some(&index) {
                continue;
            }
            wanted.next();
            if let Op::Event(ev) = op
                && let Some(stored) = stored_event(*ev)
            {
                committed.events.push(stored);
            }
            if wanted.peek().is_none() {
                break;
            }
        }
    }

    fn evict(&mut self) {
        if self.runs.len() > 256 {
            self.runs
                .retain(|_, acc| acc.summary.status == RunState::Running);
        } else {
            self.runs.retain(|_, acc| !acc.summary.status.is_terminal());
        }
    }

    /// Applies `ops` in one transaction; returns the indices of the events
    /// actually inserted.
    fn apply(
        &mut self,
        ops: &[Op],
        committed: &mut Committed,
        replies: &mut Vec<Reply>,
    ) -> Result<Vec<usize>> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match self.apply_in_tx(ops, committed, replies) {
            Ok(inserted) => match self.conn.execute_batch("COMMIT") {
                Ok(()) => Ok(inserted),
                Err(e) => {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    Err(e.into())
                }
            },
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn apply_in_tx(
        &mut self,
        ops: &[Op],
        committed: &mut Committed,
        replies: &mut Vec<Reply>,
    ) -> Result<Vec<usize>> {
        let mut touched: Vec<String> = Vec::new();
        let mut inserted: Vec<usize> = Vec::with_capacity(ops.len());
        let mut pending: Vec<PendingRow> = Vec::with_capacity(INSERT_CHUNK);
        for (index, op) in ops.iter().enumerate() {
            if !matches!(op, Op::Event(_)) {
                flush_rows(&self.conn, &mut pending, ops)?;
            }
            match op {
                Op::Event(ev) => {
                    self.insert_event(ev, index, ops, &mut touched, &mut pending, &mut inserted)?;
                    if pending.len() >= INSERT_CHUNK {
                        flush_rows(&self.conn, &mut pending, ops)?;
                    }
                }
                Op::Abandon { run_ids, at, reply } => {
                    let at = *at;
                    let mut n = 0;
                    for id in run_ids {
                        let changed = self.conn.execute(
                            "UPDATE runs SET status = 'abandoned', finished_at = ?2 \
                             WHERE id = ?1 AND status = 'running'",
                            params![id, at],
                        )?;
                        if changed > 0 {
                            n += 1;
                            if let Some(acc) = self.runs.get_mut(id) {
                                acc.summary.status = RunState::Abandoned;
                                acc.summary.finished_at = Some(at);
                                acc.summary.duration_ms =
                                    Some(at.saturating_sub(acc.summary.started_at));
                            }
                            if !touched.contains(id) {
                                touched.push(id.clone());
                            }
                        }
                    }
                    replies.push(Reply::Abandon(reply.clone(), n));
                }
                Op::Delete { run_id, reply } => {
                    let key: Option<i64> = self
                        .conn
                        .query_row("SELECT key FROM runs WHERE id = ?1", [run_id], |r| r.get(0))
                        .optional()?;
                    if let Some(key) = key {
                        self.conn
                            .execute("DELETE FROM events WHERE run_key = ?1", [key])?;
                        self.conn
                            .execute("DELETE FROM runs WHERE key = ?1", [key])?;
                        self.runs.remove(run_id);
                        touched.retain(|t| t != run_id);
                        committed.deleted.push(run_id.clone());
                    }
                    replies.push(Reply::Delete(reply.clone(), key.is_some()));
                }
                Op::Prune {
                    retention,
                    now,
                    reply,
                } => {
                    let victims = self.prune_victims(*retention, *now)?;
                    let mut ids = Vec::with_capacity(victims.len());
                    for (key, id) in victims {
                        self.conn
                            .execute("DELETE FROM events WHERE run_key = ?1", [key])?;
                        self.conn
                            .execute("DELETE FROM runs WHERE key = ?1", [key])?;
                        self.runs.remove(&id);
                        touched.retain(|t| t != &id);
                        committed.deleted.push(id.clone());
                        ids.push(id);
                    }
                    replies.push(Reply::Prune(reply.clone(), ids));
                }
                Op::Flush(reply) => replies.push(Reply::Unit(reply.clone())),
                Op::Stop(_) => {}
            }
        }
        flush_rows(&self.conn, &mut pending, ops)?;
        for id in &touched {
            if let Some(acc) = self.runs.get_mut(id) {
                acc.touched = false;
                if acc.dirty {
                    write_run(&self.conn, acc)?;
                    acc.dirty = false;
                }
                committed.runs.push(acc.summary.clone());
            } else if let Some(summary) = crate::reader::load_summary(&self.conn, id)? {
                committed.runs.push(summary);
            }
        }
        Ok(inserted)
    }

    /// Up to [`PRUNE_CHUNK`] finished runs outside `retention`, oldest first.
    fn prune_victims(&self, retention: Retention, now: i64) -> Result<Vec<(i64, String)>> {
        let cutoff = now.saturating_sub(i64::from(retention.keep_days) * 86_400_000);
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, id FROM runs WHERE status != 'running' AND ( \
               (?1 > 0 AND key NOT IN \
                  (SELECT key FROM runs ORDER BY started_at DESC, key DESC LIMIT ?1)) \
               OR (?2 > 0 AND COALESCE(finished_at, last_event_at) < ?3)) \
             ORDER BY started_at, key LIMIT ?4",
        )?;
        let rows = stmt
            .query_map(
                params![
                    retention.keep_runs,
                    retention.keep_days,
                    cutoff,
                    PRUNE_CHUNK
                ],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
            )?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

/// Folds the result of one operation into the batch's.
fn merge(into: &mut Committed, one: Committed) {
    for run in one.runs {
        match into.runs.iter_mut().find(|r| r.id == run.id) {
            Some(slot) => *slot = run,
            None => into.runs.push(run),
        }
    }
    for id in one.deleted {
        into.runs.retain(|r| r.id != id);
        into.deleted.push(id);
    }
}

/// How often the checkpointer copies the WAL back into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Starts the thread that checkpoints the WAL (PASSIVE: it never blocks the
/// writer). It stops when the returned sender is dropped.
fn spawn_checkpointer(path: &Path) -> Result<SyncSender<()>> {
    let conn = schema::open_reader(path, false)?;
    let (tx, rx) = mpsc::sync_channel::<()>(1);
    std::thread::Builder::new()
        .name("mindgate-store-checkpoint".to_owned())
        .spawn(move || {
            loop {
                match rx.recv_timeout(CHECKPOINT_EVERY) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if let Err(e) =
                            conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                        {
                            tracing::debug!(error = %e, "checkpoint failed");
                        }
                    }
                    _ => return,
                }
            }
        })
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(tx)
}

/// Raw JSON text → boxed raw value, for rows read back from SQLite.
pub(crate) fn raw(text: String) -> Option<Box<RawValue>> {
    RawValue::from_string(text).ok()
}
