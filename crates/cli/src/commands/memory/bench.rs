//! `mindgate memory bench locomo`: LoCoMo evidence recall, synthetic latency and write
//! throughput, through the same store and search a user's agent gets.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mindgate_embed::Embedder;
use mindgate_memory::bench::locomo::{self, ModeRecall};
use mindgate_memory::bench::synthetic::{self, LatencyFigures};
use mindgate_memory::{MemoryConfig, OpenOptions, SearchMode, SqliteMemory};
use serde::Serialize;

use super::embedders;
use crate::args::LocomoArgs;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    file: String,
    embedder: Option<String>,
    conversations: usize,
    turns: usize,
    questions: usize,
    candidate_pool: usize,
    reply_context: bool,
    vector_weight: f64,
    locomo_write_facts_per_sec: f64,
    lexical: ModeRecall,
    vector: Option<ModeRecall>,
    hybrid: Option<ModeRecall>,
    latency: Vec<LatencyFigures>,
}

fn store_in(
    dir: &tempfile::TempDir,
    name: &str,
    embedder: Option<Arc<dyn Embedder>>,
    record_access: bool,
) -> anyhow::Result<SqliteMemory> {
    let config = MemoryConfig {
        record_access,
        ..MemoryConfig::default()
    };
    let options = OpenOptions {
        embedder,
        config,
        ..OpenOptions::default()
    };
    Ok(SqliteMemory::open(&dir.path().join(name), options)?)
}

/// Runs the benchmark and prints the figures.
pub fn locomo(args: &LocomoArgs) -> anyhow::Result<ExitCode> {
    let embedder = embedders::by_name(&args.embedder)?;
    let conversations = locomo::load_file(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let dir = tempfile::tempdir().context("creating a scratch directory")?;
    let store = store_in(&dir, "locomo.db", embedder.clone(), false)?;
    let (turns, secs) = locomo::load_into(&store, &conversations, !args.no_context)?;
    let questions = conversations
        .iter()
        .flat_map(|c| &c.questions)
        .filter(|q| (1..=4).contains(&q.category) && !q.evidence.is_empty())
        .count();
    let pool = Some(args.pool);
    let lexical = locomo::evaluate(&store, &conversations, SearchMode::Lexical, pool, None)?;
    let (vector, hybrid) = if embedder.is_some() {
        (
            Some(locomo::evaluate(
                &store,
                &conversations,
                SearchMode::Vector,
                pool,
                None,
            )?),
            Some(locomo::evaluate(
                &store,
                &conversations,
                SearchMode::Hybrid,
                pool,
                Some(args.vector_weight),
            )?),
        )
    } else {
        (None, None)
    };
    drop(store);
    let mut latency = Vec::new();
    for (i, size) in args.sizes.iter().copied().filter(|s| *s > 0).enumerate() {
        let store = store_in(&dir, &format!("synthetic-{i}.db"), embedder.clone(), true)?;
        latency.push(synthetic::run(&store, size, args.searches.max(1), 7)?);
    }
    let report = Report {
        file: args.file.display().to_string(),
        embedder: embedder.as_ref().map(|e| e.id().to_string()),
        conversations: conversations.len(),
        turns,
        questions,
        candidate_pool: args.pool,
        reply_context: !args.no_context,
        vector_weight: args.vector_weight,
        locomo_write_facts_per_sec: turns as f64 / secs.max(1e-9),
        lexical,
        vector,
        hybrid,
        latency,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &Report) {
    println!(
        "LoCoMo {}: {} conversations, {} turns{}, {} questions (categories 1-4), embedder {}, {} candidates per list, vector weight {}",
        r.file,
        r.conversations,
        r.turns,
        if r.reply_context {
            " (each indexed with the turn it replies to)"
        } else {
            ""
        },
        r.questions,
        r.embedder.as_deref().unwrap_or("none"),
        r.candidate_pool,
        r.vector_weight
    );
    println!(
        "{:<8} {:>9} {:>6} {:>7} {:>7} {:>7}",
        "mode", "category", "n", "R@5", "R@10", "hit@10"
    );
    let modes = [
        ("lexical", Some(&r.lexical)),
        ("vector", r.vector.as_ref()),
        ("hybrid", r.hybrid.as_ref()),
    ];
    for (name, mode) in modes {
        let Some(m) = mode else { continue };
        let row = |cat: &str, x: &locomo::Recall| {
            println!(
                "{name:<8} {cat:>9} {:>6} {:>7.3} {:>7.3} {:>7.3}",
                x.questions, x.recall_at_5, x.recall_at_10, x.hit_at_10
            );
        };
        row("all", &m.overall);
        for (cat, x) in &m.by_category {
            row(&cat.to_string(), x);
        }
    }
    println!(
        "write throughput (LoCoMo turns): {:.0} facts/s",
        r.locomo_write_facts_per_sec
    );
    for l in &r.latency {
        println!(
            "{} synthetic facts: write {:.0} facts/s; hybrid search p50 {:.2} ms, p95 {:.2} ms ({} searches, query embedding included)",
            l.facts, l.write_facts_per_sec, l.search_p50_ms, l.search_p95_ms, l.searches
        );
    }
}
