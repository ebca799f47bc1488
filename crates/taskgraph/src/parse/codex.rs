//! Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Lines are `{timestamp, type, payload}` with types `session_meta`, `turn_context`,
//! `response_item` (`message`, `reasoning`, `function_call`, `function_call_output`,
//! `custom_tool_call[_output]`, `local_shell_call`, …), `event_msg` (`user_message`,
//! `token_count`, `task_started`, `task_complete`, `turn_aborted`, `error`, `stream_error`, …)
//! and `compacted`. Older rollouts without the wrapper (bare response items after a
//! `{id, timestamp, instructions}` line) are read too.
//!
//! Mapping: a turn runs from `task_started`/`user_message` to `task_complete` (completed),
//! `turn_aborted` (aborted) or `error` (error). An LLM step is a run of model output items; it
//! starts when the previous input (user message or tool output) was written and ends at its
//! `token_count` or at the next input. `stream_error` is a failed attempt (`llm/retry`).
//! OpenAI counts cached tokens inside `input_tokens`; they are moved to `cache_read` here.

use serde_json::Value;

use crate::event::{Event, EventKind, Failure, SessionStart, TurnEndKind, TurnReason, Usage};
use crate::session::{Agent, Session};
use crate::util::{parse_arguments, str_field, time_value_ms, u64_field, value_text};

fn is_user_event(v: &Value) -> bool {
    str_field(v, &["type"]) == Some("event_msg")
        && v.get("payload").and_then(|p| str_field(p, &["type"])) == Some("user_message")
}

/// A user message as a response item (read as input only without `user_message` events).
fn is_response_user(v: &Value) -> bool {
    let p = v.get("payload").unwrap_or(v);
    str_field(p, &["type"]) == Some("message") && str_field(p, &["role"]) == Some("user")
}

/// At most this many lines are held waiting for a `user_message` event.
const HELD_LINES: usize = 64;

fn is_task_event(v: &Value) -> bool {
    v.get("payload")
        .and_then(|p| str_field(p, &["type"]))
        .is_some_and(|t| matches!(t, "task_complete" | "task_started" | "turn_aborted"))
}

/// Parses a Codex rollout file.
pub fn parse(bytes: &[u8], file: &str) -> Session {
    let mut warnings = Vec::new();
    let mut lines: Vec<(u64, Value)> = Vec::new();
    super::for_each_json_line(bytes, file, &mut warnings, |line, v, _| {
        lines.push((line, v))
    });
    let has_user_events = lines.iter().any(|(_, v)| is_user_event(v));
    let has_task_events = lines.iter().any(|(_, v)| is_task_event(v));
    let mut c = Conv {
        has_user_events,
        provider: "openai".into(),
        ..Conv::default()
    };
    for (line, v) in &lines {
        c.line(*line, v);
    }
    c.finish(lines.last().map_or(0, |(l, _)| *l), has_task_events);
    let mut session = Session::new("", Agent::Codex);
    if let Some(h) = c.header.take() {
        session.id = h.id.clone();
        session.header = h;
    }
    session.events = c.events;
    session.normalize_events();
    session.warnings = warnings;
    session
}

#[derive(Default, Clone)]
struct Conv {
    /// Events pushed and not yet taken (all of them for a whole-file parse).
    events: Vec<Event>,
    /// The first `session_meta`.
    header: Option<SessionStart>,
    /// A `response_item` user message was read as the user's input (only valid while the
    /// file has no `user_message` events).
    used_response_user: bool,
    has_user_events: bool,
    provider: String,
    model: Option<String>,
    turn: u32,
    step: u32,
    turn_open: bool,
    turn_has_user: bool,
    step_open: bool,
    step_has_output: bool,
    last_time: i64,
    last_input_time: i64,
    last_output_time: i64,
    last_output_seq: u64,
    last_output_was_message: bool,
    pending_calls: i64,
    retries: u32,
}

impl Conv {
    fn line(&mut self, line: u64, v: &Value) {
        let time = v
            .get("timestamp")
            .and_then(time_value_ms)
            .unwrap_or(self.last_time);
        let (ty, payload) = match (str_field(v, &["type"]), v.get("payload")) {
            (Some(t), Some(p)) => (t, p),
            // Old rollouts: the first line is the meta, then bare items.
            (None, None) if v.get("id").is_some() && line <= 2 => ("session_meta", v),
            (Some(_), None) => ("response_item", v),
            _ => return,
        };
        match ty {
            "session_meta" => {
                let meta = payload.get("meta").unwrap_or(payload);
                if self.header.as_ref().is_none_or(|h| h.id.is_empty()) {
                    let h = SessionStart {
                        id: str_field(meta, &["id", "session_id"])
                            .unwrap_or_default()
                            .to_owned(),
                        version: str_field(meta, &["cli_version", "version"]).map(str::to_owned),
                        cwd: str_field(meta, &["cwd"]).map(str::to_owned),
                        created_ms: meta.get("timestamp").and_then(time_value_ms).or(Some(time)),
                        parent_session: str_field(
                            meta,
                            &["parent_session_id", "parent_id", "forked_from_id"],
                        )
                        .map(str::to_owned),
                        delegation_depth: 0,
                        origin: str_field(meta, &["originator"]).map(str::to_owned),
                        raw: meta.clone(),
                    };
                    if let Some(p) = str_field(meta, &["model_provider"]) {
                        self.provider = p.to_owned();
                    }
                    let t = h.created_ms.unwrap_or(time);
                    self.last_time = t;
                    self.last_input_time = t;
                    self.push(line, t, EventKind::Session(h.clone()));
                    self.header = Some(h);
                }
            }
            "turn_context" => {
                if let Some(m) = str_field(payload, &["model"]) {
                    self.model = Some(m.to_owned());
                }
            }
            "event_msg" => self.event_msg(line, time, payload),
            "response_item" => self.response_item(line, time, payload),
            _ => {}
        }
        self.last_time = time;
    }

    /// End of input: `seq` is the last JSON line's number.
    fn finish(&mut self, seq: u64, has_task_events: bool) {
        if self.step_open && self.pending_calls == 0 && self.last_output_was_message {
            self.close_step(seq, self.last_output_time);
        }
        if !has_task_events
            && self.turn_open
            && !self.step_open
            && self.pending_calls == 0
            && self.last_output_was_message
        {
            self.close_turn(seq, self.last_time, TurnEndKind::Completed, None);
        }
    }

    fn push(&mut self, seq: u64, time: i64, kind: EventKind) {
        self.events.push(Event::new(seq, time, kind));
    }

    fn open_turn(&mut self, seq: u64, time: i64) {
        self.turn += 1;
        self.step = 0;
        self.turn_open = true;
        self.turn_has_user = false;
        let turn = self.turn;
        self.push(seq, time, EventKind::TurnStart { turn });
    }

    fn close_step(&mut self, seq: u64, time: i64) {
        if self.step_open {
            self.step_open = false;
            if self.step_has_output {
                let reason = if self.last_output_was_message {
                    "stop"
                } else {
                    "tool_calls"
                };
                self.push(
                    seq,
                    time,
                    EventKind::Finish {
                        reason: reason.into(),
                    },
                );
            }
            let (turn, step) = (self.turn, self.step);
            self.push(seq, time, EventKind::StepEnd { turn, step });
            self.last_input_time = self.last_input_time.max(time);
        }
    }

    fn close_turn(&mut self, seq: u64, time: i64, kind: TurnEndKind, message: Option<String>) {
        let t = if self.step_has_output {
            self.last_output_time.max(self.last_input_time)
        } else {
            time
        };
        self.close_step(seq, t);
        if self.turn_open {
            self.turn_open = false;
            let turn = self.turn;
            self.push(
                seq,
                time,
                EventKind::TurnEnd {
                    turn,
                    reason: TurnReason { kind, message },
                },
            );
        }
    }

    fn open_step(&mut self, seq: u64, time: i64) {
        if !self.turn_open {
            self.open_turn(seq, self.last_input_time.min(time));
        }
        self.step += 1;
        self.step_open = true;
        self.step_has_output = false;
        self.retries = 0;
        let (turn, step, t) = (self.turn, self.step, self.last_input_time);
        self.push(seq, t, EventKind::StepStart { turn, step });
        let (provider, model) = (Some(self.provider.clone()), self.model.clone());
        self.push(seq, t, EventKind::RequestHeader { provider, model });
    }

    fn user_text(&mut self, seq: u64, time: i64, text: String) {
        if self.turn_open && !self.turn_has_user && self.step == 0 {
            self.push(seq, time, EventKind::UserMessage { text });
        } else {
            self.close_turn(seq, self.last_time, TurnEndKind::Completed, None);
            self.push(seq, time, EventKind::UserMessage { text });
            self.open_turn(seq, time);
        }
        self.turn_has_user = true;
        self.last_input_time = time;
    }

    fn event_msg(&mut self, seq: u64, time: i64, p: &Value) {
        match str_field(p, &["type"]).unwrap_or_default() {
            "task_started" => {
                self.close_turn(seq, self.last_time, TurnEndKind::Aborted, None);
                self.last_input_time = time;
                self.open_turn(seq, time);
            }
            "user_message" => {
                let text = str_field(p, &["message"]).unwrap_or_default().to_owned();
                self.user_text(seq, time, text);
            }
            "token_count" => {
                let Some(u) = p.get("info").and_then(|i| i.get("last_token_usage")) else {
                    return;
                };
                let cached = u64_field(u, &["cached_input_tokens"]).unwrap_or(0);
                self.push(
                    seq,
                    time,
                    EventKind::Usage(Usage {
                        input: u64_field(u, &["input_tokens"])
                            .unwrap_or(0)
                            .saturating_sub(cached),
                        output: u64_field(u, &["output_tokens"]).unwrap_or(0),
                        cache_read: cached,
                    }),
                );
                if self.step_open && self.step_has_output {
                    self.close_step(seq, time);
                }
            }
            "task_complete" => self.close_turn(seq, time, TurnEndKind::Completed, None),
            "turn_aborted" => {
                let reason = str_field(p, &["reason"]).map(str::to_owned);
                self.close_turn(seq, time, TurnEndKind::Aborted, reason);
            }
            "error" => {
                let msg = str_field(p, &["message"]).map(str::to_owned);
                if self.step_open {
                    self.push(
                        seq,
                        time,
                        EventKind::Finish {
                            reason: "error".into(),
                        },
                    );
                }
                self.close_turn(seq, time, TurnEndKind::Error, msg);
            }
            "stream_error" => {
                if !self.step_open || self.step_has_output {
                    self.close_step(self.last_output_seq.min(seq), self.last_output_time);
                    self.open_step(seq, time);
                }
                self.retries += 1;
                let retry = self.retries;
                self.push(
                    seq,
                    time,
                    EventKind::LlmRetry {
                        retry,
                        max_retries: None,
                        delay_ms: None,
                        failure: Failure {
                            message: str_field(p, &["message"])
                                .unwrap_or("stream error")
                                .to_owned(),
                            code: None,
                        },
                    },
                );
            }
            _ => {}
        }
    }

    fn model_output(&mut self, seq: u64, time: i64) {
        if !self.step_open {
            self.open_step(seq, time);
        }
        self.step_has_output = true;
        self.last_output_time = time;
        self.last_output_seq = seq;
    }

    fn response_item(&mut self, seq: u64, time: i64, p: &Value) {
        let ty = str_field(p, &["type"]).unwrap_or_default();
        match ty {
            "message" => match str_field(p, &["role"]).unwrap_or_default() {
                "assistant" => {
                    self.model_output(seq, time);
                    self.last_output_was_message = true;
                }
                "user" if !self.has_user_events => {
                    let text = p.get("content").map(value_text).unwrap_or_default();
                    let t = text.trim_start();
                    if !t.starts_with("<environment_context>")
                        && !t.starts_with("<user_instructions>")
                        && !t.is_empty()
                    {
                        self.used_response_user = true;
                        self.user_text(seq, time, text);
                    }
                }
                _ => {}
            },
            "reasoning" => {
                self.model_output(seq, time);
                self.last_output_was_message = false;
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
                self.model_output(seq, time);
                self.last_output_was_message = false;
                let call_id = str_field(p, &["call_id", "id"])
                    .unwrap_or_default()
                    .to_owned();
                let (name, arguments) = match ty {
                    "function_call" => (
                        str_field(p, &["name"]).unwrap_or("function").to_owned(),
                        parse_arguments(p.get("arguments").unwrap_or(&Value::Null)),
                    ),
                    "custom_tool_call" => (
                        str_field(p, &["name"]).unwrap_or("custom_tool").to_owned(),
                        match p.get("input") {
                            Some(Value::String(s)) => serde_json::json!({ "input": s }),
                            Some(other) => other.clone(),
                            None => Value::Null,
                        },
                    ),
                    "local_shell_call" => (
                        "local_shell".to_owned(),
                        p.get("action").cloned().unwrap_or(Value::Null),
                    ),
                    _ => (
                        "web_search".to_owned(),
                        p.get("action").cloned().unwrap_or(Value::Null),
                    ),
                };
                if ty == "web_search_call" || call_id.is_empty() {
                    return; // no result line will follow
                }
                self.pending_calls += 1;
                let (turn, step) = (self.turn, self.step);
                self.push(
                    seq,
                    time,
                    EventKind::ToolCall {
                        turn,
                        step,
                        call_id,
                        name,
                        arguments,
                    },
                );
            }
            "function_call_output" | "custom_tool_call_output" => {
                self.close_step(self.last_output_seq.min(seq), self.last_output_time);
                self.pending_calls = (self.pending_calls - 1).max(0);
                let call_id = str_field(p, &["call_id"]).unwrap_or_default().to_owned();
                let (output, is_error) = tool_output(p.get("output").unwrap_or(&Value::Null));
                self.push(
                    seq,
                    time,
                    EventKind::ToolResult {
                        call_id,
                        output,
                        is_error,
                    },
                );
                self.last_input_time = time;
                self.last_output_was_message = false;
            }
            _ => {}
        }
    }
}

/// Reads a function output: a string (possibly JSON `{output, metadata:{exit_code}}`) or an
/// object `{content, success}`.
fn tool_output(v: &Value) -> (String, bool) {
    let parsed;
    let obj = match v {
        Value::String(s) if s.trim_start().starts_with('{') => {
            parsed = serde_json::from_str::<Value>(s).ok();
            parsed.as_ref()
        }
        Value::Object(_) => Some(v),
        _ => None,
    };
    if let Some(o) = obj {
        let exit = o
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64);
        let success = o.get("success").and_then(Value::as_bool);
        let text = o
            .get("output")
            .or_else(|| o.get("content"))
            .map(value_text)
            .unwrap_or_else(|| value_text(v));
        let is_error = exit.is_some_and(|c| c != 0) || success == Some(false);
        return (text, is_error);
    }
    let text = value_text(v);
    let is_error = text.starts_with("Exit code: ") && !text.starts_with("Exit code: 0")
        || text.starts_with("error:")
        || text.starts_with("failed to");
    (text, is_error)
}

/// Resumable Codex reader state (see [`crate::live::LiveReader`]).
///
/// The whole-file reader decides two things from the whole file: whether `response_item` user
/// messages count (only when there are no `user_message` events) and whether a turn may be
/// closed at the end of input (only when there are no task events). The stream keeps both as
/// "seen so far". While no `user_message` event was seen, lines from a `response_item` user
/// message on are held unconverted until such an event arrives (at most 64 lines); one arriving
/// after a `response_item` user message was already used makes the stream diverge (the caller
/// re-reads the file). The open step's closing
/// events stay in the uncommitted tail until a `token_count` or the next input closes it.
#[derive(Default)]
pub(crate) struct Stream {
    conv: Conv,
    /// Lines held from a `response_item` user message on (see [`Stream::feed`]).
    held: Vec<(u64, Value)>,
    has_task_events: bool,
    last_line: Option<u64>,
    next_line: u64,
    diverged: bool,
}

impl Stream {
    pub(crate) fn new() -> Self {
        Stream {
            conv: Conv {
                provider: "openai".into(),
                ..Conv::default()
            },
            ..Stream::default()
        }
    }

    /// Applies complete lines; `next_line` is the number after the last line consumed.
    pub(crate) fn feed(&mut self, lines: Vec<(u64, Value)>, next_line: u64) {
        self.next_line = next_line;
        if self.diverged {
            return;
        }
        if !self.conv.has_user_events && lines.iter().any(|(_, v)| is_user_event(v)) {
            if self.conv.used_response_user {
                self.diverged = true;
                return;
            }
            self.conv.has_user_events = true;
        }
        self.has_task_events |= lines.iter().any(|(_, v)| is_task_event(v));
        if let Some((l, _)) = lines.last() {
            self.last_line = Some(*l);
        }
        for (line, v) in lines {
            // A `response_item` user message usually precedes its `user_message` event: hold
            // it (and what follows) until that event says which of the two counts.
            if self.held.is_empty() && (self.conv.has_user_events || !is_response_user(&v)) {
                self.conv.line(line, &v);
            } else {
                self.held.push((line, v));
            }
        }
        if !self.held.is_empty() && (self.conv.has_user_events || self.held.len() >= HELD_LINES) {
            for (line, v) in std::mem::take(&mut self.held) {
                self.conv.line(line, &v);
            }
        }
    }

    /// Whether a line could not be applied incrementally.
    pub(crate) fn diverged(&self) -> bool {
        self.diverged
    }

    /// Takes the events no later line can change or reorder.
    pub(crate) fn commit(&mut self) -> Vec<Event> {
        let c = &mut self.conv;
        // An open step closes at its last output's `seq`; `finish` pushes at the last line.
        let feed = if c.step_open {
            c.last_output_seq.min(self.next_line)
        } else {
            self.next_line
        };
        let mut w = feed.min(self.last_line.unwrap_or(0));
        if let Some((l, _)) = self.held.first() {
            w = w.min(*l);
        }
        super::take_before(&mut c.events, w)
    }

    /// The events a whole-file read would add after the committed ones, as of now.
    pub(crate) fn tail(&self) -> Vec<Event> {
        let mut c = self.conv.clone();
        for (line, v) in &self.held {
            c.line(*line, v);
        }
        c.finish(self.last_line.unwrap_or(0), self.has_task_events);
        crate::session::normalize_events(&mut c.events);
        c.events
    }
}
