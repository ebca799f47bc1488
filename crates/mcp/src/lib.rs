//! Mindgate's Model Context Protocol server: lets a coding agent list runs,
//! open the one that failed, read the failing node's input, output and error,
//! and read a coding session's task graph — straight from the local database,
//! whether or not `mindgate serve` is running.
//!
//! * Run tools ([`runs`]): `list_runs`, `get_run`, `get_node`, `find_errors`,
//!   `search_events` — all through [`mindgate_store::RunStore`], the read API
//!   and projection the HTTP API serves, so answers always agree with the viewer.
//! * Task tools ([`tasks`]): `list_tasks`, `get_task_graph` — through
//!   [`mindgate_taskgraph::Catalog`].
//! * Control tools ([`control`]): `list_pauses`, `resume` — listed only when
//!   [`McpConfig::allow_control`] is set, and sent to a running server's HTTP
//!   API with its token (never written to the database).
//!
//! Every result carries readable text *and* structured content, with viewer
//! deep links (`http://127.0.0.1:<port>/#/run/<runId>/node/<nodeId>`); sizes
//! are bounded ([`output_limits`]); unknown ids and bad arguments come back as tool
//! errors (`isError: true`), never as protocol failures.
//!
//! Transports: [`serve_stdio`] (what `mindgate mcp` runs; bad lines get
//! JSON-RPC errors, see [`stdio`]) and [`http_service`] (a tower service to
//! mount at `/mcp` in `mindgate serve`; sessions expire and are capped, see
//! [`http`]).
//!
//! ```
//! use mindgate_mcp::{McpConfig, MindgateMcp};
//!
//! let home = tempfile::tempdir().unwrap();
//! let server = MindgateMcp::new(McpConfig::new(home.path()));
//! assert!(server.tool_names().contains(&"get_run".to_owned()));
//! assert!(!server.tool_names().contains(&"resume".to_owned())); // read-only by default
//! ```

pub mod annotations;
pub mod control;
mod conversation;
pub mod datasets;
pub mod diff;
mod error;
pub mod http;
pub mod memory;
pub mod output;
pub mod output_limits;
pub mod params;
pub mod runs;
mod server;
pub mod stdio;
pub mod tasks;
pub mod threads;
pub mod time;
pub mod views;
mod watch;

use rmcp::ServiceExt;
pub use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

pub use control::{HttpControl, PauseControl, ServerEndpoint, Watching};
pub use error::{McpError, ReadFailure, ToolError};
pub use http::{
    HttpLimits, McpHttpService, http_service, http_service_with, http_service_with_limits,
};
pub use output::{Links, ToolOutput};
pub use server::{CONTROL_TOOLS, INSTRUCTIONS, McpConfig, MindgateMcp, VALIDATE_TOOLS};

/// Serves the tools over standard input/output until the client disconnects
/// (through [`stdio::LineTransport`], which answers unparsable lines with a
/// JSON-RPC parse error). Logs must go to standard error (standard output
/// carries the protocol).
pub async fn serve_stdio(config: McpConfig) -> Result<(), McpError> {
    // One session for the process's life: with control it watches the server's gates.
    let server = MindgateMcp::new(config).for_session();
    let running = server
        .serve(stdio::stdio())
        .await
        .map_err(|e| McpError::Transport(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Transport(e.to_string()))?;
    Ok(())
}
