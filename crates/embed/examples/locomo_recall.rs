//! Evidence recall@5/@10 of an embedder on LoCoMo (categories 1–4, one document per
//! turn, ranked within the question's conversation), and its embedding throughput.
//!
//! ```sh
//! cargo run --release -p mindgate-embed --example locomo_recall -- ../shared/data/locomo/locomo-dev.json
//! cargo run --release -p mindgate-embed --features minilm --example locomo_recall -- \
//!     ../shared/data/locomo/locomo-dev.json target/models/minilm
//! ```
//!
//! Prints "skipped" and exits 0 when the data file is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use mindgate_embed::{BuiltinEmbedder, Embedder, cosine};
use serde_json::Value;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "../shared/data/locomo/locomo-dev.json".to_owned());
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipped: {path} is not there");
        return;
    };
    let loading = Instant::now();
    let embedder: Box<dyn Embedder> = match args.next() {
        #[cfg(feature = "minilm")]
        Some(dir) => {
            Box::new(mindgate_embed::MiniLmEmbedder::load(std::path::Path::new(&dir)).unwrap())
        }
        #[cfg(not(feature = "minilm"))]
        Some(_) => panic!("build with --features minilm to use a model directory"),
        None => Box::new(BuiltinEmbedder::new()),
    };
    println!(
        "loaded {} in {:.0} ms",
        embedder.id(),
        loading.elapsed().as_secs_f64() * 1e3
    );
    let conversations: Vec<Value> = serde_json::from_str(&text).unwrap();
    let (mut questions, mut hit5, mut hit10) = (0usize, 0.0f64, 0.0f64);
    let (mut docs_embedded, mut embed_secs) = (0usize, 0.0f64);
    let (mut singles, mut single_secs) = (0usize, 0.0f64);
    let mut query_secs = 0.0f64;
    for conversation in &conversations {
        let turns = &conversation["conversation"];
        let mut ids = Vec::new();
        let mut docs = Vec::new();
        for session in 1.. {
            let Some(turns) = turns[format!("session_{session}")].as_array() else {
                if session > 60 {
                    break;
                }
                continue;
            };
            for turn in turns {
                ids.push(turn["dia_id"].as_str().unwrap_or_default().to_owned());
                docs.push(format!(
                    "{}: {}",
                    turn["speaker"].as_str().unwrap_or_default(),
                    turn["text"].as_str().unwrap_or_default()
                ));
            }
        }
        let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let started = Instant::now();
        let mut vectors = Vec::with_capacity(refs.len());
        for chunk in refs.chunks(embedder.preferred_batch()) {
            vectors.extend(embedder.embed(chunk).unwrap());
        }
        embed_secs += started.elapsed().as_secs_f64();
        docs_embedded += refs.len();
        // The same texts one call each (the store's write path for one memory).
        let started = Instant::now();
        for text in refs.iter().take(300) {
            embedder.embed_one(text).unwrap();
            singles += 1;
        }
        single_secs += started.elapsed().as_secs_f64();
        for qa in conversation["qa"].as_array().into_iter().flatten() {
            let category = qa["category"].as_u64().unwrap_or(0);
            if !(1..=4).contains(&category) {
                continue;
            }
            let evidence: Vec<&str> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if evidence.is_empty() {
                continue;
            }
            let started = Instant::now();
            let q = embedder
                .embed_query(qa["question"].as_str().unwrap_or_default())
                .unwrap();
            query_secs += started.elapsed().as_secs_f64();
            let mut ranked: Vec<(f32, usize)> = vectors
                .iter()
                .enumerate()
                .map(|(i, v)| (cosine(&q, v), i))
                .collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
            let recall = |k: usize| {
                let top: Vec<&str> = ranked
                    .iter()
                    .take(k)
                    .map(|(_, i)| ids[*i].as_str())
                    .collect();
                evidence.iter().filter(|e| top.contains(e)).count() as f64 / evidence.len() as f64
            };
            hit5 += recall(5);
            hit10 += recall(10);
            questions += 1;
        }
    }
    println!(
        "{}: {} questions, R@5 {:.3}, R@10 {:.3}; {} turns embedded at {:.0} texts/s (batched), \
         {:.0} texts/s (one per call); query {:.2} ms mean",
        embedder.id(),
        questions,
        hit5 / questions as f64,
        hit10 / questions as f64,
        docs_embedded,
        docs_embedded as f64 / embed_secs,
        singles as f64 / single_secs,
        query_secs * 1e3 / questions as f64
    );
}
