//! The `mindgate` binary: parses arguments and dispatches to one function per subcommand.

mod args;
mod commands;
mod db_arg;
mod reference;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of the system allocator: the task-graph commands allocate and free
/// hundreds of thousands of small objects (measured: `scripts/bench-taskgraph.sh`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mindgate: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
