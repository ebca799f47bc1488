//! Turning a received frame into a [`NewEvent`] the writer can store.

use std::borrow::Cow;

use mindgate_protocol::{Envelope, Message, OpaqueEnvelope, ParseResult};
use serde::Deserialize;
use serde_json::value::RawValue;

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
    /// Envelope `type`.
    pub type_name: String,
    /// Logical node, when the event is about one.
    pub node_id: Option<String>,
    /// Payload JSON object text (whitespace already removed).
    pub payload: Box<RawValue>,
    /// Unknown envelope fields as a JSON object text.
    pub extra: Option<Box<RawValue>>,
    /// Derived facts for the run row.
    pub facts: EventFacts,
    /// App name to use if this event implicitly creates its run.
    pub app_hint: Option<String>,
    /// Claim token of the connection that sent it (kept with a new run).
    pub claim: Option<String>,
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

    /// Builds the event for a parsed, known-type envelope (`frame` is its text).
    pub fn from_envelope(frame: &str, env: &Envelope) -> Option<NewEvent> {
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
                RawValue::from_string(v.get("payload")?.to_string()).ok()?
            }
        };
        let facts = facts_of(&env.message);
        Some(NewEvent {
            run_id: env.run_id.clone(),
            seq: env.seq,
            ts: env.ts,
            type_name: env.type_name().to_owned(),
            node_id: env.message.node_id().map(str::to_owned),
            payload,
            extra: extra_json(&env.extra),
            facts,
            app_hint: None,
            claim: None,
        })
    }

    /// Builds the event for an envelope of a type this version does not know.
    pub fn from_opaque(frame: &str, env: &OpaqueEnvelope) -> Option<NewEvent> {
        if env.run_id == mindgate_protocol::WILDCARD_RUN_ID {
            return None;
        }
        let payload = match raw_payload(frame) {
            Some(p) => p,
            None => RawValue::from_string(serde_json::to_string(&env.payload).ok()?).ok()?,
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
            type_name: env.type_name.clone(),
            node_id,
            payload,
            extra: extra_json(&env.extra),
            facts: EventFacts::Plain,
            app_hint: None,
            claim: None,
        })
    }

    /// Sets the app name used if this event creates its run implicitly.
    #[must_use]
    pub fn with_app_hint(mut self, app: Option<String>) -> Self {
        self.app_hint = app;
        self
    }

    /// Sets the claim token recorded with a run this event creates.
    #[must_use]
    pub fn with_claim(mut self, claim: Option<String>) -> Self {
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
fn raw_payload(frame: &str) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Only<'a> {
        #[serde(borrow)]
        payload: &'a RawValue,
    }
    let only: Only<'_> = serde_json::from_str(frame).ok()?;
    let text = minify(only.payload.get());
    RawValue::from_string(text.into_owned()).ok()
}

/// Removes insignificant whitespace from valid JSON text (borrowing when there is none).
pub fn minify(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut in_string = false;
    let mut escaped = false;
    let needs = bytes
        .iter()
        .any(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'));
    if !needs {
        return Cow::Borrowed(json);
    }
    let mut out = Vec::with_capacity(bytes.len());
    for &b in bytes {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {}
            b'"' => {
                in_string = true;
                out.push(b);
            }
            _ => out.push(b),
        }
    }
    // Only ASCII whitespace outside strings was removed, so UTF-8 is intact.
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(json),
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use mindgate_protocol::parse_envelope;

    #[test]
    fn minify_keeps_whitespace_inside_strings() {
        let text = r#"{ "a" : "x y\" z" , "b" : [ 1 , 2 ] }"#;
        assert_eq!(minify(text), r#"{"a":"x y\" z","b":[1,2]}"#);
    }

    #[test]
    fn python_style_frame_becomes_compact_event() {
        let frame = r#"{"gm": 1, "seq": 3, "ts": 10, "runId": "r1", "type": "node.finished", "payload": {"nodeId": "tool:a", "instanceId": "i1", "durationMs": 2.5, "status": "ok", "usage": {"inputTokens": 4, "outputTokens": 5}}}"#;
        let parsed = parse_envelope(frame);
        let ev = NewEvent::from_frame(frame, &parsed).expect("event");
        assert_eq!(ev.node_id.as_deref(), Some("tool:a"));
        assert_eq!(
            ev.payload.get(),
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
