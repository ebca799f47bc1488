//! The hub's public value types: what viewers see and what callers get back.

use mindgate_protocol::{BreakpointMatcher, ResumeAction, RunMode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ConnId, MAX_PAUSES, MAX_PAUSES_PER_CONNECTION, MAX_UNFINISHED_RUNS_PER_CONNECTION};

/// A held gate, as `GET /api/pauses` and the UI feed show it (and as an instance of a
/// cluster announces it to the others).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseView {
    /// Run.
    pub run_id: String,
    /// Pause id.
    pub pause_id: String,
    /// Held node.
    pub node_id: String,
    /// Gate point.
    pub point: String,
    /// Why (`breakpoint`, `error`, `step`, `loop`).
    pub reason: Option<String>,
    /// Epoch ms when it started holding.
    pub since: i64,
    /// Instance, when the app said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// Loop-guard details.
    #[serde(rename = "loop", skip_serializing_if = "Option::is_none")]
    pub loop_info: Option<Value>,
    /// The input may be edited on resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editable: Option<bool>,
    /// Set when a replay holds here: the chosen step, or where the new run
    /// departed from the recorded one (see `docs/replay.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<Value>,
}

/// An attached app, as the UI feed shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppView {
    /// Connection id.
    pub conn_id: ConnId,
    /// App name from `hello`.
    pub app: Option<String>,
    /// SDK from `hello`.
    pub sdk: Option<Value>,
    /// Runs this connection wrote.
    pub run_ids: Vec<String>,
}

/// The viewer-visible debug state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HubSnapshot {
    /// Armed breakpoints.
    pub breakpoints: Vec<BreakpointMatcher>,
    /// Mode.
    pub mode: RunMode,
    /// Held gates.
    pub pauses: Vec<PauseView>,
    /// Attached apps.
    pub apps: Vec<AppView>,
    /// Gates held only by pause on error are kept with nobody watching
    /// (`serve --hold-unwatched`, the viewer's toggle).
    pub hold_unwatched: bool,
}

/// The referee's verdict on a resume request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResumeResult {
    /// Sent to the app; this request won.
    Resumed,
    /// Somebody else already resolved this pause.
    Taken,
    /// No such pause is held (never was, or its app went away).
    NoSuchPause,
    /// The request cannot be delivered or is not acceptable.
    Refused,
}

/// A resume request from the HTTP API or the UI feed.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeRequest {
    /// How to release.
    pub action: ResumeAction,
    /// Value for `inject`.
    pub output: Option<Value>,
    /// Edited input.
    pub input: Option<Value>,
    /// Correlation id.
    pub request_id: Option<String>,
    /// The surface the request came through, stamped on the app's `exec.resumed`.
    pub principal: Principal,
}

/// Who released a gate: the surface a resume came through (`exec.resumed.principal`,
/// kinds from [`mindgate_protocol::principal`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Principal {
    /// A person in the browser viewer (`/ws/ui`).
    Viewer,
    /// An MCP client.
    Mcp,
    /// The HTTP API.
    Http,
    /// The app released the gate itself (no resume of the hub was waiting).
    FailOpen,
    /// The hub released a gate held only by pause on error because nobody with
    /// control was watching (see [`super::UNWATCHED_GRACE`]).
    Unwatched,
    /// The hub, answering a gate of a replay of `replay_of`.
    Replay {
        /// The recorded run being replayed.
        #[serde(rename = "replayOf")]
        replay_of: String,
    },
}

impl Principal {
    /// The wire value: `{"kind": …}`.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Why the hub refused an event it was shown (see [`Hub::observe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubRefusal {
    /// The connection already holds [`MAX_PAUSES_PER_CONNECTION`] gates, or
    /// all connections [`MAX_PAUSES`].
    PauseLimit,
    /// The connection already has [`MAX_UNFINISHED_RUNS_PER_CONNECTION`] unfinished runs.
    RunLimit,
}

impl HubRefusal {
    /// A stable camelCase code (the `/health` counter's name).
    pub fn code(&self) -> &'static str {
        match self {
            HubRefusal::PauseLimit => "pauseLimit",
            HubRefusal::RunLimit => "runLimit",
        }
    }

    /// One line for a person.
    pub fn message(&self) -> String {
        match self {
            HubRefusal::PauseLimit => format!(
                "too many held gates ({MAX_PAUSES_PER_CONNECTION} per connection, {MAX_PAUSES} in all)"
            ),
            HubRefusal::RunLimit => format!(
                "too many unfinished runs on this connection ({MAX_UNFINISHED_RUNS_PER_CONNECTION})"
            ),
        }
    }
}

/// Whether a connection may write a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimVerdict {
    /// Yes.
    Allowed,
    /// No: another app owns it.
    Refused,
    /// The hub does not know the run: check the database, then call [`Hub::settle_claim`].
    Unknown,
}
