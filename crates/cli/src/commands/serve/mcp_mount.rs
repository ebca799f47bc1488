//! The MCP tools at `/mcp` of `mindgate serve`: the binary builds the MCP
//! streamable-HTTP service over the started server's store and memory, and
//! [`HubControl`] implements the control tools' [`PauseControl`] over its hub
//! in process (no loopback request, no token). The server only mounts the
//! service ([`Mount`]) behind its guard, so it does not depend on the MCP crate.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mindgate_mcp::params::ResumeArgs;
use mindgate_mcp::{PauseControl, ToolError};
use mindgate_server::hub::{Hub, Principal, ResumeRequest, resume_answer};
use mindgate_server::{Mount, MountContext};
use serde_json::Value;

/// The future type of [`PauseControl`]'s methods.
type ControlFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ToolError>> + Send + 'a>>;

/// The mount of the MCP tools over streamable HTTP, reading through the
/// server's own store. The server's guard wraps it like every route
/// (Host/Origin, and the token on every `/mcp` request), so rmcp's own loopback
/// `Host` check is left to the guard; its streams end when the server stops.
pub fn mount() -> Mount {
    Mount::service(|parts: &MountContext<'_>| {
        let mut mcp = mindgate_mcp::McpConfig::new(parts.home);
        mcp.database = parts.database.clone();
        mcp.discovery = parts.task_graph.clone();
        mcp.port = Some(parts.port);
        mcp.allow_control = true;
        mcp.memory = Some(parts.memory.clone());
        mcp.memory_user = parts.memory_user.map(str::to_owned);
        mcp.control = Some(Arc::new(HubControl::new(
            parts.hub.clone(),
            parts.port,
            parts.resume_wait,
        )));
        let http = mindgate_mcp::StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_cancellation_token(parts.shutdown.child_token());
        mindgate_mcp::http_service_with(mcp, Some(parts.store.clone()), http)
    })
}

/// [`PauseControl`] over the hub: the same calls (and answers) as
/// `GET /api/pauses` and `POST /api/runs/:runId/pauses/:pauseId/resume`.
#[derive(Debug, Clone)]
struct HubControl {
    hub: Arc<Hub>,
    port: u16,
    resume_wait: Duration,
}

impl HubControl {
    /// Control over `hub`, linking to the viewer on `port`; a resume waits at
    /// most `resume_wait` for the app's answer.
    fn new(hub: Arc<Hub>, port: u16, resume_wait: Duration) -> Self {
        HubControl {
            hub,
            port,
            resume_wait,
        }
    }
}

impl PauseControl for HubControl {
    fn port(&self) -> Result<u16, ToolError> {
        Ok(self.port)
    }

    fn watch(&self) -> Option<mindgate_mcp::Watching> {
        Some(Box::new(self.hub.watch_control()))
    }

    fn list_pauses<'a>(&'a self, run_id: Option<&'a str>) -> ControlFuture<'a, Vec<Value>> {
        let pauses = self
            .hub
            .pauses(run_id)
            .iter()
            .filter_map(|p| serde_json::to_value(p).ok())
            .collect();
        Box::pin(std::future::ready(Ok(pauses)))
    }

    fn resume<'a>(&'a self, release: &'a ResumeArgs) -> ControlFuture<'a, Value> {
        Box::pin(async move {
            let request = ResumeRequest {
                action: release.action,
                output: release.output.clone(),
                input: None,
                request_id: None,
                principal: Principal::Mcp,
            };
            let reply = self
                .hub
                .resume_and_wait(
                    &release.run_id,
                    &release.pause_id,
                    request,
                    self.resume_wait,
                )
                .await;
            Ok(resume_answer(reply))
        })
    }
}
