//! The OTLP receiver's traces: one [`TraceState`] per trace, each behind a lock of its
//! own, and the one claimed section that turns a trace's spans into stored events.
//!
//! * **No lock shared by every client** while spans are mapped or stored: the map of
//!   traces is locked only to find or add a trace's slot; a request then holds the slots
//!   of its own traces (taken in trace-id order, so two requests never wait on each
//!   other in a circle) and the expirer skips a slot in use.
//! * **`seq`s correct across instances and restarts**: in the section the run is claimed
//!   ([`mindgate_store::RunStore::claim_run`]: a per-run advisory lock on PostgreSQL),
//!   what the store holds beyond what this instance knows is read (another instance's
//!   writes, or the whole run on first sight), the events are written after it and
//!   committed, and the rows are checked to be there: an event not stored makes its span
//!   count as rejected in the answer, and the trace is read again from the store next time.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use mindgate_otlp::{Batch, StoredTrace, TraceSpans, TraceState, TrackerConfig};
use mindgate_store::{
    MAX_EVENT_PAGE, NewEvent, PendingFlush, RunClaim, RunStore, StoreError, Writer,
};
use tokio::sync::Mutex as AsyncMutex;

/// One trace's state: `None` until read from the store under the claim.
pub type Slot = Arc<AsyncMutex<Option<TraceState>>>;

/// Every trace being received.
#[derive(Debug)]
pub struct OtlpTraces {
    config: TrackerConfig,
    slots: Mutex<HashMap<[u8; 16], Slot>>,
}

/// What the claimed section does to a trace.
pub enum Work {
    /// Maps and stores one request's spans of it.
    Spans(TraceSpans),
    /// Finishes it if it has been quiet for the quiet timeout (`run.finished`, `reason: "quiet"`).
    Expire,
}

impl OtlpTraces {
    /// No traces yet.
    pub fn new(config: TrackerConfig) -> OtlpTraces {
        OtlpTraces {
            config,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The tuning (quiet timeout, traces remembered, source).
    pub fn config(&self) -> &TrackerConfig {
        &self.config
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 16], Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The slot of `trace`, added when missing. Past [`TrackerConfig::max_traces`] the
    /// slots nobody holds are forgotten, finished ones and the least recently active
    /// first (a forgotten trace is read back from the store when it comes again).
    pub fn slot(&self, trace: [u8; 16]) -> Slot {
        let mut slots = self.lock();
        let slot = Arc::clone(slots.entry(trace).or_default());
        let max = self.config.max_traces.max(1);
        if slots.len() > max {
            evict_idle(&mut slots, max);
        }
        slot
    }

    /// Every slot (for the expirer).
    pub fn all(&self) -> Vec<Slot> {
        self.lock().values().cloned().collect()
    }

    /// Traces remembered.
    pub fn count(&self) -> usize {
        self.lock().len()
    }
}

/// Forgets idle slots (held by no request) until at most `max` remain, finished and
/// least recently active first; one sort, however many go.
fn evict_idle(slots: &mut HashMap<[u8; 16], Slot>, max: usize) {
    let mut idle: Vec<(bool, i64, [u8; 16])> = slots
        .iter()
        .filter(|(_, slot)| Arc::strong_count(slot) == 1)
        .filter_map(|(key, slot)| {
            let state = slot.try_lock().ok()?;
            Some(match state.as_ref() {
                Some(s) => (!s.is_finished(), s.last_activity(), *key),
                None => (false, i64::MIN, *key),
            })
        })
        .collect();
    idle.sort_unstable();
    let excess = slots.len().saturating_sub(max);
    for (_, _, key) in idle.into_iter().take(excess) {
        slots.remove(&key);
    }
}

/// What the claimed section works with.
pub struct Storage<'a> {
    /// The run store (reads, claims, the check).
    pub store: &'a RunStore,
    /// The writer the events go to.
    pub writer: &'a Writer,
    /// The tuning.
    pub config: &'a TrackerConfig,
}

/// A trace's events handed to the writer under its claim, not yet checked.
pub struct Written<'a> {
    _claim: RunClaim<'a>,
    run_id: String,
    first: u64,
    last: u64,
    mark: usize,
}

impl Storage<'_> {
    /// Does `work` to each trace, with its slot held (blocking: run it off the async
    /// runtime): claims the runs, appends their events, commits once, checks the rows.
    /// Errors are the store's (the answer is then 503 and the exporter retries: spans
    /// already stored are skipped as duplicates).
    pub fn write(
        &self,
        traces: Vec<(&mut Option<TraceState>, [u8; 16], Work)>,
        now: i64,
        batch: &mut Batch,
    ) -> Result<(), StoreError> {
        let mut pending = Vec::with_capacity(traces.len());
        for (slot, trace, work) in traces {
            if let Some(written) = self.append(slot, trace, work, now, batch)? {
                pending.push((slot, written));
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        self.writer.flush()?;
        for (slot, written) in pending {
            self.check(slot, written, batch)?;
        }
        Ok(())
    }

    /// Claims the run, reads what the store holds beyond `slot`, does `work` with its
    /// events into the writer. `None` when it wrote nothing.
    fn append(
        &self,
        slot: &mut Option<TraceState>,
        trace: [u8; 16],
        work: Work,
        now: i64,
        batch: &mut Batch,
    ) -> Result<Option<Written<'_>>, StoreError> {
        if let Work::Expire = work {
            let quiet = slot.as_ref().is_some_and(|s| {
                !s.is_finished() && now.saturating_sub(s.last_activity()) >= self.config.quiet_ms
            });
            if !quiet {
                return Ok(None);
            }
        }
        let run_id = mindgate_otlp::run_id_of(&trace);
        let claim = self.store.claim_run(&run_id)?;
        let app = match &work {
            Work::Spans(group) => group.app(),
            Work::Expire => Arc::from(mindgate_otlp::live::SDK_NAME),
        };
        let state = refresh(self, slot, trace, app, now)?;
        let first = state.next_seq();
        let mark = batch.event_spans.len();
        let mut append_error = None;
        {
            let mut in_flight = InFlight::default();
            let mut sink = |event: NewEvent| {
                if append_error.is_none()
                    && let Err(e) = self
                        .writer
                        .append(event)
                        .and_then(|()| in_flight.appended(self.writer))
                {
                    append_error = Some(e);
                }
            };
            match work {
                Work::Spans(group) => state.ingest(group, now, batch, Some(&mut sink)),
                Work::Expire => {
                    state.expire(now, self.config.quiet_ms, batch, Some(&mut sink));
                }
            }
        }
        let last = state.next_seq().saturating_sub(1);
        if let Some(e) = append_error {
            *slot = None;
            return Err(e);
        }
        Ok((last >= first).then_some(Written {
            _claim: claim,
            run_id,
            first,
            last,
            mark,
        }))
    }

    /// Checks that a trace's committed events are all there; the spans of those that are
    /// not count as rejected, and the trace is read again from the store next time.
    fn check(
        &self,
        slot: &mut Option<TraceState>,
        written: Written<'_>,
        batch: &mut Batch,
    ) -> Result<(), StoreError> {
        let Written {
            run_id,
            first,
            last,
            mark,
            ..
        } = written;
        let missing = self.store.missing_seqs(&run_id, first, last)?;
        if missing.is_empty() {
            return Ok(());
        }
        let spans: HashSet<u64> = missing
            .iter()
            .filter_map(|seq| {
                let at = mark + usize::try_from(seq - first).ok()?;
                batch.event_spans.get(at).copied()
            })
            .filter(|span| *span != 0)
            .collect();
        tracing::warn!(run = %run_id, missing = missing.len(), "OTLP events were not stored");
        batch.reject(
            spans.len() as u64,
            format!(
                "{} event(s) of run {run_id} were not stored (another writer took their seq); \
                 send the spans again",
                missing.len()
            ),
        );
        *slot = None;
        Ok(())
    }
}

/// Events one request may have queued for the writer and not yet committed: past it the
/// request waits for the flush it asked [`IN_FLIGHT`] events ago, so a request of
/// 250,000 spans holds a few thousand events in memory, not the writer's whole queue.
const IN_FLIGHT: usize = 4_096;

/// The flushes a request's events wait on ([`IN_FLIGHT`]).
#[derive(Default)]
struct InFlight {
    since_flush: usize,
    pending: Option<PendingFlush>,
}

impl InFlight {
    /// Counts one appended event; every [`IN_FLIGHT`] asks a flush and waits on the one
    /// before (the writer keeps committing meanwhile).
    fn appended(&mut self, writer: &Writer) -> Result<(), StoreError> {
        self.since_flush += 1;
        if self.since_flush < IN_FLIGHT {
            return Ok(());
        }
        self.since_flush = 0;
        let next = writer.flush_later()?;
        match self.pending.replace(next) {
            Some(before) => before.wait(),
            None => Ok(()),
        }
    }
}

/// The slot's state brought up to what the store holds: on first sight the whole run
/// (a restart, an evicted trace, a trace another instance began), else the events
/// after the last `seq` this instance knows (another instance's writes). When the store
/// held something new the writer re-reads the run's counters before writing it.
fn refresh<'s>(
    storage: &Storage<'_>,
    slot: &'s mut Option<TraceState>,
    trace: [u8; 16],
    app: Arc<str>,
    now: i64,
) -> Result<&'s mut TraceState, StoreError> {
    let source = storage.config.source;
    let state = slot.get_or_insert_with(|| TraceState::new(trace, app, source, now));
    let after = state.next_seq().saturating_sub(1);
    let stored = read_after(storage.store, state.run_id(), after)?;
    if !stored.is_empty() {
        storage.writer.forget_runs([state.run_id().to_owned()]);
        state.absorb(stored, now);
    }
    Ok(state)
}

/// What the store holds of a run after `after` (all of it for 0), page by page.
fn read_after(store: &RunStore, run_id: &str, after: u64) -> Result<StoredTrace, StoreError> {
    let mut events = Vec::new();
    let mut cursor = (after > 0).then_some(after);
    loop {
        let Some(page) = store.events(run_id, cursor, Some(MAX_EVENT_PAGE))? else {
            break;
        };
        events.extend(page.events);
        if !page.has_more {
            break;
        }
        cursor = page.next_after_seq;
    }
    Ok(StoredTrace::from_events(
        events
            .iter()
            .map(|e| (e.seq, e.type_name.as_str(), e.payload_value())),
    ))
}
