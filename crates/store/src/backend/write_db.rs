//! What the writer thread asks of a database: the write-side backend trait.
//!
//! The writer thread (`thread.rs`) holds the logic every backend shares — batching,
//! the freshness shortcut, run counters, isolation of a failed batch, the commit hook —
//! and touches the database only through [`WriteDb`]. One implementation per backend:
//! SQLite (`writer/sqlite_db.rs`) and PostgreSQL (`pg/writer.rs`). Beside it the
//! types both hand back: [`Committed`], [`Retention`], [`EventsWanted`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::Result;
use crate::ingest::NewEvent;
use crate::model::{RunSummary, StoredEvent};

/// A stored run as the writer loads it to go on counting.
pub(crate) struct FoundRun {
    /// The run's row key.
    pub(crate) key: i64,
    /// Its summary, with `last_seq` taken from the stored event rows.
    pub(crate) summary: RunSummary,
    /// The node ids its events name.
    pub(crate) nodes: HashSet<String>,
}

/// One event row to insert.
#[derive(Clone, Copy)]
pub(crate) struct EventRow<'a> {
    /// The run's row key.
    pub(crate) key: i64,
    /// The interned event type.
    pub(crate) code: i64,
    /// The event.
    pub(crate) event: &'a NewEvent,
}

/// The writer's connection to one database. Every call but [`WriteDb::begin`],
/// [`WriteDb::commit`], [`WriteDb::rollback`] and [`WriteDb::finish`] runs inside
/// the transaction the thread opened.
pub(crate) trait WriteDb: Send {
    /// Marks the runs a previous process left `running` as `abandoned`; returns their ids.
    fn reconcile(&mut self, now: i64) -> Result<Vec<String>>;
    /// Rows the thread queues before it calls [`WriteDb::insert_new`].
    fn insert_chunk(&self) -> usize;
    /// Opens a write transaction.
    fn begin(&mut self) -> Result<()>;
    /// Commits it.
    fn commit(&mut self) -> Result<()>;
    /// Rolls it back (best effort).
    fn rollback(&mut self);
    /// Every interned event type, by name.
    fn load_types(&mut self) -> Result<HashMap<String, i64>>;
    /// The code of `name`, interning it when new.
    fn intern_type(&mut self, name: &str) -> Result<i64>;
    /// A stored run.
    fn find_run(&mut self, run_id: &str) -> Result<Option<FoundRun>>;
    /// Creates a run row (`running`, started and last seen at `ts`, from `source`: `live`,
    /// `otlp`); returns its key.
    fn create_run(
        &mut self,
        run_id: &str,
        app: &str,
        ts: i64,
        claim: Option<&str>,
        source: &str,
    ) -> Result<i64>;
    /// Inserts rows known to be new; returns how many were stored (all of them, or
    /// the thread reports corruption).
    fn insert_new(&mut self, rows: &[EventRow<'_>]) -> Result<usize>;
    /// Inserts one row unless its `(run, seq)` is stored; returns whether it was new.
    fn insert_one(&mut self, row: EventRow<'_>) -> Result<bool>;
    /// When the hold `pause_id` of run `key` began: the `ts` of its stored `exec.paused`,
    /// `None` when there is none or a stored `exec.resumed` below `before_seq` released it
    /// already (a hold counts once). Asked only for a hold released after the writer
    /// (re)loaded its run, so rarely.
    fn hold_start(&mut self, key: i64, pause_id: &str, before_seq: u64) -> Result<Option<i64>>;
    /// Writes a run's counters and facts.
    fn write_run(&mut self, key: i64, summary: &RunSummary) -> Result<()>;
    /// Marks a run `abandoned` (finished at `at`) if it is `running`; returns whether it was.
    fn abandon(&mut self, run_id: &str, at: i64) -> Result<bool>;
    /// A run's row key.
    fn run_key(&mut self, run_id: &str) -> Result<Option<i64>>;
    /// Deletes a run and its events by key.
    fn delete_key(&mut self, key: i64) -> Result<()>;
    /// Up to `limit` finished runs outside `retention`, oldest first: `(key, id)`.
    /// Imported runs keep their original times, so `keep_days` leaves them alone
    /// (`keep_runs` counts them).
    fn prune_victims(
        &mut self,
        retention: Retention,
        now: i64,
        limit: u32,
    ) -> Result<Vec<(i64, String)>>;
    /// One run's stored summary.
    fn load_summary(&mut self, run_id: &str) -> Result<Option<RunSummary>>;
    /// Whether this database announces its commits ([`WriteDb::announce`]); the thread
    /// only gathers what to announce when it does.
    fn announces(&self) -> bool {
        false
    }
    /// Announces, inside the transaction (just before its commit), what it changed:
    /// each touched run with the seqs newly stored for it, and the deleted runs.
    fn announce(&mut self, _runs: Vec<(String, Vec<u64>)>, _deleted: &[String]) -> Result<()> {
        Ok(())
    }
    /// Marks `abandoned` (finished at `at`) the `running` runs no live instance owns: those
    /// whose owner is unknown or not in `live`; returns their ids. A database without
    /// instance owners (SQLite: one server per file) has none.
    fn abandon_orphans(&mut self, _live: &[String], _at: i64) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// Called once when the thread stops (SQLite truncates its WAL).
    fn finish(&mut self) {}
}

/// Asked after each commit: does anybody want [`Committed::events`]?
pub type EventsWanted = Arc<dyn Fn() -> bool + Send + Sync>;

/// What [`crate::Writer::prune`] keeps. `0` in a field means no limit of that kind.
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

/// What one commit changed, handed to the commit hook.
#[derive(Debug, Clone, Default)]
pub struct Committed {
    /// Newly stored events, in the order they were written.
    pub events: Vec<StoredEvent>,
    /// Runs created or changed by this commit (latest state).
    pub runs: Vec<RunSummary>,
    /// Runs deleted by this commit.
    pub deleted: Vec<String>,
    /// A marker, not a commit: the feed may have missed commits (a follower of other
    /// instances' commits was disconnected), so subscribers should re-read what they
    /// show from the store. Never set by the writer.
    pub resync: bool,
}

impl Committed {
    /// The marker asking feed subscribers to re-read from the store ([`Committed::resync`]).
    pub fn resync_marker() -> Committed {
        Committed {
            resync: true,
            ..Committed::default()
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty() && self.runs.is_empty() && self.deleted.is_empty() && !self.resync
    }
}

/// 16 random bytes as hex: a writer's id when it has no instance id.
pub(crate) fn random_id() -> String {
    use rand::Rng;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
