//! Deterministic synthetic sessions, for benchmarks, examples and tests.
//!
//! The generator writes plausible DSH-shaped trajectories: turns of ~40 steps, one to three
//! parallel tool calls per step (bash, read, grep, edit, test runs, skills, plans), a failing
//! call re-sent with the same arguments every 17th call, and an LLM retry every 50th step.

use serde_json::{Value, json};

use crate::event::{Event, EventKind, Failure, SessionStart, TurnEndKind, TurnReason, Usage};

/// Exactly `n` events of one synthetic session (cut wherever `n` falls, so the session may
/// end mid-step, like a live one).
pub fn session_events(n: usize) -> Vec<Event> {
    let mut s = Synth {
        out: Vec::with_capacity(n + 16),
        t: 1_787_600_000_000,
        seq: 0,
        rng: 0x2545_f491_4f6c_dd1d,
        call_no: 0,
    };
    s.push(EventKind::Session(Box::new(SessionStart {
        id: "synthetic".into(),
        version: Some("1".into()),
        cwd: Some("/work/synthetic".into()),
        created_ms: Some(s.t),
        ..SessionStart::default()
    })));
    let mut turn = 0u32;
    while s.out.len() < n {
        turn += 1;
        s.push(EventKind::UserMessage {
            text: format!("request {turn}"),
        });
        s.push(EventKind::TurnStart { turn });
        let mut retry_args: Vec<(String, Value)> = Vec::new();
        for step in 1..=40u32 {
            s.step(turn, step, &mut retry_args);
            if s.out.len() >= n {
                break;
            }
        }
        s.t += 100;
        s.push(EventKind::TurnEnd {
            turn,
            reason: TurnReason::new(TurnEndKind::Completed),
        });
        s.t += 5_000;
    }
    let mut out = s.out;
    out.truncate(n);
    out
}

/// The generator's state: the events so far, the clock, the next sequence number, the
/// xorshift state and the tool calls made.
struct Synth {
    out: Vec<Event>,
    t: i64,
    seq: u64,
    rng: u64,
    call_no: u64,
}

impl Synth {
    /// The next pseudo-random number below `m`.
    fn next(&mut self, m: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % m.max(1)
    }

    /// Appends an event at the current time.
    fn push(&mut self, kind: EventKind) {
        self.out.push(Event::new(self.seq, self.t, kind));
        self.seq += 1;
    }

    /// One step: the request, an LLM retry every 50th step, usage, the finish, the tool calls
    /// (last step's failed ones re-sent first) and their results.
    fn step(&mut self, turn: u32, step: u32, retry_args: &mut Vec<(String, Value)>) {
        self.t += 50;
        self.push(EventKind::StepStart { turn, step });
        self.push(EventKind::RequestHeader {
            provider: Some("deepseek".into()),
            model: Some("deepseek-chat".into()),
        });
        if (u64::from(turn) * 40 + u64::from(step)) % 50 == 0 {
            self.t += 500;
            self.push(EventKind::LlmRetry {
                retry: 1,
                max_retries: Some(3),
                delay_ms: Some(500),
                failure: Failure {
                    message: "overloaded".into(),
                    code: Some("529".into()),
                },
            });
        }
        self.t += 300 + self.next(3000) as i64;
        let usage = Usage {
            input: 1000 + self.next(5000),
            output: 50 + self.next(500),
            cache_read: self.next(4000),
            cache_write: 0,
        };
        self.push(EventKind::Usage(usage));
        let last = step == 40;
        self.push(EventKind::Finish {
            reason: if last {
                "stop".into()
            } else {
                "tool-calls".into()
            },
        });
        let mut calls = Vec::new();
        if !last {
            // Re-send last step's failed calls first, then new ones.
            let mut batch = std::mem::take(retry_args);
            for _ in 0..=self.next(3) {
                self.call_no += 1;
                batch.push(self.new_call());
            }
            for (name, args) in batch {
                self.call_no += 1;
                let id = format!("call_{}", self.call_no);
                self.push(EventKind::ToolCall {
                    turn,
                    step,
                    call_id: id.clone(),
                    name: name.clone(),
                    arguments: args.clone().into(),
                });
                calls.push((id, name, args));
            }
        }
        self.push(EventKind::StepEnd { turn, step });
        for (id, name, args) in calls {
            self.t += 20 + self.next(1500) as i64;
            let fail = self.next(17) == 0;
            if fail {
                retry_args.push((name, args));
            }
            self.push(EventKind::ToolResult {
                call_id: id,
                output: format!("output of {}", self.call_no).into(),
                is_error: fail,
            });
        }
    }

    /// A new tool call's name and arguments, by the call number.
    fn new_call(&mut self) -> (String, Value) {
        let (name, args) = match self.call_no % 9 {
            0 => ("bash", json!({"command": "cargo test -p app"})),
            1 | 2 => (
                "read",
                json!({"path": format!("src/m{}.rs", self.next(200))}),
            ),
            3 => (
                "grep",
                json!({"pattern": format!("fn f{}", self.next(1000))}),
            ),
            4 => (
                "edit",
                json!({"path": format!("src/m{}.rs", self.next(50)), "old": "a", "new": "b"}),
            ),
            5 => ("skill", json!({"name": "lint"})),
            6 => (
                "todo_write",
                json!({"todos": [{"content": "x", "status": "pending"}]}),
            ),
            _ => (
                "bash",
                json!({"command": format!("ls dir{}", self.next(100))}),
            ),
        };
        (name.to_owned(), args)
    }
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
        EventKind::AssistantText { text } => ("assistant/text", json!({ "text": text })),
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
