//! Moving one run between stores: a JSON Lines export and its import.
//!
//! The export ([`RunStore::export_jsonl`]) is one header line — `{"format":
//! "mindgate.run", "version": 1, "run": <the run summary>}` — then every stored event
//! envelope in `seq` order, exactly as [`RunStore::events`] serves them. [`RunImport`]
//! reads it back into another database in one transaction: the run keeps its id (or
//! takes the one given), its status, times and metadata from the header, its source
//! becomes `import`, and every event is checked (envelope, run id, limits, unique
//! `seq`) before anything is committed. A bad line, a file that ends early (fewer
//! events than the header counts) or a run id the database already holds rolls it all
//! back: nothing is half-written.
//!
//! The format is described for people in `docs/share.md`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use mindgate_protocol::{ParseResult, parse_envelope};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::StoreError;
use crate::ingest::{MAX_RUN_ID_BYTES, NewEvent, check_limits};
use crate::model::{Counts, RunState, RunSummary, UsageTotals};
use crate::reader::RunStore;
use crate::schema;
use crate::writer::MAX_EVENT_TYPES;

/// The `format` of an export's header line.
pub const EXPORT_FORMAT: &str = "mindgate.run";
/// The newest export `version` this build writes and reads.
pub const EXPORT_VERSION: u64 = 1;
/// The `source` an imported run is stored with.
pub const IMPORT_SOURCE: &str = "import";

/// What can go wrong exporting or importing a run.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the export failed.
    #[error("cannot write the export: {0}")]
    Io(#[from] std::io::Error),
    /// The first line is not a run export header.
    #[error("line 1: not a Mindgate run export header: {0}")]
    Header(String),
    /// An event line is wrong; nothing was imported.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number in the file.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// The file holds fewer (or more) events than its header counts.
    #[error(
        "the export holds {found} events but its header counts {expected}: the file is incomplete"
    )]
    Incomplete {
        /// Events the header counts.
        expected: u64,
        /// Events read.
        found: u64,
    },
    /// The database already holds a run with this id.
    #[error("run {run_id} already exists in this database (import it with --new-id)")]
    Exists {
        /// The id.
        run_id: String,
    },
}

impl From<rusqlite::Error> for TransferError {
    fn from(e: rusqlite::Error) -> Self {
        TransferError::Store(StoreError::Sqlite(e))
    }
}

/// The header line of an export, as written.
#[derive(Serialize)]
struct HeaderOut<'a> {
    format: &'static str,
    version: u64,
    run: &'a RunSummary,
}

/// The run of a header line, as read (the fields the run row keeps).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ImportedRun {
    id: String,
    #[serde(default)]
    app: String,
    #[serde(default)]
    name: String,
    status: RunState,
    started_at: i64,
    finished_at: Option<i64>,
    last_event_at: i64,
    counts: Counts,
    #[serde(default)]
    usage: UsageTotals,
    meta: Option<Value>,
    sdk: Option<Value>,
    last_seq: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct HeaderIn {
    format: String,
    version: u64,
    run: ImportedRun,
}

/// Whether a JSON object is the header line of a run export (its `format`).
pub fn is_export_header(first: &Value) -> bool {
    first.get("format").and_then(Value::as_str) == Some(EXPORT_FORMAT)
}

impl RunStore {
    /// Writes run `run_id` as JSON Lines to `out`: the header line then every stored
    /// event envelope in `seq` order, streamed from the database. Returns the number of
    /// events written, `None` when the run does not exist.
    pub fn export_jsonl(
        &self,
        run_id: &str,
        out: &mut dyn Write,
    ) -> Result<Option<u64>, TransferError> {
        let Some(run) = self.get_run(run_id)? else {
            return Ok(None);
        };
        let header = HeaderOut {
            format: EXPORT_FORMAT,
            version: EXPORT_VERSION,
            run: &run,
        };
        serde_json::to_writer(&mut *out, &header).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        let mut written = 0u64;
        let mut after = None;
        // Pages keep memory bounded on a big run and hold no connection while writing.
        loop {
            let Some(page) = self.events(run_id, after, Some(crate::MAX_EVENT_PAGE))? else {
                break;
            };
            for event in &page.events {
                serde_json::to_writer(&mut *out, event).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
                written += 1;
            }
            if !page.has_more {
                break;
            }
            after = page.next_after_seq;
        }
        out.flush()?;
        Ok(Some(written))
    }
}

/// What [`RunImport::finish`] stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The id the run is stored under.
    pub run_id: String,
    /// Events stored.
    pub events: u64,
}

/// One run being imported, inside one open transaction: [`RunImport::begin`] with the
/// header line, [`RunImport::add_event`] per event line, [`RunImport::finish`] commits.
/// Dropped before `finish` (or after an error) it rolls everything back.
pub struct RunImport {
    conn: Connection,
    run_id: String,
    key: i64,
    types: HashMap<String, i64>,
    /// The run id the event lines carry (the header's, whatever id the run is stored under).
    exported_id: String,
    expected: u64,
    read: u64,
    open: bool,
}

impl std::fmt::Debug for RunImport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunImport")
            .field("run_id", &self.run_id)
            .field("read", &self.read)
            .finish()
    }
}

impl RunImport {
    /// Opens (creating if needed) the database at `db`, starts the transaction and
    /// writes the run row from `header` (the export's first line). `new_id` stores the
    /// run under another id. Refused when the id is already taken.
    ///
    /// The caller makes sure no other process writes the database meanwhile (the
    /// transaction holds SQLite's write lock until it ends).
    pub fn begin(
        db: &Path,
        header: &str,
        new_id: Option<&str>,
    ) -> Result<RunImport, TransferError> {
        let header: HeaderIn =
            serde_json::from_str(header).map_err(|e| TransferError::Header(e.to_string()))?;
        if header.format != EXPORT_FORMAT {
            return Err(TransferError::Header(format!(
                "format is {:?}, expected {EXPORT_FORMAT:?}",
                header.format
            )));
        }
        if header.version > EXPORT_VERSION {
            return Err(TransferError::Header(format!(
                "version {} is newer than this build reads ({EXPORT_VERSION})",
                header.version
            )));
        }
        let run = header.run;
        let run_id = new_id.unwrap_or(&run.id).to_owned();
        if run_id.is_empty() || run_id == mindgate_protocol::WILDCARD_RUN_ID {
            return Err(TransferError::Header(format!("{run_id:?} is not a run id")));
        }
        if run_id.len() > MAX_RUN_ID_BYTES {
            return Err(TransferError::Header(format!(
                "the run id is longer than {MAX_RUN_ID_BYTES} bytes"
            )));
        }
        let conn = schema::open_writer(db)?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let mut import = RunImport {
            conn,
            run_id,
            key: 0,
            types: HashMap::new(),
            exported_id: run.id.clone(),
            expected: run.counts.events,
            read: 0,
            open: true,
        };
        import.write_run(&run)?;
        Ok(import)
    }

    fn write_run(&mut self, run: &ImportedRun) -> Result<(), TransferError> {
        let taken: Option<i64> = self
            .conn
            .query_row("SELECT key FROM runs WHERE id = ?1", [&self.run_id], |r| {
                r.get(0)
            })
            .optional()?;
        if taken.is_some() {
            return Err(TransferError::Exists {
                run_id: self.run_id.clone(),
            });
        }
        let to_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.conn.execute(
            "INSERT INTO runs(id, app, name, status, started_at, finished_at, last_event_at, \
             source, meta_json, sdk_json, event_count, node_count, error_count, input_tokens, \
             output_tokens, last_seq) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                self.run_id,
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
            ],
        )?;
        self.key = self.conn.last_insert_rowid();
        let mut stmt = self.conn.prepare("SELECT code, name FROM event_types")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, i64>(0)?)))?;
        for row in rows {
            let (name, code) = row?;
            self.types.insert(name, code);
        }
        Ok(())
    }

    /// The run id the import stores.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Events added so far.
    pub fn events_read(&self) -> u64 {
        self.read
    }

    /// Checks and stores one event line (`line` is its 1-based number in the file, for
    /// the error).
    pub fn add_event(&mut self, line: u64, frame: &str) -> Result<(), TransferError> {
        let bad = |message: String| TransferError::Line { line, message };
        let parsed = parse_envelope(frame);
        match &parsed {
            ParseResult::Invalid { reason, .. } => {
                return Err(bad(format!("invalid event: {reason}")));
            }
            ParseResult::VersionMismatch { received } => {
                return Err(bad(format!("not a GraphMind v1 event (gm is {received})")));
            }
            ParseResult::Ok(_) | ParseResult::UnknownType(_) => {}
        }
        if let Err(refusal) = check_limits(&parsed) {
            return Err(bad(refusal.message()));
        }
        let event = NewEvent::from_frame(frame, &parsed)
            .ok_or_else(|| bad("not a run event (a handshake or control message)".to_owned()))?;
        self.check_run(line, &event.run_id)?;
        let code = self.type_code(line, &event.type_name)?;
        let inserted = self
            .conn
            .prepare_cached(
                "INSERT OR IGNORE INTO events(run_key, seq, ts, type, node_id, payload, extra) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                self.key,
                i64::try_from(event.seq).unwrap_or(i64::MAX),
                event.ts,
                code,
                event.node_id,
                event.payload,
                event.extra.as_ref().map(|e| e.get()),
            ])?;
        if inserted != 1 {
            return Err(bad(format!("seq {} appears twice", event.seq)));
        }
        self.read += 1;
        Ok(())
    }

    /// Every event line names the exported run (its original id, whatever id it is
    /// stored under).
    fn check_run(&self, line: u64, event_run: &str) -> Result<(), TransferError> {
        if self.exported_id != event_run {
            return Err(TransferError::Line {
                line,
                message: format!(
                    "event of run {event_run}, but the header is of run {}",
                    self.exported_id
                ),
            });
        }
        Ok(())
    }

    fn type_code(&mut self, line: u64, name: &str) -> Result<i64, TransferError> {
        if let Some(code) = self.types.get(name) {
            return Ok(*code);
        }
        if self.types.len() >= MAX_EVENT_TYPES {
            return Err(TransferError::Line {
                line,
                message: format!(
                    "a new event type beyond the {MAX_EVENT_TYPES} this database keeps"
                ),
            });
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

    /// Commits the import once every event the header counts was read.
    pub fn finish(mut self) -> Result<ImportReport, TransferError> {
        if self.read != self.expected {
            return Err(TransferError::Incomplete {
                expected: self.expected,
                found: self.read,
            });
        }
        self.conn.execute_batch("COMMIT")?;
        self.open = false;
        Ok(ImportReport {
            run_id: self.run_id.clone(),
            events: self.read,
        })
    }
}

impl Drop for RunImport {
    fn drop(&mut self) {
        if self.open
            && let Err(e) = self.conn.execute_batch("ROLLBACK")
        {
            tracing::warn!(error = %e, "rolling back an unfinished import failed");
        }
    }
}
