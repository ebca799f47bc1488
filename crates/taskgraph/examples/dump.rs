//! Reads a session (file or folder) and prints its task graph as JSON.
//!
//! `cargo run -p mindgate-taskgraph --example dump -- <path> [--live] [--events]`

use std::path::PathBuf;
use std::process::ExitCode;

use mindgate_taskgraph::{BuildOptions, build_session_tree, read_session};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: dump <session path> [--live] [--events]");
        return ExitCode::FAILURE;
    };
    let session = match read_session(&PathBuf::from(path)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for w in &session.warnings {
        eprintln!("warning: {w}");
    }
    let out = if args.iter().any(|a| a == "--events") {
        serde_json::to_string_pretty(&session.events)
    } else {
        let opts = BuildOptions {
            live: args.iter().any(|a| a == "--live"),
            ..BuildOptions::default()
        };
        serde_json::to_string_pretty(&build_session_tree(&session, &opts))
    };
    match out {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
