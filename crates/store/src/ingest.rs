//! Turning a received frame into a [`NewEvent`] the writer can store.

use std::borrow::Cow;
use std::sync::Arc;

use mindgate_protocol::{Envelope, Hello, Message, OpaqueEnvelope, ParseResult};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json_scan::{minify, scan_member};

/// The highest `seq` the store can keep: SQLite integers are signed 64-bit.
/// The protocol accepts any non-negative integer; the ingest boundary refuses
/// larger ones ([`Refusal::SeqOutOfRange`]) and so does the writer.
pub const MAX_STORED_SEQ: u64 = i64::MAX as u64;

/// Most bytes of a `runId`.
pub const MAX_RUN_ID_BYTES: usize = 256;
/// Most bytes of a `nodeId`, `parentId`, `instanceId` or `pauseId`.
pub const MAX_ID_BYTES: usize = 512;
/// Most bytes of a name: node and hint names, `run.started.app`, `meta.name`, `hello.app`.
pub const MAX_NAME_BYTES: usize = 1_024;
/// Most bytes of an envelope `type` (unknown types are interned by the store).
pub const MAX_TYPE_BYTES: usize = 128;

/// Why the ingest boundary refuses an event before it reaches the hub or the
/// store. Each has a stable [`Refusal::code`] (the `/health` counter's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `seq` above [`MAX_STORED_SEQ`].
    SeqOutOfRange,
    /// `runId` over [`MAX_RUN_ID_BYTES`].
    RunIdTooLong,
    /// The named id field is over [`MAX_ID_BYTES`].
    IdTooLong(&'static str),
    /// The named name field is over [`MAX_NAME_BYTES`].
    NameTooLong(&'static str),
    /// The envelope `type` is over [`MAX_TYPE_BYTES`].
    TypeTooLong,
}

impl Refusal {
    /// Every code, in a fixed order (for counters).
    pub const CODES: [&'static str; 5] = [
        "seqOutOfRange",
        "runIdTooLong",
        "idTooLong",
        "nameTooLong",
        "typeTooLong",
    ];

    /// A stable camelCase code.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::SeqOutOfRange => "seqOutOfRange",
            Refusal::RunIdTooLong => "runIdTooLong",
            Refusal::IdTooLong(_) => "idTooLong",
            Refusal::NameTooLong(_) => "nameTooLong",
            Refusal::TypeTooLong => "typeTooLong",
        }
    }

    /// One line for a person.
    pub fn message(&self) -> String {
        match self {
            Refusal::SeqOutOfRange => format!("seq above {MAX_STORED_SEQ} cannot be stored"),
            Refusal::RunIdTooLong => format!("runId longer than {MAX_RUN_ID_BYTES} bytes"),
            Refusal::IdTooLong(field) => format!("{field} longer than {MAX_ID_BYTES} bytes"),
            Refusal::NameTooLong("sdk") => format!("sdk longer than {MAX_SDK_BYTES} bytes"),
            Refusal::NameTooLong(field) => {
                format!("{field} longer than {MAX_NAME_BYTES} bytes")
            }
            Refusal::TypeTooLong => format!("type longer than {MAX_TYPE_BYTES} bytes"),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

fn check_id(field: &'static str, value: &str) -> Result<(), Refusal> {
    if value.len() > MAX_ID_BYTES {
        return Err(Refusal::IdTooLong(field));
    }
    Ok(())
}

fn check_optional_id(field: &'static str, value: Option<&str>) -> Result<(), Refusal> {
    value.map_or(Ok(()), |v| check_id(field, v))
}

fn check_name(field: &'static str, value: &str) -> Result<(), Refusal> {
    if value.len() > MAX_NAME_BYTES {
        return Err(Refusal::NameTooLong(field));
    }
    Ok(())
}

fn envelope_head(seq: u64, run_id: &str) -> Result<(), Refusal> {
    if seq > MAX_STORED_SEQ {
        return Err(Refusal::SeqOutOfRange);
    }
    if run_id.len() > MAX_RUN_ID_BYTES {
        return Err(Refusal::RunIdTooLong);
    }
    Ok(())
}

/// Checks a parsed frame against the ingest limits (sizes of ids and names,
/// the storable `seq` range). Invalid and version-mismatched frames pass:
/// they are dealt with elsewhere.
pub fn check_limits(parsed: &ParseResult) -> Result<(), Refusal> {
    match parsed {
        ParseResult::Ok(env) => check_envelope(env),
        ParseResult::UnknownType(op) => {
            envelope_head(op.seq, &op.run_id)?;
            if op.type_name.len() > MAX_TYPE_BYTES {
                return Err(Refusal::TypeTooLong);
            }
            check_optional_id("nodeId", op.payload.get("nodeId").and_then(|v| v.as_str()))
        }
        ParseResult::VersionMismatch { .. } | ParseResult::Invalid { .. } => Ok(()),
    }
}

/// [`check_limits`] for a known-type envelope.
pub fn check_envelope(env: &Envelope) -> Result<(), Refusal> {
    envelope_head(env.seq, &env.run_id)?;
    match &env.message {
        Message::RunStarted(p) => {
            check_name("app", &p.app)?;
            check_name(
                "meta.name",
                p.meta
                    .as_ref()
                    .and_then(|m| m.get("name"))
                    .and_then(|v| v.as_str())
                    .unwrap_or_default(),
            )
        }
        Message::GraphHint(p) => p.nodes.iter().try_for_each(|n| {
            check_id("nodeId", &n.node_id)?;
            check_optional_id("parentId", n.parent_id.as_deref())?;
            check_name("name", &n.name)
        }),
        Message::NodeStarted(p) => {
            check_id("nodeId", &p.node_id)?;
            check_optional_id("parentId", p.parent_id.as_deref())?;
            check_id("instanceId", &p.instance_id)?;
            check_name("name", &p.name)
        }
        Message::NodeToken(p) => {
            check_id("nodeId", &p.node_id)?;
            check_optional_id("instanceId", p.instance_id.as_deref())
        }
        Message::NodeFinished(p) => {
            check_id("nodeId", &p.node_id)?;
            check_optional_id("instanceId", p.instance_id.as_deref())
        }
        Message::NodeError(p) => {
            check_id("nodeId", &p.node_id)?;
            check_optional_id("instanceId", p.instance_id.as_deref())
        }
        Message::ExecPaused(p) => {
            check_id("pauseId", &p.pause_id)?;
            check_id("nodeId", &p.node_id)?;
            check_optional_id(
                "instanceId",
                p.extra.get("instanceId").and_then(|v| v.as_str()),
            )
        }
        Message::ExecResumed(p) => check_id("pauseId", &p.pause_id),
        Message::ExecRefused(p) => check_id("pauseId", &p.pause_id),
        _ => Ok(()),
    }
}

/// Most bytes of a `hello.sdk` object (as JSON).
pub const MAX_SDK_BYTES: usize = 4_096;

/// Checks a `hello` against the limits (its `app` name, its `sdk` object).
pub fn check_hello(hello: &Hello) -> Result<(), Refusal> {
    check_name("app", hello.app.as_deref().unwrap_or_default())?;
    check_sdk_bytes(
        hello
            .sdk
            .as_ref()
            .and_then(|s| serde_json::to_string(s).ok())
            .map_or(0, |s| s.len()),
    )
}

/// Checks the run of an imported export's header against the limits its events are held
/// to at ingest: `app`, the display name and `meta.name` as a `run.started`'s, the `sdk`
/// object as a `hello`'s.
pub fn check_run_header(
    app: &str,
    name: &str,
    meta: Option<&serde_json::Value>,
    sdk: Option<&serde_json::Value>,
) -> Result<(), Refusal> {
    check_name("app", app)?;
    check_name("name", name)?;
    check_name(
        "meta.name",
        meta.and_then(|m| m.get("name"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default(),
    )?;
    check_sdk_bytes(sdk.map_or(0, |s| s.to_string().len()))
}

fn check_sdk_bytes(bytes: usize) -> Result<(), Refusal> {
    if bytes > MAX_SDK_BYTES {
        return Err(Refusal::NameTooLong("sdk"));
    }
    Ok(())
}

/// What the writer needs to know about an event beyond its bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum EventFacts {
    /// `run.started`: creates or fills in the run row.
    RunStarted {
        /// App name.
        app: String,
        /// Display name (`meta.name`).
        name: Option<String>,
        /// `meta` JSON text.
        meta_json: Option<String>,
        /// `sdk` JSON text.
        sdk_json: Option<String>,
    },
    /// `run.finished`: sets the final state.
    RunFinished {
        /// `ok`, `error` or `aborted`.
        status: crate::RunState,
    },
    /// `node.error`: counted.
    NodeError,
    /// `node.finished` with token usage to add to the run totals.
    Usage {
        /// Prompt tokens.
        input: u64,
        /// Completion tokens.
        output: u64,
    },
    /// `exec.paused`: a hold begins (the run's held time, [`crate::RunSummary::held_ms`]).
    Paused {
        /// The hold's id within the run.
        pause_id: String,
    },
    /// `exec.resumed`: the hold `pause_id` is released.
    Resumed {
        /// The released hold's id.
        pause_id: String,
    },
    /// Nothing special.
    Plain,
}

/// One event ready to be written.
#[derive(Debug, Clone)]
pub struct NewEvent {
    /// Owning run.
    pub run_id: String,
    /// Sender sequence number.
    pub seq: u64,
    /// Sender wall clock, epoch ms.
    pub ts: i64,
    /// Envelope `type` (borrowed from the protocol's names for known types).
    pub type_name: Cow<'static, str>,
    /// Logical node, when the event is about one.
    pub node_id: Option<String>,
    /// Payload JSON object text (whitespace already removed). Built from a
    /// validated frame; the writer stores it as is.
    pub payload: String,
    /// Unknown envelope fields as a JSON object text.
    pub extra: Option<Box<RawValue>>,
    /// Derived facts for the run row.
    pub facts: EventFacts,
    /// App name to use if this event implicitly creates its run.
    pub app_hint: Option<Arc<str>>,
    /// Claim token of the connection that sent it (kept with a new run).
    pub claim: Option<Arc<str>>,
    /// Where a run this event creates comes from (the run's `source`; `None`: `live`,
    /// a GraphMind app). `otlp` for runs made of OpenTelemetry spans.
    pub source: Option<&'static str>,
}

impl NewEvent {
    /// Builds the event for a frame that parsed as `Ok` or `UnknownType`.
    ///
    /// Returns `None` for invalid or version-mismatched frames, and for frames
    /// that are not run events (handshake and controls).
    pub fn from_frame(frame: &str, parsed: &ParseResult) -> Option<NewEvent> {
        match parsed {
            ParseResult::Ok(env) => Self::from_envelope(frame, env),
            ParseResult::UnknownType(opaque) => Self::from_opaque(frame, opaque),
            _ => None,
        }
    }

    /// [`NewEvent::from_frame`] taking the parse result by value, so the run
    /// id moves instead of being copied (the ingest hot path).
    pub fn from_parsed(frame: &str, parsed: ParseResult) -> Option<NewEvent> {
        match parsed {
            ParseResult::Ok(env) => {
                let mut ev = Self::from_envelope_inner(frame, &env, String::new())?;
                ev.run_id = env.run_id;
                Some(ev)
            }
            ParseResult::UnknownType(opaque) => Self::from_opaque(frame, &opaque),
            _ => None,
        }
    }

    /// Builds the event for a parsed, known-type envelope (`frame` is its text).
    pub fn from_envelope(frame: &str, env: &Envelope) -> Option<NewEvent> {
        Self::from_envelope_inner(frame, env, env.run_id.clone())
    }

    fn from_envelope_inner(frame: &str, env: &Envelope, run_id: String) -> Option<NewEvent> {
        use mindgate_protocol::Direction;
        if mindgate_protocol::Message::direction_of(env.type_name()) != Some(Direction::Event) {
            return None;
        }
        if env.run_id == mindgate_protocol::WILDCARD_RUN_ID {
            return None;
        }
        let payload = match raw_payload(frame) {
            Some(p) => p,
            None => {
                let v = serde_json::to_value(&env.message).ok()?;
                v.get("payload")?.to_string()
            }
        };
        let facts = facts_of(&env.message);
        Some(NewEvent {
            run_id,
            seq: env.seq,
            ts: env.ts,
            type_name: Cow::Borrowed(env.type_name()),
            node_id: env.message.node_id().map(str::to_owned),
            payload,
            extra: extra_json(&env.extra),
            facts,
            app_hint: None,
            claim: None,
            source: None,
        })
    }

    /// Builds the event for an envelope of a type this version does not know.
    pub fn from_opaque(frame: &str, env: &OpaqueEnvelope) -> Option<NewEvent> {
        if env.run_id == mindgate_protocol::WILDCARD_RUN_ID {
            return None;
        }
        let payload = match raw_payload(frame) {
            Some(p) => p,
            None => serde_json::to_string(&env.payload).ok()?,
        };
        let node_id = env
            .payload
            .get("nodeId")
            .and_then(|v| v.as_str())
            .map(str::to_owned);
        Some(NewEvent {
            run_id: env.run_id.clone(),
            seq: env.seq,
            ts: env.ts,
            type_name: Cow::Owned(env.type_name.clone()),
            node_id,
            payload,
            extra: extra_json(&env.extra),
            facts: EventFacts::Plain,
            app_hint: None,
            claim: None,
            source: None,
        })
    }

    /// Sets the app name used if this event creates its run implicitly.
    #[must_use]
    pub fn with_app_hint(mut self, app: Option<Arc<str>>) -> Self {
        self.app_hint = app;
        self
    }

    /// Sets the `source` recorded with a run this event creates (`live` when unset).
    #[must_use]
    pub fn with_source(mut self, source: &'static str) -> Self {
        self.source = Some(source);
        self
    }

    /// Sets the claim token recorded with a run this event creates.
    #[must_use]
    pub fn with_claim(mut self, claim: Option<Arc<str>>) -> Self {
        self.claim = claim;
        self
    }
}

fn facts_of(message: &Message) -> EventFacts {
    match message {
        Message::RunStarted(p) => EventFacts::RunStarted {
            app: p.app.clone(),
            name: p
                .meta
                .as_ref()
                .and_then(|m| m.get("name"))
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            meta_json: p.meta.as_ref().and_then(|m| serde_json::to_string(m).ok()),
            sdk_json: serde_json::to_string(&p.sdk).ok(),
        },
        Message::RunFinished(p) => EventFacts::RunFinished {
            status: match p.status {
                mindgate_protocol::RunStatus::Ok => crate::RunState::Ok,
                mindgate_protocol::RunStatus::Error => crate::RunState::Error,
                mindgate_protocol::RunStatus::Aborted => crate::RunState::Aborted,
            },
        },
        Message::NodeError(_) => EventFacts::NodeError,
        Message::ExecPaused(p) => EventFacts::Paused {
            pause_id: p.pause_id.clone(),
        },
        Message::ExecResumed(p) => EventFacts::Resumed {
            pause_id: p.pause_id.clone(),
        },
        Message::NodeFinished(p) => match &p.usage {
            Some(u) if u.inclusive != Some(true) => EventFacts::Usage {
                input: u.input_tokens,
                output: u.output_tokens,
            },
            _ => EventFacts::Plain,
        },
        _ => EventFacts::Plain,
    }
}

fn extra_json(extra: &mindgate_protocol::Extra) -> Option<Box<RawValue>> {
    if extra.is_empty() {
        return None;
    }
    serde_json::to_string(extra)
        .ok()
        .and_then(|s| RawValue::from_string(s).ok())
}

/// The `payload` member of a frame, whitespace removed, without re-encoding it.
///
/// `frame` has already passed the protocol parser, so it is valid JSON: a
/// structural scan finds the member's text (no second parse). Anything the scan
/// does not expect (an escaped key, a duplicate) falls back to serde.
fn raw_payload(frame: &str) -> Option<String> {
    if let Some(text) = scan_member(frame, b"payload") {
        return Some(minify(text).into_owned());
    }
    #[derive(Deserialize)]
    struct Only<'a> {
        #[serde(borrow)]
        payload: &'a RawValue,
    }
    let only: Only<'_> = serde_json::from_str(frame).ok()?;
    Some(minify(only.payload.get()).into_owned())
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use mindgate_protocol::parse_envelope;

    #[test]
    fn python_style_frame_becomes_compact_event() {
        let frame = r#"{"gm": 1, "seq": 3, "ts": 10, "runId": "r1", "type": "node.finished", "payload": {"nodeId": "tool:a", "instanceId": "i1", "durationMs": 2.5, "status": "ok", "usage": {"inputTokens": 4, "outputTokens": 5}}}"#;
        let parsed = parse_envelope(frame);
        let ev = NewEvent::from_frame(frame, &parsed).expect("event");
        assert_eq!(ev.node_id.as_deref(), Some("tool:a"));
        assert_eq!(
            ev.payload,
            r#"{"nodeId":"tool:a","instanceId":"i1","durationMs":2.5,"status":"ok","usage":{"inputTokens":4,"outputTokens":5}}"#
        );
        assert_eq!(
            ev.facts,
            EventFacts::Usage {
                input: 4,
                output: 5
            }
        );
    }

    #[test]
    fn a_payload_the_scan_leaves_alone_is_read_by_serde() {
        assert_eq!(
            raw_payload(r#"{"p\u0061yload":{"a": 1}}"#).as_deref(),
            Some(r#"{"a":1}"#)
        );
    }

    #[test]
    fn handshake_and_controls_are_not_events() {
        let frame =
            r#"{"gm":1,"seq":0,"ts":0,"runId":"*","type":"mode.set","payload":{"mode":"step"}}"#;
        assert!(NewEvent::from_frame(frame, &parse_envelope(frame)).is_none());
    }

    #[test]
    fn unknown_types_are_kept_opaque_with_extra_fields() {
        let frame = r#"{"gm":1,"seq":9,"ts":1,"runId":"r","type":"future.thing","payload":{"nodeId":"n","x":1},"zz":true}"#;
        let ev = NewEvent::from_frame(frame, &parse_envelope(frame)).expect("event");
        assert_eq!(ev.type_name, "future.thing");
        assert_eq!(ev.node_id.as_deref(), Some("n"));
        assert_eq!(ev.extra.as_ref().map(|e| e.get()), Some(r#"{"zz":true}"#));
    }
}
