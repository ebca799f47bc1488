//! Command-line argument types (clap). No logic lives here.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Mindgate: a local-first live debugger, task-graph explorer and memory workbench for AI agents.
#[derive(Debug, Parser)]
#[command(name = "mindgate", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the JSON Schema (draft 2020-12) of the GraphMind wire protocol v1.
    Schema,
    /// Check captured frames (one JSON text frame per line) against protocol v1.
    ///
    /// Prints one verdict per line (`ok`, `unknown-type`, `version-mismatch: <n>`,
    /// `invalid: <reason>`) and a summary; exits 1 if any frame is invalid or
    /// version-mismatched.
    CheckFrames {
        /// File of frames, or `-` for standard input.
        input: PathBuf,
    },
    /// Serve the Model Context Protocol over stdio, so a coding agent can query runs,
    /// failures and task graphs (reads the database directly; `mindgate serve` may run too).
    Mcp(McpArgs),
    /// Run the viewer server: app ingest, HTTP API, live feed and the browser viewer.
    ///
    /// Prints the viewer URL (with its control token) and serves until Ctrl-C or
    /// SIGTERM, then flushes every received event to the database.
    Serve(ServeArgs),
    /// Run a scripted demo agent instrumented with the Rust SDK: streamed model steps,
    /// parallel tool calls, a tool error that pauses on the error gate, a retried step.
    ///
    /// Start `mindgate serve` first to watch it live (a held gate waits for the viewer);
    /// exits 0 once its runs have finished.
    Demo(DemoArgs),
}

/// Options of `mindgate demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Viewer ingest URL [default: $MINDGATE_URL, $GRAPHMIND_URL, ws://127.0.0.1:4747/ingest].
    #[arg(long)]
    pub url: Option<String>,
    /// How many runs to start (they run concurrently, a moment apart).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub runs: u16,
}

/// Options of `mindgate serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TCP port (apps dial ws://127.0.0.1:<port>/ingest).
    #[arg(long, default_value_t = 4747)]
    pub port: u16,
    /// Address to bind; anything non-loopback needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// SQLite database file [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Allow a non-loopback --host (exposes your runs to the network).
    #[arg(long)]
    pub allow_remote: bool,
    /// Do not open the viewer in a browser.
    #[arg(long)]
    pub no_open: bool,
}

/// Arguments of `mindgate mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// SQLite run database (default `$MINDGATE_HOME/mindgate.db`, else `~/.mindgate/mindgate.db`).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Mindgate home holding the running servers' token files (default `$MINDGATE_HOME`, else `~/.mindgate`).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Viewer port for deep links and control (default: the running server's, else 4747).
    #[arg(long)]
    pub port: Option<u16>,
    /// Also offer `list_pauses` and `resume`, sent to the running `mindgate serve` with its token.
    #[arg(long)]
    pub allow_control: bool,
    /// Extra coding-agent session files or folders for `list_tasks` / `get_task_graph`.
    #[arg(long = "sessions", value_name = "PATH")]
    pub sessions: Vec<PathBuf>,
}
