//! The `mindgate` binary: parses arguments and dispatches to one function per subcommand.

mod args;
mod commands;
mod db_arg;
mod reference;

use std::process::ExitCode;

use clap::Parser;

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
