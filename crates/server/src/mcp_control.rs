//! The MCP control tools' referee inside `mindgate serve`: [`HubControl`]
//! implements [`PauseControl`] over the hub in process, so the `/mcp` mount
//! never calls the server's own HTTP API (no loopback request, no token).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mindgate_mcp::{PauseControl, ToolError};
use mindgate_protocol::ResumeAction;
use serde_json::{Value, json};

use crate::hub::{Hub, ResumeRequest};

/// [`PauseControl`] over the hub: the same calls (and answers) as
/// `GET /api/pauses` and `POST /api/runs/:runId/pauses/:pauseId/resume`.
#[derive(Debug, Clone)]
pub struct HubControl {
    hub: Arc<Hub>,
    port: u16,
    resume_wait: Duration,
}

impl HubControl {
    /// Control over `hub`, linking to the viewer on `port`; a resume waits at
    /// most `resume_wait` for the app's answer.
    pub fn new(hub: Arc<Hub>, port: u16, resume_wait: Duration) -> Self {
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

    fn list_pauses<'a>(
        &'a self,
        run_id: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Value>, ToolError>> {
        let pauses = self
            .hub
            .pauses(run_id)
            .iter()
            .filter_map(|p| serde_json::to_value(p).ok())
            .collect();
        Box::pin(std::future::ready(Ok(pauses)))
    }

    fn resume<'a>(
        &'a self,
        run_id: &'a str,
        pause_id: &'a str,
        action: &'a str,
        output: Option<Value>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let action = ResumeAction::from_wire(action).ok_or_else(|| ToolError::BadArgument {
                field: "action",
                message: "must be continue, retry, inject or abort".to_owned(),
            })?;
            let request = ResumeRequest {
                action,
                output,
                input: None,
                request_id: None,
            };
            let (result, message) = self
                .hub
                .resume_and_wait(run_id, pause_id, request, self.resume_wait)
                .await;
            let mut answer = json!({ "result": result });
            if let Some(m) = message {
                answer["message"] = json!(m);
            }
            Ok(answer)
        })
    }
}
