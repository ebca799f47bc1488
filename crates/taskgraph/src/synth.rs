//! Deterministic synthetic sessions, for benchmarks, examples and tests.
//!
//! The generator writes plausible DSH-shaped trajectories: turns of ~40 steps, one to three
//! parallel tool calls per step (bash, read, grep, edit, test runs, skills, plans), a failing
//! call re-sent with the same arguments every 17th call, and an LLM retry every 50th step.

use serde_json::json;

use crate::event::{Event, EventKind, Failure, SessionStart, TurnEndKind, TurnReason, Usage};

/// Exactly `n` events of one synthetic session (cut wherever `n` falls, so the session may
/// end mid-step, like a live one).
pub fn session_events(n: usize) -> Vec<Event> {
    let mut out = Vec::with_capacity(n + 16);
    let mut t = 1_787_600_000_000i64;
    let mut seq = 0u64;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m.max(1)
    };
    let mut push = |out: &mut Vec<Event>, t: i64, kind| {
        out.push(Event::new(seq, t, kind));
        seq += 1;
    };
    push(
        &mut out,
        t,
        EventKind::Session(SessionStart {
            id: "synthetic".into(),
            version: Some("1".into()),
            cwd: Some("/work/synthetic".into()),
            created_ms: Some(t),
            ..SessionStart::default()
        }),
    );
    let mut call_no = 0u64;
    let mut turn = 0u32;
    while out.len() < n {
        turn += 1;
        push(
            &mut out,
            t,
            EventKind::UserMessage {
                text: format!("request {turn}"),
            },
        );
        push(&mut out, t, EventKind::TurnStart { turn });
        let mut retry_args: Vec<(String, serde_json::Value)> = Vec::new();
        for step in 1..=40u32 {
            t += 50;
            push(&mut out, t, EventKind::StepStart { turn, step });
            push(
                &mut out,
                t,
                EventKind::RequestHeader {
                    provider: Some("deepseek".into()),
                    model: Some("deepseek-chat".into()),
                },
            );
            if (u64::from(turn) * 40 + u64::from(step)) % 50 == 0 {
                t += 500;
                push(
                    &mut out,
                    t,
                    EventKind::LlmRetry {
                        retry: 1,
                        max_retries: Some(3),
                        delay_ms: Some(500),
                        failure: Failure {
                            message: "overloaded".into(),
                            code: Some("529".into()),
                        },
                    },
                );
            }
            t += 300 + next(3000) as i64;
            push(
                &mut out,
                t,
                EventKind::Usage(Usage {
                    input: 1000 + next(5000),
                    output: 50 + next(500),
                    cache_read: next(4000),
                }),
            );
            let last = step == 40;
            push(
                &mut out,
                t,
                EventKind::Finish {
                    reason: if last {
                        "stop".into()
                    } else {
                        "tool-calls".into()
                    },
                },
            );
            let mut calls = Vec::new();
            if !last {
                // Re-send last step's failed calls first, then new ones.
                let mut batch = std::mem::take(&mut retry_args);
                for _ in 0..=next(3) {
                    call_no += 1;
                    let (name, args) = match call_no % 9 {
                        0 => ("bash", json!({"command": "cargo test -p app"})),
                        1 | 2 => ("read", json!({"path": format!("src/m{}.rs", next(200))})),
                        3 => ("grep", json!({"pattern": format!("fn f{}", next(1000))})),
                        4 => (
                            "edit",
                            json!({"path": format!("src/m{}.rs", next(50)), "old": "a", "new": "b"}),
                        ),
                        5 => ("skill", json!({"name": "lint"})),
                        6 => (
                            "todo_write",
                            json!({"todos": [{"content": "x", "status": "pending"}]}),
                        ),
                        _ => ("bash", json!({"command": format!("ls dir{}", next(100))})),
                    };
                    batch.push((name.to_owned(), args));
                }
                for (name, args) in batch {
                    call_no += 1;
                    let id = format!("call_{call_no}");
                    push(
                        &mut out,
                        t,
                        EventKind::ToolCall {
                            turn,
                            step,
                            call_id: id.clone(),
                            name: name.clone(),
                            arguments: args.clone(),
                        },
                    );
                    calls.push((id, name, args));
                }
            }
            push(&mut out, t, EventKind::StepEnd { turn, step });
            for (id, name, args) in calls {
                t += 20 + next(1500) as i64;
                let fail = next(17) == 0;
                if fail {
                    retry_args.push((name, args));
                }
                push(
                    &mut out,
                    t,
                    EventKind::ToolResult {
                        call_id: id,
                        output: format!("output of {call_no}"),
                        is_error: fail,
                    },
                );
            }
            if out.len() >= n {
                break;
            }
        }
        t += 100;
        push(
            &mut out,
            t,
            EventKind::TurnEnd {
                turn,
                reason: TurnReason::new(TurnEndKind::Completed),
            },
        );
        t += 5_000;
    }
    out.truncate(n);
    out
}

/// Writes `events` as the lines of a DSH session file (`session.v1.jsonl` shape): a header,
/// then one `{type, seq, time, data}` line per event in DSH's own data shapes (usage and
/// finish as `assistant/chunk`, arguments as a JSON string, results as `message.content`
/// parts). [`crate::parse::dsh::parse`] reads the events back.
pub fn dsh_jsonl(events: &[Event]) -> Vec<u8> {
    let mut out = Vec::with_capacity(events.len() * 200);
    for e in events {
        let line = dsh_line(e);
        // Writing a `Value` to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut out, &line);
        out.push(b'\n');
    }
    out
}

/// One event as a DSH line.
fn dsh_line(e: &Event) -> serde_json::Value {
    let (ty, data) = match &e.kind {
        EventKind::Session(h) => {
            return json!({
                "type": "session",
                "version": h.version.clone().unwrap_or_else(|| "1".into()),
                "id": h.id,
                "createdAt": h.created_ms.unwrap_or(e.time_ms),
                "cwd": h.cwd,
                "delegationDepth": h.delegation_depth,
            });
        }
        EventKind::Title { title } => ("session/title", json!({ "title": title })),
        EventKind::UserMessage { text } => ("user/message", json!({ "text": text })),
        EventKind::TurnStart { turn } => ("turn/start", json!({ "turn": turn })),
        EventKind::TurnEnd { turn, reason } => (
            "turn/end",
            json!({ "turn": turn, "reason": { "kind": reason.kind.as_str(), "message": reason.message } }),
        ),
        EventKind::StepStart { turn, step } => {
            ("step/start", json!({ "turn": turn, "step": step }))
        }
        EventKind::StepEnd { turn, step } => ("step/end", json!({ "turn": turn, "step": step })),
        EventKind::RequestHeader { provider, model } => (
            "request/header",
            json!({ "header": { "config": { "provider": provider, "model": model } } }),
        ),
        EventKind::Usage(u) => (
            "assistant/chunk",
            json!({ "chunk": { "type": "usage", "usage": {
                "inputTokens": u.input, "outputTokens": u.output, "cacheReadTokens": u.cache_read,
            } } }),
        ),
        EventKind::Finish { reason } => (
            "assistant/chunk",
            json!({ "chunk": { "type": "finish", "reason": { "kind": reason } } }),
        ),
        EventKind::LlmRetry {
            retry,
            max_retries,
            delay_ms,
            failure,
        } => (
            "llm/retry",
            json!({ "retry": retry, "maxRetries": max_retries, "delayMs": delay_ms,
                    "failure": { "message": failure.message, "code": failure.code } }),
        ),
        EventKind::ToolCall {
            turn,
            step,
            call_id,
            name,
            arguments,
        } => (
            "tool/call",
            json!({ "turn": turn, "step": step, "callId": call_id, "name": name,
                    "arguments": arguments.to_string() }),
        ),
        EventKind::ToolCancelled { call_id, reason } => (
            "tool/cancelled",
            json!({ "callId": call_id, "reason": reason }),
        ),
        EventKind::ToolResult {
            call_id,
            output,
            is_error,
        } => (
            "tool/result",
            json!({ "message": { "source": { "callId": call_id }, "content": [
                { "type": "tool-result", "toolCallId": call_id, "content": output, "isError": is_error },
            ] } }),
        ),
        EventKind::TodoWrite { todos, call_id } => {
            ("todo/write", json!({ "todos": todos, "callId": call_id }))
        }
        EventKind::SubagentDescriptor(d) => (
            "subagent/descriptor",
            json!({ "descriptor": {
                "callId": d.call_id, "sessionId": d.session_id, "name": d.name,
                "description": d.description, "prompt": d.prompt,
            } }),
        ),
    };
    json!({ "type": ty, "seq": e.seq, "time": e.time_ms, "data": data })
}

/// Compresses DSH JSONL the way DSH appends to `session.jsonl.zstd`: one zstd frame per
/// `lines_per_frame` lines, frames concatenated.
pub fn zstd_frames(jsonl: &[u8], lines_per_frame: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(jsonl.len() / 4);
    let mut rest = jsonl;
    while !rest.is_empty() {
        let mut end = 0;
        for _ in 0..lines_per_frame.max(1) {
            match rest[end..].iter().position(|b| *b == b'\n') {
                Some(p) => end += p + 1,
                None => {
                    end = rest.len();
                    break;
                }
            }
            if end == rest.len() {
                break;
            }
        }
        out.extend_from_slice(&zstd::encode_all(&rest[..end], 3)?);
        rest = &rest[end..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    fn reread(bytes: &[u8]) -> Session {
        crate::parse::dsh::parse(bytes, "synthetic")
    }

    #[test]
    fn dsh_lines_read_back_as_the_same_events() {
        let events = session_events(3_000);
        let jsonl = dsh_jsonl(&events);
        let mut s = reread(&jsonl);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        if let Some(Event {
            kind: EventKind::Session(h),
            ..
        }) = s.events.first_mut()
        {
            h.raw = serde_json::Value::Null;
        }
        assert_eq!(s.events.len(), events.len());
        for (a, b) in s.events.iter().zip(&events) {
            assert_eq!(a, b);
        }
    }

    #[test]
    fn zstd_frames_decode_to_the_lines() {
        let jsonl = dsh_jsonl(&session_events(500));
        let z = zstd_frames(&jsonl, 64).unwrap_or_default();
        let mut w = Vec::new();
        let back = crate::parse::dsh::decode_zstd_frames(&z, "f", &mut w);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(back, jsonl);
        assert!(
            z.windows(4)
                .filter(|x| *x == crate::parse::dsh::ZSTD_MAGIC)
                .count()
                >= 8
        );
    }
}
