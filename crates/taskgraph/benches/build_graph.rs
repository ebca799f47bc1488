//! Full build of a 100,000-event session, and appending 100 events to a live one.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mindgate_taskgraph::synth::session_events;
use mindgate_taskgraph::{BuildOptions, IncrementalGraph, build_graph};

fn bench(c: &mut Criterion) {
    let events = session_events(100_000);
    c.bench_function("build_graph/100k_events", |b| {
        // The caller keeps (and later drops) the graph: freeing it is not part of the build.
        b.iter_with_large_drop(|| build_graph(black_box(&events), &BuildOptions::default()))
    });

    let all = session_events(100_100);
    let (head, tail) = all.split_at(100_000);
    let mut base = IncrementalGraph::new(BuildOptions {
        live: true,
        ..BuildOptions::default()
    });
    base.append(head);
    c.bench_function("incremental/append_100_to_100k_live", |b| {
        b.iter_batched_ref(
            || {
                // A clone has no spare capacity; a long-lived live graph has (amortised growth).
                let mut g = base.clone();
                g.reserve(1_000);
                g
            },
            |g| {
                g.append(black_box(tail));
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
