//! Throughput of `parse_envelope` on typical frames.
//!
//! `cargo bench -p mindgate-protocol --bench parse`. Criterion reports bytes/s
//! (Throughput::Bytes); frames/s is printed alongside from the frame size.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mindgate_protocol::{ParseResult, parse_envelope};
use serde_json::json;

/// node.token of about 200 bytes.
fn node_token() -> String {
    json!({
        "gm": 1, "seq": 1834, "ts": 1_756_200_000_123_i64, "runId": "run_c8f5b6c3147a",
        "type": "node.token",
        "payload": {"nodeId": "llm:step", "deltas": [
            {"t": "text", "v": "Let me look that up "},
            {"t": "text", "v": "for you, one moment."}
        ]}
    })
    .to_string()
}

/// node.started with about 2 KB of input.
fn node_started() -> String {
    let messages: Vec<_> = (0..14)
        .map(|i| {
            json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                   "content": format!("message {i}: please find a flight from SFO to JFK on the first of September, economy, one adult")})
        })
        .collect();
    json!({
        "gm": 1, "seq": 1835, "ts": 1_756_200_000_456_i64, "runId": "run_c8f5b6c3147a",
        "type": "node.started",
        "payload": {
            "nodeId": "llm:step", "kind": "llm", "name": "step", "instanceId": "step_b26945_11",
            "parentId": "agent:book-trip",
            "input": {"provider": "openai", "model": "gpt-test", "temperature": 0.2, "messages": messages}
        }
    })
    .to_string()
}

/// node.finished with usage.
fn node_finished() -> String {
    json!({
        "gm": 1, "seq": 1836, "ts": 1_756_200_000_789_i64, "runId": "run_c8f5b6c3147a",
        "type": "node.finished",
        "payload": {
            "nodeId": "llm:step", "instanceId": "step_b26945_11", "durationMs": 812.37,
            "status": "ok", "heldMs": 0.0,
            "output": {"text": "Booked.", "finishReason": "stop"},
            "usage": {"inputTokens": 240, "outputTokens": 3, "cacheReadTokens": 128}
        }
    })
    .to_string()
}

/// CPU time this thread has spent running, in seconds, from the kernel's
/// scheduler statistics (nanosecond resolution). On a busy machine wall time
/// also counts time spent waiting for a core; this does not, so it measures
/// throughput *per core*. Falls back to wall time where unavailable.
struct CpuClock {
    wall: Instant,
    cpu: Option<u64>,
}

fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

impl CpuClock {
    fn start() -> Self {
        CpuClock {
            wall: Instant::now(),
            cpu: thread_cpu_ns(),
        }
    }

    /// (seconds on a core, wall seconds)
    fn elapsed(&self) -> (f64, f64) {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu, thread_cpu_ns()) {
            (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
            _ => wall,
        };
        (cpu, wall)
    }
}

/// Parses `frames` round after round in `slices` slices of about `slice` CPU
/// time each. Returns frames per CPU second of the best slice (the least
/// disturbed by other work on a shared machine) and the median slice, and the
/// median's frames per wall second.
fn rate(frames: &[&str], slices: usize, slice: Duration) -> Rate {
    let mut per_cpu = Vec::with_capacity(slices);
    let mut per_wall = Vec::with_capacity(slices);
    for _ in 0..slices {
        let clock = CpuClock::start();
        let mut rounds = 0u64;
        loop {
            for _ in 0..100 {
                for f in frames {
                    black_box(parse_envelope(black_box(f)));
                }
            }
            rounds += 100;
            if clock.elapsed().0 >= slice.as_secs_f64() || rounds >= 10_000_000 {
                break;
            }
        }
        let (cpu, wall) = clock.elapsed();
        let n = (rounds * frames.len() as u64) as f64;
        per_cpu.push(n / cpu);
        per_wall.push(n / wall);
    }
    per_cpu.sort_by(f64::total_cmp);
    per_wall.sort_by(f64::total_cmp);
    Rate {
        best: per_cpu[slices - 1],
        median: per_cpu[slices / 2],
        median_wall: per_wall[slices / 2],
    }
}

struct Rate {
    best: f64,
    median: f64,
    median_wall: f64,
}

fn bench(c: &mut Criterion) {
    let frames = [
        ("node.token", node_token()),
        ("node.started_2kb", node_started()),
        ("node.finished_usage", node_finished()),
    ];
    let mut group = c.benchmark_group("parse_envelope");
    for (name, frame) in &frames {
        assert!(
            matches!(parse_envelope(frame), ParseResult::Ok(_)),
            "{name}"
        );
        group.throughput(Throughput::Bytes(frame.len() as u64));
        group.bench_function(*name, |b| b.iter(|| parse_envelope(black_box(frame))));
    }
    group.finish();

    // The mix a live run produces: mostly tokens, one start and one finish per node.
    let mix: Vec<&str> = std::iter::repeat_n(frames[0].1.as_str(), 8)
        .chain([frames[1].1.as_str(), frames[2].1.as_str()])
        .collect();
    let mut group = c.benchmark_group("parse_envelope_mix");
    group.throughput(Throughput::Elements(mix.len() as u64));
    group.bench_function("8_tokens_1_started_1_finished", |b| {
        b.iter(|| {
            for f in &mix {
                black_box(parse_envelope(black_box(f)));
            }
        })
    });
    group.finish();

    eprintln!(
        "\nper-core rates, frames per second of thread CPU time over 20 slices of 0.1 s\n\
         (best slice = least disturbed by other load; MB/s from the best; median wall-clock rate last):"
    );
    let mut lines: Vec<(String, Vec<&str>)> = frames
        .iter()
        .map(|(name, f)| ((*name).to_owned(), vec![f.as_str()]))
        .collect();
    lines.push(("mix 8:1:1".to_owned(), mix.clone()));
    for (name, set) in &lines {
        let avg = set.iter().map(|f| f.len()).sum::<usize>() as f64 / set.len() as f64;
        let r = rate(set, 20, Duration::from_millis(100));
        eprintln!(
            "  {name:<20} {avg:>6.0} B  best {:>9.0}/s {:>6.1} MB/s  median {:>9.0}/s  wall {:>9.0}/s",
            r.best,
            r.best * avg / 1e6,
            r.median,
            r.median_wall
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
