//! `mindgate serve`: the local viewer server.
//!
//! * `/ingest` — instrumented apps (GraphMind protocol v1) attach here: handshake,
//!   validated events into the store, controls back out, run claims.
//! * `/ws/ui` — the live viewer feed (`docs/ui-feed.md`): a run's graph (snapshot, then
//!   deltas), or its events (replay then tail, race-free).
//! * `/api/…` — the JSON HTTP API (`docs/http-api.md`).
//! * `/` — the embedded browser viewer (`ui/dist`).
//! * `/mcp` — whatever [`Mount`] [`ServeConfig::mcp`] holds (the binary mounts the MCP
//!   tools there); without one, `/mcp` is not served.
//!
//! Every request passes a Host/Origin guard; mutating requests and controls need
//! the per-start token (with remote access on, every request does).
//!
//! Lifecycle: [`start`] binds the port, then locks the database
//! ([`db_lock`]: one server per database), then opens it; a stop waits at most
//! [`ServeConfig::shutdown_deadline`] for open connections, flushes the store,
//! and removes the token file only if it is still this server's.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mindgate_server::ServerError> {
//! use mindgate_server::{ServeConfig, start};
//! let home = std::env::temp_dir().join("mindgate-doc");
//! let server = start(ServeConfig::for_tests(&home)).await?;
//! println!("open {}", server.url);
//! server.stop().await?;
//! # Ok(()) }
//! ```

// Shared by every service: configuration, errors, request extractors, the panic guard,
// the embedded viewer's files, WebSocket close codes, what the binary plugs in.
mod assets;
mod config;
mod error;
mod extensions;
mod panic_guard;
mod request;
mod ws_close;

// What the services keep between requests; the state every handler shares holds one of
// each (and the hub, below). None of them names the state or a service.
mod graph_reads;
mod live_graphs;
mod otlp_traces;
mod state;

// Wiring: start-up, the router, the accept loop, the database lock, shutdown.
mod serve;
// The Host/Origin guard, the tokens, who a request acts for.
mod guard;
// Instrumented apps (`/ingest`) and the hub they attach to.
pub mod hub;
mod ingest;
// `/api/runs…`, pauses, breakpoints, mode, search, diff, replay, demo.
mod runs_api;
// `/api/memory/…`.
pub mod memory_api;
// `/task-graph/api/…`.
mod task_graph;
// `POST /v1/traces`.
mod otlp;
// `mindgate export --html`: the shareable page.
pub mod html_export;
// `/ws/ui`: the viewer's live feed and the live run graphs.
mod feed;
// Several instances on one PostgreSQL database.
mod cluster;

pub use assets::asset_paths;
pub use config::http::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_IP,
    HttpLimits,
};
pub use config::{
    DEFAULT_ABANDON_GRACE, DEFAULT_HELLO_TIMEOUT, DEFAULT_OTLP_PORT, DEFAULT_RESUME_WAIT,
    DEFAULT_SHUTDOWN_DEADLINE, PRUNE_EVERY, ServeConfig,
};
pub use error::{ApiError, ServerError};
pub use extensions::{DemoLauncher, Mount, MountContext};
pub use guard::principal;
pub use guard::{check_host_origin, is_allowed_authority, is_loopback_authority};
pub use ingest::{MAX_PENDING_HELLOS, NOTICE_TYPE, close_code};
pub use live_graphs::LiveGraphBounds;
pub use otlp::MAX_OTLP_BODY_BYTES;
pub use serve::db_lock;
pub use serve::{RunningServer, router, serve, start};
pub use state::AppState;

/// Starts a server for tests: loopback, any free port, short timeouts, the
/// database and token file under `home`.
pub async fn start_for_tests(home: &std::path::Path) -> Result<RunningServer, ServerError> {
    start(ServeConfig::for_tests(home)).await
}
