//! One function per subcommand.

mod check_frames;
mod demo;
mod mcp;
mod memory;
mod serve;
mod taskgraph;
mod tasks;

use std::process::ExitCode;

use crate::args::{Cli, Command};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Schema => {
            print!("{}", mindgate_protocol::json_schema_string());
            Ok(ExitCode::SUCCESS)
        }
        Command::CheckFrames { input } => check_frames::run(&input),
        Command::Mcp(args) => mcp::run(args),
        Command::Serve(args) => serve::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Tasks(args) => tasks::run(&args),
        Command::Taskgraph(args) => taskgraph::run(&args),
        Command::Memory(args) => memory::run(args),
    }
}
