//! `mindgate memory reembed`: embeds every stored record with another embedder.

use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mindgate_home::Home;
use mindgate_memory::{Memory, MemoryDb, OpenOptions};

use super::embedders;
use crate::args::MemoryReembedArgs;

/// Runs the re-embed with a progress bar on stderr.
pub fn run(args: &MemoryReembedArgs) -> anyhow::Result<ExitCode> {
    let db = args
        .db
        .clone()
        .unwrap_or_else(|| MemoryDb::Sqlite(Home::from_env().memory_db()));
    let embedder = embedders::by_name(&args.embedder)?.context("re-embedding needs an embedder")?;
    let id = embedder.id().to_string();
    let store = Memory::open_for_reembed(&db, OpenOptions::default().embedder(embedder))
        .with_context(|| format!("opening {db}"))?;
    let previous = store.stored_embedder()?;
    let bar = ProgressBar::new(0);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} re-embedding {pos}/{len} {wide_bar} {eta}")
    {
        bar.set_style(style);
    }
    let n = store.reembed(|p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
    })?;
    bar.finish_and_clear();
    println!(
        "re-embedded {n} records with {id} (was {}) in {}",
        previous.as_deref().unwrap_or("none"),
        db
    );
    Ok(ExitCode::SUCCESS)
}
