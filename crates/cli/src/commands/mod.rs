//! One function per subcommand.

mod annotate;
mod check;
mod check_frames;
mod dataset;
mod demo;
mod diff;
mod export;
mod import;
mod import_otlp;
mod mcp;
mod memory;
mod migrate;
mod run_ids;
mod runs;
mod search;
mod serve;
mod table;
mod task_search;
mod taskgraph;
mod tasks;
mod usage;
mod write_route;

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::args::{Cli, Command, ReferenceDoc};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Schema => {
            write_stdout(&mindgate_protocol::json_schema_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::CheckFrames { input } => check_frames::run(&input),
        Command::Mcp(args) => mcp::run(args),
        Command::Serve(args) => serve::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Runs(args) => runs::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Annotate(args) => annotate::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Dataset(args) => dataset::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Tasks(args) => match &args.search {
            Some(query) => task_search::run(query, &args),
            None => tasks::run(&args),
        },
        Command::Taskgraph(args) => taskgraph::run(&args),
        Command::Usage(args) => usage::run(&args),
        Command::Migrate(args) => migrate::run(&args),
        Command::Memory(args) => memory::run(args),
        Command::Reference { doc } => {
            let text = match doc {
                ReferenceDoc::Cli => crate::reference::cli_markdown(Cli::command()),
                ReferenceDoc::Flags => crate::reference::flags_markdown(Cli::command()),
            };
            write_stdout(&text)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes a command's output to stdout, returning the error instead of panicking
/// when the reader went away (`mindgate taskgraph … | head`); `main` ends such a
/// run quietly.
pub(crate) fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
