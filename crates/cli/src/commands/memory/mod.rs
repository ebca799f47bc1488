//! `mindgate memory …`: benchmarks and maintenance of the agent-memory store.

mod bench;
mod embedder;
mod embedders;
mod reembed;

use std::process::ExitCode;

use crate::args::{MemoryArgs, MemoryBench, MemoryCommand};

/// Runs a `memory` subcommand.
pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        MemoryCommand::Bench(b) => match b.bench {
            MemoryBench::Locomo(args) => bench::locomo(&args),
        },
        MemoryCommand::Reembed(args) => reembed::run(&args),
        MemoryCommand::Embedder(args) => embedder::run(args),
    }
}
