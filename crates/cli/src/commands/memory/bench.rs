//! `mindgate memory bench locomo`: LoCoMo evidence recall, synthetic latency and write
//! throughput, through the same store and search a user's agent gets.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mindgate_embed::Embedder;
use mindgate_memory::bench::locomo::{self, ModeRecall, Tuning};
use mindgate_memory::bench::synthetic::{self, LatencyFigures};
use mindgate_memory::{
    FusionMethod, Memory, MemoryConfig, OpenOptions, PgMemory, SearchMode, SqliteMemory,
};
use serde::Serialize;

use super::embedders;
use crate::args::{FusionArg, LocomoArgs};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    file: String,
    embedder: Option<String>,
    conversations: usize,
    turns: usize,
    questions: usize,
    reply_context: bool,
    locomo_write_facts_per_sec: f64,
    lexical: ModeRecall,
    vector: Option<ModeRecall>,
    /// One entry per fusion setting compared (the store's default when none is given).
    hybrid: Vec<HybridRecall>,
    latency: Vec<LatencyFigures>,
    /// The query feedback the latency stores searched with (the first `--feedback`, else
    /// the store's default).
    latency_query_feedback: usize,
    /// The neighbour weight the latency stores searched with (the first `--neighbour`,
    /// else the store's default).
    latency_neighbour_weight: f64,
}

/// Hybrid recall under one fusion setting (every knob resolved).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HybridRecall {
    fusion: FusionMethod,
    candidate_pool: usize,
    vector_weight: f64,
    vector_floor: f64,
    query_feedback: usize,
    neighbour_weight: f64,
    recall: ModeRecall,
}

/// Every combination of the fusion settings asked for, each knob defaulting to the
/// store's.
fn tunings(args: &LocomoArgs) -> Vec<Tuning> {
    fn or_default<T: Copy>(values: &[T]) -> Vec<Option<T>> {
        if values.is_empty() {
            vec![None]
        } else {
            values.iter().copied().map(Some).collect()
        }
    }
    let mut out = Vec::new();
    for fusion in or_default(&args.fusion) {
        for candidate_pool in or_default(&args.pool) {
            for vector_weight in or_default(&args.vector_weight) {
                let floors_feedback = or_default(&args.vector_floor)
                    .into_iter()
                    .flat_map(|f| or_default(&args.feedback).into_iter().map(move |q| (f, q)));
                let neighbours = or_default(&args.neighbour);
                for ((vector_floor, query_feedback), neighbour_weight) in
                    floors_feedback.flat_map(|fq| neighbours.iter().map(move |n| (fq, *n)))
                {
                    out.push(Tuning {
                        query_feedback,
                        neighbour_weight,
                        candidate_pool,
                        vector_weight,
                        fusion: fusion.map(|f| match f {
                            FusionArg::Rrf => FusionMethod::Rrf,
                            FusionArg::Score => FusionMethod::Score,
                        }),
                        vector_floor,
                    });
                }
            }
        }
    }
    out
}

/// A fresh store: a scratch file in `dir`, or a scratch schema of `postgres`.
fn store_in(
    dir: &tempfile::TempDir,
    postgres: Option<&str>,
    name: &str,
    embedder: Option<Arc<dyn Embedder>>,
    record_access: bool,
    query_feedback: Option<usize>,
    neighbour_weight: Option<f64>,
) -> anyhow::Result<Memory> {
    let defaults = MemoryConfig::default();
    let config = MemoryConfig {
        record_access,
        query_feedback: query_feedback.unwrap_or(defaults.query_feedback),
        neighbour_weight: neighbour_weight.unwrap_or(defaults.neighbour_weight),
        ..defaults
    };
    let options = OpenOptions {
        embedder,
        config,
        ..OpenOptions::default()
    };
    Ok(match postgres {
        Some(url) => {
            PgMemory::connect_scratch(&mindgate_pg::PostgresUrl::parse(url)?, options)?.into()
        }
        None => SqliteMemory::open(&dir.path().join(name), options)?.into(),
    })
}

/// Runs the benchmark and prints the figures.
pub fn locomo(args: &LocomoArgs) -> anyhow::Result<ExitCode> {
    let embedder = embedders::by_name(&args.embedder)?;
    let conversations = locomo::load_file(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let dir = tempfile::tempdir().context("creating a scratch directory")?;
    let postgres = args.postgres.as_deref();
    let store = store_in(
        &dir,
        postgres,
        "locomo.db",
        embedder.clone(),
        false,
        None,
        None,
    )?;
    let (turns, secs) = locomo::load_into(&store, &conversations, !args.no_context)?;
    let questions = conversations
        .iter()
        .flat_map(|c| &c.questions)
        .filter(|q| q.is_scored())
        .count();
    let single = Tuning {
        candidate_pool: args.pool.first().copied(),
        vector_floor: args.vector_floor.first().copied(),
        query_feedback: args.feedback.first().copied(),
        neighbour_weight: args.neighbour.first().copied(),
        ..Tuning::default()
    };
    let lexical = locomo::evaluate(&store, &conversations, SearchMode::Lexical, &single)?;
    let mut vector = None;
    let mut hybrid = Vec::new();
    if embedder.is_some() {
        vector = Some(locomo::evaluate(
            &store,
            &conversations,
            SearchMode::Vector,
            &single,
        )?);
        let defaults = store.fusion_defaults();
        for tuning in tunings(args) {
            hybrid.push(HybridRecall {
                fusion: tuning.fusion.unwrap_or(defaults.method),
                candidate_pool: tuning
                    .candidate_pool
                    .unwrap_or(store.config().default_candidate_pool),
                vector_weight: tuning.vector_weight.unwrap_or(defaults.vector_weight),
                vector_floor: tuning.vector_floor.unwrap_or(defaults.vector_floor),
                query_feedback: tuning
                    .query_feedback
                    .unwrap_or(store.config().query_feedback),
                neighbour_weight: tuning
                    .neighbour_weight
                    .unwrap_or(store.config().neighbour_weight),
                recall: locomo::evaluate(&store, &conversations, SearchMode::Hybrid, &tuning)?,
            });
        }
    }
    drop(store);
    let mut latency = Vec::new();
    let latency_query_feedback = args
        .feedback
        .first()
        .copied()
        .unwrap_or(MemoryConfig::default().query_feedback);
    let latency_neighbour_weight = args
        .neighbour
        .first()
        .copied()
        .unwrap_or(MemoryConfig::default().neighbour_weight);
    for (i, size) in args.sizes.iter().copied().filter(|s| *s > 0).enumerate() {
        let name = format!("synthetic-{i}.db");
        let feedback = Some(latency_query_feedback);
        let neighbours = Some(latency_neighbour_weight);
        let store = store_in(
            &dir,
            postgres,
            &name,
            embedder.clone(),
            true,
            feedback,
            neighbours,
        )?;
        latency.push(synthetic::run(&store, size, args.searches.max(1), 7)?);
    }
    let report = Report {
        file: args.file.display().to_string(),
        embedder: embedder.as_ref().map(|e| e.id().to_string()),
        conversations: conversations.len(),
        turns,
        questions,
        reply_context: !args.no_context,
        locomo_write_facts_per_sec: turns as f64 / secs.max(1e-9),
        lexical,
        vector,
        hybrid,
        latency,
        latency_query_feedback,
        latency_neighbour_weight,
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
        "LoCoMo {}: {} conversations, {} turns{}, {} questions (categories 1-4), embedder {}",
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
    );
    println!(
        "{:<32} {:>9} {:>6} {:>7} {:>7} {:>7}",
        "mode", "category", "n", "R@5", "R@10", "hit@10"
    );
    let mut modes: Vec<(String, &ModeRecall)> = vec![("lexical".to_owned(), &r.lexical)];
    if let Some(v) = &r.vector {
        modes.push(("vector".to_owned(), v));
    }
    for h in &r.hybrid {
        let method = match h.fusion {
            FusionMethod::Rrf => "rrf",
            FusionMethod::Score => "score",
        };
        modes.push((
            format!(
                "hybrid {method} p{} w{} f{} q{} n{}",
                h.candidate_pool,
                h.vector_weight,
                h.vector_floor,
                h.query_feedback,
                h.neighbour_weight
            ),
            &h.recall,
        ));
    }
    for (name, m) in modes {
        let row = |cat: &str, x: &locomo::Recall| {
            println!(
                "{name:<32} {cat:>9} {:>6} {:>7.3} {:>7.3} {:>7.3}",
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
            "{} synthetic facts: write {:.0} facts/s; hybrid search p50 {:.2} ms, p95 {:.2} ms ({} searches, query embedding included, query feedback {}, neighbour weight {})",
            l.facts,
            l.write_facts_per_sec,
            l.search_p50_ms,
            l.search_p95_ms,
            l.searches,
            r.latency_query_feedback,
            r.latency_neighbour_weight
        );
    }
}
