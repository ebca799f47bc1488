//! `mindgate memory …`: inspect, search, review, maintain, export and import the
//! agent-memory store; its embedders and benchmarks.

mod admin;
mod bench;
mod consolidate;
mod embedder;
mod embedders;
mod induce;
pub(super) mod progress;
mod records;
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
        MemoryCommand::Status(args) => records::status(&args),
        MemoryCommand::Search(args) => records::search(&args),
        MemoryCommand::Remember(args) => records::remember(&args),
        MemoryCommand::Show(args) => records::show(&args),
        MemoryCommand::History(args) => records::history(&args),
        MemoryCommand::Quarantine(args) => records::quarantine(&args),
        MemoryCommand::Validate(args) => records::validate(&args),
        MemoryCommand::Reject(args) => records::reject(&args),
        MemoryCommand::Entities(args) => admin::entities(&args),
        MemoryCommand::Merge(args) => admin::merge(&args),
        MemoryCommand::Unmerge(args) => admin::unmerge(&args),
        MemoryCommand::Maintain(args) => admin::maintain(&args),
        MemoryCommand::Export(args) => admin::export(&args),
        MemoryCommand::Import(args) => admin::import(&args),
        MemoryCommand::Embedder(args) => embedder::run(args),
        MemoryCommand::Consolidate(args) => consolidate::run(&args),
        MemoryCommand::Induce(args) => induce::run(&args),
    }
}
