//! Row-level writes of the writer thread: interning types, creating runs,
//! inserting events (multi-row when they are certainly new) and run rows.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use super::super::{INSERT_CHUNK, MAX_EVENT_TYPES, Op};
use super::{RunAcc, State};
use crate::error::{Result, StoreError};
use crate::ingest::{EventFacts, MAX_STORED_SEQ, NewEvent};
use crate::model::{Counts, RunState, RunSummary, StoredEvent, UsageTotals};

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
        Ok(Some(code))
    }

    pub(super) fn load_or_create(&mut self, ev: &NewEvent) -> Result<()> {
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
                let mut summary =
                    crate::reader::load_summary(&self.conn, &ev.run_id)?.ok_or_else(|| {
                        StoreError::Corrupt {
                            run_id: ev.run_id.clone(),
                            message: "run row vanished".to_owned(),
                        }
                    })?;
                // The stored rows, not the run row, say which seqs are taken
                // (a run row written by an older version may be wrong).
                let max_seq: Option<i64> = self.conn.query_row(
                    "SELECT MAX(seq) FROM events WHERE run_key = ?1",
                    [key],
                    |r| r.get(0),
                )?;
                summary.last_seq = max_seq.and_then(|v| u64::try_from(v).ok());
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
                        cost: None,
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
        let Some(acc) = self.runs.get_mut(&ev.run_id) else {
            return Ok(());
        };
        if !exact && acc.is_fresh(ev.seq) {
            pending.push(PendingRow {
                key: acc.key,
                code,
                index,
            });
        } else {
            // Maybe a replay: insert alone and see whether it was new.
            flush_rows(&self.conn, pending, ops)?;
            let mut stmt = self.conn.prepare_cached(INSERT_ONE)?;
            bind_row(&mut stmt, 1, acc.key, code, ev)?;
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
                s.usage.input_tokens = s.usage.input_tokens.saturating_add(*input);
                s.usage.output_tokens = s.usage.output_tokens.saturating_add(*output);
            }
            EventFacts::Plain => {}
        }
        if s.status == RunState::Abandoned && !matches!(ev.facts, EventFacts::RunFinished { .. }) {
            // The app came back: the run is live again.
            s.status = RunState::Running;
            s.finished_at = None;
        }
        s.duration_ms = Some(
            s.finished_at
                .unwrap_or(s.last_event_at)
                .saturating_sub(s.started_at),
        );
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

/// At most 64 bytes of an id, for log lines.
pub(super) fn truncated(id: &str) -> &str {
    let mut end = id.len().min(64);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id.get(..end).unwrap_or_default()
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

/// Binds one event row at parameters `first..first + 7` (rows with a seq
/// beyond SQLite's integers never get here; it would be clamped).
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
pub(super) fn flush_rows(
    conn: &Connection,
    pending: &mut Vec<PendingRow>,
    ops: &[Op],
) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut written = 0usize;
    let mut rows = pending.chunks_exact(INSERT_CHUNK);
    for chunk in rows.by_ref() {
        let mut stmt = conn.prepare_cached(insert_chunk_sql())?;
        for (i, row) in chunk.iter().enumerate() {
            if let Some(ev) = event_at(ops, row.index) {
                bind_row(&mut stmt, 1 + i * 7, row.key, row.code, ev)?;
            }
        }
        written += stmt.raw_execute()?;
    }
    let rest = rows.remainder();
    if !rest.is_empty() {
        let mut stmt = conn.prepare_cached(INSERT_ONE)?;
        for row in rest {
            if let Some(ev) = event_at(ops, row.index) {
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

pub(super) fn write_run(conn: &Connection, acc: &RunAcc) -> Result<()> {
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
        s.last_seq.and_then(|v| i64::try_from(v).ok()),
    ])?;
    Ok(())
}
