//! Turning a received frame into a [`NewEvent`] the writer can store.

use std::borrow::Cow;
use std::sync::Arc;

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
        })
    }

    /// Sets the app name used if this event creates its run implicitly.
    #[must_use]
    pub fn with_app_hint(mut self, app: Option<Arc<str>>) -> Self {
        self.app_hint = app;
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

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Index just past the string starting at `bytes[i] == b'"'`.
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Index just past the JSON value starting at `bytes[i]` (valid JSON assumed).
fn skip_value(bytes: &[u8], mut i: usize) -> usize {
    match bytes.get(i) {
        Some(b'"') => skip_string(bytes, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = skip_string(bytes, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']') && !is_ws(bytes[i]) {
                i += 1;
            }
            i
        }
    }
}

/// The text of the top-level member `key` of a valid JSON object text, when it
/// occurs exactly once and no key of the object is written with escapes.
fn scan_member<'a>(json: &'a str, key: &[u8]) -> Option<&'a str> {
    let bytes = json.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found: Option<(usize, usize)> = None;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b'}') => break,
            Some(b'"') => {}
            _ => return None,
        }
        let key_end = skip_string(bytes, i);
        let name = bytes.get(i + 1..key_end.checked_sub(1)?)?;
        if name.contains(&b'\\') {
            return None;
        }
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(bytes, i + 1);
        let value_end = skip_value(bytes, i);
        if value_end <= i {
            return None;
        }
        if name == key {
            if found.is_some() {
                return None;
            }
            found = Some((i, value_end));
        }
        i = skip_ws(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => break,
            _ => return None,
        }
    }
    let (start, end) = found?;
    json.get(start..end)
}

/// Removes insignificant whitespace from valid JSON text (borrowing when there is none).
pub fn minify(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = skip_string(bytes, i),
            b if is_ws(b) => {
                let buf = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                buf.extend_from_slice(bytes.get(copied..i).unwrap_or_default());
                i = skip_ws(bytes, i);
                copied = i;
            }
            _ => i += 1,
        }
    }
    let Some(mut buf) = out else {
        return Cow::Borrowed(json);
    };
    buf.extend_from_slice(bytes.get(copied..).unwrap_or_default());
    // Only ASCII whitespace outside strings was removed, so UTF-8 is intact.
    match String::from_utf8(buf) {
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
    fn payload_scan_matches_serde_on_tricky_frames() {
        let frames = [
            r#"{"gm":1,"payload":{"a":"}\"{","b":[{"c":"]"}]},"type":"x"}"#,
            r#" { "type" : "x" , "payload" : { "k" : [ 1 , { } ] } } "#,
            r#"{"payload":{},"extra":{"payload":{"x":1}}}"#,
            r#"{"a":"payload","payload":{"s":"caf\u00e9 \\"}}"#,
        ];
        for frame in frames {
            let v: serde_json::Value = serde_json::from_str(frame).expect("json");
            let scanned = scan_member(frame, b"payload").expect("found");
            let back: serde_json::Value = serde_json::from_str(scanned).expect("scanned json");
            assert_eq!(back, v["payload"], "{frame}");
            let min: serde_json::Value = serde_json::from_str(&minify(scanned)).expect("minified");
            assert_eq!(min, v["payload"], "{frame}");
        }
        // Escaped keys and duplicates are left to serde.
        assert_eq!(scan_member(r#"{"p\u0061yload":{}}"#, b"payload"), None);
        assert_eq!(
            scan_member(r#"{"payload":{},"payload":{}}"#, b"payload"),
            None
        );
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
