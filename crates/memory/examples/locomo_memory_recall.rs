//! LoCoMo evidence recall with the builtin embedder, without building the `mindgate`
//! binary: the same loader and scorer as `mindgate memory bench locomo … --embedder
//! builtin --sizes ''` (lexical, then hybrid at the store's defaults), for quick
//! experiments on the search (recall does not depend on the build).
//!
//! `cargo run -p mindgate-memory --example locomo_memory_recall -- <locomo.json> [FEEDBACK]
//! [NEIGHBOUR_WEIGHT,…] [NEIGHBOUR_WINDOW] [DUMP.jsonl]` (one lexical and one hybrid run
//! per weight; with a dump file, every question's top 40 hybrid hits at the store's
//! defaults and that window, as JSON lines, for offline analysis).

use std::sync::Arc;

use mindgate_embed::BuiltinEmbedder;
use mindgate_memory::bench::locomo::{self, ModeRecall, Tuning};
use mindgate_memory::{MemoryConfig, OpenOptions, SearchMode, SqliteMemory};

fn line(name: &str, r: &ModeRecall) {
    let o = &r.overall;
    let mut s = format!(
        "{name}: {:.3} / {:.3} / {:.3}",
        o.recall_at_5, o.recall_at_10, o.hit_at_10
    );
    for (c, v) in &r.by_category {
        s.push_str(&format!(
            " | {c}: {:.3} / {:.3}",
            v.recall_at_5, v.recall_at_10
        ));
    }
    println!("{s}");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .ok_or("usage: locomo_memory_recall <locomo.json> [FEEDBACK] [WEIGHT,…] [WINDOW] [DUMP]")?;
    let feedback: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let weights: Vec<Option<f64>> = match args.next() {
        Some(list) => list
            .split(',')
            .map(|w| w.parse().map(Some))
            .collect::<Result<_, _>>()?,
        None => vec![None],
    };
    let window: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let dump_to: Option<String> = args.next();
    let conversations = locomo::load_file(std::path::Path::new(&file))?;
    let dir = tempfile::tempdir()?;
    let options = OpenOptions {
        embedder: Some(Arc::new(BuiltinEmbedder::default())),
        config: MemoryConfig {
            neighbour_window: window.unwrap_or(MemoryConfig::default().neighbour_window),
            ..MemoryConfig::default()
        },
        ..OpenOptions::default()
    };
    let store = SqliteMemory::open(&dir.path().join("locomo.db"), options)?;
    let (turns, secs) = locomo::load_into(&store, &conversations, true)?;
    println!("{turns} turns in {secs:.1} s");
    for neighbour_weight in weights {
        let tuning = Tuning {
            query_feedback: feedback,
            neighbour_weight,
            ..Tuning::default()
        };
        let w = neighbour_weight.map_or("default".to_owned(), |w| w.to_string());
        line(
            &format!("lexical n{w}"),
            &locomo::evaluate(&store, &conversations, SearchMode::Lexical, &tuning)?,
        );
        line(
            &format!("hybrid n{w}"),
            &locomo::evaluate(&store, &conversations, SearchMode::Hybrid, &tuning)?,
        );
    }
    if let Some(path) = dump_to {
        dump(&store, &conversations, &path)?;
    }
    Ok(())
}

/// Writes every question's top 40 hybrid hits (id, score) as JSON lines, for analysis.
fn dump(
    store: &SqliteMemory,
    conversations: &[locomo::Conversation],
    path: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    use mindgate_memory::store::MemoryStore;
    use mindgate_memory::types::MemorySearchOptions;
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for conv in conversations {
        for q in &conv.questions {
            if !q.is_scored() {
                continue;
            }
            let mut o = MemorySearchOptions::new(conv.sample_id.clone(), q.question.clone());
            o.top_k = Some(40);
            o.mode = Some(SearchMode::Hybrid);
            let hits = store.search(&o)?;
            let hits: Vec<(String, f64)> = hits
                .iter()
                .map(|h| (h.record.id().to_owned(), h.score))
                .collect();
            let row = serde_json::json!({
                "sample": conv.sample_id, "question": q.question, "category": q.category,
                "evidence": q.evidence, "hits": hits,
            });
            writeln!(out, "{row}")?;
        }
    }
    Ok(())
}
