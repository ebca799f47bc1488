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

mod api;
mod assets;
mod config;
pub mod db_lock;
mod demo;
mod error;
mod feed_relay;
mod graph_reads;
mod guard;
pub mod html_export;
pub mod hub;
mod ingest;
mod listener;
mod live_graph;
pub mod memory_api;
mod mount;
mod otlp;
mod otlp_traces;
mod panic_guard;
pub mod principal;
mod replay_api;
mod request;
mod run_diff;
mod serve;
mod state;
mod task_graph;
mod ui_feed;
mod unwatched;
mod viewer_settings;
mod ws_close;

pub use assets::asset_paths;
pub use config::{
    DEFAULT_ABANDON_GRACE, DEFAULT_HELLO_TIMEOUT, DEFAULT_OTLP_PORT, DEFAULT_RESUME_WAIT,
    DEFAULT_SHUTDOWN_DEADLINE, PRUNE_EVERY, ServeConfig,
};
pub use demo::DemoLauncher;
pub use error::{ApiError, ServerError};
pub use guard::{check_host_origin, is_allowed_authority, is_loopback_authority};
pub use ingest::{MAX_PENDING_HELLOS, NOTICE_TYPE, close_code};
pub use listener::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_IP,
    HttpLimits,
};
pub use live_graph::LiveGraphBounds;
pub use mindgate_store::{Database, MigrateReport, PostgresUrl, Retention, migrate};
pub use mount::Mount;
pub use otlp::MAX_OTLP_BODY_BYTES;
pub use serve::{RunningServer, router, serve, start};
pub use state::AppState;

/// Starts a server for tests: loopback, any free port, short timeouts, the
/// database and token file under `home`.
pub async fn start_for_tests(home: &std::path::Path) -> Result<RunningServer, ServerError> {
    start(ServeConfig::for_tests(home)).await
}
