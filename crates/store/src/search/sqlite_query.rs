//! Answering a search on SQLite: the index file up to its watermark, and a scan of the
//! events queued after it (the tail the indexer has not reached), with the same rule —
//! the query is a case-insensitive substring of the event's [`super::indexed_text`] — so
//! an event is found the moment its store call returns.
//!
//! Consistency: the run database's read transaction starts first, then the index file's.
//! The indexer's watermark only grows and the writer removes queue rows only up to it,
//! so every event of the database's snapshot is either in the index (queue id ≤ the
//! watermark read) or in the tail scanned here. Index rows of a run deleted after the
//! watermark (its key may be reused) are skipped; a hit whose event the snapshot does not
//! hold is dropped.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::index_file::{open_for_search, read_watermark};
use crate::error::Result;
use crate::model::EventHit;

/// The search's shared inputs.
pub(crate) struct Query<'a> {
    /// Event type names by code.
    pub(crate) names: &'a HashMap<i64, String>,
    /// What is searched for (at least [`super::MIN_INDEXED_QUERY_CHARS`] characters).
    pub(crate) text: &'a str,
    /// Only this run's events.
    pub(crate) run_id: Option<&'a str>,
    /// Most hits.
    pub(crate) limit: u32,
}

/// One queue row after the watermark: run key and seq range (`None`: the run was deleted).
type TailRow = (i64, Option<(i64, i64)>);

/// Events whose text contains the query: the tail's newest first, then the index's
/// newest indexed first. Falls back to scanning every event when the index is missing or
/// being built.
pub(crate) fn search(conn: &Connection, db: &Path, q: &Query<'_>) -> Result<Vec<EventHit>> {
    let tx = conn.unchecked_transaction()?;
    let run_key = match q.run_id {
        Some(id) => match conn
            .prepare_cached("SELECT key FROM runs WHERE id = ?1")?
            .query_row([id], |r| r.get::<_, i64>(0))
            .optional()?
        {
            Some(key) => Some(key),
            None => return Ok(Vec::new()),
        },
        None => None,
    };
    // The queue's presence (schema 7) and the snapshot of the run database.
    let queue_ok = conn
        .query_row("SELECT COUNT(*) FROM search_queue WHERE id < 0", [], |_| {
            Ok(())
        })
        .is_ok();
    let index = if queue_ok { open_for_search(db) } else { None };
    let Some(index) = index else {
        return scan_all(conn, q, run_key);
    };
    let index_tx = index.unchecked_transaction()?;
    let Ok(Some(watermark)) = read_watermark(&index) else {
        return scan_all(conn, q, run_key);
    };
    let tail: Vec<TailRow> = conn
        .prepare_cached(
            "SELECT run_key, first_seq, last_seq FROM search_queue WHERE id > ?1 ORDER BY id DESC",
        )?
        .query_map([watermark], |r| {
            let range = match (r.get::<_, Option<i64>>(1)?, r.get::<_, Option<i64>>(2)?) {
                (Some(a), Some(b)) => Some((a, b)),
                _ => None,
            };
            Ok((r.get::<_, i64>(0)?, range))
        })?
        .collect::<std::result::Result<_, _>>()?;
    let mut found = Found::new(q.limit);
    scan_tail(conn, q, run_key, &tail, &mut found)?;
    let deleted: HashSet<i64> = tail
        .iter()
        .filter(|(_, range)| range.is_none())
        .map(|(key, _)| *key)
        .collect();
    if !found.full() {
        from_index(conn, &index, q, run_key, &deleted, &mut found)?;
    }
    drop(index_tx);
    drop(tx);
    Ok(found.hits)
}

/// Hits collected so far, each event once.
struct Found {
    hits: Vec<EventHit>,
    seen: HashSet<(i64, i64)>,
    limit: usize,
}

impl Found {
    fn new(limit: u32) -> Found {
        Found {
            hits: Vec::new(),
            seen: HashSet::new(),
            limit: limit as usize,
        }
    }

    fn full(&self) -> bool {
        self.hits.len() >= self.limit
    }
}

/// A stored event as a search reads it.
struct Row {
    run_id: String,
    seq: i64,
    ts: i64,
    code: i64,
    node_id: Option<String>,
    payload: String,
}

impl Row {
    fn hit(self, q: &Query<'_>) -> EventHit {
        let type_name = q.names.get(&self.code).cloned().unwrap_or_default();
        super::hit(
            self.run_id,
            self.seq,
            self.ts,
            type_name,
            self.node_id,
            &self.payload,
            q.text,
        )
    }
}

/// Whether `query` is a case-insensitive substring of the event's indexed text (the
/// rule the trigram index answers).
pub(crate) fn text_matches(payload: &str, query: &str) -> bool {
    // A payload without escapes holds each of its strings verbatim, so a query (without
    // characters JSON escapes) absent from the whole payload is absent from its text:
    // rejected without parsing the JSON.
    if !payload.contains('\\')
        && !query
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control())
        && !lowered(payload).contains(&lowered(query))
    {
        return false;
    }
    let Some(text) = super::indexed_text(payload) else {
        return false;
    };
    lowered(&text).contains(&lowered(query))
}

fn lowered(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

fn scan_tail(
    conn: &Connection,
    q: &Query<'_>,
    run_key: Option<i64>,
    tail: &[TailRow],
    found: &mut Found,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.id, e.seq, e.ts, e.type, e.node_id, e.payload FROM events e \
         JOIN runs r ON r.key = e.run_key \
         WHERE e.run_key = ?1 AND e.seq BETWEEN ?2 AND ?3 ORDER BY e.seq DESC",
    )?;
    for (key, range) in tail {
        let Some((first, last)) = range else {
            continue;
        };
        if run_key.is_some_and(|k| k != *key) {
            continue;
        }
        let mut rows = stmt.query(params![key, first, last])?;
        while let Some(r) = rows.next()? {
            let row = Row {
                run_id: r.get(0)?,
                seq: r.get(1)?,
                ts: r.get(2)?,
                code: r.get(3)?,
                node_id: r.get(4)?,
                payload: r.get(5)?,
            };
            if !text_matches(&row.payload, q.text) || !found.seen.insert((*key, row.seq)) {
                continue;
            }
            found.hits.push(row.hit(q));
            if found.full() {
                return Ok(());
            }
        }
    }
    Ok(())
}

fn from_index(
    conn: &Connection,
    index: &Connection,
    q: &Query<'_>,
    run_key: Option<i64>,
    deleted: &HashSet<i64>,
    found: &mut Found,
) -> Result<()> {
    let mut matches = index.prepare_cached(
        "SELECT s.run_key, s.seq FROM search_fts f JOIN search_rows s ON s.id = f.rowid \
         WHERE search_fts MATCH ?1 AND (?2 IS NULL OR s.run_key = ?2) ORDER BY f.rowid DESC",
    )?;
    let mut event = conn.prepare_cached(
        "SELECT r.id, e.ts, e.type, e.node_id, e.payload FROM events e \
         JOIN runs r ON r.key = e.run_key WHERE e.run_key = ?1 AND e.seq = ?2",
    )?;
    let mut rows = matches.query(params![super::fts_phrase(q.text), run_key])?;
    while let Some(m) = rows.next()? {
        let (key, seq): (i64, i64) = (m.get(0)?, m.get(1)?);
        if deleted.contains(&key) || found.seen.contains(&(key, seq)) {
            continue;
        }
        let row = event
            .query_row(params![key, seq], |r| {
                Ok(Row {
                    run_id: r.get(0)?,
                    seq,
                    ts: r.get(1)?,
                    code: r.get(2)?,
                    node_id: r.get(3)?,
                    payload: r.get(4)?,
                })
            })
            .optional()?;
        let Some(row) = row else {
            continue;
        };
        found.seen.insert((key, seq));
        found.hits.push(row.hit(q));
        if found.full() {
            break;
        }
    }
    Ok(())
}

/// Every event, newest run first, matched one by one (no usable index).
fn scan_all(conn: &Connection, q: &Query<'_>, run_key: Option<i64>) -> Result<Vec<EventHit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.id, e.seq, e.ts, e.type, e.node_id, e.payload FROM events e \
         JOIN runs r ON r.key = e.run_key WHERE (?1 IS NULL OR e.run_key = ?1) \
         ORDER BY r.started_at DESC, e.seq DESC",
    )?;
    let mut rows = stmt.query([run_key])?;
    let mut found = Found::new(q.limit);
    while let Some(r) = rows.next()? {
        let payload = r.get_ref(5)?.as_str().unwrap_or_default();
        if !text_matches(payload, q.text) {
            continue;
        }
        let row = Row {
            run_id: r.get(0)?,
            seq: r.get(1)?,
            ts: r.get(2)?,
            code: r.get(3)?,
            node_id: r.get(4)?,
            payload: payload.to_owned(),
        };
        found.hits.push(row.hit(q));
        if found.full() {
            break;
        }
    }
    Ok(found.hits)
}

/// Queue rows after the index's watermark (0: caught up); `None` when the index is
/// missing or being built.
pub(crate) fn pending(conn: &Connection, db: &Path) -> Result<Option<u64>> {
    let tx = conn.unchecked_transaction()?;
    let queued: std::result::Result<i64, _> =
        conn.query_row("SELECT COUNT(*) FROM search_queue WHERE id < 0", [], |r| {
            r.get(0)
        });
    if queued.is_err() {
        return Ok(None);
    }
    let Some(index) = open_for_search(db) else {
        return Ok(None);
    };
    let Ok(Some(watermark)) = read_watermark(&index) else {
        return Ok(None);
    };
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM search_queue WHERE id > ?1",
        [watermark],
        |r| r.get(0),
    )?;
    drop(tx);
    Ok(Some(u64::try_from(n).unwrap_or(0)))
}
