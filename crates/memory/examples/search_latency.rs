//! Profiling aid for the search path: fills a memory file with synthetic facts once (the
//! benchmark's generator, builtin embedder), then times hybrid searches against it, so a
//! profiler (`valgrind --tool=callgrind`, `perf`) sees searches and not the writes.
//!
//! `cargo run --release -p mindgate-memory --example search_latency -- <DB> [FACTS] [SEARCHES]
//! [NEIGHBOUR_WEIGHT]` (defaults 100000 facts, 200 searches, the store's neighbour weight). `<DB>` is a file or a `postgres://` URL (the same
//! measure on the PostgreSQL backend: give an empty database or schema, e.g.
//! `…?options=-c%20search_path%3Dbench`). Delete the file (drop the schema) when done.

use std::sync::Arc;

use mindgate_embed::BuiltinEmbedder;
use mindgate_memory::bench::synthetic::{percentile, time_searches, write_facts};
use mindgate_memory::{Memory, MemoryConfig, MemoryDb, OpenOptions};
use rand::SeedableRng;
use rand::rngs::StdRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let db = MemoryDb::from_value(
        &args
            .next()
            .ok_or("usage: search_latency <DB> [FACTS] [SEARCHES]")?,
    )?;
    let facts: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let searches: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let defaults = MemoryConfig::default();
    let neighbour_weight: f64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(defaults.neighbour_weight);
    let options = OpenOptions {
        embedder: Some(Arc::new(BuiltinEmbedder::default())),
        config: MemoryConfig {
            record_access: true,
            neighbour_weight,
            ..defaults
        },
        ..OpenOptions::default()
    };
    let store = Memory::open(&db, options)?;
    let fresh = store.row_count()? == 0;
    let mut rng = StdRng::seed_from_u64(7);
    if fresh {
        let (n, secs) = write_facts(&store, facts, &mut rng)?;
        println!(
            "wrote {n} facts in {secs:.1} s ({:.0} facts/s)",
            n as f64 / secs
        );
    }
    let mut times = time_searches(&store, searches, &mut rng)?;
    let first = times.first().copied().unwrap_or(0.0);
    times.sort_by(f64::total_cmp);
    println!(
        "{} searches: first {first:.2} ms, p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        times.last().copied().unwrap_or(0.0)
    );
    Ok(())
}
