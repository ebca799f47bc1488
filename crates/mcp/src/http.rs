//! The tools over MCP streamable HTTP (mounted at `/mcp` by `mindgate serve`),
//! with bounded sessions: each expires after [`HttpLimits::idle_timeout`]
//! without a request (or [`HttpLimits::init_timeout`] without its
//! `initialize`), and at most [`HttpLimits::max_sessions`] live at once —
//! opening one more closes the least recently used (its client gets
//! `404 Not Found` on its next request and, as the MCP spec says, starts a
//! new session).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use mindgate_store::RunStore;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::server::{McpConfig, MindgateMcp};

/// Default [`HttpLimits::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 32;
/// Default [`HttpLimits::idle_timeout`] (5 minutes).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default [`HttpLimits::init_timeout`].
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Session bounds of the HTTP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Sessions open at once; one more closes the least recently used.
    pub max_sessions: usize,
    /// A session with no request for this long is closed.
    pub idle_timeout: Duration,
    /// A session whose `initialize` has not come within this is closed.
    pub init_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_sessions: DEFAULT_MAX_SESSIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            init_timeout: DEFAULT_INIT_TIMEOUT,
        }
    }
}

/// rmcp's in-memory session manager with a cap on open sessions (least
/// recently used evicted first) and the idle and init timeouts of
/// [`HttpLimits`].
#[derive(Debug)]
pub struct BoundedSessionManager {
    inner: LocalSessionManager,
    max_sessions: usize,
    /// Session → tick of its last use.
    last_use: Mutex<HashMap<SessionId, u64>>,
    clock: AtomicU64,
}

impl BoundedSessionManager {
    /// A manager bounded by `limits`.
    pub fn new(limits: HttpLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut session = SessionConfig::default();
        session.keep_alive = Some(limits.idle_timeout);
        session.init_timeout = Some(limits.init_timeout);
        inner.session_config = session;
        BoundedSessionManager {
            inner,
            max_sessions: limits.max_sessions.max(1),
            last_use: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
        }
    }

    /// Sessions open now.
    pub async fn open_sessions(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    fn uses(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, u64>> {
        self.last_use.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(t) = self.uses().get_mut(id) {
            *t = tick;
        }
    }

    /// The least recently used session, when the cap is reached.
    fn victim(&self) -> Option<SessionId> {
        let uses = self.uses();
        if uses.len() < self.max_sessions {
            return None;
        }
        uses.iter()
            .min_by_key(|(_, t)| **t)
            .map(|(id, _)| id.clone())
    }
}

impl SessionManager for BoundedSessionManager {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        while let Some(old) = self.victim() {
            tracing::info!(session = %old, max = self.max_sessions, "MCP session cap reached; closing the least recently used session");
            self.uses().remove(&old);
            if let Err(e) = self.inner.close_session(&old).await {
                tracing::debug!(session = %old, error = %e, "closing an evicted MCP session");
            }
        }
        let (id, transport) = self.inner.create_session().await?;
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        self.uses().insert(id.clone(), tick);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.uses().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No session store is configured, so rmcp does not call this; keep the cap anyway.
        if self.victim().is_some() {
            return Ok(RestoreOutcome::NotSupported);
        }
        self.inner.restore_session(id).await
    }
}

/// The MCP HTTP service type [`http_service`] returns.
pub type McpHttpService = StreamableHttpService<MindgateMcp, BoundedSessionManager>;

/// The same tools over MCP streamable HTTP, as a tower service. Mount it in
/// axum with `Router::new().nest_service("/mcp", mindgate_mcp::http_service(config, Some(store)))`.
///
/// Pass the server's own [`RunStore`] so MCP and the HTTP API read through one
/// store; with `None` the database [`McpConfig::database`] is opened
/// read-only on first use. rmcp's own `Host` check accepts loopback names only;
/// the server's Host/Origin guard and token layer should wrap it as for every
/// other route. Set [`McpConfig::control_endpoint`] (the server's own port and
/// token) and [`McpConfig::allow_control`] only behind the token check.
/// Sessions are bounded by the default [`HttpLimits`].
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
    http_service_with_limits(config, store, http, HttpLimits::default())
}

/// [`http_service_with`] with other session bounds.
pub fn http_service_with_limits(
    config: McpConfig,
    store: Option<Arc<RunStore>>,
    http: StreamableHttpServerConfig,
    limits: HttpLimits,
) -> McpHttpService {
    let server = match store {
        Some(s) => MindgateMcp::with_store(config, s),
        None => MindgateMcp::new(config),
    };
    // Sessions share one server state (one store, one task catalog); each one with
    // control counts as somebody watching the server's gates while it lives.
    let factory = move || Ok(server.for_session());
    StreamableHttpService::new(factory, Arc::new(BoundedSessionManager::new(limits)), http)
}
