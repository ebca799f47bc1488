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
//! are bounded ([`bound`]); unknown ids and bad arguments come back as tool
//! errors (`isError: true`), never as protocol failures.
//!
//! Transports: [`serve_stdio`] (what `mindgate mcp` runs) and [`http_service`]
//! (a tower service to mount at `/mcp` in `mindgate serve`).
//!
//! ```
//! use mindgate_mcp::{McpConfig, MindgateMcp};
//!
//! let home = tempfile::tempdir().unwrap();
//! let server = MindgateMcp::new(McpConfig::new(home.path()));
//! assert!(server.tool_names().contains(&"get_run".to_owned()));
//! assert!(!server.tool_names().contains(&"resume".to_owned())); // read-only by default
//! ```

pub mod bound;
pub mod control;
mod error;
pub mod output;
pub mod params;
pub mod runs;
mod server;
pub mod tasks;
pub mod time;

use std::sync::Arc;

use mindgate_store::RunStore;
use rmcp::ServiceExt;
pub use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

pub use control::ServerEndpoint;
pub use error::{McpError, ToolError};
pub use output::{Links, ToolOutput};
pub use server::{
    CONTROL_TOOLS, DB_FILE_NAME, DEFAULT_PORT, INSTRUCTIONS, MINDGATE_HOME, McpConfig, MindgateMcp,
};

/// Serves the tools over standard input/output until the client disconnects.
/// Logs must go to standard error (standard output carries the protocol).
pub async fn serve_stdio(config: McpConfig) -> Result<(), McpError> {
    let server = MindgateMcp::new(config);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpError::Transport(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Transport(e.to_string()))?;
    Ok(())
}

/// The MCP HTTP service type [`http_service`] returns.
pub type McpHttpService = StreamableHttpService<MindgateMcp, LocalSessionManager>;

/// The same tools over MCP streamable HTTP, as a tower service. Mount it in
/// axum with `Router::new().nest_service("/mcp", mindgate_mcp::http_service(config, Some(store)))`.
///
/// Pass the server's own [`RunStore`] so MCP and the HTTP API read through one
/// store; with `None` the database at [`McpConfig::db_path`] is opened
/// read-only on first use. rmcp's own `Host` check accepts loopback names only;
/// the server's Host/Origin guard and token layer should wrap it as for every
/// other route. Set [`McpConfig::control_endpoint`] (the server's own port and
/// token) and [`McpConfig::allow_control`] only behind the token check.
pub fn http_service(config: McpConfig, store: Option<Arc<RunStore>>) -> McpHttpService {
    http_service_with(config, store, StreamableHttpServerConfig::default())
}

/// [`http_service`] with rmcp's transport settings spelled out (e.g. its
/// `allowed_hosts`, when the server accepts non-loopback `Host` headers).
pub fn http_service_with(
    config: McpConfig,
    store: Option<Arc<RunStore>>,
    http: StreamableHttpServerConfig,
) -> McpHttpService {
    let server = match store {
        Some(s) => MindgateMcp::with_store(config, s),
        None => MindgateMcp::new(config),
    };
    // Sessions share one server state (one store, one task catalog).
    let factory = move || Ok(server.clone());
    StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), http)
}
