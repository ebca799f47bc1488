//! The control tools (`list_pauses`, `resume`), offered only with
//! `--allow-control`. They never touch the database: they go through a
//! [`PauseControl`], so the server stays the only referee of held gates.
//! `mindgate serve` implements it in process over its hub (the `/mcp` mount);
//! `mindgate mcp` uses [`HttpControl`]: the running server's HTTP API with the
//! **agent** token from its agent token file (`<home>/run/agent-<port>.json`,
//! `{port, pid, token, url}`), never the person's control token: the agent token
//! lists and resumes held gates but cannot validate memories.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mindgate_home::{Home, token_file};
use serde_json::{Value, json};

use crate::error::ToolError;
use mindgate_memory::agent::encode_component;

use crate::output::{Links, ToolOutput};
use crate::output_limits::{cut_str, one_line};
use crate::params::{ListPausesArgs, ResumeArgs};
use crate::time::iso;
use mindgate_protocol::ResumeAction;

/// How long one control request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Where the control tools send their requests: the referee of held gates.
///
/// Answers use the HTTP API's shapes, so every implementation reads the same:
/// [`PauseControl::list_pauses`] gives the `Pause` objects of `GET /api/pauses`,
/// [`PauseControl::resume`] the `{result, message?}` of
/// `POST /api/runs/:runId/pauses/:pauseId/resume`.
pub trait PauseControl: std::fmt::Debug + Send + Sync {
    /// The viewer port the deep links of control answers point to.
    fn port(&self) -> Result<u16, ToolError>;
    /// The gates held right now (of `run_id` only, when given).
    fn list_pauses<'a>(
        &'a self,
        run_id: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Value>, ToolError>>;
    /// Releases the held gate `release` names with its action and, for `inject`, its
    /// output (already checked by the `resume` tool).
    fn resume<'a>(&'a self, release: &'a ResumeArgs) -> BoxFuture<'a, Result<Value, ToolError>>;
    /// Counts one MCP client with control as somebody watching (so gates held only by
    /// pause on error keep holding) while the returned value lives; `None` when this
    /// control cannot tell the server.
    fn watch(&self) -> Option<Watching> {
        None
    }
}

pub use crate::watch::Watching;

/// [`PauseControl`] over a running server's HTTP API: a fixed endpoint, or the
/// one found from the token files under `<home>/run/` at each request.
#[derive(Debug, Clone)]
pub struct HttpControl {
    home: PathBuf,
    port: Option<u16>,
    fixed: Option<ServerEndpoint>,
}

impl HttpControl {
    /// Finds the server from the token files in `<home>/run/` (the one on
    /// `port` when given).
    pub fn discover(home: &Path, port: Option<u16>) -> Self {
        HttpControl {
            home: home.to_path_buf(),
            port,
            fixed: None,
        }
    }

    /// Always talks to `endpoint`.
    pub fn fixed(endpoint: ServerEndpoint) -> Self {
        HttpControl {
            home: PathBuf::new(),
            port: Some(endpoint.port),
            fixed: Some(endpoint),
        }
    }

    /// The server this control talks to, found now.
    pub(crate) fn endpoint_now(&self) -> Result<ServerEndpoint, ToolError> {
        self.endpoint()
    }

    fn endpoint(&self) -> Result<ServerEndpoint, ToolError> {
        match &self.fixed {
            Some(ep) => Ok(ep.clone()),
            None => find_server(&self.home, self.port),
        }
    }
}

impl PauseControl for HttpControl {
    fn port(&self) -> Result<u16, ToolError> {
        self.endpoint().map(|e| e.port)
    }

    fn watch(&self) -> Option<Watching> {
        let control = self.clone();
        crate::watch::start(move || {
            control
                .endpoint_now()
                .ok()
                .map(|endpoint| (endpoint.port, endpoint.token))
        })
    }

    fn list_pauses<'a>(
        &'a self,
        run_id: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Value>, ToolError>> {
        Box::pin(async move {
            let ep = self.endpoint()?;
            let mut url = format!("{}/api/pauses", ep.base());
            if let Some(run) = run_id {
                let _ = write!(url, "?runId={}", encode_component(run));
            }
            let body = send(&ep, client()?.get(url)).await?;
            Ok(match body {
                Value::Array(a) => a,
                other => other
                    .get("pauses")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            })
        })
    }

    fn resume<'a>(&'a self, release: &'a ResumeArgs) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let ep = self.endpoint()?;
            let mut body = json!({ "action": release.action.as_str() });
            if let (Some(out), Some(obj)) = (&release.output, body.as_object_mut()) {
                obj.insert("output".to_owned(), out.clone());
            }
            let url = format!(
                "{}/api/runs/{}/pauses/{}/resume",
                ep.base(),
                encode_component(&release.run_id),
                encode_component(&release.pause_id)
            );
            send(&ep, client()?.post(url).json(&body)).await
        })
    }
}

/// A server to send control requests to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEndpoint {
    /// Loopback port.
    pub port: u16,
    /// The server's agent token (sent as `Authorization: Bearer …`).
    pub token: String,
}

impl ServerEndpoint {
    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Finds the running server's port and agent token from the agent token files under
/// `<home>/run/` (see [`mindgate_home::token_file::find_live_agent`]): the file for `port`
/// when given, else the most recently written one whose process is alive.
pub fn find_server(home: &Path, port: Option<u16>) -> Result<ServerEndpoint, ToolError> {
    let file = token_file::find_live_agent(&Home::at(home), port)
        .map_err(|e| ToolError::NoServer(e.to_string()))?;
    Ok(ServerEndpoint {
        port: file.port,
        token: file.token,
    })
}

fn client() -> Result<reqwest::Client, ToolError> {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| ToolError::NoServer(format!("cannot build an HTTP client: {e}")))
}

async fn send(ep: &ServerEndpoint, req: reqwest::RequestBuilder) -> Result<Value, ToolError> {
    let resp = req
        .bearer_auth(&ep.token)
        .send()
        .await
        .map_err(|e| ToolError::NoServer(format!("cannot reach {}: {e}", ep.base())))?;
    let status = resp.status();
    let body = resp.text().await.unwrap_or_default();
    let value: Value = serde_json::from_str(&body).unwrap_or(Value::String(cut_str(&body, 500)));
    if status.is_success() {
        return Ok(value);
    }
    let message = value
        .get("message")
        .or_else(|| value.get("error"))
        .map(|m| one_line(m, 500))
        .unwrap_or_else(|| one_line(&value, 500));
    Err(ToolError::Server {
        status: status.as_u16(),
        message,
    })
}

/// `list_pauses`: the gates held right now.
pub async fn list_pauses(
    control: &dyn PauseControl,
    args: &ListPausesArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    let list = control.list_pauses(args.run_id.as_deref()).await?;
    let mut pauses = Vec::new();
    let mut text = if list.is_empty() {
        "No gate is held right now.".to_owned()
    } else {
        format!("{} held gate(s):\n", list.len())
    };
    for mut p in list.into_iter().take(200) {
        let run = p
            .get("runId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let node = p.get("nodeId").and_then(Value::as_str).map(str::to_owned);
        if args.run_id.as_ref().is_some_and(|r| *r != run) {
            continue;
        }
        let link = links.run_or_node(&run, node.as_deref());
        let _ = writeln!(
            text,
            "- pause {} run {} node {} at `{}`{}{}\n  {}",
            p.get("pauseId").and_then(Value::as_str).unwrap_or_default(),
            run,
            node.as_deref().unwrap_or("-"),
            p.get("point").and_then(Value::as_str).unwrap_or_default(),
            p.get("reason")
                .and_then(Value::as_str)
                .map(|r| format!(" ({r})"))
                .unwrap_or_default(),
            p.get("since")
                .and_then(Value::as_i64)
                .map(|t| format!(", since {}", iso(t)))
                .unwrap_or_default(),
            link
        );
        if let Some(obj) = p.as_object_mut() {
            obj.insert("link".to_owned(), Value::String(link));
        }
        pauses.push(p);
    }
    if !pauses.is_empty() {
        text.push_str(
            "Release one with resume {\"runId\", \"pauseId\", \"action\": continue|retry|inject|abort}.",
        );
    }
    Ok(ToolOutput::new(text, json!({ "pauses": pauses })))
}

/// `resume`: releases a held gate (over HTTP: `POST /api/runs/:runId/pauses/:pauseId/resume`).
/// Only the answer `resumed` is a success; `taken`, `no-such-pause`, `refused`
/// and `timeout` come back as tool errors carrying the server's answer.
pub async fn resume(
    control: &dyn PauseControl,
    args: &ResumeArgs,
) -> Result<ToolOutput, ToolError> {
    if args.run_id.trim().is_empty() {
        return Err(ToolError::bad("runId", "must not be empty"));
    }
    if args.pause_id.trim().is_empty() {
        return Err(ToolError::bad("pauseId", "must not be empty"));
    }
    match (args.action, &args.output) {
        (ResumeAction::Inject, None) => {
            return Err(ToolError::bad("output", "is required with action `inject`"));
        }
        (a, Some(_)) if a != ResumeAction::Inject => {
            return Err(ToolError::bad(
                "output",
                "is only accepted with action `inject`",
            ));
        }
        _ => {}
    }
    let answer = control.resume(args).await?;
    let result = answer
        .get("result")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if result != "resumed" {
        let message = answer
            .get("message")
            .map(|m| one_line(m, 300))
            .unwrap_or_default();
        return Err(ToolError::NotResumed {
            run_id: args.run_id.clone(),
            pause_id: args.pause_id.clone(),
            result,
            message,
        });
    }
    Ok(ToolOutput::new(
        format!(
            "Resumed pause {} of run {} with `{}`.",
            args.pause_id,
            args.run_id,
            args.action.as_str()
        ),
        json!({
            "runId": args.run_id,
            "pauseId": args.pause_id,
            "action": args.action.as_str(),
            "result": answer,
        }),
    ))
}
