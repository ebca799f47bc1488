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
//! Both backends take an import: a SQLite file (created if missing; the transaction
//! holds its write lock, so the caller keeps other writers away) and a PostgreSQL
//! database (migrated if needed; the database referees concurrent writers, and a run
//! id another writer stores meanwhile makes the commit fail as [`TransferError::Exists`]).
//! The checks and the run row are the same on both ([`ImportTarget`] is the only
//! difference). The header is held to the ingest limits its events are (`app`, name,
//! `meta.name`, `sdk`); its node, error and token counters and its last `seq` are never
//! trusted: they are counted again from the events by the writer's own rule
//! ([`crate::tally`]) and the run row takes those.
//!
//! After the events come the run's live annotations, one `{"annotation": {…}}` line each
//! ([`crate::annotations`]); an import stores them in the same transaction (under their
//! own ids, or fresh ones when the run takes another id).
//!
//! The format is described for people in `docs/share.md`.

mod pg_target;
mod sqlite_target;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use mindgate_protocol::{ParseResult, parse_envelope};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::StoreError;
use crate::ingest::{MAX_RUN_ID_BYTES, NewEvent, check_limits, check_run_header};
use crate::model::{Counts, RunState, RunSummary, UsageTotals};
use crate::reader::RunStore;
use crate::writer::MAX_EVENT_TYPES;
use mindgate_pg::Database;

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

/// The header line of an export, as written.
#[derive(Serialize)]
struct HeaderOut<'a> {
    format: &'static str,
    version: u64,
    run: &'a RunSummary,
}

/// An annotation line of an export.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnnotationLine<T> {
    annotation: T,
}

/// The run of a header line, as read (the fields the run row keeps).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImportedRun {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) app: String,
    #[serde(default)]
    pub(crate) name: String,
    pub(crate) status: RunState,
    pub(crate) started_at: i64,
    pub(crate) finished_at: Option<i64>,
    pub(crate) last_event_at: i64,
    pub(crate) counts: Counts,
    #[serde(default)]
    pub(crate) usage: UsageTotals,
    pub(crate) meta: Option<Value>,
    pub(crate) sdk: Option<Value>,
    pub(crate) last_seq: Option<u64>,
}

/// The database side of an import: one open transaction on one backend. Every call
/// runs inside it; [`ImportTarget::commit`] ends it, [`ImportTarget::rollback`] undoes it.
pub(crate) trait ImportTarget {
    /// Whether a run is stored under `run_id`.
    fn run_exists(&mut self, run_id: &str) -> Result<bool, StoreError>;
    /// Writes the run row (source [`IMPORT_SOURCE`]) under `run_id`; returns its key,
    /// `None` when another writer stored that id meanwhile.
    fn insert_run(&mut self, run_id: &str, run: &ImportedRun) -> Result<Option<i64>, StoreError>;
    /// Sets the counters of run `key` to those counted from its events.
    fn set_counters(&mut self, key: i64, counted: &Counted) -> Result<(), StoreError>;
    /// The interned event types, by name.
    fn event_types(&mut self) -> Result<HashMap<String, i64>, StoreError>;
    /// Interns `name`; returns its code.
    fn intern_type(&mut self, name: &str) -> Result<i64, StoreError>;
    /// Stores one checked event of run `key` (a backend may hold it until
    /// [`ImportTarget::commit`]).
    fn insert_event(&mut self, key: i64, code: i64, event: NewEvent) -> Result<(), StoreError>;
    /// Writes what is held and commits run `run_id`, whose stored `seqs` are given (a
    /// backend whose servers follow each other's commits announces them).
    fn commit(&mut self, run_id: &str, seqs: &HashSet<u64>) -> Result<(), StoreError>;
    /// Stores one checked annotation of the run.
    fn insert_annotation(&mut self, annotation: &crate::Annotation) -> Result<(), StoreError>;
    /// Undoes the transaction (errors are logged: the transaction ends either way).
    fn rollback(&mut self);
}

/// What an import counted from the events it read (the run row's counters).
#[derive(Debug, Default)]
pub(crate) struct Counted {
    pub(crate) counts: Counts,
    pub(crate) usage: UsageTotals,
    pub(crate) last_seq: Option<u64>,
    /// The run's held time ([`crate::RunSummary::held_ms`]), from its holds.
    pub(crate) held_ms: i64,
    nodes: HashSet<String>,
    holds: crate::tally::HoldClock,
}

impl Counted {
    fn add(&mut self, event: &NewEvent) {
        crate::tally::count_event(&mut self.counts, &mut self.usage, &mut self.nodes, event);
        // A file holds every event of its run: a hold released without a start in it
        // began nowhere this run knows, and counts nothing.
        if let crate::tally::HoldChange::Released(ms) = self.holds.on_event(event) {
            self.held_ms = self.held_ms.saturating_add(ms);
        }
        self.last_seq = Some(self.last_seq.map_or(event.seq, |l| l.max(event.seq)));
    }
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
        let annotations = self.list_annotations(&crate::AnnotationFilter {
            run_id: Some(run_id.to_owned()),
            ..Default::default()
        })?;
        for annotation in &annotations {
            serde_json::to_writer(&mut *out, &AnnotationLine { annotation })
                .map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
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
    target: Box<dyn ImportTarget>,
    run_id: String,
    key: i64,
    types: HashMap<String, i64>,
    /// The `seq`s read, so one that appears twice is refused on its line.
    seqs: HashSet<u64>,
    /// The run id the event lines carry (the header's, whatever id the run is stored under).
    exported_id: String,
    expected: u64,
    read: u64,
    /// The counters of the events read so far.
    counted: Counted,
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
    /// Opens (creating if needed) the SQLite database at `db`, starts the transaction
    /// and writes the run row from `header` (the export's first line): see
    /// [`RunImport::begin_in`].
    ///
    /// The caller makes sure no other process writes the database meanwhile (the
    /// transaction holds SQLite's write lock until it ends).
    pub fn begin(
        db: &Path,
        header: &str,
        new_id: Option<&str>,
    ) -> Result<RunImport, TransferError> {
        Self::begin_in(&Database::Sqlite(db.to_path_buf()), header, new_id)
    }

    /// Opens `database` (a SQLite file, created if needed; a PostgreSQL database,
    /// migrated if needed), starts the transaction and writes the run row from
    /// `header` (the export's first line). `new_id` stores the run under another id.
    /// Refused when the id is already taken.
    ///
    /// On SQLite the caller keeps other processes from writing the file meanwhile (the
    /// transaction holds its write lock until it ends); on PostgreSQL other instances
    /// keep writing, and the database referees the run id.
    pub fn begin_in(
        database: &Database,
        header: &str,
        new_id: Option<&str>,
    ) -> Result<RunImport, TransferError> {
        if header.len() > mindgate_protocol::MAX_FRAME_BYTES {
            return Err(TransferError::Header(format!(
                "longer than {} bytes",
                mindgate_protocol::MAX_FRAME_BYTES
            )));
        }
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
        check_run_header(&run.app, &run.name, run.meta.as_ref(), run.sdk.as_ref())
            .map_err(|refusal| TransferError::Header(refusal.message()))?;
        let run_id = new_id.unwrap_or(&run.id).to_owned();
        if run_id.is_empty() || run_id == mindgate_protocol::WILDCARD_RUN_ID {
            return Err(TransferError::Header(format!("{run_id:?} is not a run id")));
        }
        if run_id.len() > MAX_RUN_ID_BYTES {
            return Err(TransferError::Header(format!(
                "the run id is longer than {MAX_RUN_ID_BYTES} bytes"
            )));
        }
        let target: Box<dyn ImportTarget> = match database {
            Database::Sqlite(path) => Box::new(sqlite_target::SqliteTarget::begin(path)?),
            Database::Postgres(url) => Box::new(pg_target::PgTarget::begin(url)?),
        };
        let mut import = RunImport {
            target,
            run_id,
            key: 0,
            types: HashMap::new(),
            seqs: HashSet::new(),
            exported_id: run.id.clone(),
            expected: run.counts.events,
            read: 0,
            counted: Counted::default(),
            open: true,
        };
        import.write_run(&run)?;
        Ok(import)
    }

    fn write_run(&mut self, run: &ImportedRun) -> Result<(), TransferError> {
        let taken = || TransferError::Exists {
            run_id: self.run_id.clone(),
        };
        if self.target.run_exists(&self.run_id)? {
            return Err(taken());
        }
        self.key = self
            .target
            .insert_run(&self.run_id, run)?
            .ok_or_else(taken)?;
        self.types = self.target.event_types()?;
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

    /// Checks and stores one line after the header: an event, or an annotation
    /// (`{"annotation": …}`).
    pub fn add_line(&mut self, line: u64, text: &str) -> Result<(), TransferError> {
        if text.trim_start().starts_with("{\"annotation\"") {
            self.add_annotation(line, text)
        } else {
            self.add_event(line, text)
        }
    }

    /// Checks and stores one annotation line (its run is the imported one).
    pub fn add_annotation(&mut self, line: u64, text: &str) -> Result<(), TransferError> {
        let bad = |message: String| TransferError::Line { line, message };
        let parsed: AnnotationLine<crate::Annotation> =
            serde_json::from_str(text).map_err(|e| bad(format!("invalid annotation: {e}")))?;
        let mut annotation = parsed.annotation;
        if annotation.run_id != self.exported_id {
            return Err(bad(format!(
                "annotation of run {}, but the header is of run {}",
                annotation.run_id, self.exported_id
            )));
        }
        if self.run_id != self.exported_id {
            annotation.id = crate::annotations::new_id();
        }
        annotation.run_id.clone_from(&self.run_id);
        annotation.deleted_at = None;
        annotation
            .check_fields()
            .map_err(|e| bad(format!("invalid annotation: {e}")))?;
        self.target.insert_annotation(&annotation)?;
        Ok(())
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
        if !self.seqs.insert(event.seq) {
            return Err(bad(format!("seq {} appears twice", event.seq)));
        }
        let code = self.type_code(line, &event.type_name)?;
        self.counted.add(&event);
        self.target.insert_event(self.key, code, event)?;
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
        let code = self.target.intern_type(name)?;
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
        // The run row was written from the header; its counters are the events'.
        self.target.set_counters(self.key, &self.counted)?;
        // A failed commit leaves `open` set: dropping the import rolls it back.
        self.target.commit(&self.run_id, &self.seqs)?;
        self.open = false;
        Ok(ImportReport {
            run_id: self.run_id.clone(),
            events: self.read,
        })
    }
}

impl Drop for RunImport {
    fn drop(&mut self) {
        if self.open {
            self.target.rollback();
        }
    }
}
