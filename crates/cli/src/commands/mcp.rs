//! `mindgate mcp`: the MCP server over stdio.

use std::process::ExitCode;

use anyhow::Context as _;
use mindgate_home::{Home, env};
use mindgate_mcp::McpConfig;

use crate::args::McpArgs;
use crate::db_arg::RunDb;

/// Runs the MCP server on standard input/output until the client disconnects.
/// Logs go to standard error only (standard output carries the protocol).
pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env(env::MINDGATE_LOG)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    let home = args.home.map(Home::at).unwrap_or_else(Home::from_env);
    let mut config = McpConfig::new(home.root());
    config.database = RunDb::or_default(args.db.as_ref(), || home.run_db());
    config.port = args.port;
    config.allow_control = args.allow_control;
    config.memory_user = args.memory_user;
    if let Some(db) = &args.memory_db {
        config.memory = Some(std::sync::Arc::new(
            mindgate_memory::agent::LazyMemory::new(home.root(), db.clone()),
        ));
    }
    config.allow_validate = args.allow_validate;
    config.discovery.extra_paths.extend(args.sessions);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(mindgate_mcp::serve_stdio(config))
        .context("MCP server failed")?;
    Ok(ExitCode::SUCCESS)
}
