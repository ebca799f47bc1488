//! Row-level writes of the writer thread: interning types, creating runs,
//! inserting events (multi-row when they are certainly new) and run rows.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use serde_json::value::RawValue;

use super::super::{MAX_EVENT_TYPES, Op};
use super::{RunAcc, State};
use crate::backend::write_db::EventRow;
use crate::error::{Result, StoreError};
use crate::ingest::{EventFacts, MAX_STORED_SEQ, NewEvent};
use crate::model::{Counts, RunState, RunSummary, StoredEvent, UsageTotals};
use crate::tally::{HoldChange, HoldClock};

/// An event row waiting for the next multi-row insert (`index` into the batch's operations).
pub(super) struct PendingRow {
    pub(super) key: i64,
    pub(super) code: i64,
    pub(super) index: usize,
}

/// The event of `ops[index]`, when it is one.
pub(super) fn event_at(ops: &[Op], index: usize) -> Option<&NewEvent> {
    match ops.get(index) {
        Some(Op::Event(ev)) => Some(ev),
        _ => None,
    }
}

impl State {
    /// The interned code of an event type; `None` when it is new and
    /// [`MAX_EVENT_TYPES`] types are already known.
    pub(super) fn type_code(&mut self, name: &str) -> Result<Option<i64>> {
        if let Some(code) = self.types.get(name) {
            return Ok(Some(*code));
        }
        if self.types.len() >= MAX_EVENT_TYPES {
            return Ok(None);
        }
        let code = self.db.intern_type(name)?;
        self.types.insert(name.to_owned(), code);
        Ok(Some(code))
    }

    pub(super) fn load_or_create(&mut self, ev: &NewEvent) -> Result<()> {
        if self.runs.contains_key(&ev.run_id) {
            return Ok(());
        }
        let acc = match self.db.find_run(&ev.run_id)? {
            Some(found) => RunAcc {
                key: found.key,
                summary: found.summary,
                nodes: found.nodes,
                holds: HoldClock::default(),
                dirty: false,
                touched: false,
            },
            None => {
                let app = ev.app_hint.as_deref().unwrap_or_default().to_owned();
                let source = ev.source.unwrap_or("live");
                let key =
                    self.db
                        .create_run(&ev.run_id, &app, ev.ts, ev.claim.as_deref(), source)?;
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
                        held_ms: 0,
                        work_ms: Some(0),
                        counts: Counts::default(),
                        usage: UsageTotals::default(),
                        cost: None,
                        source: source.to_owned(),
                        thread_id: None,
                        user_id: None,
                        tags: Vec::new(),
                        meta: None,
                        sdk: None,
                        last_seq: None,
                        last_event_at: ev.ts,
                    },
                    nodes: HashSet::new(),
                    holds: HoldClock::default(),
                    dirty: true,
                    touched: false,
                }
            }
        };
        self.runs.insert(ev.run_id.clone(), acc);
        Ok(())
    }

    /// Inserts one event (or queues it for the next multi-row insert when it is
    /// certainly new) and updates its run's counters. `index` is its place in `ops`.
    pub(super) fn insert_event(
        &mut self,
        ev: &NewEvent,
        index: usize,
        ops: &[Op],
        touched: &mut Vec<String>,
        pending: &mut Vec<PendingRow>,
        inserted: &mut Vec<usize>,
    ) -> Result<()> {
        if ev.seq > MAX_STORED_SEQ {
            // Not storable (SQLite integers are i64): refuse the row, keep the rest.
            let n = self.counters.refused_rows.fetch_add(1, Ordering::Relaxed) + 1;
            if n <= 10 || n.is_multiple_of(1_000) {
                tracing::warn!(run = %truncated(&ev.run_id), seq = ev.seq, refused_rows = n, "refused an event whose seq is above 2^63-1");
            }
            return Ok(());
        }
        let Some(code) = self.type_code(&ev.type_name)? else {
            let n = self.counters.refused_rows.fetch_add(1, Ordering::Relaxed) + 1;
            if n <= 10 || n.is_multiple_of(1_000) {
                tracing::warn!(
                    refused_rows = n,
                    "refused an event of a new type: {MAX_EVENT_TYPES} types are known"
                );
            }
            return Ok(());
        };
        self.load_or_create(ev)?;
        let exact = self.exact;
        let Some((key, fresh)) = self
            .runs
            .get(&ev.run_id)
            .map(|acc| (acc.key, acc.is_fresh(ev.seq)))
        else {
            return Ok(());
        };
        if !exact && fresh {
            pending.push(PendingRow { key, code, index });
        } else {
            // Maybe a replay: insert alone and see whether it was new.
            self.flush_rows(pending, ops)?;
            if !self.db.insert_one(EventRow {
                key,
                code,
                event: ev,
            })? {
                return Ok(());
            }
        }
        let held = self.held_by(ev, key, pending, ops)?;
        let Some(acc) = self.runs.get_mut(&ev.run_id) else {
            return Ok(());
        };
        let s = &mut acc.summary;
        crate::tally::count_event(&mut s.counts, &mut s.usage, &mut acc.nodes, ev);
        s.held_ms = s.held_ms.saturating_add(held);
        s.last_seq = Some(s.last_seq.map_or(ev.seq, |l| l.max(ev.seq)));
        s.last_event_at = s.last_event_at.max(ev.ts);
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
                let keys = crate::threads::run_keys(s.meta.as_ref());
                s.thread_id = keys.thread_id;
                s.user_id = keys.user_id;
                s.tags = keys.tags;
                s.started_at = s.started_at.min(ev.ts);
            }
            EventFacts::RunFinished { status } => {
                s.status = *status;
                s.finished_at = Some(ev.ts);
            }
            EventFacts::NodeError
            | EventFacts::Usage { .. }
            | EventFacts::Paused { .. }
            | EventFacts::Resumed { .. }
            | EventFacts::Plain => {}
        }
        if s.status == RunState::Abandoned && !matches!(ev.facts, EventFacts::RunFinished { .. }) {
            // The app came back: the run is live again.
            s.status = RunState::Running;
            s.finished_at = None;
        }
        let duration = crate::model::run_duration_ms(s.started_at, s.finished_at, crate::now_ms());
        s.duration_ms = Some(duration);
        s.work_ms = Some(crate::model::run_work_ms(duration, s.held_ms));
        acc.dirty = true;
        if !acc.touched {
            acc.touched = true;
            if !touched.contains(&ev.run_id) {
                touched.push(ev.run_id.clone());
            }
        }
        inserted.push(index);
        Ok(())
    }
}

impl State {
    /// The ms of hold that the stored event `ev` (of the run with row key `key`)
    /// released: 0 unless it is an `exec.resumed`. A hold that began before the writer
    /// loaded the run is timed from its stored `exec.paused` (queued rows are written
    /// first, so the lookup sees them).
    fn held_by(
        &mut self,
        ev: &NewEvent,
        key: i64,
        pending: &mut Vec<PendingRow>,
        ops: &[Op],
    ) -> Result<i64> {
        let Some(acc) = self.runs.get_mut(&ev.run_id) else {
            return Ok(0);
        };
        match acc.holds.on_event(ev) {
            HoldChange::None => Ok(0),
            HoldChange::Released(ms) => Ok(ms),
            HoldChange::UnknownStart { pause_id, at } => {
                self.flush_rows(pending, ops)?;
                Ok(self
                    .db
                    .hold_start(key, &pause_id, ev.seq)?
                    .map_or(0, |since| crate::tally::held_between(since, at)))
            }
        }
    }
}

/// At most 64 bytes of an id, for log lines.
pub(super) fn truncated(id: &str) -> &str {
    let mut end = id.len().min(64);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id.get(..end).unwrap_or_default()
}

impl State {
    /// Writes the queued rows. They are all new (see [`RunAcc::is_fresh`]), so every
    /// row must land.
    pub(super) fn flush_rows(&mut self, pending: &mut Vec<PendingRow>, ops: &[Op]) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let rows: Vec<EventRow<'_>> = pending
            .iter()
            .filter_map(|row| {
                event_at(ops, row.index).map(|event| EventRow {
                    key: row.key,
                    code: row.code,
                    event,
                })
            })
            .collect();
        let written = self.db.insert_new(&rows)?;
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
}

/// A stored event for the live feed (the payload text becomes a raw JSON value).
pub(super) fn stored_event(ev: NewEvent) -> Option<StoredEvent> {
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
