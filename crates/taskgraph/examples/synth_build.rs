//! Builds the graph of a synthetic session (for timing and peak-memory measurements).
//!
//! `cargo run --release -p mindgate-taskgraph --example synth_build -- [events] [runs]`
//! (prints the fastest of `runs` builds; with `SYNTH_JSON_OUT=<file>` also writes the graph's
//! JSON there, to compare outputs across changes).

use std::time::Instant;

use mindgate_taskgraph::synth::session_events;
use mindgate_taskgraph::{BuildOptions, build_graph};

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let events = session_events(n);
    let runs: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut build = std::time::Duration::MAX;
    let mut g = build_graph(&events[..0], &BuildOptions::default());
    for _ in 0..runs.max(1) {
        // Like the bench: freeing the previous graph is not part of the build.
        drop(g);
        let t = Instant::now();
        g = build_graph(&events, &BuildOptions::default());
        build = build.min(t.elapsed());
    }
    let bytes = serde_json::to_vec(&g).unwrap_or_default();
    if let Ok(p) = std::env::var("SYNTH_JSON_OUT") {
        std::fs::write(p, &bytes).unwrap_or_default();
    }
    let json = bytes.len();
    println!(
        "events={n} nodes={} edges={} critical_path={} build={:.1} ms json={} bytes",
        g.nodes.len(),
        g.edges.len(),
        g.critical_path.node_ids.len(),
        build.as_secs_f64() * 1000.0,
        json
    );
}
