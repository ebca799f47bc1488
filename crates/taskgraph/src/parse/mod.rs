//! Pure parsers: bytes of one session file in, [`Session`] out. No file system access here;
//! see [`crate::read`] for that.
//!
//! Every parser is lenient: a line it cannot use becomes a [`ReadWarning`] (file and line) and
//! parsing goes on. None of them panics on any input.

pub mod claude;
pub mod codex;
mod codex_items;
pub mod dsh;
mod dsh_envelope;
mod dsh_fast;
mod dsh_lines;
pub mod gemini;
mod json_shape;
pub mod opencode;
pub mod pi;
mod turns;

use serde_json::Value;

use crate::session::{Agent, ReadWarning, Session};

/// Parses one session file's (decompressed) bytes as `agent`'s format.
///
/// `file` labels warnings. Claude Code subagent files and DSH zstd files need the dedicated
/// entry points ([`claude::parse_subagent`], [`dsh::decode_zstd_frames`]). OpenCode keeps a
/// session in many records (a database or a folder tree), not one file: its bytes here are
/// one `{"session": {…}, "messages": [{"message": {…}, "parts": [{…}]}]}` object (see
/// [`opencode::parse_export`]).
pub fn parse_bytes(agent: Agent, bytes: &[u8], file: &str) -> Session {
    match agent {
        Agent::Dsh => dsh::parse(bytes, file),
        Agent::Pi => pi::parse(bytes, file),
        Agent::ClaudeCode => claude::parse(bytes, file),
        Agent::Codex => codex::parse(bytes, file),
        Agent::Gemini => gemini::parse(bytes, file),
        Agent::OpenCode => opencode::parse_export(bytes, file),
    }
}

/// Guesses the format of a JSONL session from its first lines.
pub fn sniff_agent(bytes: &[u8]) -> Option<Agent> {
    for line in bytes.split(|b| *b == b'\n').take(8) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
        if v.get("projectHash").is_some() || v.get("$set").is_some() {
            return Some(Agent::Gemini);
        }
        if v.get("payload").is_some() || ty == "session_meta" || ty == "turn_context" {
            return Some(Agent::Codex);
        }
        if ty == "session" {
            if v.get("createdAt").is_some() || v.get("delegationDepth").is_some() {
                return Some(Agent::Dsh);
            }
            return Some(Agent::Pi);
        }
        if v.get("seq").is_some() && v.get("data").is_some() {
            return Some(Agent::Dsh);
        }
        if v.get("sessionId").is_some() || v.get("uuid").is_some() || ty == "summary" {
            return Some(Agent::ClaudeCode);
        }
        if v.get("parentId").is_some() && v.get("id").is_some() {
            return Some(Agent::Pi);
        }
    }
    None
}

/// Calls `f(line_number, object)` for every JSON object line of `bytes` (1-based numbers).
///
/// Blank lines are skipped silently; lines that are not JSON objects become warnings. A line
/// holding several JSON objects yields each of them (same line number) and a warning.
pub(crate) fn for_each_json_line(
    bytes: &[u8],
    file: &str,
    warnings: &mut Vec<ReadWarning>,
    mut f: impl FnMut(u64, Value, &mut Vec<ReadWarning>),
) {
    for_each_line(bytes, |lineno, raw, is_open_end| match decode_line(raw) {
        Ok(values) => accept_line(values, lineno, file, warnings, |v, w| f(lineno, v, w)),
        Err(e) => {
            let msg = if is_open_end && e.is_eof() {
                format!("truncated last line ({} bytes)", raw.len())
            } else {
                format!("invalid JSON: {e}")
            };
            warnings.push(ReadWarning::new(file, lineno, msg));
        }
    });
}

/// Calls `f(line_number, line, is_open_end)` for every non-blank line of `bytes` (1-based
/// numbers, a trailing `\r` removed); `is_open_end` is true for a last line without its
/// newline (a line still being written).
pub(crate) fn for_each_line(bytes: &[u8], mut f: impl FnMut(u64, &[u8], bool)) {
    let mut emit = |lineno: u64, raw: &[u8], open_end: bool| {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if !raw.iter().all(u8::is_ascii_whitespace) {
            f(lineno, raw, open_end);
        }
    };
    let mut start = 0;
    let mut lineno = 0u64;
    for newline in memchr::memchr_iter(b'\n', bytes) {
        lineno += 1;
        emit(lineno, &bytes[start..newline], false);
        start = newline + 1;
    }
    if start < bytes.len() {
        emit(lineno + 1, &bytes[start..], true);
    }
}

/// Parses one line as a JSON object; anything else becomes a warning (a torn last line is
/// reported as truncated when `is_open_end`).
pub(crate) fn object_line(
    raw: &[u8],
    lineno: u64,
    is_open_end: bool,
    file: &str,
    warnings: &mut Vec<ReadWarning>,
) -> Option<Value> {
    match serde_json::from_slice::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Some(v),
        Ok(_) => {
            warnings.push(ReadWarning::new(file, lineno, "line is not a JSON object"));
            None
        }
        Err(e) => {
            let msg = if is_open_end && e.is_eof() {
                format!("truncated last line ({} bytes)", raw.len())
            } else {
                format!("invalid JSON: {e}")
            };
            warnings.push(ReadWarning::new(file, lineno, msg));
            None
        }
    }
}

/// Decodes one line: usually one JSON value, but some writers (pi) put several objects on one
/// line. Returns every value decoded, or the error of the first value when the line does not
/// start with valid JSON; a line that decodes as several values is reported by the caller.
fn decode_line(raw: &[u8]) -> std::result::Result<Vec<Value>, serde_json::Error> {
    match serde_json::from_slice::<Value>(raw) {
        Ok(v) => Ok(vec![v]),
        Err(first) => {
            let mut values = Vec::new();
            for v in serde_json::Deserializer::from_slice(raw).into_iter::<Value>() {
                match v {
                    Ok(v) => values.push(v),
                    Err(_) if values.len() >= 2 => break,
                    Err(_) => return Err(first),
                }
            }
            if values.len() >= 2 {
                Ok(values)
            } else {
                Err(first)
            }
        }
    }
}

/// Checks and hands on the values of one line (see [`decode_line`]).
fn accept_line(
    values: Vec<Value>,
    lineno: u64,
    file: &str,
    warnings: &mut Vec<ReadWarning>,
    mut f: impl FnMut(Value, &mut Vec<ReadWarning>),
) {
    if values.len() > 1 {
        warnings.push(ReadWarning::new(
            file,
            lineno,
            format!(
                "line holds {} JSON objects (no newline between them); each was read",
                values.len()
            ),
        ));
    }
    for v in values {
        match v {
            v @ Value::Object(_) => f(v, warnings),
            _ => warnings.push(ReadWarning::new(file, lineno, "line is not a JSON object")),
        }
    }
}

/// Parses one complete line for a streaming reader, as [`for_each_json_line`] would.
pub(crate) fn json_line(
    raw: &[u8],
    lineno: u64,
    file: &str,
    warnings: &mut Vec<ReadWarning>,
) -> Vec<Value> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let mut out = Vec::new();
    if raw.iter().all(u8::is_ascii_whitespace) {
        return out;
    }
    match decode_line(raw) {
        Ok(values) => accept_line(values, lineno, file, warnings, |v, _| out.push(v)),
        Err(e) => warnings.push(ReadWarning::new(file, lineno, format!("invalid JSON: {e}"))),
    }
    out
}

/// Normalises the pending `events` (as a whole-file parse does at the end) and removes those
/// with `seq < w`, which no later push can precede or duplicate.
pub(crate) fn take_before(
    events: &mut Vec<crate::event::Event>,
    w: u64,
) -> Vec<crate::event::Event> {
    crate::session::normalize_events(events);
    let k = events.partition_point(|e| e.seq < w);
    events.drain(..k).collect()
}
