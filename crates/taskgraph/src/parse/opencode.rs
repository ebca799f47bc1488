//! OpenCode sessions, from either store (the file access is in [`crate::opencode`]):
//! the JSON storage tree of versions ≤ 1.x (`storage/session/<project>/<id>.json`,
//! `storage/message/<session>/<id>.json`, `storage/part/<message>/<id>.json`) and the SQLite
//! `opencode.db` of newer ones (tables `session`, `message`, `part`, whose `data` JSON omits
//! the id columns — the caller puts `id` back before handing records here).
//!
//! Mapping: a `user` message opens a turn (its text parts that are not `synthetic` are the
//! request); each `assistant` message is one LLM step (from `time.created` to
//! `time.completed`) with its `tool` parts as calls: `completed` → result, `error` → failed
//! result, still `pending` / `running` in a message that failed → never ran. A `task` call
//! names its child session (`state.metadata.sessionId`); a `todowrite` call is a plan. A
//! message `error` ends the turn (aborted for `MessageAbortedError`, else error).
//!
//! Tokens follow the project's convention: `input = tokens.input + tokens.cache.write`,
//! `output = tokens.output + tokens.reasoning`, `cache_read = tokens.cache.read` — so
//! `input + output + cache_read` equals OpenCode's own `tokens.total`. OpenCode's own `cost`
//! per message is summed into `meta.recorded_cost_usd` (shown as recorded; prices are the
//! project's).

use serde_json::Value;

use super::turns::{CallOutcome, CallRecord, StepRecord, Turns};
use crate::event::{Event, EventKind, SessionStart, SubagentDescriptor, Todo, TurnEndKind, Usage};
use crate::json_fields::{str_field, u64_field, value_text};
use crate::session::{Agent, Session};
use crate::timestamp::time_value_ms;

/// One message with its parts, as read from either store (each with its `id`).
pub struct MessageRecord {
    /// The message object (`role`, `time`, `tokens`, …).
    pub message: Value,
    /// Its parts in order.
    pub parts: Vec<Value>,
}

/// Builds a session from its `session` object and its messages in order.
pub fn build(session_info: &Value, messages: &[MessageRecord]) -> Session {
    let start = header_of(session_info);
    let mut session = Session::new(start.id.clone(), Agent::OpenCode);
    let created = start.created_ms.unwrap_or(0);
    let mut events = vec![Event::new(
        1,
        created,
        EventKind::Session(Box::new(start.clone())),
    )];
    if let Some(title) = str_field(session_info, &["title"]).filter(|t| !t.trim().is_empty()) {
        events.push(Event::new(
            1,
            created,
            EventKind::Title {
                title: title.to_owned(),
            },
        ));
    }
    session.header = start;
    let mut turns = Turns::new(events, created);
    let mut cost = 0.0_f64;
    for (i, m) in messages.iter().enumerate() {
        let seq = i as u64 + 2;
        match str_field(&m.message, &["role"]).unwrap_or_default() {
            "user" => {
                let time = time_of(&m.message, "created").unwrap_or(turns.last_time);
                turns.user(seq, time, user_text(&m.parts));
            }
            "assistant" => {
                cost += m.message.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
                assistant(&mut turns, seq, m);
            }
            _ => {}
        }
    }
    if cost > 0.0 {
        session
            .meta
            .insert("recorded_cost_usd".into(), Value::from(cost));
    }
    session.events = turns.finish();
    session.normalize_events();
    session
}

fn header_of(s: &Value) -> SessionStart {
    SessionStart {
        id: str_field(s, &["id"]).unwrap_or_default().to_owned(),
        version: str_field(s, &["version"]).map(str::to_owned),
        cwd: str_field(s, &["directory"]).map(str::to_owned),
        created_ms: time_of(s, "created"),
        parent_session: str_field(s, &["parentID", "parent_id"]).map(str::to_owned),
        delegation_depth: u32::from(s.get("parentID").is_some_and(Value::is_string)),
        origin: Some("opencode".into()),
        raw: s.clone(),
    }
}

/// `time.<key>` in epoch milliseconds.
fn time_of(v: &Value, key: &str) -> Option<i64> {
    v.get("time")?.get(key).and_then(time_value_ms)
}

fn user_text(parts: &[Value]) -> String {
    let texts = |synthetic: bool| -> Vec<String> {
        parts
            .iter()
            .filter(|p| str_field(p, &["type"]) == Some("text"))
            .filter(|p| p.get("synthetic").and_then(Value::as_bool).unwrap_or(false) == synthetic)
            .filter_map(|p| str_field(p, &["text"]).map(str::to_owned))
            .collect()
    };
    let typed = texts(false);
    if typed.is_empty() {
        texts(true).join("\n")
    } else {
        typed.join("\n")
    }
}

/// OpenCode tokens in the project's convention (see the module docs).
pub fn usage_of(t: &Value) -> Option<Usage> {
    if !t.is_object() {
        return None;
    }
    let get = |v: &Value, k: &str| u64_field(v, &[k]).unwrap_or(0);
    let cache = t.get("cache").unwrap_or(&Value::Null);
    Some(Usage {
        input: get(t, "input") + get(cache, "write"),
        output: get(t, "output") + get(t, "reasoning"),
        cache_read: get(cache, "read"),
        cache_write: get(cache, "write"),
    })
}

fn assistant(turns: &mut Turns, seq: u64, m: &MessageRecord) {
    let msg = &m.message;
    let created = time_of(msg, "created");
    let end = time_of(msg, "completed")
        .or_else(|| m.parts.iter().filter_map(part_end).max())
        .or(created)
        .unwrap_or(turns.last_time);
    let error = msg.get("error").filter(|e| e.is_object());
    let mut calls = Vec::new();
    let mut extra = Vec::new();
    for p in &m.parts {
        if str_field(p, &["type"]) != Some("tool") {
            continue;
        }
        let Some(call) = call_of(p, error.is_some()) else {
            continue;
        };
        extra.extend(side_event(p, &call));
        calls.push(call);
    }
    turns.step(StepRecord {
        seq,
        start_ms: created,
        end_ms: end,
        provider: str_field(msg, &["providerID"]),
        model: str_field(msg, &["modelID"]),
        usage: msg.get("tokens").and_then(usage_of),
        calls,
        finish: str_field(msg, &["finish"]).map(str::to_owned),
    });
    for kind in extra {
        turns.event(seq, end, kind);
    }
    let text = assistant_text(&m.parts);
    if !text.trim().is_empty() {
        turns.event(seq, end, EventKind::AssistantText { text });
    }
    if let Some(e) = error {
        let name = str_field(e, &["name"]).unwrap_or("error");
        let text = e
            .pointer("/data/message")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_owned();
        let kind = if name == "MessageAbortedError" {
            TurnEndKind::Aborted
        } else {
            TurnEndKind::Error
        };
        turns.end_turn(seq, end, kind, Some(text));
    }
}

/// The text parts of an assistant message, joined (reasoning is not the answer).
fn assistant_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| str_field(p, &["type"]) == Some("text"))
        .filter_map(|p| str_field(p, &["text"]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn part_end(p: &Value) -> Option<i64> {
    p.get("state")
        .and_then(|s| time_of(s, "end"))
        .or_else(|| time_of(p, "end"))
}

fn call_of(p: &Value, message_failed: bool) -> Option<CallRecord> {
    let state = p.get("state").unwrap_or(&Value::Null);
    let call_id = str_field(p, &["callID", "id"])?.to_owned();
    let outcome = match str_field(state, &["status"]).unwrap_or_default() {
        "completed" => CallOutcome::Result {
            output: state.get("output").map(value_text).unwrap_or_default(),
            is_error: false,
        },
        "error" => CallOutcome::Result {
            output: state.get("error").map(value_text).unwrap_or_default(),
            is_error: true,
        },
        _ if message_failed => {
            CallOutcome::Cancelled("the message failed before the call ran".into())
        }
        _ => CallOutcome::Pending,
    };
    Some(CallRecord {
        call_id,
        name: str_field(p, &["tool"]).unwrap_or("tool").to_owned(),
        arguments: state
            .get("input")
            .cloned()
            .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
        outcome,
        end_ms: part_end(p),
    })
}

/// A `task` call's subagent descriptor, or a `todowrite` call's plan.
fn side_event(p: &Value, call: &CallRecord) -> Option<EventKind> {
    let input = &call.arguments;
    match call.name.as_str() {
        "task" => Some(EventKind::SubagentDescriptor(Box::new(
            SubagentDescriptor {
                call_id: Some(call.call_id.clone()),
                session_id: p
                    .pointer("/state/metadata/sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                name: str_field(input, &["subagent_type"]).map(str::to_owned),
                description: str_field(input, &["description"]).map(str::to_owned),
                prompt: str_field(input, &["prompt"]).map(str::to_owned),
            },
        ))),
        "todowrite" => Some(EventKind::TodoWrite {
            todos: Todo::list_from_value(input),
            call_id: Some(call.call_id.clone()),
        }),
        _ => None,
    }
}

/// Parses one session exported as `{"session": {…}, "messages": [{"message": {…}, "parts":
/// [{…}]}]}` (the shape [`build`] takes, in one JSON value); anything else is a warning.
pub fn parse_export(bytes: &[u8], file: &str) -> Session {
    let v: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            let mut s = Session::new("", Agent::OpenCode);
            s.warnings.push(crate::session::ReadWarning::new(
                file,
                0,
                format!("invalid JSON: {e}"),
            ));
            return s;
        }
    };
    let messages: Vec<MessageRecord> = match v.get("messages") {
        Some(Value::Array(list)) => list
            .iter()
            .map(|m| MessageRecord {
                message: m.get("message").cloned().unwrap_or(Value::Null),
                parts: match m.get("parts") {
                    Some(Value::Array(p)) => p.clone(),
                    _ => Vec::new(),
                },
            })
            .collect(),
        _ => Vec::new(),
    };
    build(v.get("session").unwrap_or(&Value::Null), &messages)
}
