//! The indexer thread: fills the search index file ([`super::index_file`]) behind the
//! writer, from the run database's `search_queue`, in batches of its own transactions.
//!
//! It starts with the writer (SQLite). A missing, unreadable or outdated index file is
//! rebuilt from the stored events (pages of [`REBUILD_PAGE`] events, the watermark set to
//! the queue's high water read before the first page); then it follows the queue from its
//! watermark: ranges of stored seqs are indexed, a deleted run's rows removed, and the
//! watermark advanced in the same transaction, so a restart resumes where it stopped.
//! The writer pokes it after each commit; it also looks every [`IDLE_POLL`] (an import
//! by another process queues rows too).
//!
//! It yields to ingest: while the writer has committed within [`BUSY_WINDOW`], after each
//! batch it waits [`BUSY_BACKOFF`] times as long as the batch took (so it takes at most a
//! fifth of a core from the writer and the server); when ingest pauses it runs flat out
//! and catches up. A search scans whatever it has not reached, so none misses an event;
//! to keep that scan bounded, it stops yielding while more than [`MAX_YIELDING_BACKLOG`]
//! events wait (and while it rebuilds), and past the writer's limit
//! ([`crate::WriterConfig::search_backlog_limit`]) the writer waits for it before each
//! transaction ([`Indexer::wait_for_room`]): ingest then goes at the indexer's pace, as
//! when the index was written in the writer's transaction, but only beyond that limit.
//!
//! The backlog is counted in one measure on both sides: a queue row's range of seqs
//! (`last_seq - first_seq + 1`), added by the writer at commit, taken off by the indexer
//! when its watermark passes the row, and read exactly from the queue when the indexer
//! opens and whenever it has caught up.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};

use super::index_file::{IndexFile, queue_high_water};
use crate::error::{Result, StoreError};

/// Stored events indexed per rebuild transaction.
const REBUILD_PAGE: i64 = 20_000;
/// Queue rows read per follow-up transaction.
const QUEUE_PAGE: i64 = 512;
/// Events after which a follow-up transaction commits (the rest waits for the next one).
const EVENTS_PER_COMMIT: usize = 5_000;
/// How long the thread waits for a poke before looking at the queue anyway.
const IDLE_POLL: Duration = Duration::from_secs(1);
/// How long it waits after a failure before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// How recent the writer's last commit must be for ingest to count as busy.
const BUSY_WINDOW: Duration = Duration::from_millis(500);
/// While ingest is busy, the wait after a batch, in multiples of the batch's duration.
const BUSY_BACKOFF: u32 = 4;

/// Events not yet indexed above which the indexer stops yielding to ingest (a search
/// scans them all when its query is rare).
const MAX_YIELDING_BACKLOG: i64 = 50_000;

/// The watermark value that means "not known yet".
const UNKNOWN: i64 = -1;

/// Events queued and not yet indexed (`None` while the index is being built: the writer
/// then does not wait), and the signal the indexer gives after each batch.
#[derive(Default)]
struct Backlog {
    events: Mutex<Option<i64>>,
    moved: Condvar,
}

impl Backlog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<i64>> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn add(&self, events: i64) {
        if let Some(n) = self.lock().as_mut() {
            *n = n.saturating_add(events);
        }
    }

    /// Sets (or forgets) the count and wakes a waiting writer.
    fn set(&self, events: Option<i64>) {
        *self.lock() = events;
        self.moved.notify_all();
    }

    fn take(&self, events: i64) {
        if let Some(n) = self.lock().as_mut() {
            *n = n.saturating_sub(events).max(0);
        }
        self.moved.notify_all();
    }

    fn get(&self) -> Option<i64> {
        *self.lock()
    }
}

/// Handle to the indexer thread; dropping it stops the thread (after its current batch).
pub(crate) struct Indexer {
    poke: SyncSender<()>,
    last_commit: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
    watermark: Arc<AtomicI64>,
    backlog: Arc<Backlog>,
    thread: Option<JoinHandle<()>>,
}

impl Indexer {
    /// Starts the indexer of the run database `db`.
    pub(crate) fn start(db: &Path) -> Result<Indexer> {
        let (poke, wake) = mpsc::sync_channel(1);
        let stop = Arc::new(AtomicBool::new(false));
        let watermark = Arc::new(AtomicI64::new(UNKNOWN));
        let last_commit = Arc::new(AtomicI64::new(0));
        let backlog = Arc::new(Backlog::default());
        let mut worker = Worker {
            db: db.to_path_buf(),
            last_commit: Arc::clone(&last_commit),
            stop: Arc::clone(&stop),
            watermark: Arc::clone(&watermark),
            backlog: Arc::clone(&backlog),
            state: None,
        };
        let thread = std::thread::Builder::new()
            .name("mindgate-search-indexer".to_owned())
            .spawn(move || worker.run(&wake))
            .map_err(|source| StoreError::Io {
                path: db.to_path_buf(),
                source,
            })?;
        Ok(Indexer {
            poke,
            last_commit,
            stop,
            watermark,
            backlog,
            thread: Some(thread),
        })
    }

    /// Tells the thread that the writer committed `events` more to index (never blocks).
    pub(crate) fn queued(&self, events: i64) {
        self.backlog.add(events);
        self.last_commit.store(crate::now_ms(), Ordering::Release);
        let _ = self.poke.try_send(());
    }

    /// Waits (at most `longest`) while more than `limit` events wait to be indexed;
    /// whether it waited. Never waits while the index is being built.
    pub(crate) fn wait_for_room(&self, limit: i64, longest: Duration) -> bool {
        let over = |n: &mut Option<i64>| n.is_some_and(|n| n > limit);
        let mut events = self.backlog.lock();
        if !over(&mut events) {
            return false;
        }
        let _ = self.poke.try_send(());
        let _ = self.backlog.moved.wait_timeout_while(events, longest, over);
        true
    }

    /// The highest queue id the index holds (`None` while it is being built).
    pub(crate) fn watermark(&self) -> Option<i64> {
        let mark = self.watermark.load(Ordering::Acquire);
        (mark != UNKNOWN).then_some(mark)
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.poke.try_send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where the index stands.
enum Phase {
    /// Being built from the stored events: the next page starts after `after`; when the
    /// last page is in, the watermark becomes `target`.
    Rebuild { target: i64, after: (i64, i64) },
    /// Following the queue from `watermark`.
    Follow { watermark: i64 },
}

struct Open {
    main: Connection,
    index: IndexFile,
    phase: Phase,
}

struct Worker {
    db: PathBuf,
    last_commit: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
    watermark: Arc<AtomicI64>,
    backlog: Arc<Backlog>,
    state: Option<Open>,
}

impl Worker {
    fn run(&mut self, wake: &Receiver<()>) {
        while !self.stop.load(Ordering::Acquire) {
            let started = Instant::now();
            let wait = match self.step() {
                Ok(true) if self.ingest_busy() && !self.backlog_too_long() => {
                    self.pause(wake, started.elapsed() * BUSY_BACKOFF);
                    continue;
                }
                Ok(true) => continue,
                Ok(false) => IDLE_POLL,
                Err(e) => {
                    tracing::warn!(error = %e, "search indexer: a batch failed; reopening the index");
                    self.state = None;
                    // Not known until it reopens: the writer does not wait meanwhile.
                    self.backlog.set(None);
                    RETRY_AFTER
                }
            };
            if let Err(mpsc::RecvTimeoutError::Disconnected) = wake.recv_timeout(wait) {
                return;
            }
        }
    }

    /// Whether the writer committed within [`BUSY_WINDOW`].
    fn ingest_busy(&self) -> bool {
        let last = self.last_commit.load(Ordering::Acquire);
        let window = i64::try_from(BUSY_WINDOW.as_millis()).unwrap_or(i64::MAX);
        crate::now_ms().saturating_sub(last) < window
    }

    /// Whether the events not yet indexed exceed [`MAX_YIELDING_BACKLOG`] (every search
    /// scans them), or the index is being rebuilt (every search scans everything): then
    /// the indexer does not yield.
    fn backlog_too_long(&self) -> bool {
        match self.state.as_ref().map(|open| &open.phase) {
            None => false,
            Some(Phase::Rebuild { .. }) => true,
            Some(Phase::Follow { .. }) => self
                .backlog
                .get()
                .is_some_and(|events| events > MAX_YIELDING_BACKLOG),
        }
    }

    /// Waits `length` (pokes do not cut it short; a stop does, at the next poke).
    fn pause(&self, wake: &Receiver<()>, length: Duration) {
        let until = Instant::now() + length;
        while !self.stop.load(Ordering::Acquire) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            if let Err(mpsc::RecvTimeoutError::Disconnected) = wake.recv_timeout(left) {
                return;
            }
        }
    }

    /// One batch; `Ok(true)` when there may be more to do at once.
    fn step(&mut self) -> Result<bool> {
        if self.state.is_none() {
            self.state = Some(self.open()?);
        }
        let Some(open) = self.state.as_mut() else {
            return Ok(false);
        };
        let more = match open.phase {
            Phase::Rebuild { target, after } => {
                let next = rebuild_page(&open.main, &open.index, after, target)?;
                open.phase = match next {
                    Some(after) => Phase::Rebuild { target, after },
                    None => {
                        tracing::info!(path = %open.index.path().display(), "search index built");
                        self.watermark.store(target, Ordering::Release);
                        self.backlog.set(Some(queued_after(&open.main, target)?));
                        Phase::Follow { watermark: target }
                    }
                };
                true
            }
            Phase::Follow { watermark } => {
                let (next, done) = follow_batch(&open.main, &open.index, watermark)?;
                if next == watermark {
                    // Caught up: the count is read exactly (the sums cannot drift).
                    self.backlog.set(Some(queued_after(&open.main, next)?));
                    false
                } else {
                    open.phase = Phase::Follow { watermark: next };
                    self.watermark.store(next, Ordering::Release);
                    self.backlog.take(done);
                    true
                }
            }
        };
        Ok(more)
    }

    fn open(&self) -> Result<Open> {
        let main = crate::schema::open_reader(&self.db, true)?;
        let high_water = queue_high_water(&main)?;
        let (index, mark) = IndexFile::open(&self.db, high_water)?;
        let phase = match mark {
            Some(watermark) => {
                self.watermark.store(watermark, Ordering::Release);
                self.backlog.set(Some(queued_after(&main, watermark)?));
                Phase::Follow { watermark }
            }
            None => {
                self.backlog.set(None);
                Phase::Rebuild {
                    target: high_water,
                    after: (i64::MIN, i64::MIN),
                }
            }
        };
        Ok(Open { main, index, phase })
    }
}

/// Indexes the next page of stored events after `after` (by run key, seq); on the last
/// page also sets the watermark to `target`. Returns where the next page starts, `None`
/// when done.
fn rebuild_page(
    main: &Connection,
    index: &IndexFile,
    after: (i64, i64),
    target: i64,
) -> Result<Option<(i64, i64)>> {
    let tx = index.conn.unchecked_transaction()?;
    let mut stmt = main.prepare_cached(
        "SELECT run_key, seq, payload FROM events WHERE (run_key, seq) > (?1, ?2) \
         ORDER BY run_key, seq LIMIT ?3",
    )?;
    let mut rows = stmt.query(params![after.0, after.1, REBUILD_PAGE])?;
    let mut last = None;
    let mut count = 0;
    while let Some(row) = rows.next()? {
        let (key, seq): (i64, i64) = (row.get(0)?, row.get(1)?);
        index.index(key, seq, row.get_ref(2)?.as_str().unwrap_or_default())?;
        last = Some((key, seq));
        count += 1;
    }
    let next = if count < REBUILD_PAGE { None } else { last };
    if next.is_none() {
        index.set_watermark(target)?;
    }
    tx.commit()?;
    Ok(next)
}

/// The events the queue holds after `watermark`, in the backlog's measure.
fn queued_after(main: &Connection, watermark: i64) -> Result<i64> {
    Ok(main
        .prepare_cached(
            "SELECT COALESCE(SUM(last_seq - first_seq + 1), 0) FROM search_queue WHERE id > ?1",
        )?
        .query_row([watermark], |r| r.get::<_, i64>(0))?)
}

/// Indexes what the queue holds after `watermark` (up to [`QUEUE_PAGE`] rows or about
/// [`EVENTS_PER_COMMIT`] events) in one transaction; returns the new watermark and the
/// rows' events in the backlog's measure.
fn follow_batch(main: &Connection, index: &IndexFile, watermark: i64) -> Result<(i64, i64)> {
    let queued: Vec<(i64, i64, Option<i64>, Option<i64>)> = {
        let mut stmt = main.prepare_cached(
            "SELECT id, run_key, first_seq, last_seq FROM search_queue WHERE id > ?1 \
             ORDER BY id LIMIT ?2",
        )?;
        stmt.query_map(params![watermark, QUEUE_PAGE], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<std::result::Result<_, _>>()?
    };
    if queued.is_empty() {
        return Ok((watermark, 0));
    }
    let tx = index.conn.unchecked_transaction()?;
    let mut mark = watermark;
    let mut events = 0usize;
    let mut measured = 0i64;
    let mut stmt = main.prepare_cached(
        "SELECT seq, payload FROM events WHERE run_key = ?1 AND seq BETWEEN ?2 AND ?3",
    )?;
    for (id, key, first, last) in queued {
        match (first, last) {
            (Some(first), Some(last)) => {
                measured = measured.saturating_add(last.saturating_sub(first).saturating_add(1));
                let mut rows = stmt.query(params![key, first, last])?;
                while let Some(row) = rows.next()? {
                    index.index(
                        key,
                        row.get(0)?,
                        row.get_ref(1)?.as_str().unwrap_or_default(),
                    )?;
                    events += 1;
                }
            }
            _ => index.unindex_run(key)?,
        }
        mark = id;
        if events >= EVENTS_PER_COMMIT {
            break;
        }
    }
    index.set_watermark(mark)?;
    tx.commit()?;
    Ok((mark, measured))
}
