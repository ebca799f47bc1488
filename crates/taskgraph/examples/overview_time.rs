//! Times the task page's views of one session (the overview, a turn's detail, the timeline),
//! the way the server computes them per request or per live growth.
//!
//! `cargo run --release -p mindgate-taskgraph --example overview_time -- <session file> [runs]`
//! (prints the fastest of `runs` of each, and the JSON sizes).

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mindgate_taskgraph::{
    BuildOptions, build_graph, overview, read_session, timeline, turn_detail,
};

fn fastest<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = f();
    for _ in 0..runs {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed());
    }
    (best, out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: overview_time <session file> [runs]");
        return ExitCode::FAILURE;
    };
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let t = Instant::now();
    let session = match read_session(Path::new(file)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let read = t.elapsed();
    let t = Instant::now();
    let g = build_graph(&session.events, &BuildOptions::default());
    let build = t.elapsed();
    let prices = mindgate_pricing::PriceTable::builtin();
    let (turn_of_time, _) = fastest(runs, || {
        mindgate_taskgraph::graph::overview::turn_of_nodes(&g)
    });
    let (weights_time, _) = fastest(runs, || mindgate_taskgraph::graph::node_weights(&g));
    let (price_time, _) = fastest(runs, || {
        let mut c = mindgate_pricing::Cost::default();
        for _ in 0..10_000 {
            c.add(
                &prices,
                Some("claude-sonnet-4-5"),
                &mindgate_pricing::TokenCounts {
                    input: 1,
                    output: 1,
                    cache_read: 1,
                    cache_write: 0,
                },
            );
        }
        c
    });
    eprintln!(
        "turn_of_nodes={:.1} ms node_weights={:.1} ms 10k prices={:.1} ms",
        ms(turn_of_time),
        ms(weights_time),
        ms(price_time)
    );
    let (ov_time, ov) = fastest(runs, || overview(&g, &[], &prices));
    let (ov_json_time, ov_json) = fastest(runs, || serde_json::to_string(&ov).unwrap_or_default());
    let last = ov
        .turns
        .last()
        .map(|t| t.id.to_string())
        .unwrap_or_default();
    let (turn_time, turn_json) = fastest(runs, || {
        turn_detail(&g, &last).map(|d| serde_json::to_string(&d).unwrap_or_default())
    });
    let (index_time, index) = fastest(runs, || mindgate_taskgraph::TurnIndex::new(&g));
    let (indexed_time, _) = fastest(runs, || {
        index
            .detail(&g, &last)
            .map(|d| serde_json::to_string(&d).unwrap_or_default())
    });
    eprintln!(
        "turn index built in {:.1} ms; a turn from it (with its JSON) {:.2} ms",
        ms(index_time),
        ms(indexed_time)
    );
    let (tl_time, bars) = fastest(runs, || timeline(&g).len());
    println!(
        "events={} nodes={} turns={} segments={} read={:.0} ms build={:.0} ms overview={:.1} ms overview_json={:.1} ms ({} bytes) turn={:.1} ms ({} bytes) timeline={:.1} ms ({bars} bars)",
        session.events.len(),
        g.nodes.len(),
        ov.turns.len(),
        ov.critical_path.segments.len(),
        ms(read),
        ms(build),
        ms(ov_time),
        ms(ov_json_time),
        ov_json.len(),
        ms(turn_time),
        turn_json.map_or(0, |j| j.len()),
        ms(tl_time),
    );
    ExitCode::SUCCESS
}
