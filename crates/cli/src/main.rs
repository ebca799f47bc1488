//! The `mindgate` binary: parses arguments and dispatches to one function per subcommand.

mod args;
mod commands;
mod db_arg;
mod log_colour;
mod reference;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of the system allocator: the task-graph commands allocate and free
/// hundreds of thousands of small objects (measured: `scripts/bench-taskgraph.sh`). Built
/// without transparent huge pages (the `no_thp` feature): where THP is on (`madvise`), its
/// arenas were backed by 2 MB pages, ~20 MB more peak RSS on the 100,000-event reference session.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mindgate: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// True when the error is stdout's reader having gone away (`… | head`): not a failure
/// of the command, so it ends quietly like other Unix tools.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .map(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(|json| json.io_error_kind())
                    .map(|kind| kind == std::io::ErrorKind::BrokenPipe)
            })
            .unwrap_or(false)
    })
}
