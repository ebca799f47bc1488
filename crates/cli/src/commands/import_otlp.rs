//! `mindgate import <FILE>` for OTLP/JSON trace dumps: one `ExportTraceServiceRequest` per
//! line, or one (or several) JSON values in the whole file (`resourceSpans` first).
//!
//! The spans go through the same decoding, mapping and live rules as `POST /v1/traces`
//! (`mindgate-otlp`), then into the run store through its writer; a trace whose root span
//! is not in the file is finished as the quiet timeout would. Runs are listed with source
//! `import` (so retention keeps them; their `meta.source` is `otlp`). A line that is not an
//! export stops the import naming it; what was read before it is kept.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use anyhow::{Context as _, bail};
use mindgate_otlp::{StoredTrace, Tracker, TrackerConfig};
use mindgate_store::{Database, RunStore, Writer, WriterConfig};
use serde_json::Value;

use super::memory::progress::{ByteCounter, bar};

/// What an OTLP import stored.
#[derive(Debug, Default)]
pub struct OtlpImport {
    /// Export requests read.
    pub requests: u64,
    /// Spans mapped.
    pub spans: u64,
    /// Spans rejected (bad ids, events the protocol refused).
    pub rejected: u64,
    /// Events stored.
    pub events: u64,
    /// Traces (runs) seen.
    pub runs: usize,
}

/// `result` with the SQLite file named (the PostgreSQL errors name their database).
fn named<T>(db: &Database, result: mindgate_store::Result<T>) -> anyhow::Result<T> {
    match db {
        Database::Sqlite(path) => result.with_context(|| format!("cannot open {}", path.display())),
        Database::Postgres(_) => Ok(result?),
    }
}

/// Reads an OTLP/JSON dump into `db`.
pub fn import(file: &Path, db: &Database) -> anyhow::Result<OtlpImport> {
    let opened = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let size = opened.metadata().map(|m| m.len()).ok();
    let progress = bar(size, "importing {bar:40} {bytes}/{total_bytes} {msg}");
    let reader = BufReader::new(ByteCounter {
        inner: opened,
        bar: progress.clone(),
    });
    let config = WriterConfig {
        // On PostgreSQL the runs left `running` are other instances' live runs.
        reconcile_on_open: !db.is_postgres(),
        ..WriterConfig::default()
    };
    let (writer, _) = named(db, Writer::open_database(db, config, None))?;
    let store = named(db, RunStore::open_database(db))?;
    let mut tracker = Tracker::new(TrackerConfig {
        source: "import",
        max_traces: usize::MAX,
        ..TrackerConfig::default()
    });
    let mut report = OtlpImport::default();
    let now = mindgate_store::now_ms();
    let mut last_seq = |run: &str| {
        let events = store.all_events(run).ok().flatten()?;
        Some(StoredTrace::from_events(
            events
                .iter()
                .map(|e| (e.seq, e.type_name.as_str(), e.payload_value())),
        ))
    };
    let result = (|| -> anyhow::Result<()> {
        for (index, value) in serde_json::Deserializer::from_reader(reader)
            .into_iter::<Value>()
            .enumerate()
        {
            let value = value
                .with_context(|| format!("{}: export {} is not JSON", file.display(), index + 1))?;
            let decoded = mindgate_otlp::decode_json_value(value).with_context(|| {
                format!(
                    "{}: export {} is not an OTLP trace export",
                    file.display(),
                    index + 1
                )
            })?;
            let batch = tracker.ingest(&decoded.request, now, &mut last_seq);
            report.requests += 1;
            report.spans += batch.accepted_spans;
            report.rejected += decoded.rejected_spans + batch.rejected_spans;
            for event in batch.events {
                report.events += 1;
                writer.append(event)?;
            }
            progress.set_message(format!("{} spans", report.spans));
        }
        Ok(())
    })();
    // Traces whose root is not in the file are finished, as the quiet timeout would.
    for event in tracker.expire(i64::MAX) {
        report.events += 1;
        writer.append(event)?;
    }
    report.runs = tracker.trace_count();
    writer.close()?;
    progress.finish_and_clear();
    result?;
    if report.requests == 0 {
        bail!("{} holds no OTLP trace export", file.display());
    }
    Ok(report)
}
