//! `mindgate export <RUN_ID> --jsonl FILE | --html FILE`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use mindgate_home::Home;
use mindgate_store::RunStore;

use super::memory::progress::{LineCounter, bar};
use crate::args::ExportArgs;

/// Runs `mindgate export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let db = args.db.clone().unwrap_or_else(|| Home::from_env().run_db());
    let store = open_store(&db)?;
    if store.get_run(&args.run_id)?.is_none() {
        bail!("run {} not found in {}", args.run_id, db.display());
    }
    if let Some(path) = &args.jsonl {
        let events = export_jsonl(&store, &args.run_id, path)?;
        if path.as_os_str() != "-" {
            eprintln!(
                "exported run {} ({events} events) to {}",
                args.run_id,
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
        let page = mindgate_server::html_export::export_html(&store, &args.run_id, hide)
            .context("cannot build the page")?
            .with_context(|| format!("run {} disappeared while it was exported", args.run_id))?;
        std::fs::write(path, page.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!(
            "exported run {} as one page ({} KB) to {}",
            args.run_id,
            page.len().div_ceil(1024),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The run database, read-only (a running `mindgate serve` may write it).
pub(crate) fn open_store(db: &Path) -> anyhow::Result<RunStore> {
    if !db.exists() {
        bail!("no run database at {}", db.display());
    }
    let prices = mindgate_pricing::PriceTable::load(&Home::from_env().prices_file())?;
    Ok(RunStore::open_read_only(db)
        .with_context(|| format!("cannot open {}", db.display()))?
        .with_prices(prices))
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
