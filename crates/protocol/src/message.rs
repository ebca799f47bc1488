//! Payload types of every message in protocol v1, and the [`Message`] union.
//!
//! Each payload keeps unknown fields in `extra`, so they survive a round trip.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::extra::Extra;
use crate::kinds::{
    NodeKind, NodeStatus, PausePoint, PauseReason, RefuseCode, ResumeAction, RunMode, RunStatus,
    TokenChannel,
};
use crate::matcher::BreakpointMatcher;

/// Deserialises a present field as `Some`, even when its value is `null`,
/// so `"input": null` survives a round trip.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Name and version of the instrumentation library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SdkInfo {
    /// Library name, e.g. `graphmind-ai` or `mindgate-sdk`.
    pub name: String,
    /// Library version.
    pub version: String,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An error as it travels on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorInfo {
    /// Error class name, e.g. `ValueError`.
    pub name: String,
    /// Human-readable message.
    pub message: String,
    /// Stack trace, when the sender has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `run.started`: a run begins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunStarted {
    /// The instrumented application's name.
    pub app: String,
    /// The instrumentation library.
    pub sdk: SdkInfo,
    /// Free-form run metadata (name, tags, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Extra>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `run.finished`: a run ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunFinished {
    /// How it ended.
    pub status: RunStatus,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One node announced ahead of execution by `graph.hint`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HintNode {
    /// Stable logical node id.
    pub node_id: String,
    /// Node kind.
    pub kind: NodeKind,
    /// Display name.
    pub name: String,
    /// Parent logical node, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Marks events a client dropped while detached (rides on a `graph.hint` with no nodes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GapMarker {
    /// How many events were dropped.
    pub dropped_count: u64,
    /// First dropped `seq`.
    pub from_seq: u64,
    /// Last dropped `seq`.
    pub to_seq: u64,
    /// Why they were dropped (e.g. `buffer-full`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `graph.hint`: static structure announced before it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphHint {
    /// Nodes to draw greyed until they run.
    pub nodes: Vec<HintNode>,
    /// A gap marker, when events were dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<GapMarker>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// How many values were redacted from an input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Redaction {
    /// Number of redacted values.
    pub count: u64,
    /// The redacted keys (absent stays absent on re-serialisation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `node.started`: one instance of a logical node begins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeStarted {
    /// Stable logical node id (`tool:search`).
    pub node_id: String,
    /// Parent logical node, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Node kind.
    pub kind: NodeKind,
    /// Display name.
    pub name: String,
    /// Unique id of this execution.
    pub instance_id: String,
    /// The node's input (any JSON).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input: Option<Value>,
    /// The sender folded this node's children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<bool>,
    /// What the sender redacted from the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redaction: Option<Redaction>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One streamed piece of text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenDelta {
    /// Channel.
    pub t: TokenChannel,
    /// Text.
    pub v: String,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `node.token`: streamed model output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeToken {
    /// Logical node id.
    pub node_id: String,
    /// Instance the deltas belong to, when the sender knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// The deltas, in order.
    pub deltas: Vec<TokenDelta>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Token usage of a model call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// The counts include children's usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inclusive: Option<bool>,
    /// Tokens read from a prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Tokens written to a prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `node.finished`: one instance ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeFinished {
    /// Logical node id.
    pub node_id: String,
    /// The instance that ended (always sent by well-behaved clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// The node's output (any JSON).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output: Option<Value>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time in ms, including time held at gates.
    pub duration_ms: f64,
    /// How it ended.
    pub status: NodeStatus,
    /// Time held at gates, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_ms: Option<f64>,
    /// Why a model call stopped, as the provider said it (`stop`, `length`,
    /// `tool-calls`, …; open-ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `node.error`: an instance threw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeError {
    /// Logical node id.
    pub node_id: String,
    /// The failing instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// The error.
    pub error: ErrorInfo,
    /// Time held at gates, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_ms: Option<f64>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Details of a loop-guard hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoopInfo {
    /// How many identical calls in a row.
    pub repeats: u64,
    /// `seq` of the first call of the loop.
    pub first_seq: u64,
    /// `seq` of the latest call.
    pub last_seq: u64,
    /// Fingerprint of the repeated input.
    pub fingerprint: String,
    /// `repeat`, `cycle` or `error-repeat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Cycle period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<u64>,
    /// Cycle laps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub laps: Option<u64>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A rule-driven ("smart") hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SmartInfo {
    /// The rule that fired.
    pub rule: String,
    /// Rule details (any JSON; a `null` is kept).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub detail: Option<Value>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `exec.paused`: a gate holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecPaused {
    /// Id of this hold, unique within the run.
    pub pause_id: String,
    /// The held node.
    pub node_id: String,
    /// Where the gate sits.
    pub point: PausePoint,
    /// Why it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<PauseReason>,
    /// Loop-guard details.
    #[serde(default, rename = "loop", skip_serializing_if = "Option::is_none")]
    pub loop_info: Option<LoopInfo>,
    /// Rule details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smart: Option<SmartInfo>,
    /// The input may be edited on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editable: Option<bool>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An edit applied on resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EditInfo {
    /// The value after the edit.
    pub after: Value,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `exec.resumed`: a gate was released (by the viewer or by the app itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecResumed {
    /// The released hold.
    pub pause_id: String,
    /// How it was released.
    pub action: ResumeAction,
    /// The edit applied, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<EditInfo>,
    /// Echo of the request that released it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Who released it (any JSON; a `null` is kept). Mindgate's hub writes
    /// `{"kind": …}` with a [`crate::principal`] kind when the app sent none.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub principal: Option<Value>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `exec.refused`: the app refused a resume request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecRefused {
    /// The hold the request was for.
    pub pause_id: String,
    /// Why.
    pub code: RefuseCode,
    /// Human-readable detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Echo of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `exec.resume` (viewer → app): release a held gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecResume {
    /// The hold to release.
    pub pause_id: String,
    /// How.
    pub action: ResumeAction,
    /// The value to use (inject only).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output: Option<Value>,
    /// An edited input (clients with `edit-input`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input: Option<Value>,
    /// Correlates `exec.resumed` / `exec.refused`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `breakpoint.set` / `breakpoint.clear` (viewer → app).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BreakpointChange {
    /// The matcher to add or remove.
    pub matcher: BreakpointMatcher,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `mode.set` (viewer → app).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModeSet {
    /// The new mode.
    pub mode: RunMode,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Versions a client announces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientVersions {
    /// Protocol major it speaks.
    pub protocol: u32,
    /// Client library version.
    pub client: String,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `hello` (app → viewer): the first frame of every connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// Versions.
    pub versions: ClientVersions,
    /// Capabilities (open-ended; unknown ones are ignored).
    pub capabilities: Vec<String>,
    /// Application name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Instrumentation library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk: Option<SdkInfo>,
    /// The `sessionToken` of an earlier `hello.ack`, proving run ownership on reconnect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_token: Option<String>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Versions a viewer announces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerVersions {
    /// Protocol major it speaks.
    pub protocol: u32,
    /// Viewer version.
    pub viewer: String,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `hello.ack` (viewer → app): the viewer's whole desired debug state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelloAck {
    /// Versions.
    pub versions: ViewerVersions,
    /// Capabilities.
    pub capabilities: Vec<String>,
    /// Current breakpoints.
    pub breakpoints: Vec<BreakpointMatcher>,
    /// Current mode.
    pub mode: RunMode,
    /// Token the app echoes as `resumeToken` on reconnect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_token: Option<String>,
    /// What this hub itself supports beyond relaying (open-ended, see
    /// [`crate::hub_capability`]); absent from viewers that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_capabilities: Option<Vec<String>>,
    /// Unknown fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Every known message, tagged by the envelope's `type` with its `payload`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "payload")]
pub enum Message {
    /// `run.started`
    #[serde(rename = "run.started")]
    RunStarted(RunStarted),
    /// `run.finished`
    #[serde(rename = "run.finished")]
    RunFinished(RunFinished),
    /// `graph.hint`
    #[serde(rename = "graph.hint")]
    GraphHint(GraphHint),
    /// `node.started`
    #[serde(rename = "node.started")]
    NodeStarted(NodeStarted),
    /// `node.token`
    #[serde(rename = "node.token")]
    NodeToken(NodeToken),
    /// `node.finished`
    #[serde(rename = "node.finished")]
    NodeFinished(NodeFinished),
    /// `node.error`
    #[serde(rename = "node.error")]
    NodeError(NodeError),
    /// `exec.paused`
    #[serde(rename = "exec.paused")]
    ExecPaused(ExecPaused),
    /// `exec.resumed`
    #[serde(rename = "exec.resumed")]
    ExecResumed(ExecResumed),
    /// `exec.refused`
    #[serde(rename = "exec.refused")]
    ExecRefused(ExecRefused),
    /// `exec.resume`
    #[serde(rename = "exec.resume")]
    ExecResume(ExecResume),
    /// `breakpoint.set`
    #[serde(rename = "breakpoint.set")]
    BreakpointSet(BreakpointChange),
    /// `breakpoint.clear`
    #[serde(rename = "breakpoint.clear")]
    BreakpointClear(BreakpointChange),
    /// `mode.set`
    #[serde(rename = "mode.set")]
    ModeSet(ModeSet),
    /// `hello`
    #[serde(rename = "hello")]
    Hello(Hello),
    /// `hello.ack`
    #[serde(rename = "hello.ack")]
    HelloAck(HelloAck),
}

/// Which way a message type travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// App → viewer events.
    Event,
    /// Viewer → app controls.
    Control,
    /// `hello` / `hello.ack`.
    Handshake,
}

impl Message {
    /// Every known `type` string with its direction.
    pub const TYPES: &'static [(&'static str, Direction)] = &[
        ("run.started", Direction::Event),
        ("run.finished", Direction::Event),
        ("graph.hint", Direction::Event),
        ("node.started", Direction::Event),
        ("node.token", Direction::Event),
        ("node.finished", Direction::Event),
        ("node.error", Direction::Event),
        ("exec.paused", Direction::Event),
        ("exec.resumed", Direction::Event),
        ("exec.refused", Direction::Event),
        ("exec.resume", Direction::Control),
        ("breakpoint.set", Direction::Control),
        ("breakpoint.clear", Direction::Control),
        ("mode.set", Direction::Control),
        ("hello", Direction::Handshake),
        ("hello.ack", Direction::Handshake),
    ];

    /// The envelope `type` string of this message.
    pub fn type_name(&self) -> &'static str {
        match self {
            Message::RunStarted(_) => "run.started",
            Message::RunFinished(_) => "run.finished",
            Message::GraphHint(_) => "graph.hint",
            Message::NodeStarted(_) => "node.started",
            Message::NodeToken(_) => "node.token",
            Message::NodeFinished(_) => "node.finished",
            Message::NodeError(_) => "node.error",
            Message::ExecPaused(_) => "exec.paused",
            Message::ExecResumed(_) => "exec.resumed",
            Message::ExecRefused(_) => "exec.refused",
            Message::ExecResume(_) => "exec.resume",
            Message::BreakpointSet(_) => "breakpoint.set",
            Message::BreakpointClear(_) => "breakpoint.clear",
            Message::ModeSet(_) => "mode.set",
            Message::Hello(_) => "hello",
            Message::HelloAck(_) => "hello.ack",
        }
    }

    /// The direction of a `type` string, or `None` when it is not a v1 type.
    pub fn direction_of(type_name: &str) -> Option<Direction> {
        Self::TYPES
            .iter()
            .find(|(name, _)| *name == type_name)
            .map(|(_, d)| *d)
    }

    /// The logical node this message is about, if any.
    pub fn node_id(&self) -> Option<&str> {
        match self {
            Message::NodeStarted(p) => Some(&p.node_id),
            Message::NodeToken(p) => Some(&p.node_id),
            Message::NodeFinished(p) => Some(&p.node_id),
            Message::NodeError(p) => Some(&p.node_id),
            Message::ExecPaused(p) => Some(&p.node_id),
            _ => None,
        }
    }
}
