//! [`Mount`]: a service another crate hands the server to serve at a path, so the
//! server can host a view it does not depend on (the binary mounts the MCP tools
//! at `/mcp` this way).

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use mindgate_memory::agent::LazyMemory;
use mindgate_store::{Database, RunStore};
use mindgate_taskgraph::DiscoveryConfig;
use tokio_util::sync::CancellationToken;

use crate::hub::Hub;

type Build = dyn Fn(&MountContext<'_>) -> Router + Send + Sync;

/// What a mounted service is built from: the parts of the started server it may use.
#[derive(Debug, Clone, Copy)]
pub struct MountContext<'a> {
    /// The Mindgate home (`ServeConfig::home`).
    pub home: &'a Path,
    /// The run database the server writes.
    pub database: &'a Database,
    /// Where the coding-agent sessions are found.
    pub task_graph: &'a DiscoveryConfig,
    /// The memory user of requests that name none.
    pub memory_user: Option<&'a str>,
    /// How long a resume waits for the app's answer.
    pub resume_wait: Duration,
    /// The port the server listens on.
    pub port: u16,
    /// Apps, claims, pauses, breakpoints.
    pub hub: &'a Arc<Hub>,
    /// The run store the server reads.
    pub store: &'a Arc<RunStore>,
    /// The agent-memory store, opened on first use.
    pub memory: &'a Arc<LazyMemory>,
    /// Cancelled when the server stops.
    pub shutdown: &'a CancellationToken,
}

/// A service built from the server's state once it is started, and served
/// behind the same Host/Origin guard, token rules and connection limits as
/// every route.
#[derive(Clone)]
pub struct Mount {
    build: Arc<Build>,
}

impl Mount {
    /// A mount of the service `build` makes from the started server's parts
    /// ([`MountContext`]: hub, store, memory, port, shutdown token, settings). The
    /// service sees every request under the mount path, the path prefix stripped.
    pub fn service<S>(build: impl Fn(&MountContext<'_>) -> S + Send + Sync + 'static) -> Mount
    where
        S: tower::Service<Request, Error = Infallible> + Clone + Send + Sync + 'static,
        S::Response: IntoResponse,
        S::Future: Send + 'static,
    {
        Mount {
            build: Arc::new(move |parts| Router::new().fallback_service(build(parts))),
        }
    }

    /// The router of this mount over the server's `parts`.
    pub(crate) fn router(&self, parts: &MountContext<'_>) -> Router {
        (self.build)(parts)
    }
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount").finish_non_exhaustive()
    }
}
