//! The SQLite side of the writer: [`WriteDb`] over one read-write connection, with the
//! WAL checkpointed on a connection of its own.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::{self, SyncSender};

use rusqlite::{Connection, OptionalExtension, params};

use super::INSERT_CHUNK;
use crate::backend::write_db::{EventRow, FoundRun, Retention, WriteDb};
use crate::error::{Result, StoreError};
use crate::model::RunSummary;
use crate::schema;
use crate::search::indexer::Indexer;

/// The writer's SQLite connection.
pub(crate) struct SqliteWriteDb {
    conn: Connection,
    /// Seqs stored per run key in the open transaction (first, last): queued for the
    /// search indexer at commit.
    stored: HashMap<i64, (i64, i64)>,
    /// Queue rows up to this id are indexed and have been removed.
    queue_removed_to: i64,
    /// Events the indexer may be behind before a transaction waits for it.
    backlog_limit: i64,
    /// Where the waits are counted ([`super::WriterStats::search_waits`]).
    counters: std::sync::Arc<super::Counters>,
    /// The search indexer (dropping it stops its thread). Declared before the
    /// checkpointer so it stops first.
    indexer: Indexer,
    /// Dropping it stops the checkpointer thread.
    _checkpointer: SyncSender<()>,
}

impl SqliteWriteDb {
    /// Opens (creating if needed) the database at `path` and starts its checkpointer.
    /// `backlog_limit`: see [`super::WriterConfig::search_backlog_limit`]; each wait is
    /// counted in `counters`.
    pub(super) fn open(
        path: &Path,
        backlog_limit: i64,
        counters: std::sync::Arc<super::Counters>,
    ) -> Result<SqliteWriteDb> {
        let conn = schema::open_writer(path)?;
        // Checkpoints run on their own connection so a commit never waits for one
        // (an auto-checkpoint inside a commit costs milliseconds of latency).
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let checkpointer = spawn_checkpointer(path)?;
        conn.set_prepared_statement_cache_capacity(32);
        let indexer = Indexer::start(path)?;
        Ok(SqliteWriteDb {
            conn,
            stored: HashMap::new(),
            queue_removed_to: 0,
            backlog_limit,
            counters,
            indexer,
            _checkpointer: checkpointer,
        })
    }
}

impl SqliteWriteDb {
    /// Queues the transaction's stored seqs for the indexer (one row per run), and
    /// removes the queue rows the indexer has done with.
    /// Returns the events queued (the sum of the ranges' lengths, the measure the
    /// indexer's backlog counts in).
    fn queue_for_search(&mut self) -> Result<i64> {
        let mut stored: Vec<(i64, (i64, i64))> = self.stored.drain().collect();
        let queued = stored
            .iter()
            .map(|(_, (first, last))| last.saturating_sub(*first).saturating_add(1))
            .sum();
        stored.sort_unstable();
        let mut stmt = self.conn.prepare_cached(
            "INSERT INTO search_queue(run_key, first_seq, last_seq) VALUES (?1, ?2, ?3)",
        )?;
        for (key, (first, last)) in stored {
            stmt.execute(params![key, first, last])?;
        }
        if let Some(mark) = self.indexer.watermark()
            && mark > self.queue_removed_to
        {
            self.conn
                .prepare_cached("DELETE FROM search_queue WHERE id <= ?1")?
                .execute([mark])?;
            self.queue_removed_to = mark;
        }
        Ok(queued)
    }
}

/// Widens run `row.key`'s range of seqs stored in this transaction to `row`'s seq.
fn note_stored(stored: &mut HashMap<i64, (i64, i64)>, row: EventRow<'_>) {
    let seq = i64::try_from(row.event.seq).unwrap_or(i64::MAX);
    stored
        .entry(row.key)
        .and_modify(|(first, last)| {
            *first = (*first).min(seq);
            *last = (*last).max(seq);
        })
        .or_insert((seq, seq));
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
fn bind_row(stmt: &mut rusqlite::Statement<'_>, first: usize, row: EventRow<'_>) -> Result<()> {
    let ev = row.event;
    let seq = i64::try_from(ev.seq).unwrap_or(i64::MAX);
    stmt.raw_bind_parameter(first, row.key)?;
    stmt.raw_bind_parameter(first + 1, seq)?;
    stmt.raw_bind_parameter(first + 2, ev.ts)?;
    stmt.raw_bind_parameter(first + 3, row.code)?;
    stmt.raw_bind_parameter(first + 4, ev.node_id.as_deref())?;
    stmt.raw_bind_parameter(first + 5, ev.payload.as_str())?;
    stmt.raw_bind_parameter(first + 6, ev.extra.as_ref().map(|e| e.get()))?;
    Ok(())
}

impl WriteDb for SqliteWriteDb {
    fn reconcile(&mut self, now: i64) -> Result<Vec<String>> {
        let reconciled: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT id FROM runs WHERE status = 'running'")?;
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<std::result::Result<Vec<_>, _>>()?
        };
        if !reconciled.is_empty() {
            self.conn.execute(
                "UPDATE runs SET status = 'abandoned', finished_at = MAX(last_event_at, ?1) \
                 WHERE status = 'running'",
                params![now],
            )?;
        }
        Ok(reconciled)
    }

    fn insert_chunk(&self) -> usize {
        INSERT_CHUNK
    }

    fn begin(&mut self) -> Result<()> {
        // Outside any transaction: the indexer reads the database while the writer waits.
        if self
            .indexer
            .wait_for_room(self.backlog_limit, super::SEARCH_WAIT_PER_BATCH)
        {
            self.counters
                .search_waits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    fn commit(&mut self) -> Result<()> {
        let queued = self.queue_for_search()?;
        self.conn.execute_batch("COMMIT")?;
        if queued > 0 {
            self.indexer.queued(queued);
        }
        Ok(())
    }

    fn rollback(&mut self) {
        self.stored.clear();
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn load_types(&mut self) -> Result<HashMap<String, i64>> {
        let mut types = HashMap::new();
        let mut stmt = self.conn.prepare("SELECT code, name FROM event_types")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (code, name) = row?;
            types.insert(name, code);
        }
        Ok(types)
    }

    fn intern_type(&mut self, name: &str) -> Result<i64> {
        self.conn.execute(
            "INSERT OR IGNORE INTO event_types(name) VALUES (?1)",
            [name],
        )?;
        Ok(self.conn.query_row(
            "SELECT code FROM event_types WHERE name = ?1",
            [name],
            |r| r.get(0),
        )?)
    }

    fn find_run(&mut self, run_id: &str) -> Result<Option<FoundRun>> {
        let Some(key) = self.run_key(run_id)? else {
            return Ok(None);
        };
        let mut summary = crate::reader::load_summary(&self.conn, run_id)?.ok_or_else(|| {
            StoreError::Corrupt {
                run_id: run_id.to_owned(),
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
        Ok(Some(FoundRun {
            key,
            summary,
            nodes,
        }))
    }

    fn create_run(
        &mut self,
        run_id: &str,
        app: &str,
        ts: i64,
        claim: Option<&str>,
        source: &str,
    ) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs(id, app, name, status, started_at, last_event_at, claim, source) \
             VALUES (?1, ?2, ?2, 'running', ?3, ?3, ?4, ?5)",
            params![run_id, app, ts, claim, source],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Full chunks with one multi-row statement, the rest one by one.
    fn insert_new(&mut self, rows: &[EventRow<'_>]) -> Result<usize> {
        let mut written = 0usize;
        let mut chunks = rows.chunks_exact(INSERT_CHUNK);
        for chunk in chunks.by_ref() {
            let mut stmt = self.conn.prepare_cached(insert_chunk_sql())?;
            for (i, row) in chunk.iter().enumerate() {
                bind_row(&mut stmt, 1 + i * 7, *row)?;
            }
            written += stmt.raw_execute()?;
            for row in chunk {
                note_stored(&mut self.stored, *row);
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut stmt = self.conn.prepare_cached(INSERT_ONE)?;
            for row in rest {
                bind_row(&mut stmt, 1, *row)?;
                let stored = stmt.raw_execute()?;
                if stored == 1 {
                    note_stored(&mut self.stored, *row);
                }
                written += stored;
            }
        }
        Ok(written)
    }

    fn insert_one(&mut self, row: EventRow<'_>) -> Result<bool> {
        let mut stmt = self.conn.prepare_cached(INSERT_ONE)?;
        bind_row(&mut stmt, 1, row)?;
        let stored = stmt.raw_execute()? == 1;
        if stored {
            note_stored(&mut self.stored, row);
        }
        Ok(stored)
    }

    fn hold_start(&mut self, key: i64, pause_id: &str, before_seq: u64) -> Result<Option<i64>> {
        let before = i64::try_from(before_seq).unwrap_or(i64::MAX);
        Ok(self
            .conn
            .prepare_cached(
                "SELECT p.ts FROM events p WHERE p.run_key = ?1 \
                   AND p.type = (SELECT code FROM event_types WHERE name = 'exec.paused') \
                   AND json_extract(p.payload, '$.pauseId') = ?2 \
                   AND NOT EXISTS (SELECT 1 FROM events r WHERE r.run_key = ?1 AND r.seq < ?3 \
                     AND r.type = (SELECT code FROM event_types WHERE name = 'exec.resumed') \
                     AND json_extract(r.payload, '$.pauseId') = ?2) \
                 ORDER BY p.seq DESC LIMIT 1",
            )?
            .query_row(params![key, pause_id, before], |r| r.get(0))
            .optional()?)
    }

    fn write_run(&mut self, key: i64, s: &RunSummary) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(
            "UPDATE runs SET app = ?2, name = ?3, status = ?4, started_at = ?5, finished_at = ?6, \
             last_event_at = ?7, meta_json = ?8, sdk_json = ?9, event_count = ?10, node_count = ?11, \
             error_count = ?12, input_tokens = ?13, output_tokens = ?14, last_seq = ?15, held_ms = ?16, \
             thread_id = ?17, user_id = ?18, tags_json = ?19 WHERE key = ?1",
        )?;
        stmt.execute(params![
            key,
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
            s.held_ms,
            s.thread_id,
            s.user_id,
            crate::threads::tags_to_column(&s.tags),
        ])?;
        Ok(())
    }

    fn abandon(&mut self, run_id: &str, at: i64) -> Result<bool> {
        let changed = self.conn.execute(
            "UPDATE runs SET status = 'abandoned', finished_at = ?2 \
             WHERE id = ?1 AND status = 'running'",
            params![run_id, at],
        )?;
        Ok(changed > 0)
    }

    fn run_key(&mut self, run_id: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .prepare_cached("SELECT key FROM runs WHERE id = ?1")?
            .query_row([run_id], |r| r.get(0))
            .optional()?)
    }

    fn delete_key(&mut self, key: i64) -> Result<()> {
        // The indexer removes the run's index rows when it reaches this queue row; a
        // search skips them until then (the key may be given to a new run).
        self.stored.remove(&key);
        self.conn
            .prepare_cached("INSERT INTO search_queue(run_key) VALUES (?1)")?
            .execute([key])?;
        self.conn
            .execute("DELETE FROM events WHERE run_key = ?1", [key])?;
        self.conn
            .execute("DELETE FROM runs WHERE key = ?1", [key])?;
        Ok(())
    }

    fn prune_victims(
        &mut self,
        retention: Retention,
        now: i64,
        limit: u32,
    ) -> Result<Vec<(i64, String)>> {
        let cutoff = now.saturating_sub(i64::from(retention.keep_days) * 86_400_000);
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, id FROM runs WHERE status != 'running' AND ( \
               (?1 > 0 AND key NOT IN \
                  (SELECT key FROM runs ORDER BY started_at DESC, key DESC LIMIT ?1)) \
               OR (?2 > 0 AND source != 'import' AND COALESCE(finished_at, last_event_at) < ?3)) \
             ORDER BY started_at, key LIMIT ?4",
        )?;
        let rows = stmt
            .query_map(
                params![retention.keep_runs, retention.keep_days, cutoff, limit],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
            )?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    fn load_summary(&mut self, run_id: &str) -> Result<Option<RunSummary>> {
        crate::reader::load_summary(&self.conn, run_id)
    }

    fn finish(&mut self) {
        if let Err(e) = self.conn.pragma_update(None, "wal_checkpoint", "TRUNCATE") {
            tracing::debug!(error = %e, "final checkpoint failed");
        }
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
