//! `mindgate export <RUN_ID> --jsonl FILE | --html FILE`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use mindgate_home::Home;
use mindgate_store::{Database, RunStore};

use super::memory::progress::{LineCounter, bar};
use crate::args::ExportArgs;
use crate::db_arg::RunDb;

/// Runs `mindgate export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let db = RunDb::or_default(args.db.as_ref(), || Home::from_env().run_db());
    let store = open_store(&db)?;
    let run_id = super::run_ids::resolve_run_id(&store, &db, &args.run_id)?;
    if let Some(path) = &args.jsonl {
        let events = export_jsonl(&store, &run_id, path)?;
        if path.as_os_str() != "-" {
            eprintln!(
                "exported run {run_id} ({events} events) to {}",
                path.display()
            );
        }
    }
    if let Some(path) = &args.html {
        let hide = mindgate_server::html_export::Redaction {
            inputs: args.hide_inputs,
            outputs: args.hide_outputs,
            tool_args: args.hide_tool_args,
            tool_results: args.hide_tool_results,
        };
        let page = mindgate_server::html_export::export_html(&store, &run_id, hide)
            .context("cannot build the page")?
            .with_context(|| format!("run {run_id} disappeared while it was exported"))?;
        std::fs::write(path, page.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!(
            "exported run {run_id} as one page ({} KB) to {}",
            page.len().div_ceil(1024),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The run database, read-only (running `mindgate serve` instances may write it): a
/// SQLite file that must exist, or a migrated PostgreSQL database (an unreachable one is
/// an error naming it, password hidden).
pub(crate) fn open_store(db: &Database) -> anyhow::Result<RunStore> {
    let prices = mindgate_pricing::PriceTable::load(&Home::from_env().prices_file())?;
    let store = match db {
        Database::Sqlite(path) => {
            if !path.exists() {
                bail!("no run database at {}", path.display());
            }
            RunStore::open_read_only(path)
                .with_context(|| format!("cannot open {}", path.display()))?
        }
        // The store's errors name the database (`cannot reach the PostgreSQL database …`).
        Database::Postgres(url) => RunStore::open_postgres(url)?,
    };
    Ok(store.with_prices(prices))
}

fn export_jsonl(store: &RunStore, run_id: &str, path: &Path) -> anyhow::Result<u64> {
    let written = if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        store.export_jsonl(run_id, &mut out)?
    } else {
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let total = store.get_run(run_id)?.map(|r| r.counts.events + 1);
        let progress = bar(total, "exporting {bar:40} {pos}/{len} lines");
        let mut out = LineCounter {
            inner: BufWriter::new(file),
            bar: progress.clone(),
        };
        let written = store.export_jsonl(run_id, &mut out)?;
        out.flush()?;
        progress.finish_and_clear();
        written
    };
    written.with_context(|| format!("run {run_id} disappeared while it was exported"))
}
