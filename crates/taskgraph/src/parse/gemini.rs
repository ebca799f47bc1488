//! Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.json[l]`).
//!
//! Two forms, told apart by content:
//!
//! * **single JSON** (up to early 2026): one object `{sessionId, projectHash, startTime,
//!   lastUpdated, kind?, summary?, messages: [...]}`, rewritten whole on every change;
//! * **JSON Lines** (newer): a metadata line (the same fields without `messages`), then message
//!   records and `{"$set": {...}}` updates. A message re-appended under the same `id` replaces
//!   the earlier copy in place (last write wins); `$set.messages` replaces the whole list; other
//!   `$set` keys update the metadata.
//!
//! A message is `{id, timestamp, type, content, displayContent?, thoughts?, tokens?, model?,
//! toolCalls?}` with `type` `user`, `gemini`, `info`, `error` or `warning`. Mapping: a `user`
//! message opens a turn; each `gemini` message is one LLM step, its `toolCalls` (which already
//! carry their results: `status` `success` / `error` / `cancelled`) become calls with results
//! (an `error` result is a failed call, a `cancelled` one never ran); an `error` notice while
//! the agent is still working ends the turn as an error, a "Request cancelled." notice as
//! aborted.
//!
//! Tokens follow the project's convention (`input` = every input token that was not a cache
//! read): Gemini's `input` is the whole prompt *including* the `cached` part, and `tool` and
//! `thoughts` are counted apart from it, so `input = input − cached + tool`,
//! `output = output + thoughts`, `cache_read = cached` — which makes
//! `input + output + cache_read` equal Gemini's own `total`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::turns::{CallOutcome, CallRecord, StepRecord, Turns};
use crate::event::{Event, EventKind, SessionStart, TurnEndKind, Usage};
use crate::json_fields::{str_field, u64_field, value_text};
use crate::session::{Agent, ReadWarning, Session};
use crate::timestamp::time_value_ms;

/// One message record kept after de-duplication.
struct Message {
    /// Line it was last written on (0 in the single-JSON form).
    line: u64,
    value: Value,
}

/// The messages of a session file in order, after `$set` and re-appended records applied.
#[derive(Default)]
struct Collected {
    header: Map<String, Value>,
    messages: Vec<Message>,
    by_id: HashMap<String, usize>,
}

impl Collected {
    fn upsert(&mut self, line: u64, value: Value) {
        match str_field(&value, &["id"]).map(str::to_owned) {
            Some(id) => match self.by_id.get(&id) {
                Some(&i) => self.messages[i] = Message { line, value },
                None => {
                    self.by_id.insert(id, self.messages.len());
                    self.messages.push(Message { line, value });
                }
            },
            None => self.messages.push(Message { line, value }),
        }
    }

    fn replace_all(&mut self, line: u64, list: &[Value]) {
        self.messages.clear();
        self.by_id.clear();
        for m in list {
            self.upsert(line, m.clone());
        }
    }
}

/// Parses a Gemini CLI session file (either form).
pub fn parse(bytes: &[u8], file: &str) -> Session {
    let mut warnings = Vec::new();
    let collected = collect(bytes, file, &mut warnings);
    let mut session = Session::new("", Agent::Gemini);
    let header = Value::Object(collected.header);
    let start = header_of(&header);
    session.id = start.id.clone();
    if let Some(kind) = str_field(&header, &["kind"]) {
        session.meta.insert("kind".into(), kind.into());
    }
    if let Some(hash) = str_field(&header, &["projectHash"]) {
        session.meta.insert("project_hash".into(), hash.into());
    }
    let mut events = vec![Event::new(
        1,
        start.created_ms.unwrap_or(0),
        EventKind::Session(Box::new(start.clone())),
    )];
    if let Some(summary) = str_field(&header, &["summary"]).filter(|s| !s.trim().is_empty()) {
        events.push(Event::new(
            1,
            start.created_ms.unwrap_or(0),
            EventKind::Title {
                title: summary.to_owned(),
            },
        ));
    }
    session.header = start;
    let mut turns = Turns::new(events, session.header.created_ms.unwrap_or(0));
    for (i, m) in collected.messages.iter().enumerate() {
        message(&mut turns, i as u64 + 2, m, file, &mut warnings);
    }
    session.events = turns.finish();
    session.normalize_events();
    session.warnings = warnings;
    session
}

/// Reads either form into the header and the final message list.
fn collect(bytes: &[u8], file: &str, warnings: &mut Vec<ReadWarning>) -> Collected {
    let mut c = Collected::default();
    if let Ok(Value::Object(mut whole)) = serde_json::from_slice::<Value>(bytes) {
        let list = whole.remove("messages");
        c.header = whole;
        if let Some(Value::Array(list)) = list {
            c.replace_all(0, &list);
        }
        return c;
    }
    let mut header_seen = false;
    super::for_each_json_line(bytes, file, warnings, |line, v, w| {
        let Value::Object(mut obj) = v else { return };
        if let Some(set) = obj.remove("$set") {
            let Value::Object(set) = set else {
                w.push(ReadWarning::new(file, line, "$set is not an object"));
                return;
            };
            for (k, v) in set {
                match (k.as_str(), v) {
                    ("messages", Value::Array(list)) => c.replace_all(line, &list),
                    ("messages", _) => {
                        w.push(ReadWarning::new(file, line, "$set.messages is not a list"))
                    }
                    (_, v) => {
                        c.header.insert(k, v);
                    }
                }
            }
            return;
        }
        if obj.contains_key("type") {
            c.upsert(line, Value::Object(obj));
        } else if !header_seen && obj.contains_key("sessionId") {
            header_seen = true;
            obj.remove("messages");
            c.header.extend(obj);
        } else {
            w.push(ReadWarning::new(
                file,
                line,
                "record of unknown shape skipped",
            ));
        }
    });
    if !header_seen && c.header.is_empty() {
        warnings.push(ReadWarning::new(file, 1, "no session metadata (sessionId)"));
    }
    c
}

fn header_of(h: &Value) -> SessionStart {
    let subagent = str_field(h, &["kind"]) == Some("subagent");
    SessionStart {
        id: str_field(h, &["sessionId", "id"])
            .unwrap_or_default()
            .to_owned(),
        version: None,
        cwd: str_field(h, &["cwd", "projectRoot", "directory"]).map(str::to_owned),
        created_ms: h.get("startTime").and_then(time_value_ms),
        parent_session: str_field(h, &["parentSessionId", "parentId"]).map(str::to_owned),
        delegation_depth: u32::from(subagent),
        origin: Some("gemini-cli".into()),
        raw: h.clone(),
    }
}

/// Converts one message record.
fn message(turns: &mut Turns, seq: u64, m: &Message, file: &str, w: &mut Vec<ReadWarning>) {
    let v = &m.value;
    let time = v
        .get("timestamp")
        .and_then(time_value_ms)
        .unwrap_or(turns.last_time);
    let content = || {
        v.get("displayContent")
            .filter(|c| !c.is_null())
            .or_else(|| v.get("content"))
            .map(value_text)
            .unwrap_or_default()
    };
    match str_field(v, &["type"]).unwrap_or_default() {
        "user" => turns.user(seq, time, content()),
        "gemini" | "model" | "assistant" => {
            turns.step(StepRecord {
                seq,
                start_ms: None,
                end_ms: time,
                provider: Some("google"),
                model: str_field(v, &["model"]),
                usage: v.get("tokens").and_then(usage_of),
                calls: calls_of(v),
                finish: None,
            });
            let text = content();
            if !text.trim().is_empty() {
                turns.event(seq, time, EventKind::AssistantText { text });
            }
        }
        "error" => turns.notice(seq, time, TurnEndKind::Error, &content()),
        "info" => {
            let text = content();
            if text.to_ascii_lowercase().contains("cancelled") {
                turns.notice(seq, time, TurnEndKind::Aborted, &text);
            }
        }
        "warning" => {}
        other => w.push(ReadWarning::new(
            file,
            m.line,
            format!("message of unknown type {other:?} skipped"),
        )),
    }
}

/// Gemini token counts in the project's convention (see the module docs).
pub fn usage_of(t: &Value) -> Option<Usage> {
    if !t.is_object() {
        return None;
    }
    let get = |k: &str| u64_field(t, &[k]).unwrap_or(0);
    let cached = get("cached");
    Some(Usage {
        input: get("input").saturating_sub(cached) + get("tool"),
        output: get("output") + get("thoughts"),
        cache_read: cached,
        cache_write: 0,
    })
}

fn calls_of(v: &Value) -> Vec<CallRecord> {
    let Some(Value::Array(calls)) = v.get("toolCalls") else {
        return Vec::new();
    };
    let msg_id = str_field(v, &["id"]).unwrap_or("msg");
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let call_id = str_field(c, &["id", "callId"])
                .map_or_else(|| format!("{msg_id}-call-{i}"), str::to_owned);
            CallRecord {
                call_id,
                name: str_field(c, &["name"]).unwrap_or("tool").to_owned(),
                arguments: match c.get("args") {
                    Some(a @ Value::Object(_)) => a.clone(),
                    Some(other) => crate::json_fields::parse_arguments(other),
                    None => Value::Object(Map::new()),
                },
                outcome: outcome_of(c),
                end_ms: c.get("timestamp").and_then(time_value_ms),
            }
        })
        .collect()
}

/// A call's `functionResponse.response` objects (`output` or `error`).
fn responses(c: &Value) -> impl Iterator<Item = &Value> {
    let parts: &[Value] = match c.get("result") {
        Some(Value::Array(a)) => a,
        _ => &[],
    };
    parts
        .iter()
        .filter_map(|p| p.pointer("/functionResponse/response"))
}

fn outcome_of(c: &Value) -> CallOutcome {
    let error_text = || {
        responses(c)
            .find_map(|r| r.get("error").map(value_text))
            .or_else(|| c.get("resultDisplay").map(display_text))
            .unwrap_or_default()
    };
    match str_field(c, &["status"]).unwrap_or_default() {
        "success" => CallOutcome::Result {
            output: responses(c)
                .find_map(|r| r.get("output").or_else(|| r.get("content")).map(value_text))
                .or_else(|| c.get("resultDisplay").map(display_text))
                .unwrap_or_default(),
            is_error: false,
        },
        "error" => CallOutcome::Result {
            output: error_text(),
            is_error: true,
        },
        "cancelled" | "canceled" => {
            let reason = error_text();
            CallOutcome::Cancelled(if reason.is_empty() {
                "cancelled".to_owned()
            } else {
                reason
            })
        }
        _ => CallOutcome::Pending,
    }
}

/// `resultDisplay`: a string, null, or an object such as `{fileDiff, fileName, …}`.
fn display_text(d: &Value) -> String {
    match d {
        Value::Object(o) => o
            .get("fileDiff")
            .map(value_text)
            .unwrap_or_else(|| value_text(d)),
        other => value_text(other),
    }
}

/// Whether `bytes` look like a Gemini CLI session (either form): a `sessionId` with a
/// `projectHash`, `messages` list of `user`/`gemini` messages, or `$set` updates.
pub fn sniff(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 * 1024)];
    let text = String::from_utf8_lossy(head);
    let has = |k: &str| text.contains(k);
    has("\"sessionId\"")
        && (has("\"projectHash\"")
            || has("\"$set\"")
            || has("\"type\": \"gemini\"")
            || has("\"type\":\"gemini\""))
}
