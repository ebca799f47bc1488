//! The never-panicking frame parser.
//!
//! Checks run in the protocol's order: not JSON / not an object / bad `gm` →
//! [`ParseResult::Invalid`]; `gm` ≠ 1 → [`ParseResult::VersionMismatch`]; bad
//! `type`, `payload`, `runId`, `seq`, `ts` → invalid; unknown `type` →
//! [`ParseResult::UnknownType`]; otherwise the payload is validated against its
//! type → [`ParseResult::Ok`] or invalid with the offending path.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::PROTOCOL_VERSION;
use crate::envelope::{Envelope, OpaqueEnvelope};
use crate::extra::Extra;
use crate::message::Message;

/// Largest frame accepted, in bytes (16 MiB, the WebSocket frame cap).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Deepest nesting of arrays/objects accepted (serde_json's recursion limit).
pub const MAX_DEPTH: usize = 128;

/// One problem found in a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParseIssue {
    /// Where, as a dotted path (`payload.deltas[0].t`); empty for the whole frame.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The outcome of parsing one frame. Exactly one of four.
// `Ok` is by far the common case, so boxing it would add an allocation to
// nearly every frame to shrink the rare ones.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ParseResult {
    /// A valid envelope of a known type.
    Ok(Envelope),
    /// A valid envelope of a type this version does not know: keep or ignore it, never fail.
    UnknownType(OpaqueEnvelope),
    /// The sender speaks another protocol major: stop talking to it.
    VersionMismatch {
        /// The `gm` it sent.
        received: i64,
    },
    /// Structurally broken: drop the frame.
    Invalid {
        /// One-line reason.
        reason: String,
        /// Details, when there are any.
        issues: Vec<ParseIssue>,
    },
}

impl ParseResult {
    /// A short verdict: `ok`, `unknown-type`, `version-mismatch: N` or `invalid: reason`.
    pub fn verdict(&self) -> String {
        match self {
            ParseResult::Ok(_) => "ok".to_owned(),
            ParseResult::UnknownType(_) => "unknown-type".to_owned(),
            ParseResult::VersionMismatch { received } => format!("version-mismatch: {received}"),
            ParseResult::Invalid { reason, .. } => format!("invalid: {reason}"),
        }
    }

    fn invalid(reason: impl Into<String>) -> Self {
        ParseResult::Invalid {
            reason: reason.into(),
            issues: Vec::new(),
        }
    }
}

/// Parses one frame. Never panics; memory use is bounded by the frame size.
///
/// A string holding a lone UTF-16 surrogate escape (`"\ud800"`, which
/// JavaScript accepts and the Python client writes on purpose) cannot be a Rust
/// string: such a frame is parsed again with each lone surrogate replaced by
/// U+FFFD instead of being dropped.
pub fn parse_envelope(frame: &str) -> ParseResult {
    if frame.len() > MAX_FRAME_BYTES {
        return ParseResult::invalid(format!(
            "frame is {} bytes, over the {} byte limit",
            frame.len(),
            MAX_FRAME_BYTES
        ));
    }
    let result = parse_frame(frame);
    if matches!(result, ParseResult::Invalid { .. })
        && let Some(fixed) = replace_lone_surrogates(frame)
    {
        return parse_frame(&fixed);
    }
    result
}

/// `frame` with every lone surrogate escape replaced by `\ufffd`, or `None`
/// when it has none.
fn replace_lone_surrogates(frame: &str) -> Option<String> {
    fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
        let digits = bytes.get(at..at + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        u16::from_str_radix(text, 16).ok()
    }
    let bytes = frame.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex4(bytes, i + 2) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high
            && bytes.get(i + 6) == Some(&b'\\')
            && bytes.get(i + 7) == Some(&b'u')
            && hex4(bytes, i + 8).is_some_and(|next| (0xDC00..0xE000).contains(&next))
        {
            i += 12; // a proper pair
            continue;
        }
        if is_high || is_low {
            let buf = out.get_or_insert_with(|| String::with_capacity(frame.len()));
            buf.push_str(&frame[copied..i]);
            buf.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    let mut buf = out?;
    buf.push_str(&frame[copied..]);
    Some(buf)
}

fn parse_frame(frame: &str) -> ParseResult {
    // One pass that types the payload as it goes by, when `gm` and `type` come
    // before it (the order every client writes). Anything unusual (another
    // order, a duplicate, any error) falls back to reading the envelope with
    // raw values first, which is what decides every verdict but `ok`.
    let mut pre_typed: Option<Message> = None;
    let fields = match read_fields(frame, Some(&mut pre_typed)) {
        Ok(fields) => fields,
        Err(_) => {
            pre_typed = None;
            match read_fields(frame, None) {
                Ok(fields) => fields,
                Err(e) => return ParseResult::invalid(json_error_reason(&e)),
            }
        }
    };
    let Fields {
        gm,
        seq,
        ts,
        run_id,
        type_name,
        payload,
        extra: extra_raw,
    } = fields;

    let Some(gm) = gm.and_then(as_version) else {
        return ParseResult::invalid("missing or non-integer 'gm'");
    };
    if gm != i64::from(PROTOCOL_VERSION) {
        return ParseResult::VersionMismatch { received: gm };
    }
    let Some(type_name) = type_name.and_then(as_string) else {
        return ParseResult::invalid("missing or non-string 'type'");
    };
    let raw_payload = match payload {
        _ if pre_typed.is_some() => None,
        Some(raw) if raw.get().starts_with('{') => Some(raw.get()),
        _ => return ParseResult::invalid("missing or non-object 'payload'"),
    };
    let Some(run_id) = run_id.and_then(as_string) else {
        return ParseResult::invalid("missing or non-string 'runId'");
    };
    if run_id.is_empty() {
        return ParseResult::invalid("'runId' is empty");
    }
    let Some(seq) = seq.and_then(as_sequence) else {
        return ParseResult::invalid("missing or invalid 'seq' (a non-negative integer)");
    };
    let Some(ts) = ts.and_then(as_millis) else {
        return ParseResult::invalid("missing or non-numeric 'ts'");
    };
    let mut extra = Map::new();
    for (key, raw) in extra_raw {
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(v) => {
                extra.insert(key.into_owned(), v);
            }
            Err(e) => return ParseResult::invalid(json_error_reason(&e)),
        }
    }

    let Some(payload) = raw_payload else {
        return match pre_typed {
            Some(message) => ParseResult::Ok(Envelope {
                gm: PROTOCOL_VERSION,
                seq,
                ts,
                run_id: run_id.into_owned(),
                message,
                extra,
            }),
            None => ParseResult::invalid("missing or non-object 'payload'"),
        };
    };
    let Some(message) = typed_message(&type_name, payload) else {
        let payload: Extra = match serde_json::from_str(payload) {
            Ok(p) => p,
            Err(e) => return ParseResult::invalid(json_error_reason(&e)),
        };
        return ParseResult::UnknownType(OpaqueEnvelope {
            gm: PROTOCOL_VERSION,
            seq,
            ts,
            run_id: run_id.into_owned(),
            type_name: type_name.into_owned(),
            payload,
            extra,
        });
    };
    match message {
        Ok(message) => ParseResult::Ok(Envelope {
            gm: PROTOCOL_VERSION,
            seq,
            ts,
            run_id: run_id.into_owned(),
            message,
            extra,
        }),
        Err(issue) => ParseResult::Invalid {
            reason: format!("invalid '{type_name}' payload: {}", issue.message),
            issues: vec![issue],
        },
    }
}

/// The typed message of a known `type_name`, or its first issue; `None` for a type this
/// version does not know.
fn typed_message(type_name: &str, payload: &str) -> Option<Result<Message, ParseIssue>> {
    Some(match type_name {
        "run.started" => typed(payload, Message::RunStarted),
        "run.finished" => typed(payload, Message::RunFinished),
        "graph.hint" => typed(payload, Message::GraphHint),
        "node.started" => typed(payload, Message::NodeStarted),
        "node.token" => typed(payload, Message::NodeToken),
        "node.finished" => typed(payload, Message::NodeFinished),
        "node.error" => typed(payload, Message::NodeError),
        "exec.paused" => typed(payload, Message::ExecPaused),
        "exec.resumed" => typed(payload, Message::ExecResumed),
        "exec.refused" => typed(payload, Message::ExecRefused),
        "exec.resume" => typed(payload, Message::ExecResume),
        "breakpoint.set" => typed(payload, Message::BreakpointSet),
        "breakpoint.clear" => typed(payload, Message::BreakpointClear),
        "mode.set" => typed(payload, Message::ModeSet),
        "hello" => typed(payload, Message::Hello),
        "hello.ack" => typed(payload, Message::HelloAck),
        _ => return None,
    })
}

fn typed<T: DeserializeOwned>(
    payload: &str,
    wrap: impl FnOnce(T) -> Message,
) -> Result<Message, ParseIssue> {
    // Fast path without path tracking (which copies every key it passes);
    // only a payload that fails is parsed again to find where.
    if let Ok(value) = serde_json::from_str::<T>(payload) {
        return Ok(wrap(value));
    }
    let mut de = serde_json::Deserializer::from_str(payload);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(value) => Ok(wrap(value)),
        Err(err) => {
            let path = err.path().to_string();
            let message = strip_position(&err.into_inner().to_string());
            Err(ParseIssue {
                path: if path == "." || path.is_empty() {
                    "payload".to_owned()
                } else {
                    format!("payload.{path}")
                },
                message: if message.contains("recursion limit") {
                    format!("nesting deeper than {MAX_DEPTH} levels")
                } else {
                    message
                },
            })
        }
    }
}

/// serde_json messages end in " at line 1 column 57"; keep them short and stable.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn json_error_reason(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if msg.contains("recursion limit") {
        format!("nesting deeper than {MAX_DEPTH} levels")
    } else if e.is_syntax() || e.is_eof() {
        format!("not JSON: {msg}")
    } else if msg.starts_with("invalid type") {
        "envelope is not an object".to_owned()
    } else {
        msg
    }
}

fn as_integer(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if text.contains(['.', 'e', 'E']) {
        // 1.0 is not an integer on the wire; neither is 1e0.
        return None;
    }
    text.parse::<i64>().ok()
}

/// `seq` as a non-negative integer (the full `u64` range; `-0` is 0).
fn as_sequence(raw: &RawValue) -> Option<u64> {
    match raw.get() {
        "-0" => Some(0),
        text => text.parse::<u64>().ok(),
    }
}

/// `gm` as an integer. An integer too large for `i64` is still an integer (a
/// version this build does not speak), so it saturates rather than being invalid.
fn as_version(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if let Some(v) = as_integer(raw) {
        return Some(v);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Some(if text.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        });
    }
    None
}

fn as_millis(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if let Ok(v) = text.parse::<i64>() {
        return Some(v);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && !text.starts_with('"') => Some(v.round() as i64),
        _ => None,
    }
}

fn as_string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    if !text.contains('\\') {
        return Some(Cow::Borrowed(&text[1..text.len() - 1]));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// The envelope object split into its fields, values unparsed.
struct Fields<'a> {
    gm: Option<&'a RawValue>,
    seq: Option<&'a RawValue>,
    ts: Option<&'a RawValue>,
    run_id: Option<&'a RawValue>,
    type_name: Option<&'a RawValue>,
    payload: Option<&'a RawValue>,
    extra: Vec<(Cow<'a, str>, &'a RawValue)>,
}

/// Reads the envelope object. With `typed`, the fast path: see [`HeadSeed`].
fn read_fields<'a>(
    frame: &'a str,
    typed: Option<&mut Option<Message>>,
) -> Result<Fields<'a>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(frame);
    let fields = de::DeserializeSeed::deserialize(HeadSeed { typed }, &mut de)?;
    de.end()?;
    Ok(fields)
}

struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Reads the envelope object. With `typed` (the fast path), a payload of a
/// known type that follows a valid `gm` and its `type` is deserialised in
/// place into `typed` (saving a second pass over it), and any duplicate of an
/// envelope field is an error: the caller then reads again without `typed`,
/// where the last duplicate wins, as in `JSON.parse`.
struct HeadSeed<'s> {
    typed: Option<&'s mut Option<Message>>,
}

impl<'de> de::DeserializeSeed<'de> for HeadSeed<'_> {
    type Value = Fields<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed<'_> {
    type Value = Fields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an envelope object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut typed = self.typed;
        let fast = typed.is_some();
        let mut f = Fields {
            gm: None,
            seq: None,
            ts: None,
            run_id: None,
            type_name: None,
            payload: None,
            extra: Vec::new(),
        };
        // Duplicate keys are resolved by overwriting (the last one wins):
        // searching for them would make a frame with many keys quadratic.
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let slot = match key.as_ref() {
                "gm" => &mut f.gm,
                "seq" => &mut f.seq,
                "ts" => &mut f.ts,
                "runId" => &mut f.run_id,
                "type" => &mut f.type_name,
                "payload" => {
                    if let Some(out) = typed.as_deref_mut() {
                        if f.payload.is_some() || out.is_some() {
                            return Err(de::Error::custom("duplicate payload"));
                        }
                        let known = f.gm.and_then(as_version) == Some(i64::from(PROTOCOL_VERSION));
                        if let Some(type_name) = f.type_name.and_then(as_string).filter(|_| known)
                            && Message::direction_of(&type_name).is_some()
                        {
                            *out = Some(map.next_value_seed(PayloadSeed(&type_name))?);
                            continue;
                        }
                    }
                    &mut f.payload
                }
                _ => {
                    f.extra.push((key, map.next_value()?));
                    continue;
                }
            };
            if fast && slot.is_some() {
                return Err(de::Error::custom("duplicate envelope field"));
            }
            *slot = Some(map.next_value()?);
        }
        Ok(f)
    }
}

/// Deserialises a payload as the message type named by the envelope.
struct PayloadSeed<'t>(&'t str);

impl<'de> de::DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = Message;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Message, D::Error> {
        use serde::Deserialize;
        Ok(match self.0 {
            "run.started" => Message::RunStarted(Deserialize::deserialize(d)?),
            "run.finished" => Message::RunFinished(Deserialize::deserialize(d)?),
            "graph.hint" => Message::GraphHint(Deserialize::deserialize(d)?),
            "node.started" => Message::NodeStarted(Deserialize::deserialize(d)?),
            "node.token" => Message::NodeToken(Deserialize::deserialize(d)?),
            "node.finished" => Message::NodeFinished(Deserialize::deserialize(d)?),
            "node.error" => Message::NodeError(Deserialize::deserialize(d)?),
            "exec.paused" => Message::ExecPaused(Deserialize::deserialize(d)?),
            "exec.resumed" => Message::ExecResumed(Deserialize::deserialize(d)?),
            "exec.refused" => Message::ExecRefused(Deserialize::deserialize(d)?),
            "exec.resume" => Message::ExecResume(Deserialize::deserialize(d)?),
            "breakpoint.set" => Message::BreakpointSet(Deserialize::deserialize(d)?),
            "breakpoint.clear" => Message::BreakpointClear(Deserialize::deserialize(d)?),
            "mode.set" => Message::ModeSet(Deserialize::deserialize(d)?),
            "hello" => Message::Hello(Deserialize::deserialize(d)?),
            "hello.ack" => Message::HelloAck(Deserialize::deserialize(d)?),
            other => return Err(de::Error::custom(format_args!("unknown type {other}"))),
        })
    }
}
