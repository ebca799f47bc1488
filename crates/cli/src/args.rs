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
}
