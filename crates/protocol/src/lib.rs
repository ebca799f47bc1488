//! The GraphMind wire protocol, version 1, as Rust types.
//!
//! Every frame that crosses the WebSocket between an instrumented app and the
//! Mindgate viewer is one JSON text message, an [`Envelope`]:
//!
//! ```json
//! {"gm":1,"seq":42,"ts":1756200000000,"runId":"run_ab12","type":"node.started","payload":{}}
//! ```
//!
//! * [`parse_envelope`] turns a frame into one of exactly four outcomes
//!   ([`ParseResult`]) and never panics, whatever the input.
//! * [`Envelope::new`] and [`Envelope::to_json`] build and serialise frames.
//! * [`BreakpointMatcher`] holds the breakpoint semantics shared by the SDK and
//!   the server.
//! * [`json_schema`] exports the whole contract as JSON Schema (draft 2020-12).
//!
//! Every object is *loose*: fields this crate does not know are kept in an
//! `extra` map and written back unchanged, so a newer peer's additions survive
//! a trip through Mindgate.
//!
//! ```
//! use mindgate_protocol::{parse_envelope, Message, ParseResult};
//!
//! let frame = r#"{"gm":1,"seq":1,"ts":0,"runId":"r1","type":"node.token",
//!                 "payload":{"nodeId":"llm:step","deltas":[{"t":"text","v":"Hi"}]}}"#;
//! match parse_envelope(frame) {
//!     ParseResult::Ok(env) => match env.message {
//!         Message::NodeToken(tok) => assert_eq!(tok.deltas[0].v, "Hi"),
//!         other => panic!("unexpected {other:?}"),
//!     },
//!     other => panic!("unexpected {other:?}"),
//! }
//! ```

mod envelope;
mod extra;
mod kinds;
mod matcher;
mod message;
mod parse;
mod schema;

pub use envelope::{Envelope, OpaqueEnvelope};
pub use extra::Extra;
pub use kinds::{
    NodeKind, NodeStatus, PausePoint, PauseReason, RefuseCode, ResumeAction, RunMode, RunStatus,
    TokenChannel,
};
pub use matcher::{BreakpointMatcher, BreakpointSet, GateTarget};
pub use message::*;
pub use parse::{MAX_DEPTH, MAX_FRAME_BYTES, ParseIssue, ParseResult, parse_envelope};
pub use schema::{json_schema, json_schema_string};

/// The protocol major version carried in every envelope's `gm` field.
pub const PROTOCOL_VERSION: u32 = 1;

/// The `runId` of messages not bound to a run (handshake, breakpoints, mode).
pub const WILDCARD_RUN_ID: &str = "*";

/// Capabilities a client may announce in `hello` and a viewer in `hello.ack`.
///
/// The list is open-ended: peers must ignore capability strings they do not know.
pub mod capability {
    /// Gates can hold execution.
    pub const PAUSE: &str = "pause";
    /// Step mode is supported.
    pub const STEP: &str = "step";
    /// The inject action is supported.
    pub const INJECT: &str = "inject";
    /// The retry action is supported.
    pub const RETRY: &str = "retry";
    /// The abort action is supported.
    pub const ABORT: &str = "abort";
    /// The client stores `sessionToken` and echoes it as `resumeToken`.
    pub const RUN_CLAIM: &str = "run-claim";
    /// The client accepts an edited input on resume.
    pub const EDIT_INPUT: &str = "edit-input";

    /// Every gate control: what an SDK that implements them all announces in `hello`.
    pub const GATE_CONTROLS: [&str; 6] = [PAUSE, STEP, INJECT, RETRY, ABORT, RUN_CLAIM];

    /// What the viewer announces in `hello.ack`: every gate control, and edited inputs.
    pub const VIEWER: [&str; 7] = {
        let [pause, step, inject, retry, abort, run_claim] = GATE_CONTROLS;
        [pause, step, inject, retry, abort, run_claim, EDIT_INPUT]
    };
}

/// What a hub announces in `hello.ack.hubCapabilities`: what it does itself,
/// beyond relaying controls. Open-ended: apps ignore strings they do not know.
pub mod hub_capability {
    /// Resumes may carry an edited `input` for gates the app marked `editable`.
    pub const EDIT_INPUT: &str = "edit-input";
    /// The hub can replay a recorded run up to a step (answering gates itself).
    pub const REPLAY: &str = "replay";
    /// The hub stamps `principal` on `exec.resumed` (who released the gate).
    pub const PRINCIPAL: &str = "principal";
}

/// The `kind` of an `exec.resumed.principal`: the surface a gate was released through.
pub mod principal {
    /// A person in the browser viewer (`/ws/ui`).
    pub const VIEWER: &str = "viewer";
    /// An MCP client (`/mcp`, or `mindgate mcp --allow-control`).
    pub const MCP: &str = "mcp";
    /// The HTTP API (`POST /api/runs/:runId/pauses/:pauseId/resume`).
    pub const HTTP: &str = "http";
    /// The app released it itself (viewer gone, pause timeout, shutdown).
    pub const FAIL_OPEN: &str = "fail-open";
    /// The hub released a gate held only by pause on error: nobody with control was
    /// watching (no viewer page with the token, no MCP client with control).
    pub const UNWATCHED: &str = "unwatched";
    /// The hub, answering a gate of a replay.
    pub const REPLAY: &str = "replay";
}
