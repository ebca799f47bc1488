//! Mindgate's run store: persistence of GraphMind runs and events — an embedded
//! SQLite file by default, or a PostgreSQL database ([`Database`]) — and the
//! logical-graph projection every view shares.
//!
//! * Backends: the writer thread holds the logic both share (batching, `(run, seq)`
//!   dedupe, run counters, isolation of a failed batch) and reaches the database
//!   through one write-side trait with a SQLite and a PostgreSQL implementation;
//!   [`RunStore`] dispatches each read to the backend it opened. The contract
//!   suites (`tests/store.rs`, `cost.rs`, `report.rs`, `ingest_props.rs`) run the
//!   same cases on both.
//!
//! * [`Writer`] owns the only read-write connection and a dedicated thread that
//!   batches appends into transactions (see its docs for the durability bound).
//! * [`RunStore`] is the synchronous read API (runs, events, graph, node detail,
//!   search, recent errors). It works without any async runtime and can open a
//!   database read-only while another process writes it.
//! * [`report`] holds the run analytics every view shows: a run's errors
//!   (recovered ones marked), slowest executions and tokens by node, and recent
//!   errors across runs with a `since` filter.
//! * [`cost`] prices each instance's usage by its model (per node, run and app),
//!   with the [`PriceTable`] given to [`RunStore::with_prices`].
//! * [`project`] folds a run's events into a [`RunGraph`] / [`NodeDetail`].
//! * [`diff`] compares two runs node by node ([`RunStore::diff_runs`]).
//! * [`transfer`] moves a run between stores: [`RunStore::export_jsonl`] and
//!   [`transfer::RunImport`].
//!
//! Storage layout: `runs` (one row per run with counters) and `events`
//! (`WITHOUT ROWID`, keyed `(run_key, seq)`, payload text stored once with
//! whitespace removed, event types interned as small integers). Appends use
//! `INSERT OR IGNORE`, so replays after a reconnect are deduplicated.
//!
//! ```
//! use mindgate_store::{NewEvent, RunStore, Writer, WriterConfig};
//! use mindgate_protocol::parse_envelope;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("mindgate.db");
//! let (writer, _report) = Writer::open(&path, WriterConfig::default(), None).unwrap();
//! let frame = r#"{"gm":1,"seq":1,"ts":5,"runId":"r1","type":"run.started",
//!   "payload":{"app":"demo","sdk":{"name":"x","version":"1"}}}"#;
//! let event = NewEvent::from_frame(frame, &parse_envelope(frame)).unwrap();
//! writer.append(event.clone()).unwrap();
//! writer.append(event).unwrap(); // a replay: ignored
//! writer.flush().unwrap();
//! let store = RunStore::open(&path).unwrap();
//! let run = store.get_run("r1").unwrap().unwrap();
//! assert_eq!((run.app.as_str(), run.counts.events), ("demo", 1));
//! writer.close().unwrap();
//! ```

pub mod annotations;
mod backend;
pub mod cost;
mod database;
pub mod datasets;
mod db_file;
pub mod diff;
mod error;
mod ingest;
mod json_scan;
mod model;
mod pg;
pub mod projection;
mod reader;
pub mod report;
mod schema;
pub mod search;
mod seq_claim;
mod sqlite_meta;
mod tally;
pub mod threads;
pub mod transfer;
mod writer;

pub use annotations::{
    Annotation, AnnotationFilter, AnnotationKind, AnnotationPatch, AnnotationVersion, Author,
    AuthorKind, NewAnnotation, Verdict,
};
pub use cost::{AppCost, AppCosts, run_cost, usage_counts};
pub use database::{MigrateReport, migrate};
pub use datasets::{
    AddExamples, Dataset, DatasetVersion, Example, ExamplePatch, ExampleSource, NewExample,
};
pub use diff::{DiffError, RunDiff};
pub use error::{Result, StoreError};
pub use ingest::{
    EventFacts, MAX_ID_BYTES, MAX_NAME_BYTES, MAX_RUN_ID_BYTES, MAX_SDK_BYTES, MAX_STORED_SEQ,
    MAX_TYPE_BYTES, NewEvent, Refusal, check_envelope, check_hello, check_limits,
};
pub use json_scan::minify;
/// Where a run store lives, and its PostgreSQL URL: [`mindgate_pg`]'s types.
pub use mindgate_pg::{Database, PostgresUrl};
pub use mindgate_pricing::{Cost, PriceTable, TokenCounts};
pub use mindgate_transcript::{self as transcript, Transcript};
pub use model::{
    Counts, ErrorHit, EventHit, EventPage, RunFilter, RunList, RunState, RunSummary, StoredEvent,
    UsageTotals, run_duration_ms, run_work_ms,
};
pub use pg::announce::{CHANNEL as COMMIT_CHANNEL, MAX_PAYLOAD_BYTES as MAX_ANNOUNCEMENT_BYTES};
pub use pg::follow::{
    APPLICATION_PREFIX as FOLLOWER_APPLICATION_PREFIX, FollowHook, Followed, Follower,
    application_name as follower_application_name,
};
pub use projection::{
    GraphDelta, NodeDetail, RunGraph, RunProjection, RunTimes, node_label, project, transcript_of,
};
pub use reader::{DEFAULT_EVENT_PAGE, MAX_EVENT_PAGE, RunStore};
pub use report::{ErrorReport, RunReport, run_report};
pub use schema::SCHEMA_VERSION;
pub use seq_claim::{RUN_CLAIM_WAIT, RunClaim};
pub use threads::{
    RunKeys, ThreadDetail, ThreadFilter, ThreadList, ThreadSummary, run_keys, thread_summary,
};
pub use transfer::{ImportReport, RunImport, TransferError};
pub use writer::{
    CommitHook, Committed, EventsWanted, MAX_EVENT_TYPES, OpenReport, PendingFlush, Retention,
    TryAppendError, Writer, WriterConfig, WriterStats,
};

/// The current wall clock in epoch milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
