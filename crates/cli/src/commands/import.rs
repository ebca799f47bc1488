//! `mindgate import <FILE>`: a run file into a database.
//!
//! The format is told by the file's first JSON value ([`detect`]): a Mindgate run export
//! header (`mindgate export --jsonl`) is read by [`import_run_export`]; other formats
//! (an OTLP JSON dump: `resourceSpans`) get their own reader at the dispatch point in
//! [`run`]. A run export is written in one transaction, so a bad file leaves the
//! database as it was (an OTLP dump keeps what was read before a bad export).
//!
//! The database is a SQLite file (locked against a running `mindgate serve`) or a
//! PostgreSQL database, which live servers keep writing during the import.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use mindgate_home::Home;
use mindgate_server::db_lock::{self, LockHolder};
use mindgate_store::{Database, RunImport, RunStore, StoreError};
use serde_json::Value;

use super::memory::progress::{ByteCounter, bar};
use crate::args::ImportArgs;
use crate::db_arg::RunDb;

/// The formats `mindgate import` knows, by the first JSON value of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    /// `mindgate export --jsonl`: a header line `{"format": "mindgate.run", …}`, then events.
    RunExport,
    /// An OTLP/JSON trace dump (`{"resourceSpans": […]}`).
    Otlp,
}

/// Tells the format from the first JSON value of `file`.
pub fn detect(file: &Path) -> anyhow::Result<ImportFormat> {
    let reader = BufReader::new(
        File::open(file).with_context(|| format!("cannot open {}", file.display()))?,
    );
    let first = serde_json::Deserializer::from_reader(reader)
        .into_iter::<Value>()
        .next();
    let first = match first {
        None => bail!("{} is empty", file.display()),
        Some(Err(e)) => bail!(
            "{}: not JSON at line {}, column {}: {e}",
            file.display(),
            e.line(),
            e.column()
        ),
        Some(Ok(value)) => value,
    };
    if mindgate_store::transfer::is_export_header(&first) {
        Ok(ImportFormat::RunExport)
    } else if first.get("resourceSpans").is_some() {
        Ok(ImportFormat::Otlp)
    } else {
        bail!(
            "{}: not a run file mindgate can import (expected a `mindgate export --jsonl` file, \
             whose first line has \"format\": \"mindgate.run\")",
            file.display()
        )
    }
}

/// Runs `mindgate import`.
pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let db = RunDb::or_default(args.db.as_ref(), || Home::from_env().run_db());
    let format = detect(&args.file)?;
    // One writer per SQLite file: a running `mindgate serve` holds this lock, and the
    // import's transaction would stall its writes. A PostgreSQL database has no such
    // lock: it referees its writers itself, so servers keep writing during the import.
    let _lock = match &db {
        Database::Sqlite(path) => Some(
            db_lock::acquire(
                path,
                LockHolder {
                    pid: std::process::id(),
                    port: 0,
                },
            )
            .map_err(|e| anyhow::anyhow!("{e}; stop it or import into another --db"))?,
        ),
        Database::Postgres(_) => None,
    };
    let report = match format {
        ImportFormat::RunExport => import_run_export(&args.file, &db, args.new_id)?,
        ImportFormat::Otlp => {
            let r = super::import_otlp::import(&args.file, &db)?;
            println!(
                "imported {} trace(s) as runs ({} spans, {} rejected, {} events) into {db}",
                r.runs, r.spans, r.rejected, r.events,
            );
            return Ok(ExitCode::SUCCESS);
        }
    };
    println!(
        "imported run {} ({} events) into {db}",
        report.run_id, report.events,
    );
    Ok(ExitCode::SUCCESS)
}

/// Reads a `mindgate export --jsonl` file into `db` in one transaction.
pub fn import_run_export(
    file: &Path,
    db: &Database,
    new_id: bool,
) -> anyhow::Result<mindgate_store::ImportReport> {
    let opened = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let size = opened.metadata().map(|m| m.len()).ok();
    let progress = bar(size, "importing {bar:40} {bytes}/{total_bytes} {msg}");
    let mut lines = BufReader::new(ByteCounter {
        inner: opened,
        bar: progress.clone(),
    })
    .lines();
    let header = lines
        .next()
        .transpose()
        .with_context(|| format!("cannot read {}", file.display()))?
        .unwrap_or_default();
    let id = if new_id { free_id(db, &header)? } else { None };
    let mut import = RunImport::begin_in(db, &header, id.as_deref())
        .with_context(|| format!("{} was not imported", file.display()))?;
    for (index, line) in lines.enumerate() {
        let number = index as u64 + 2;
        let line =
            line.with_context(|| format!("{}: cannot read line {number}", file.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        import
            .add_line(number, &line)
            .with_context(|| format!("{} was not imported", file.display()))?;
    }
    let report = import
        .finish()
        .with_context(|| format!("{} was not imported", file.display()))?;
    progress.finish_and_clear();
    Ok(report)
}

/// With `--new-id`: the header's id when `db` does not have it, else the first free
/// `<id>-copy`, `<id>-copy-2`, …
fn free_id(db: &Database, header: &str) -> anyhow::Result<Option<String>> {
    let header: Value = serde_json::from_str(header).unwrap_or(Value::Null);
    let Some(id) = header.pointer("/run/id").and_then(Value::as_str) else {
        return Ok(None); // RunImport::begin reports the bad header
    };
    let store = match db {
        Database::Sqlite(path) if !path.exists() => return Ok(None),
        Database::Sqlite(path) => RunStore::open_read_only(path)
            .with_context(|| format!("cannot read {}", path.display()))?,
        Database::Postgres(url) => match RunStore::open_postgres(url) {
            // A database without a run store yet holds no run: the import migrates it.
            Err(StoreError::NotMigrated { .. }) => return Ok(None),
            other => other?,
        },
    };
    if store.get_run(id)?.is_none() {
        return Ok(None);
    }
    for n in 1..10_000u32 {
        let candidate = if n == 1 {
            format!("{id}-copy")
        } else {
            format!("{id}-copy-{n}")
        };
        if store.get_run(&candidate)?.is_none() {
            return Ok(Some(candidate));
        }
    }
    bail!("no free id for a copy of run {id}")
}
