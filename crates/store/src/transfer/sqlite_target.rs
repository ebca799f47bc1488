//! The SQLite side of an import: one `BEGIN IMMEDIATE` transaction on the file.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{Counted, IMPORT_SOURCE, ImportTarget, ImportedRun};
use crate::error::StoreError;
use crate::ingest::NewEvent;
use crate::schema;

/// An import's transaction on a SQLite file.
pub(crate) struct SqliteTarget {
    conn: Connection,
    /// Seqs stored per run key (first, last), queued for the search indexer at commit.
    stored: HashMap<i64, (i64, i64)>,
}

impl SqliteTarget {
    /// Opens (creating if needed) the file and takes its write lock.
    pub(crate) fn begin(path: &Path) -> Result<SqliteTarget, StoreError> {
        let conn = schema::open_writer(path)?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(SqliteTarget {
            conn,
            stored: HashMap::new(),
        })
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl ImportTarget for SqliteTarget {
    fn run_exists(&mut self, run_id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT key FROM runs WHERE id = ?1", [run_id], |r| {
                r.get::<_, i64>(0)
            })
            .optional()?
            .is_some())
    }

    fn insert_run(&mut self, run_id: &str, run: &ImportedRun) -> Result<Option<i64>, StoreError> {
        let keys = crate::threads::run_keys(run.meta.as_ref());
        self.conn.execute(
            "INSERT INTO runs(id, app, name, status, started_at, finished_at, last_event_at, \
             source, meta_json, sdk_json, event_count, node_count, error_count, input_tokens, \
             output_tokens, last_seq, thread_id, user_id, tags_json) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19)",
            params![
                run_id,
                run.app,
                run.name,
                run.status.as_str(),
                run.started_at,
                run.finished_at,
                run.last_event_at,
                IMPORT_SOURCE,
                run.meta.as_ref().map(Value::to_string),
                run.sdk.as_ref().map(Value::to_string),
                to_i64(run.counts.events),
                to_i64(run.counts.nodes),
                to_i64(run.counts.errors),
                to_i64(run.usage.input_tokens),
                to_i64(run.usage.output_tokens),
                run.last_seq.map(to_i64),
                keys.thread_id,
                keys.user_id,
                crate::threads::tags_to_column(&keys.tags),
            ],
        )?;
        Ok(Some(self.conn.last_insert_rowid()))
    }

    fn set_counters(&mut self, key: i64, counted: &Counted) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET event_count = ?2, node_count = ?3, error_count = ?4, \
             input_tokens = ?5, output_tokens = ?6, last_seq = ?7, held_ms = ?8 WHERE key = ?1",
            params![
                key,
                to_i64(counted.counts.events),
                to_i64(counted.counts.nodes),
                to_i64(counted.counts.errors),
                to_i64(counted.usage.input_tokens),
                to_i64(counted.usage.output_tokens),
                counted.last_seq.map(to_i64),
                counted.held_ms,
            ],
        )?;
        Ok(())
    }

    fn event_types(&mut self) -> Result<HashMap<String, i64>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT code, name FROM event_types")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, i64>(0)?)))?;
        let mut types = HashMap::new();
        for row in rows {
            let (name, code) = row?;
            types.insert(name, code);
        }
        Ok(types)
    }

    fn intern_type(&mut self, name: &str) -> Result<i64, StoreError> {
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

    fn insert_event(&mut self, key: i64, code: i64, event: NewEvent) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO events(run_key, seq, ts, type, node_id, payload, extra) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                key,
                to_i64(event.seq),
                event.ts,
                code,
                event.node_id,
                event.payload,
                event.extra.as_ref().map(|e| e.get()),
            ])?;
        let seq = to_i64(event.seq);
        let range = self.stored.entry(key).or_insert((seq, seq));
        *range = (range.0.min(seq), range.1.max(seq));
        Ok(())
    }

    fn commit(&mut self, _run_id: &str, _seqs: &HashSet<u64>) -> Result<(), StoreError> {
        // The search indexer (a server's, now or when one next opens the file) indexes
        // them; until then a search scans them.
        for (key, (first, last)) in self.stored.drain() {
            self.conn.execute(
                "INSERT INTO search_queue(run_key, first_seq, last_seq) VALUES (?1, ?2, ?3)",
                params![key, first, last],
            )?;
        }
        Ok(self.conn.execute_batch("COMMIT")?)
    }

    fn insert_annotation(&mut self, annotation: &crate::Annotation) -> Result<(), StoreError> {
        use crate::annotations::AnnotationDb;
        crate::annotations::SqliteAnnotations(&self.conn).insert(annotation)
    }

    fn rollback(&mut self) {
        if let Err(e) = self.conn.execute_batch("ROLLBACK") {
            tracing::warn!(error = %e, "rolling back an unfinished import failed");
        }
    }
}
