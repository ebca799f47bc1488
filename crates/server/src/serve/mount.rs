//! [`Mount`]: a service another crate hands the server to serve at a path, so the
//! server can host a view it does not depend on (the binary mounts the MCP tools
//! at `/mcp` this way).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;

use crate::state::AppState;

type Build = dyn Fn(&AppState) -> Router + Send + Sync;

/// A service built from the server's state once it is started, and served
/// behind the same Host/Origin guard, token rules and connection limits as
/// every route.
#[derive(Clone)]
pub struct Mount {
    build: Arc<Build>,
}

impl Mount {
    /// A mount of the service `build` makes from the started server's state
    /// (hub, store, memory, port, shutdown token, settings). The service sees
    /// every request under the mount path, the path prefix stripped.
    pub fn service<S>(build: impl Fn(&AppState) -> S + Send + Sync + 'static) -> Mount
    where
        S: tower::Service<Request, Error = Infallible> + Clone + Send + Sync + 'static,
        S::Response: IntoResponse,
        S::Future: Send + 'static,
    {
        Mount {
            build: Arc::new(move |state| Router::new().fallback_service(build(state))),
        }
    }

    /// The router of this mount over `state`.
    pub(crate) fn router(&self, state: &AppState) -> Router {
        (self.build)(state)
    }
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount").finish_non_exhaustive()
    }
}
