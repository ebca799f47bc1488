//! The writer thread: drains the queue in batches, applies each batch in one
//! transaction (re-applying a failed one operation by operation) and reports what
//! was committed to the hook. The database is reached through [`WriteDb`].

mod rows;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender};

use super::{CommitHook, Committed, Counters, EventsWanted, Op, PRUNE_CHUNK};
use crate::backend::write_db::WriteDb;
use crate::error::Result;
use crate::ingest::MAX_STORED_SEQ;
use crate::model::{RunState, RunSummary};

use rows::{PendingRow, event_at, stored_event, truncated};

/// A run as the writer tracks it between commits.
struct RunAcc {
    key: i64,
    summary: RunSummary,
    nodes: HashSet<String>,
    /// Its holds open since the writer loaded it (the run's held time).
    holds: crate::tally::HoldClock,
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

pub(super) struct State {
    db: Box<dyn WriteDb>,
    runs: HashMap<String, RunAcc>,
    types: HashMap<String, i64>,
    events_wanted: Option<EventsWanted>,
    counters: Arc<Counters>,
    /// Set while a failed batch is re-applied one operation at a time: every
    /// row then takes the checked single-row insert (no freshness shortcut).
    exact: bool,
    /// Runs other writers changed since they were cached (dropped before each batch).
    stale: Arc<std::sync::Mutex<super::StaleRuns>>,
}

enum Reply {
    Abandon(SyncSender<usize>, usize),
    Orphans(SyncSender<Vec<String>>, Vec<String>),
    Delete(SyncSender<bool>, bool),
    Prune(SyncSender<Vec<String>>, Vec<String>),
    Unit(SyncSender<()>),
}

impl Reply {
    fn send(self) {
        match self {
            Reply::Abandon(tx, n) => drop(tx.send(n)),
            Reply::Orphans(tx, ids) => drop(tx.send(ids)),
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
            Op::AbandonOrphans { reply, .. } => Some(Reply::Orphans(reply.clone(), Vec::new())),
            Op::Delete { reply, .. } => Some(Reply::Delete(reply.clone(), false)),
            Op::Prune { reply, .. } => Some(Reply::Prune(reply.clone(), Vec::new())),
            Op::Flush(reply) | Op::Stop(reply) => Some(Reply::Unit(reply.clone())),
        }
    }
}

impl State {
    pub(super) fn new(
        mut db: Box<dyn WriteDb>,
        events_wanted: Option<EventsWanted>,
        counters: Arc<Counters>,
        stale: Arc<std::sync::Mutex<super::StaleRuns>>,
    ) -> Result<State> {
        let types = db.load_types()?;
        Ok(State {
            db,
            runs: HashMap::new(),
            types,
            events_wanted,
            counters,
            exact: false,
            stale,
        })
    }

    /// Drops the cached runs another writer changed, so they are read afresh.
    fn drop_stale(&mut self) {
        let Ok(mut stale) = self.stale.lock() else {
            return;
        };
        if std::mem::take(&mut stale.all) {
            self.runs.clear();
        }
        for id in stale.ids.drain() {
            self.runs.remove(&id);
        }
    }

    pub(super) fn run(&mut self, rx: Receiver<Op>, max_batch: usize, hook: Option<CommitHook>) {
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
            self.drop_stale();
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
        self.db.finish();
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
        match self.db.load_types() {
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
        self.db.begin()?;
        match self.apply_in_tx(ops, committed, replies) {
            Ok(inserted) => match self.db.commit() {
                Ok(()) => Ok(inserted),
                Err(e) => {
                    self.db.rollback();
                    Err(e)
                }
            },
            Err(e) => {
                self.db.rollback();
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
        let chunk = self.db.insert_chunk();
        let mut pending: Vec<PendingRow> = Vec::with_capacity(chunk);
        for (index, op) in ops.iter().enumerate() {
            if !matches!(op, Op::Event(_)) {
                self.flush_rows(&mut pending, ops)?;
            }
            match op {
                Op::Event(ev) => {
                    self.insert_event(ev, index, ops, &mut touched, &mut pending, &mut inserted)?;
                    if pending.len() >= chunk {
                        self.flush_rows(&mut pending, ops)?;
                    }
                }
                Op::Abandon { run_ids, at, reply } => {
                    let at = *at;
                    let mut n = 0;
                    for id in run_ids {
                        if self.db.abandon(id, at)? {
                            n += 1;
                            self.mark_abandoned(id, at, &mut touched);
                        }
                    }
                    replies.push(Reply::Abandon(reply.clone(), n));
                }
                Op::AbandonOrphans { live, at, reply } => {
                    let ids = self.db.abandon_orphans(live, *at)?;
                    for id in &ids {
                        self.mark_abandoned(id, *at, &mut touched);
                    }
                    replies.push(Reply::Orphans(reply.clone(), ids));
                }
                Op::Delete { run_id, reply } => {
                    let key = self.db.run_key(run_id)?;
                    if let Some(key) = key {
                        self.db.delete_key(key)?;
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
                    let victims = self.db.prune_victims(*retention, *now, PRUNE_CHUNK)?;
                    let mut ids = Vec::with_capacity(victims.len());
                    for (key, id) in victims {
                        self.db.delete_key(key)?;
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
        self.flush_rows(&mut pending, ops)?;
        for id in &touched {
            if let Some(acc) = self.runs.get_mut(id) {
                acc.touched = false;
                if acc.dirty {
                    self.db.write_run(acc.key, &acc.summary)?;
                    acc.dirty = false;
                }
                committed.runs.push(acc.summary.clone());
            } else if let Some(summary) = self.db.load_summary(id)? {
                committed.runs.push(summary);
            }
        }
        if self.db.announces() {
            self.announce(ops, &inserted, touched, &committed.deleted)?;
        }
        Ok(inserted)
    }

    /// Tells the database what this transaction changed (before its commit): every
    /// touched run with the seqs of the events actually inserted for it.
    fn announce(
        &mut self,
        ops: &[Op],
        inserted: &[usize],
        touched: Vec<String>,
        deleted: &[String],
    ) -> Result<()> {
        let mut seqs: HashMap<&str, Vec<u64>> = HashMap::new();
        for &index in inserted {
            if let Some(ev) = event_at(ops, index) {
                seqs.entry(ev.run_id.as_str()).or_default().push(ev.seq);
            }
        }
        let runs: Vec<(String, Vec<u64>)> = touched
            .into_iter()
            .map(|id| {
                let new = seqs.remove(id.as_str()).unwrap_or_default();
                (id, new)
            })
            .collect();
        if runs.is_empty() && deleted.is_empty() {
            return Ok(());
        }
        self.db.announce(runs, deleted)
    }

    /// Records in the cache that `id` is now `abandoned` (finished at `at`) and lists it
    /// among the touched runs.
    fn mark_abandoned(&mut self, id: &str, at: i64, touched: &mut Vec<String>) {
        if let Some(acc) = self.runs.get_mut(id) {
            acc.summary.status = RunState::Abandoned;
            acc.summary.finished_at = Some(at);
            acc.summary.duration_ms = Some(at.saturating_sub(acc.summary.started_at));
        }
        if !touched.iter().any(|t| t == id) {
            touched.push(id.to_owned());
        }
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
