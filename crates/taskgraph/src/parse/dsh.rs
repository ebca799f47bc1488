//! DeepSeek Harness (DSH) session files.
//!
//! v0 `session.jsonl.zstd` is a run of zstd frames appended one after another; newer writers
//! produce `session.v1…v4.jsonl[.zstd]`. All versions share the line shape: a header
//! `{type:"session", …}` then `{type, seq, time, data}` lines. The shapes that moved between
//! versions (usage in `assistant/chunk` vs `assistant/message`, failed attempts in
//! `llm/retry` vs `assistant/attempt`, tool results with role `tool`) are all accepted.

use std::io::Read;

use serde_json::Value;

use crate::event::{
    Event, EventKind, Failure, SessionStart, SubagentDescriptor, Todo, TurnEndKind, TurnReason,
    Usage,
};
use crate::session::{Agent, ReadWarning, Session};
use crate::util::{code_string, parse_arguments, str_field, time_value_ms, u64_field, value_text};

/// The 4-byte zstd frame magic number (`28 B5 2F FD`).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Decodes a file made of concatenated zstd frames.
///
/// The input is split on the frame magic and each frame decoded on its own, so a torn (partly
/// written) last frame still yields every complete line before it; the damage is reported in
/// `warnings`. Never panics.
pub fn decode_zstd_frames(bytes: &[u8], file: &str, warnings: &mut Vec<ReadWarning>) -> Vec<u8> {
    let starts: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == ZSTD_MAGIC)
        .map(|(i, _)| i)
        .collect();
    let Some(&first) = starts.first() else {
        if !bytes.is_empty() {
            warnings.push(ReadWarning::new(file, 0, "no zstd frame found"));
        }
        return Vec::new();
    };
    if first > 0 {
        warnings.push(ReadWarning::new(
            file,
            0,
            format!("{first} bytes before the first zstd frame skipped"),
        ));
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < starts.len() {
        let start = starts[i];
        // A magic inside compressed data would split a frame in two: on failure, retry with
        // the next few boundaries joined before giving up on the frame.
        let mut decoded = None;
        let mut first_partial = Vec::new();
        for j in (i + 1)..=(i + 4).min(starts.len()) {
            let end = starts.get(j).copied().unwrap_or(bytes.len());
            match decode_one(&bytes[start..end]) {
                Ok(buf) => {
                    decoded = Some((buf, j));
                    break;
                }
                Err(partial) => {
                    if j == i + 1 {
                        first_partial = partial;
                    }
                    if end == bytes.len() {
                        break;
                    }
                }
            }
        }
        match decoded {
            Some((buf, next)) => {
                out.extend_from_slice(&buf);
                i = next;
            }
            None => {
                // Keep the complete lines of the torn frame.
                let keep = first_partial
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |p| p + 1);
                out.extend_from_slice(&first_partial[..keep]);
                warnings.push(ReadWarning::new(
                    file,
                    0,
                    format!(
                        "torn or corrupt zstd frame at byte {start}; kept {keep} decoded bytes of it"
                    ),
                ));
                i += 1;
            }
        }
    }
    out
}

/// Decodes one (or several) complete frames; on error returns what was decoded before it.
fn decode_one(frame: &[u8]) -> Result<Vec<u8>, Vec<u8>> {
    let mut out = Vec::new();
    let Ok(mut dec) = zstd::stream::read::Decoder::with_buffer(frame) else {
        return Err(out);
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match dec.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => return Err(out),
        }
    }
}

/// Parses decompressed DSH JSONL into a session (path left empty).
pub fn parse(bytes: &[u8], file: &str) -> Session {
    let mut warnings = Vec::new();
    let mut session = Session::new("", Agent::Dsh);
    let mut events: Vec<Event> = Vec::new();
    let mut header_seen = false;
    let mut seed_end: Option<u64> = None;
    let mut last_time = 0i64;
    super::for_each_json_line(bytes, file, &mut warnings, |line, v, warnings| {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
        if ty == "session" && !header_seen {
            header_seen = true;
            let header = header_from(&v);
            last_time = header.created_ms.unwrap_or(0);
            session.id = header.id.clone();
            session.header = header.clone();
            events.push(Event::new(0, last_time, EventKind::Session(header)));
            return;
        }
        let Some(seq) = u64_field(&v, &["seq"]) else {
            warnings.push(ReadWarning::new(
                file,
                line,
                format!("event `{ty}` without seq"),
            ));
            return;
        };
        let time = v.get("time").and_then(time_value_ms).unwrap_or(last_time);
        last_time = time;
        let data = v.get("data").unwrap_or(&Value::Null);
        if ty == "session/end-seed" {
            seed_end = Some(seq);
            return;
        }
        convert(ty, seq, time, data, &mut events, file, line, warnings);
    });
    if !header_seen {
        warnings.push(ReadWarning::new(file, 1, "no session header line"));
    }
    if let Some(seed) = seed_end {
        // A fork replays its parent's events up to the marker: those belong to the parent.
        let before = events.len();
        events.retain(|e| e.seq == 0 && matches!(e.kind, EventKind::Session(_)) || e.seq > seed);
        session.meta.insert(
            "seed_events".into(),
            Value::from((before - events.len()) as u64),
        );
    }
    session.events = events;
    session.normalize_events();
    session.warnings = warnings;
    session
}

/// Reads a DSH header object.
pub fn header_from(v: &Value) -> SessionStart {
    SessionStart {
        id: str_field(v, &["id", "sessionId"])
            .unwrap_or_default()
            .to_owned(),
        version: v.get("version").map(|x| match x {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        cwd: str_field(v, &["cwd"]).map(str::to_owned),
        created_ms: v
            .get("createdAt")
            .or_else(|| v.get("timestamp"))
            .and_then(time_value_ms),
        parent_session: str_field(v, &["parentSession", "parentSessionId"]).map(str::to_owned),
        delegation_depth: u64_field(v, &["delegationDepth"]).unwrap_or(0) as u32,
        origin: v.get("origin").map(value_text),
        raw: v.clone(),
    }
}

fn num(v: &Value, keys: &[&str]) -> Option<u32> {
    u64_field(v, keys).map(|n| n.min(u64::from(u32::MAX)) as u32)
}

/// Reads token usage from `{inputTokens, outputTokens, cacheReadTokens}` (or snake-case aliases).
fn usage_from(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    Some(Usage {
        input: u64_field(u, &["inputTokens", "input_tokens", "input", "promptTokens"]).unwrap_or(0),
        output: u64_field(
            u,
            &[
                "outputTokens",
                "output_tokens",
                "output",
                "completionTokens",
            ],
        )
        .unwrap_or(0),
        cache_read: u64_field(
            u,
            &[
                "cacheReadTokens",
                "cache_read_tokens",
                "cacheRead",
                "cachedInputTokens",
            ],
        )
        .unwrap_or(0),
    })
}

fn reason_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(_) => str_field(v, &["kind", "type", "reason"]).map(str::to_owned),
        _ => None,
    }
}

fn failure_from(v: &Value) -> Failure {
    match v {
        Value::Object(_) => Failure {
            message: str_field(v, &["message", "error", "text"])
                .map(str::to_owned)
                .unwrap_or_else(|| v.to_string()),
            code: code_string(v.get("code").or_else(|| v.get("status"))),
        },
        Value::Null => Failure::default(),
        other => Failure {
            message: value_text(other),
            code: None,
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn convert(
    ty: &str,
    seq: u64,
    time: i64,
    data: &Value,
    events: &mut Vec<Event>,
    file: &str,
    line: u64,
    warnings: &mut Vec<ReadWarning>,
) {
    let mut push = |kind| events.push(Event::new(seq, time, kind));
    match ty {
        "session/title" => {
            if let Some(t) = str_field(data, &["title", "name"]) {
                push(EventKind::Title {
                    title: t.to_owned(),
                });
            }
        }
        "user/message" => {
            let text = data
                .get("text")
                .or_else(|| data.get("content"))
                .or_else(|| data.get("message").map(|m| m.get("content").unwrap_or(m)))
                .map(value_text)
                .unwrap_or_default();
            push(EventKind::UserMessage { text });
        }
        "turn/start" => push(EventKind::TurnStart {
            turn: num(data, &["turn"]).unwrap_or(0),
        }),
        "turn/end" => {
            let reason = data.get("reason").unwrap_or(&Value::Null);
            let kind = reason_text(reason)
                .map(|s| TurnEndKind::parse_lenient(&s))
                .unwrap_or(TurnEndKind::Completed);
            let message = str_field(reason, &["message", "error"])
                .or_else(|| str_field(data, &["error", "message"]))
                .map(str::to_owned);
            push(EventKind::TurnEnd {
                turn: num(data, &["turn"]).unwrap_or(0),
                reason: TurnReason { kind, message },
            });
        }
        "step/start" | "step/end" => {
            let turn = num(data, &["turn"]).unwrap_or(0);
            let step = num(data, &["step"]).unwrap_or(0);
            push(if ty == "step/start" {
                EventKind::StepStart { turn, step }
            } else {
                EventKind::StepEnd { turn, step }
            });
        }
        "request/header" => {
            let cfg = data
                .get("header")
                .and_then(|h| h.get("config"))
                .or_else(|| data.get("config"))
                .unwrap_or(data);
            push(EventKind::RequestHeader {
                provider: str_field(cfg, &["provider"]).map(str::to_owned),
                model: str_field(cfg, &["model", "modelId"]).map(str::to_owned),
            });
        }
        "assistant/chunk" => {
            let chunk = data.get("chunk").unwrap_or(data);
            match str_field(chunk, &["type"]).unwrap_or_default() {
                "usage" => {
                    let u = chunk.get("usage").unwrap_or(chunk);
                    if let Some(u) = usage_from(u) {
                        push(EventKind::Usage(u));
                    }
                }
                "finish" => {
                    if let Some(r) = chunk.get("reason").and_then(reason_text) {
                        push(EventKind::Finish { reason: r });
                    }
                }
                _ => {}
            }
        }
        "assistant/message" => {
            let msg = data.get("message").unwrap_or(data);
            if let Some(u) = data
                .get("usage")
                .or_else(|| msg.get("usage"))
                .and_then(usage_from)
            {
                push(EventKind::Usage(u));
            }
            if let Some(r) = ["finishReason", "finish", "stopReason"]
                .iter()
                .find_map(|k| data.get(*k).or_else(|| msg.get(*k)))
                .and_then(reason_text)
            {
                push(EventKind::Finish { reason: r });
            }
        }
        "assistant/attempt" | "llm/retry" => {
            // v2+ records each failed attempt; v0/v1 record the retry.
            let failure = failure_from(
                data.get("failure")
                    .or_else(|| data.get("error"))
                    .unwrap_or(&Value::Null),
            );
            if ty == "assistant/attempt"
                && data.get("failure").is_none()
                && data.get("error").is_none()
            {
                return; // a successful attempt record: nothing to add
            }
            push(EventKind::LlmRetry {
                retry: num(data, &["retry", "attempt"]).unwrap_or(1),
                max_retries: num(data, &["maxRetries"]),
                delay_ms: u64_field(data, &["delayMs"]),
                failure,
            });
        }
        "tool/call" => {
            let call_id = str_field(data, &["callId", "toolCallId", "id"]).unwrap_or_default();
            if call_id.is_empty() {
                warnings.push(ReadWarning::new(file, line, "tool/call without callId"));
                return;
            }
            push(EventKind::ToolCall {
                turn: num(data, &["turn"]).unwrap_or(0),
                step: num(data, &["step"]).unwrap_or(0),
                call_id: call_id.to_owned(),
                name: str_field(data, &["name", "toolName"])
                    .unwrap_or("tool")
                    .to_owned(),
                arguments: parse_arguments(
                    data.get("arguments")
                        .or_else(|| data.get("args"))
                        .unwrap_or(&Value::Null),
                ),
            });
        }
        "tool/result" => {
            let msg = data.get("message").unwrap_or(data);
            let top_error = data.get("error").filter(|e| !e.is_null());
            let source_id = msg
                .get("source")
                .and_then(|s| str_field(s, &["callId", "toolCallId"]))
                .or_else(|| str_field(data, &["callId", "toolCallId"]));
            let mut any = false;
            if let Some(Value::Array(parts)) = msg.get("content") {
                for p in parts {
                    let pty = str_field(p, &["type"]).unwrap_or_default();
                    if !pty.is_empty() && pty != "tool-result" && pty != "tool_result" {
                        continue;
                    }
                    let Some(id) = str_field(p, &["toolCallId", "callId"]).or(source_id) else {
                        continue;
                    };
                    let out = p
                        .get("content")
                        .or_else(|| p.get("output"))
                        .or_else(|| p.get("result"))
                        .map(value_text)
                        .unwrap_or_default();
                    let is_error = p.get("isError").and_then(Value::as_bool).unwrap_or(false)
                        || top_error.is_some();
                    any = true;
                    push(EventKind::ToolResult {
                        call_id: id.to_owned(),
                        output: out,
                        is_error,
                    });
                }
            }
            if !any {
                match source_id {
                    Some(id) => {
                        let out = msg
                            .get("content")
                            .or_else(|| data.get("output"))
                            .map(value_text)
                            .or_else(|| top_error.map(value_text))
                            .unwrap_or_default();
                        push(EventKind::ToolResult {
                            call_id: id.to_owned(),
                            output: out,
                            is_error: top_error.is_some()
                                || data
                                    .get("isError")
                                    .and_then(Value::as_bool)
                                    .unwrap_or(false),
                        });
                    }
                    None => {
                        warnings.push(ReadWarning::new(file, line, "tool/result without call id"))
                    }
                }
            }
        }
        "todo/write" => push(EventKind::TodoWrite {
            todos: Todo::list_from_value(data.get("todos").unwrap_or(data)),
            call_id: str_field(data, &["callId"]).map(str::to_owned),
        }),
        "subagent/descriptor" => {
            let d = data.get("descriptor").unwrap_or(data);
            push(EventKind::SubagentDescriptor(SubagentDescriptor {
                call_id: str_field(d, &["callId", "toolCallId"]).map(str::to_owned),
                session_id: str_field(d, &["sessionId", "childSession", "session"])
                    .map(str::to_owned),
                name: str_field(d, &["name", "agent", "type"]).map(str::to_owned),
                description: str_field(d, &["description"]).map(str::to_owned),
                prompt: str_field(d, &["prompt", "task"]).map(str::to_owned),
            }));
        }
        // Known but not graphed, or unknown: ignored on purpose.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_last_frame_keeps_earlier_lines() {
        let a = zstd::encode_all(&b"{\"a\":1}\n"[..], 3).unwrap_or_default();
        let b = zstd::encode_all(&b"{\"b\":2}\n{\"c\":3}\n"[..], 3).unwrap_or_default();
        let mut all = a.clone();
        all.extend_from_slice(&b[..b.len() - 3]);
        let mut w = Vec::new();
        let out = decode_zstd_frames(&all, "f", &mut w);
        assert!(out.starts_with(b"{\"a\":1}\n"));
        assert_eq!(w.len(), 1);
    }
}
