//! Writes the deterministic synthetic session as a DSH session folder, for whole-command
//! benchmarks (`scripts/bench-taskgraph.sh`).
//!
//! `cargo run --release -p mindgate-taskgraph --example synth_session -- <folder> [events] [--plain]`
//!
//! Writes `<folder>/session.jsonl.zstd` (one zstd frame per 64 lines, as DSH appends them),
//! or with `--plain` `<folder>/session.v1.jsonl`.

use std::path::PathBuf;
use std::process::ExitCode;

use mindgate_taskgraph::synth::{dsh_jsonl, session_events, zstd_frames};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = args.iter().filter(|a| !a.starts_with("--"));
    let Some(dir) = positional.next().map(PathBuf::from) else {
        eprintln!("usage: synth_session <folder> [events] [--plain]");
        return ExitCode::FAILURE;
    };
    let n = positional
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let plain = args.iter().any(|a| a == "--plain");
    let jsonl = dsh_jsonl(&session_events(n));
    let (file, bytes) = if plain {
        (dir.join("session.v1.jsonl"), Ok(jsonl))
    } else {
        (dir.join("session.jsonl.zstd"), zstd_frames(&jsonl, 64))
    };
    let written = bytes.and_then(|b| {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(&file, &b)?;
        Ok(b.len())
    });
    match written {
        Ok(len) => {
            println!("{} ({n} events, {len} bytes)", file.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", file.display());
            ExitCode::FAILURE
        }
    }
}
