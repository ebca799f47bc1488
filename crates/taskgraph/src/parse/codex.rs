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

use std::collections::HashMap;

use serde_json::Value;

use super::codex_items::{
    ExecState, parent_thread, spawned_agent_id, tool_output, unified_exec_state,
};
use crate::event::{
    Event, EventKind, Failure, SessionStart, SubagentDescriptor, TurnEndKind, TurnReason, Usage,
};
use crate::json_fields::{parse_arguments, str_field, u64_field, value_text};
use crate::session::{Agent, Session};
use crate::timestamp::time_value_ms;

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
    let mut c = CodexConverter {
        has_user_events,
        provider: "openai".into(),
        ..CodexConverter::default()
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
struct CodexConverter {
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
    /// The last `total_token_usage` counted: Codex writes each `token_count` twice with the
    /// same running total, and a repeat must not be counted again.
    last_total: Option<Value>,
    /// Results of unified-exec calls whose process was still running when the call returned
    /// ("Process running with session ID N"), by call id: they are written when the process
    /// ends (`exec_command_end`, or a `write_stdin` output saying "Process exited with code N").
    held: HashMap<String, HeldResult>,
    /// Running unified-exec process id → the call that started it.
    processes: HashMap<String, String>,
    /// `exec_command_end` exit codes that arrived before their call's output.
    early_exits: HashMap<String, i64>,
    /// What the reader needs to remember about each call, by call id.
    calls: HashMap<String, CallInfo>,
}

/// What is remembered about a call until its output arrives.
#[derive(Clone, Default)]
struct CallInfo {
    kind: CallKind,
    /// Its result was written.
    returned: bool,
}

/// The calls whose output needs special reading.
#[derive(Clone, Default)]
enum CallKind {
    /// `write_stdin` to the unified-exec process with this id.
    WriteStdin(Option<String>),
    /// `spawn_agent` of this agent type.
    SpawnAgent(Option<String>),
    #[default]
    Other,
}

impl CallKind {
    fn of(name: &str, args: &Value) -> Self {
        match name {
            "write_stdin" => CallKind::WriteStdin(args.get("session_id").map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })),
            "spawn_agent" => {
                CallKind::SpawnAgent(str_field(args, &["agent_type"]).map(str::to_owned))
            }
            _ => CallKind::Other,
        }
    }
}

/// A held unified-exec result (see [`CodexConverter::held`]).
#[derive(Clone)]
struct HeldResult {
    output: String,
    time: i64,
}

impl CodexConverter {
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
                        parent_session: parent_thread(meta),
                        delegation_depth: meta
                            .pointer("/source/subagent/thread_spawn/depth")
                            .and_then(Value::as_u64)
                            .map_or(u32::from(parent_thread(meta).is_some()), |d| d as u32),
                        origin: str_field(meta, &["originator"]).map(str::to_owned),
                        raw: meta.clone(),
                    };
                    if let Some(p) = str_field(meta, &["model_provider"]) {
                        self.provider = p.to_owned();
                    }
                    let t = h.created_ms.unwrap_or(time);
                    self.last_time = t;
                    self.last_input_time = t;
                    self.push(line, t, EventKind::Session(Box::new(h.clone())));
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
        // Processes still running at the end of the file: their call did return.
        let mut held: Vec<(String, HeldResult)> = self.held.drain().collect();
        held.sort_by(|a, b| (a.1.time, &a.0).cmp(&(b.1.time, &b.0)));
        for (call_id, h) in held {
            self.push(
                seq,
                h.time,
                EventKind::ToolResult {
                    call_id,
                    output: h.output.into(),
                    is_error: false,
                },
            );
        }
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
                let info = p.get("info");
                let Some(u) = info.and_then(|i| i.get("last_token_usage")) else {
                    return;
                };
                // The same running total again: a repeat of the usage already counted.
                if let Some(total) = info
                    .and_then(|i| i.get("total_token_usage"))
                    .filter(|t| t.as_object().is_some_and(|o| !o.is_empty()))
                {
                    if self.last_total.as_ref() == Some(total) {
                        return;
                    }
                    self.last_total = Some(total.clone());
                }
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
                        cache_write: 0,
                    }),
                );
                if self.step_open && self.step_has_output {
                    self.close_step(seq, time);
                }
            }
            "exec_command_end" => self.exec_end(seq, time, p),
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
                    let text = p.get("content").map(value_text).unwrap_or_default();
                    if !text.trim().is_empty() {
                        self.push(seq, time, EventKind::AssistantText { text });
                    }
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
            "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call"
            | "tool_search_call" => {
                self.model_output(seq, time);
                self.last_output_was_message = false;
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
                    "tool_search_call" => (
                        "tool_search".to_owned(),
                        parse_arguments(p.get("arguments").unwrap_or(&Value::Null)),
                    ),
                    _ => (
                        "web_search".to_owned(),
                        p.get("action").cloned().unwrap_or(Value::Null),
                    ),
                };
                let given_id = str_field(p, &["call_id", "id"]).filter(|c| !c.is_empty());
                // An item without a call id (a web search the server ran) is complete as
                // written: it is a call and its own result.
                let call_id = given_id.map_or_else(|| format!("{ty}-{seq}"), str::to_owned);
                let (turn, step) = (self.turn, self.step);
                let kind = CallKind::of(&name, &arguments);
                self.calls.insert(
                    call_id.clone(),
                    CallInfo {
                        kind,
                        returned: given_id.is_none(),
                    },
                );
                self.push(
                    seq,
                    time,
                    EventKind::ToolCall {
                        turn,
                        step,
                        call_id: call_id.clone(),
                        name,
                        arguments: arguments.into(),
                    },
                );
                if given_id.is_none() {
                    let status = str_field(p, &["status"]).unwrap_or("completed");
                    self.push(
                        seq,
                        time,
                        EventKind::ToolResult {
                            call_id,
                            output: status.to_owned().into(),
                            is_error: matches!(status, "failed" | "incomplete"),
                        },
                    );
                } else {
                    self.pending_calls += 1;
                }
            }
            "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                self.close_step(self.last_output_seq.min(seq), self.last_output_time);
                self.pending_calls = (self.pending_calls - 1).max(0);
                let call_id = str_field(p, &["call_id"]).unwrap_or_default().to_owned();
                let (output, is_error) = match p.get("output") {
                    Some(o) => tool_output(o),
                    None => (
                        str_field(p, &["status"]).unwrap_or("completed").to_owned(),
                        false,
                    ),
                };
                self.tool_returned(seq, time, call_id, output, is_error);
                self.last_input_time = time;
                self.last_output_was_message = false;
            }
            _ => {}
        }
    }

    /// A call's output line: writes its result, or holds it while its process still runs.
    fn tool_returned(
        &mut self,
        seq: u64,
        time: i64,
        call_id: String,
        output: String,
        mut is_error: bool,
    ) {
        let info = self.calls.get(&call_id).cloned().unwrap_or_default();
        let polls = match &info.kind {
            CallKind::WriteStdin(pid) => Some(pid.clone()),
            _ => None,
        };
        match (unified_exec_state(&output), polls) {
            (Some(ExecState::Running(pid)), None) => {
                self.processes.insert(pid, call_id.clone());
                self.held.insert(call_id, HeldResult { output, time });
                return;
            }
            (Some(ExecState::Exited(code)), Some(pid)) => {
                // The process a `write_stdin` polls ended: its exit belongs to the call that
                // started it (the poll itself succeeded).
                if let Some(start) = pid.and_then(|pid| self.processes.remove(&pid)) {
                    self.release(seq, time, &start, code, Some(output.clone()));
                }
            }
            (Some(ExecState::Exited(code)), None) => is_error |= code != 0,
            _ => {}
        }
        if let Some(code) = self.early_exits.remove(&call_id) {
            is_error |= code != 0;
        }
        if let CallKind::SpawnAgent(agent_type) = &info.kind
            && let Some(agent) = spawned_agent_id(&output)
        {
            self.push(
                seq,
                time,
                EventKind::SubagentDescriptor(Box::new(SubagentDescriptor {
                    call_id: Some(call_id.clone()),
                    session_id: Some(agent),
                    name: agent_type.clone(),
                    ..SubagentDescriptor::default()
                })),
            );
        }
        if let Some(c) = self.calls.get_mut(&call_id) {
            c.returned = true;
        }
        self.push(
            seq,
            time,
            EventKind::ToolResult {
                call_id,
                output: output.into(),
                is_error,
            },
        );
    }

    /// Writes the held result of `call_id` now that its process exited with `code`.
    fn release(&mut self, seq: u64, time: i64, call_id: &str, code: i64, output: Option<String>) {
        let Some(h) = self.held.remove(call_id) else {
            return;
        };
        self.processes.retain(|_, c| c != call_id);
        let output = output.filter(|o| !o.is_empty()).unwrap_or(h.output);
        if let Some(c) = self.calls.get_mut(call_id) {
            c.returned = true;
        }
        self.push(
            seq,
            time,
            EventKind::ToolResult {
                call_id: call_id.to_owned(),
                output: output.into(),
                is_error: code != 0,
            },
        );
    }

    /// `exec_command_end`: the exit code of a command (unified exec or classic shell).
    fn exec_end(&mut self, seq: u64, time: i64, p: &Value) {
        let Some(call_id) = str_field(p, &["call_id"]) else {
            return;
        };
        let code = p.get("exit_code").and_then(Value::as_i64).unwrap_or(0);
        let output = str_field(p, &["aggregated_output", "formatted_output", "stdout"])
            .unwrap_or_default()
            .to_owned();
        if self.held.contains_key(call_id) {
            let text = format!("Process exited with code {code}\n{output}");
            self.release(seq, time, call_id, code, Some(text));
        } else if self.calls.get(call_id).is_some_and(|c| !c.returned) {
            self.early_exits.insert(call_id.to_owned(), code);
        }
    }
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
    conv: CodexConverter,
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
            conv: CodexConverter {
                provider: "openai".into(),
                ..CodexConverter::default()
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
