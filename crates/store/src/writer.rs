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
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use crate::error::{Result, StoreError};
use crate::ingest::{EventFacts, NewEvent};
use crate::model::{Counts, RunState, RunSummary, StoredEvent, UsageTotals};
use crate::schema;

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
        let mut state = State::new(conn, checkpointer, config.events_wanted.clone())?;
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
            },
            OpenReport { reconciled },
        ))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
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
        if seq > i64::MAX as u64 {
            return false; // clamped when stored: may collide
        }
        match self.summary.last_seq {
            Some(last) => seq > last,
            None => self.summary.counts.events == 0,
        }
    }
}

/// An event row waiting for the next multi-row insert (index into the batch's events).
struct PendingRow {
    key: i64,
    code: i64,
    index: usize,
}

struct State {
    conn: Connection,
    runs: HashMap<String, RunAcc>,
    types: HashMap<String, i64>,
    events_wanted: Option<EventsWanted>,
    /// Dropping it stops the checkpointer thread.
    _checkpointer: SyncSender<()>,
}

enum Reply {
    Abandon(SyncSender<usize>, usize),
    Delete(SyncSender<bool>, bool),
    Prune(SyncSender<Vec<String>>, Vec<String>),
    Unit(SyncSender<()>),
}

impl State {
    fn new(
        conn: Connection,
        checkpointer: SyncSender<()>,
        events_wanted: Option<EventsWanted>,
    ) -> Result<State> {
        let mut types = HashMap::new();
        {
            let mut stmt = conn.prepare("SELECT code, name FROM event_types")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (code, name) = row?;
                types.insert(name, code);
            }
        }
        Ok(State {
            conn,
            runs: HashMap::new(),
            types,
            events_wanted,
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
            let mut replies = Vec::new();
            let mut committed = Committed::default();
            for op in ops.iter_mut() {
                if let Op::Stop(reply) = op {
                    stopping = Some(reply.clone());
                }
            }
            match self.apply(ops, &mut committed, &mut replies) {
                Ok(inserted) => self.fill_events(hook.is_some(), &mut committed, inserted),
                Err(e) => {
                    tracing::error!(error = %e, "store batch failed; its events are lost");
                    committed = Committed::default();
                    self.runs.clear();
                }
            }
            if let Some(hook) = &hook
                && !committed.is_empty()
            {
                hook(committed);
            }
            for reply in replies {
                match reply {
                    Reply::Abandon(tx, n) => drop(tx.send(n)),
                    Reply::Delete(tx, b) => drop(tx.send(b)),
                    Reply::Prune(tx, ids) => drop(tx.send(ids)),
                    Reply::Unit(tx) => drop(tx.send(())),
                }
            }
            self.evict();
        }
        // Drain anything still queued after a stop so a graceful stop loses nothing.
        let rest: Vec<Op> = rx.try_iter().collect();
        if !rest.is_empty() {
            let mut replies = Vec::new();
            let mut committed = Committed::default();
            match self.apply(rest, &mut committed, &mut replies) {
                Ok(inserted) => self.fill_events(hook.is_some(), &mut committed, inserted),
                Err(e) => tracing::error!(error = %e, "final store batch failed"),
            }
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

    /// Hands the inserted events to the commit hook when somebody wants them.
    fn fill_events(&self, hooked: bool, committed: &mut Committed, inserted: Vec<NewEvent>) {
        if !hooked || self.events_wanted.as_ref().is_some_and(|wanted| !wanted()) {
            return;
        }
        committed.events = inserted.into_iter().filter_map(stored_event).collect();
    }

    fn evict(&mut self) {
        if self.runs.len() > 256 {
            self.runs
                .retain(|_, acc| acc.summary.status == RunState::Running);
        } else {
            self.runs.retain(|_, acc| !acc.summary.status.is_terminal());
        }
    }

    /// Applies `ops` in one transaction; returns the events actually inserted.
    fn apply(
        &mut self,
        ops: Vec<Op>,
        committed: &mut Committed,
        replies: &mut Vec<Reply>,
    ) -> Result<Vec<NewEvent>> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match self.apply_in_tx(ops, committed, replies) {
            Ok(inserted) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(inserted)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn apply_in_tx(
        &mut self,
        ops: Vec<Op>,
        committed: &mut Committed,
        replies: &mut Vec<Reply>,
    ) -> Result<Vec<NewEvent>> {
        let mut touched: Vec<String> = Vec::new();
        let mut inserted: Vec<NewEvent> = Vec::with_capacity(ops.len());
        let mut pending: Vec<PendingRow> = Vec::with_capacity(INSERT_CHUNK);
        for op in ops {
            if !matches!(op, Op::Event(_)) {
                flush_rows(&self.conn, &mut pending, &inserted)?;
            }
            match op {
                Op::Event(ev) => {
                    self.insert_event(*ev, &mut touched, &mut pending, &mut inserted)?;
                    if pending.len() >= INSERT_CHUNK {
                        flush_rows(&self.conn, &mut pending, &inserted)?;
                    }
                }
                Op::Abandon { run_ids, at, reply } => {
                    let mut n = 0;
                    for id in run_ids {
                        let changed = self.conn.execute(
                            "UPDATE runs SET status = 'abandoned', finished_at = ?2 \
                             WHERE id = ?1 AND status = 'running'",
                            params![id, at],
                        )?;
                        if changed > 0 {
                            n += 1;
                            if let Some(acc) = self.runs.get_mut(&id) {
                                acc.summary.status = RunState::Abandoned;
                                acc.summary.finished_at = Some(at);
                                acc.summary.duration_ms = Some(at - acc.summary.started_at);
                            }
                            if !touched.contains(&id) {
                                touched.push(id);
                            }
                        }
                    }
                    replies.push(Reply::Abandon(reply, n));
                }
                Op::Delete { run_id, reply } => {
                    let key: Option<i64> = self
                        .conn
                        .query_row("SELECT key FROM runs WHERE id = ?1", [&run_id], |r| {
                            r.get(0)
                        })
                        .optional()?;
                    if let Some(key) = key {
                        self.conn
                            .execute("DELETE FROM events WHERE run_key = ?1", [key])?;
                        self.conn
                            .execute("DELETE FROM runs WHERE key = ?1", [key])?;
                        self.runs.remove(&run_id);
                        touched.retain(|t| t != &run_id);
                        committed.deleted.push(run_id);
                    }
                    replies.push(Reply::Delete(reply, key.is_some()));
                }
                Op::Prune {
                    retention,
                    now,
                    reply,
                } => {
                    let victims = self.prune_victims(retention, now)?;
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
                    replies.push(Reply::Prune(reply, ids));
                }
                Op::Flush(reply) => replies.push(Reply::Unit(reply)),
                Op::Stop(_) => {}
            }
        }
        flush_rows(&self.conn, &mut pending, &inserted)?;
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

    fn type_code(&mut self, name: &str) -> Result<i64> {
        if let Some(code) = self.types.get(name) {
            return Ok(*code);
        }
        self.conn.execute(
            "INSERT OR IGNORE INTO event_types(name) VALUES (?1)",
            [name],
        )?;
        let code: i64 = self.conn.query_row(
            "SELECT code FROM event_types WHERE name = ?1",
            [name],
            |r| r.get(0),
        )?;
        self.types.insert(name.to_owned(), code);
        Ok(code)
    }

    fn load_or_create(&mut self, ev: &NewEvent) -> Result<()> {
        if self.runs.contains_key(&ev.run_id) {
            return Ok(());
        }
        let existing: Option<i64> = self
            .conn
            .query_row("SELECT key FROM runs WHERE id = ?1", [&ev.run_id], |r| {
                r.get(0)
            })
            .optional()?;
        let acc = match existing {
            Some(key) => {
                let summary =
                    crate::reader::load_summary(&self.conn, &ev.run_id)?.ok_or_else(|| {
                        StoreError::Corrupt {
                            run_id: ev.run_id.clone(),
                            message: "run row vanished".to_owned(),
                        }
                    })?;
                let mut stmt = self.conn.prepare_cached(
                    "SELECT DISTINCT node_id FROM events WHERE run_key = ?1 AND node_id IS NOT NULL",
                )?;
                let nodes = stmt
                    .query_map([key], |r| r.get::<_, String>(0))?
                    .collect::<std::result::Result<HashSet<_>, _>>()?;
                RunAcc {
                    key,
                    summary,
                    nodes,
                    dirty: false,
                    touched: false,
                }
            }
            None => {
                let app = ev.app_hint.as_deref().unwrap_or_default().to_owned();
                self.conn.execute(
                    "INSERT INTO runs(id, app, name, status, started_at, last_event_at, claim) \
                     VALUES (?1, ?2, ?2, 'running', ?3, ?3, ?4)",
                    params![ev.run_id, app, ev.ts, ev.claim.as_deref()],
                )?;
                let key = self.conn.last_insert_rowid();
                RunAcc {
                    key,
                    summary: RunSummary {
                        id: ev.run_id.clone(),
                        app: app.clone(),
                        name: app,
                        status: RunState::Running,
                        started_at: ev.ts,
                        finished_at: None,
                        duration_ms: Some(0),
                        counts: Counts::default(),
                        usage: UsageTotals::default(),
                        source: "live".to_owned(),
                        meta: None,
                        sdk: None,
                        last_seq: None,
                        last_event_at: ev.ts,
                    },
                    nodes: HashSet::new(),
                    dirty: true,
                    touched: false,
                }
            }
        };
        self.runs.insert(ev.run_id.clone(), acc);
        Ok(())
    }

    /// Inserts one event (or queues it for the next multi-row insert when it is
    /// certainly new) and updates its run's counters.
    fn insert_event(
        &mut self,
        ev: NewEvent,
        touched: &mut Vec<String>,
        pending: &mut Vec<PendingRow>,
        inserted: &mut Vec<NewEvent>,
    ) -> Result<()> {
        self.load_or_create(&ev)?;
        let code = self.type_code(&ev.type_name)?;
        let Some(acc) = self.runs.get_mut(&ev.run_id) else {
            return Ok(());
        };
        if acc.is_fresh(ev.seq) {
            pending.push(PendingRow {
                key: acc.key,
                code,
                index: inserted.len(),
            });
        } else {
            // Maybe a replay: insert alone and see whether it was new.
            flush_rows(&self.conn, pending, inserted)?;
            let mut stmt = self.conn.prepare_cached(INSERT_ONE)?;
            bind_row(&mut stmt, 1, acc.key, code, &ev)?;
            if stmt.raw_execute()? != 1 {
                return Ok(());
            }
        }
        let s = &mut acc.summary;
        s.counts.events += 1;
        s.last_seq = Some(s.last_seq.map_or(ev.seq, |l| l.max(ev.seq)));
        s.last_event_at = s.last_event_at.max(ev.ts);
        if let Some(node) = &ev.node_id
            && !acc.nodes.contains(node)
        {
            acc.nodes.insert(node.clone());
            s.counts.nodes += 1;
        }
        match &ev.facts {
            EventFacts::RunStarted {
                app,
                name,
                meta_json,
                sdk_json,
            } => {
                s.app = app.clone();
                s.name = name.clone().unwrap_or_else(|| app.clone());
                s.meta = meta_json
                    .as_deref()
                    .and_then(|m| serde_json::from_str(m).ok());
                s.sdk = sdk_json
                    .as_deref()
                    .and_then(|m| serde_json::from_str(m).ok());
                s.started_at = s.started_at.min(ev.ts);
            }
            EventFacts::RunFinished { status } => {
                s.status = *status;
                s.finished_at = Some(ev.ts);
            }
            EventFacts::NodeError => s.counts.errors += 1,
            EventFacts::Usage { input, output } => {
                s.usage.input_tokens += input;
                s.usage.output_tokens += output;
            }
            EventFacts::Plain => {}
        }
        if s.status == RunState::Abandoned && !matches!(ev.facts, EventFacts::RunFinished { .. }) {
            // The app came back: the run is live again.
            s.status = RunState::Running;
            s.finished_at = None;
        }
        s.duration_ms = Some(s.finished_at.unwrap_or(s.last_event_at) - s.started_at);
        acc.dirty = true;
        if !acc.touched {
            acc.touched = true;
            if !touched.contains(&ev.run_id) {
                touched.push(ev.run_id.clone());
            }
        }
        inserted.push(ev);
        Ok(())
    }
}

const INSERT_ONE: &str = "INSERT OR IGNORE INTO events(run_key, seq, ts, type, node_id, payload, extra) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

/// `INSERT … VALUES (…), (…) …` with [`INSERT_CHUNK`] rows.
fn insert_chunk_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let rows = vec!["(?,?,?,?,?,?,?)"; INSERT_CHUNK].join(",");
        format!(
            "INSERT OR IGNORE INTO events(run_key, seq, ts, type, node_id, payload, extra) VALUES {rows}"
        )
    })
}

/// Binds one event row at parameters `first..first + 7` (a seq beyond
/// SQLite's integers is clamped).
fn bind_row(
    stmt: &mut rusqlite::Statement<'_>,
    first: usize,
    key: i64,
    code: i64,
    ev: &NewEvent,
) -> Result<()> {
    let seq = i64::try_from(ev.seq).unwrap_or(i64::MAX);
    stmt.raw_bind_parameter(first, key)?;
    stmt.raw_bind_parameter(first + 1, seq)?;
    stmt.raw_bind_parameter(first + 2, ev.ts)?;
    stmt.raw_bind_parameter(first + 3, code)?;
    stmt.raw_bind_parameter(first + 4, ev.node_id.as_deref())?;
    stmt.raw_bind_parameter(first + 5, ev.payload.as_str())?;
    stmt.raw_bind_parameter(first + 6, ev.extra.as_ref().map(|e| e.get()))?;
    Ok(())
}

/// Writes the queued rows: full chunks with one multi-row statement, the rest
/// one by one. They are all new (see [`RunAcc::is_fresh`]), so every row must land.
fn flush_rows(conn: &Connection, pending: &mut Vec<PendingRow>, events: &[NewEvent]) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut written = 0usize;
    let mut rows = pending.chunks_exact(INSERT_CHUNK);
    for chunk in rows.by_ref() {
        let mut stmt = conn.prepare_cached(insert_chunk_sql())?;
        for (i, row) in chunk.iter().enumerate() {
            if let Some(ev) = events.get(row.index) {
                bind_row(&mut stmt, 1 + i * 7, row.key, row.code, ev)?;
            }
        }
        written += stmt.raw_execute()?;
    }
    let rest = rows.remainder();
    if !rest.is_empty() {
        let mut stmt = conn.prepare_cached(INSERT_ONE)?;
        for row in rest {
            if let Some(ev) = events.get(row.index) {
                bind_row(&mut stmt, 1, row.key, row.code, ev)?;
                written += stmt.raw_execute()?;
            }
        }
    }
    let expected = pending.len();
    pending.clear();
    if written != expected {
        return Err(StoreError::Corrupt {
            run_id: String::new(),
            message: format!("{expected} new events queued, {written} stored"),
        });
    }
    Ok(())
}

/// A stored event for the live feed (the payload text becomes a raw JSON value).
fn stored_event(ev: NewEvent) -> Option<StoredEvent> {
    let payload = match RawValue::from_string(ev.payload) {
        Ok(p) => p,
        Err(e) => {
            tracing::debug!(error = %e, "payload is not JSON; not sent live");
            return None;
        }
    };
    Some(StoredEvent {
        run_id: ev.run_id,
        seq: ev.seq,
        ts: ev.ts,
        type_name: ev.type_name.into_owned(),
        node_id: ev.node_id,
        payload,
        extra: ev.extra,
    })
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

fn write_run(conn: &Connection, acc: &RunAcc) -> Result<()> {
    let s = &acc.summary;
    let mut stmt = conn.prepare_cached(
        "UPDATE runs SET app = ?2, name = ?3, status = ?4, started_at = ?5, finished_at = ?6, \
         last_event_at = ?7, meta_json = ?8, sdk_json = ?9, event_count = ?10, node_count = ?11, \
         error_count = ?12, input_tokens = ?13, output_tokens = ?14, last_seq = ?15 WHERE key = ?1",
    )?;
    stmt.execute(params![
        acc.key,
        s.app,
        s.name,
        s.status.as_str(),
        s.started_at,
        s.finished_at,
        s.last_event_at,
        s.meta.as_ref().map(|m| m.to_string()),
        s.sdk.as_ref().map(|m| m.to_string()),
        s.counts.events as i64,
        s.counts.nodes as i64,
        s.counts.errors as i64,
        s.usage.input_tokens as i64,
        s.usage.output_tokens as i64,
        s.last_seq.map(|v| v as i64),
    ])?;
    Ok(())
}

/// Raw JSON text → boxed raw value, for rows read back from SQLite.
pub(crate) fn raw(text: String) -> Option<Box<RawValue>> {
    RawValue::from_string(text).ok()
}
