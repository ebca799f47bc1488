//! Claude Code sessions (`~/.claude/projects/<cwd slug>/<sessionId>.jsonl`).
//!
//! Lines are `user`, `assistant`, `system`, `summary`, … objects with `uuid`, `parentUuid`,
//! `isSidechain`, `sessionId`, `cwd`, `timestamp`. One API response is split over several
//! `assistant` lines sharing `message.id` (and `requestId`), with the results of its parallel
//! tool calls possibly in between (Claude Code 2.1); they are merged into one LLM step and
//! their usage is counted once (the last line's figures: the first chunks carry placeholders). Tool results come back in `user`
//! lines as `tool_result` parts. `system` lines with subtype `api_error` are failed attempts of
//! the step that follows (`llm/retry`). `TodoWrite` calls also yield a `todo/write` event;
//! `Task`/`Agent` calls a `subagent/descriptor` (with the child id when the result names
//! `agentId`). Sidechain lines in the main file become child sessions; subagent files
//! (`<sessionId>/subagents/agent-<id>.jsonl`) are read with [`parse_subagent`].

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::event::{
    Event, EventKind, Failure, SessionStart, SubagentDescriptor, Todo, TurnEndKind, TurnReason,
    Usage,
};
use crate::json_fields::{code_string, str_field, u64_field, value_text};
use crate::session::{Agent, ReadWarning, Session};
use crate::timestamp::time_value_ms;

/// Parses a main Claude Code session file; sidechain lines become `children`.
pub fn parse(bytes: &[u8], file: &str) -> Session {
    let (lines, warnings) = collect(bytes, file);
    let (main, side): (Vec<_>, Vec<_>) = lines.into_iter().partition(|(_, v)| {
        !v.get("isSidechain")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    });
    if main.is_empty() && !side.is_empty() {
        // A sidechain transcript opened on its own (`agent-<id>.jsonl`, beside its parent in
        // Claude Code ≤ 2.0 or under `<session>/subagents/`): a session with a parent.
        let parent = side
            .iter()
            .find_map(|(_, v)| str_field(v, &["sessionId"]))
            .unwrap_or_default()
            .to_owned();
        return subagent_session(&side, warnings, file, &parent);
    }
    let mut session = build(&main, None, warnings);
    // Group sidechain lines into chains by parentUuid.
    let mut chain_of: HashMap<String, usize> = HashMap::new();
    let mut chains: Vec<Vec<(u64, Value)>> = Vec::new();
    for (line, v) in side {
        let parent = str_field(&v, &["parentUuid"]).and_then(|p| chain_of.get(p).copied());
        let idx = parent.unwrap_or_else(|| {
            chains.push(Vec::new());
            chains.len() - 1
        });
        if let Some(u) = str_field(&v, &["uuid"]) {
            chain_of.insert(u.to_owned(), idx);
        }
        chains[idx].push((line, v));
    }
    for (n, chain) in chains.into_iter().enumerate() {
        let mut child = build(&chain, Some(&session.id), Vec::new());
        child.id = format!("{}/sidechain-{}", session.id, n + 1);
        child.header.id = child.id.clone();
        for e in &mut child.events {
            if let EventKind::Session(h) = &mut e.kind {
                h.id = child.id.clone();
            }
        }
        session.children.push(child);
    }
    session
}

/// Parses a subagent file (`agent-<id>.jsonl`): every line belongs to the one child session.
///
/// `parent_id` is the spawning session's id; the child id is `agent-<agentId>`.
pub fn parse_subagent(bytes: &[u8], file: &str, parent_id: &str) -> Session {
    let (lines, warnings) = collect(bytes, file);
    subagent_session(&lines, warnings, file, parent_id)
}

fn subagent_session(
    lines: &[(u64, Value)],
    warnings: Vec<ReadWarning>,
    file: &str,
    parent_id: &str,
) -> Session {
    let parent = (!parent_id.is_empty()).then_some(parent_id);
    let mut s = build(lines, parent, warnings);
    let agent_id = lines
        .iter()
        .find_map(|(_, v)| str_field(v, &["agentId"]))
        .map(str::to_owned);
    s.id = subagent_id(agent_id.as_deref(), file);
    s.header.id = s.id.clone();
    for e in &mut s.events {
        if let EventKind::Session(h) = &mut e.kind {
            h.id = s.id.clone();
        }
    }
    s
}

/// The session id of a subagent transcript: `agent-<agentId>`, the id taken from the file name
/// when no line names it.
fn subagent_id(agent_id: Option<&str>, file: &str) -> String {
    let id = agent_id.map(str::to_owned).or_else(|| {
        std::path::Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .map(|s| s.trim_start_matches("agent-").to_owned())
    });
    format!("agent-{}", id.unwrap_or_default())
}

/// Reads JSON lines, dropping repeated `uuid`s (resumed sessions rewrite history).
fn collect(bytes: &[u8], file: &str) -> (Vec<(u64, Value)>, Vec<ReadWarning>) {
    let mut warnings = Vec::new();
    let mut seen = HashSet::new();
    let mut lines = Vec::new();
    super::for_each_json_line(bytes, file, &mut warnings, |line, v, _| {
        if let Some(u) = str_field(&v, &["uuid"])
            && !seen.insert(u.to_owned())
        {
            return;
        }
        lines.push((line, v));
    });
    (lines, warnings)
}

/// The header fields, each from the first main line that has it.
#[derive(Default, Clone, PartialEq)]
struct Scan {
    first_time: Option<i64>,
    session_id: Option<String>,
    version: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    /// `agentId` (sidechain transcripts).
    agent_id: Option<String>,
}

impl Scan {
    /// Takes the fields `v` has and `self` lacks; true when one was taken.
    fn add(&mut self, v: &Value) -> bool {
        let mut changed = false;
        if self.first_time.is_none()
            && let Some(t) = v.get("timestamp").and_then(time_value_ms)
        {
            self.first_time = Some(t);
            changed = true;
        }
        for (slot, key) in [
            (&mut self.session_id, "sessionId"),
            (&mut self.version, "version"),
            (&mut self.cwd, "cwd"),
            (&mut self.git_branch, "gitBranch"),
            (&mut self.agent_id, "agentId"),
        ] {
            if slot.is_none()
                && let Some(x) = str_field(v, &[key])
            {
                *slot = Some(x.to_owned());
                changed = true;
            }
        }
        changed
    }

    fn header(&self, parent: Option<&str>) -> SessionStart {
        let session_id = self.session_id.clone().unwrap_or_default();
        SessionStart {
            id: session_id.clone(),
            version: self.version.clone(),
            cwd: self.cwd.clone(),
            created_ms: self.first_time,
            parent_session: parent.map(str::to_owned),
            delegation_depth: u32::from(parent.is_some()),
            origin: Some("claude-code".into()),
            raw: json!({
                "sessionId": session_id,
                "gitBranch": self.git_branch,
            }),
        }
    }
}

fn build(lines: &[(u64, Value)], parent: Option<&str>, warnings: Vec<ReadWarning>) -> Session {
    let mut session = Session::new("", Agent::ClaudeCode);
    let mut scan = Scan::default();
    for (_, v) in lines {
        scan.add(v);
    }
    let header = scan.header(parent);
    session.id = header.id.clone();
    let mut c = ClaudeConverter::start(&header);
    session.header = header;
    for (line, v) in lines {
        c.feed_line(*line, v);
    }
    c.finish();
    if !c.summaries.is_empty() {
        session.meta.insert(
            "summaries".into(),
            Value::Array(std::mem::take(&mut c.summaries)),
        );
    }
    session.events = c.events;
    session.normalize_events();
    session.warnings = warnings;
    session
}

#[derive(Default, Clone)]
struct ClaudeConverter {
    /// Events pushed and not yet taken (all of them for a whole-file parse).
    events: Vec<Event>,
    /// `seq` of the last event pushed (the header counts).
    last_pushed: Option<u64>,
    /// `summary` lines' texts.
    summaries: Vec<Value>,
    turn: u32,
    step: u32,
    turn_open: bool,
    step_open: bool,
    /// The open step has received assistant content (false: opened by an `api_error`).
    step_has_response: bool,
    msg_id: Option<String>,
    group_usage: Option<Usage>,
    group_stop: Option<String>,
    group_tool_use: bool,
    group_last_time: i64,
    group_last_seq: u64,
    last_time: i64,
    last_input_time: i64,
    last_stop: Option<String>,
    last_was_result: bool,
    open_calls: HashSet<String>,
    task_calls: HashSet<String>,
    retries: u32,
}

impl ClaudeConverter {
    fn start(header: &SessionStart) -> Self {
        let t = header.created_ms.unwrap_or(0);
        ClaudeConverter {
            events: vec![Event::new(
                0,
                t,
                EventKind::Session(Box::new(header.clone())),
            )],
            last_pushed: Some(0),
            last_time: t,
            last_input_time: t,
            ..ClaudeConverter::default()
        }
    }

    fn feed_line(&mut self, line: u64, v: &Value) {
        if str_field(v, &["type"]) == Some("summary") {
            if let Some(s) = str_field(v, &["summary"]) {
                self.summaries.push(Value::from(s));
                if self.summaries.len() == 1 {
                    let t = self.last_time;
                    self.push(
                        line,
                        t,
                        EventKind::Title {
                            title: s.to_owned(),
                        },
                    );
                }
            }
            return;
        }
        self.line(line, v);
    }

    fn push(&mut self, seq: u64, time: i64, kind: EventKind) {
        self.last_pushed = Some(seq);
        self.events.push(Event::new(seq, time, kind));
    }

    fn open_turn(&mut self, seq: u64, time: i64) {
        self.turn += 1;
        self.step = 0;
        self.turn_open = true;
        self.last_stop = None;
        let turn = self.turn;
        self.push(seq, time, EventKind::TurnStart { turn });
    }

    fn open_step(&mut self, seq: u64) {
        if !self.turn_open {
            let t = self.last_input_time;
            self.open_turn(seq, t);
        }
        self.step += 1;
        self.step_open = true;
        self.step_has_response = false;
        self.retries = 0;
        let (turn, step, t) = (self.turn, self.step, self.last_input_time);
        self.push(seq, t, EventKind::StepStart { turn, step });
    }

    fn close_group(&mut self, seq: u64) {
        if !self.step_open {
            return;
        }
        let (t, seq) = if self.step_has_response {
            (self.group_last_time, self.group_last_seq.min(seq))
        } else {
            (self.last_time, seq)
        };
        if let Some(u) = self.group_usage.take() {
            self.push(seq, t, EventKind::Usage(u));
        }
        if let Some(r) = self.group_stop.clone() {
            self.push(seq, t, EventKind::Finish { reason: r });
        }
        let (turn, step) = (self.turn, self.step);
        self.push(seq, t, EventKind::StepEnd { turn, step });
        self.step_open = false;
        self.msg_id = None;
        let stop = self.group_stop.take();
        self.last_stop = if self.group_tool_use {
            Some("tool_use".into())
        } else if self.step_has_response {
            Some(stop.unwrap_or_else(|| "end_turn".into()))
        } else {
            None
        };
        self.group_tool_use = false;
        self.last_input_time = self.last_input_time.max(t);
    }

    fn close_turn(&mut self, seq: u64, kind: TurnEndKind, message: Option<String>) {
        self.close_group(seq);
        if self.turn_open {
            self.turn_open = false;
            let (turn, t) = (self.turn, self.last_time);
            self.push(
                seq,
                t,
                EventKind::TurnEnd {
                    turn,
                    reason: TurnReason { kind, message },
                },
            );
        }
    }

    fn line(&mut self, seq: u64, v: &Value) {
        let time = v
            .get("timestamp")
            .and_then(time_value_ms)
            .unwrap_or(self.last_time);
        match str_field(v, &["type"]).unwrap_or_default() {
            "user" => self.user(seq, time, v),
            "assistant" => self.assistant(seq, time, v),
            "system" => {
                if str_field(v, &["subtype"]) == Some("api_error") {
                    if !self.step_open || self.step_has_response {
                        self.close_group(seq);
                        self.open_step(seq);
                    }
                    self.retries += 1;
                    let err = v.get("error").unwrap_or(&Value::Null);
                    // The API error nests as {status, error: {type, error: {type, message}}}.
                    let mut inner = err;
                    let mut message = None;
                    let mut kind = None;
                    for _ in 0..4 {
                        if let Some(m) = str_field(inner, &["message"]) {
                            message = Some(m.to_owned());
                        }
                        if let Some(t) = str_field(inner, &["type"]).filter(|t| *t != "error") {
                            kind = Some(t.to_owned());
                        }
                        match inner.get("error") {
                            Some(next) if next.is_object() => inner = next,
                            Some(Value::String(s)) => {
                                message.get_or_insert_with(|| s.clone());
                                break;
                            }
                            _ => break,
                        }
                    }
                    let failure = Failure {
                        message: message.unwrap_or_else(|| value_text(err)),
                        code: code_string(err.get("status")).or(kind),
                    };
                    let retry = u64_field(v, &["retryAttempt"]).map_or(self.retries, |n| n as u32);
                    self.push(
                        seq,
                        time,
                        EventKind::LlmRetry {
                            retry,
                            max_retries: u64_field(v, &["maxRetries"]).map(|n| n as u32),
                            delay_ms: u64_field(v, &["retryInMs"]),
                            failure,
                        },
                    );
                }
            }
            other => {
                if let Some(t) = str_field(v, &["customTitle"])
                    && other.contains("title")
                {
                    self.push(
                        seq,
                        time,
                        EventKind::Title {
                            title: t.to_owned(),
                        },
                    );
                }
            }
        }
        self.last_time = time;
    }

    fn user(&mut self, seq: u64, time: i64, v: &Value) {
        let msg = v.get("message").unwrap_or(&Value::Null);
        let content = msg.get("content").unwrap_or(&Value::Null);
        let mut text = String::new();
        let mut had_result = false;
        match content {
            Value::String(s) => text = s.clone(),
            Value::Array(parts) => {
                for p in parts {
                    if str_field(p, &["type"]) == Some("tool_result") {
                        // The response stays open: Claude Code 2.1 streams one message (one
                        // `message.id`) over several lines with the results of its parallel
                        // calls in between; the next response or real input closes it.
                        had_result = true;
                        let id = str_field(p, &["tool_use_id"])
                            .unwrap_or_default()
                            .to_owned();
                        self.open_calls.remove(&id);
                        self.push(
                            seq,
                            time,
                            EventKind::ToolResult {
                                call_id: id.clone(),
                                output: p.get("content").map(value_text).unwrap_or_default().into(),
                                is_error: p
                                    .get("is_error")
                                    .and_then(Value::as_bool)
                                    .unwrap_or(false),
                            },
                        );
                        if self.task_calls.contains(&id)
                            && let Some(agent) = v
                                .get("toolUseResult")
                                .and_then(|r| str_field(r, &["agentId"]))
                        {
                            self.push(
                                seq,
                                time,
                                EventKind::SubagentDescriptor(Box::new(SubagentDescriptor {
                                    call_id: Some(id),
                                    session_id: Some(format!("agent-{agent}")),
                                    ..SubagentDescriptor::default()
                                })),
                            );
                        }
                    } else if let Some(t) = str_field(p, &["text"]) {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(t);
                    }
                }
            }
            _ => {}
        }
        if had_result {
            self.last_input_time = time;
            self.last_was_result = true;
            return;
        }
        if text.is_empty()
            || v.get("isMeta").and_then(Value::as_bool).unwrap_or(false)
            || text.starts_with("<local-command")
            || v.get("isCompactSummary")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        {
            return;
        }
        self.last_was_result = false;
        self.close_group(seq);
        if text.starts_with("[Request interrupted by user") {
            self.close_turn(seq, TurnEndKind::Aborted, Some(text));
            self.last_input_time = time;
            return;
        }
        let kind = if self.last_stop.as_deref() == Some("error") {
            TurnEndKind::Error
        } else {
            TurnEndKind::Completed
        };
        self.close_turn(seq, kind, None);
        self.push(seq, time, EventKind::UserMessage { text });
        self.last_input_time = time;
        self.open_turn(seq, time);
    }

    fn assistant(&mut self, seq: u64, time: i64, v: &Value) {
        let msg = v.get("message").unwrap_or(&Value::Null);
        let id = str_field(msg, &["id"])
            .map(str::to_owned)
            .or_else(|| str_field(v, &["requestId", "uuid"]).map(str::to_owned));
        let continuing =
            self.step_open && self.step_has_response && id.is_some() && self.msg_id == id;
        if !continuing {
            if self.step_open && !self.step_has_response {
                // Reuse the step opened by api_error lines.
            } else {
                self.close_group(seq);
                self.open_step(seq);
            }
            self.step_has_response = true;
            self.msg_id = id;
            let t = self.last_input_time;
            self.push(
                seq,
                t,
                EventKind::RequestHeader {
                    provider: Some("anthropic".into()),
                    model: str_field(msg, &["model"]).map(str::to_owned),
                },
            );
        }
        self.last_was_result = false;
        self.group_last_time = time;
        self.group_last_seq = seq;
        if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
            // Split lines repeat the response's usage: keep the last figures, count them once.
            self.group_usage = Some(Usage {
                input: u64_field(u, &["input_tokens"]).unwrap_or(0)
                    + u64_field(u, &["cache_creation_input_tokens"]).unwrap_or(0),
                output: u64_field(u, &["output_tokens"]).unwrap_or(0),
                cache_read: u64_field(u, &["cache_read_input_tokens"]).unwrap_or(0),
                cache_write: u64_field(u, &["cache_creation_input_tokens"]).unwrap_or(0),
            });
        }
        if let Some(r) = str_field(msg, &["stop_reason"]) {
            self.group_stop = Some(r.to_owned());
        }
        if v.get("isApiErrorMessage")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            self.group_stop = Some("error".into());
        }
        if let Some(Value::Array(parts)) = msg.get("content") {
            for p in parts {
                match str_field(p, &["type"]) {
                    Some("tool_use") => {}
                    Some("text") => {
                        if let Some(text) = str_field(p, &["text"]).filter(|t| !t.trim().is_empty())
                        {
                            let text = text.to_owned();
                            self.push(seq, time, EventKind::AssistantText { text });
                        }
                        continue;
                    }
                    _ => continue,
                }
                self.group_tool_use = true;
                let call_id = str_field(p, &["id"]).unwrap_or_default().to_owned();
                let name = str_field(p, &["name"]).unwrap_or("tool").to_owned();
                let input = p.get("input").cloned().unwrap_or(Value::Null);
                let (turn, step) = (self.turn, self.step);
                self.open_calls.insert(call_id.clone());
                self.push(
                    seq,
                    time,
                    EventKind::ToolCall {
                        turn,
                        step,
                        call_id: call_id.clone(),
                        name: name.clone(),
                        arguments: input.clone().into(),
                    },
                );
                match name.as_str() {
                    "TodoWrite" => self.push(
                        seq,
                        time,
                        EventKind::TodoWrite {
                            todos: Todo::list_from_value(
                                input.get("todos").unwrap_or(&Value::Null),
                            ),
                            call_id: Some(call_id),
                        },
                    ),
                    "Task" | "Agent" => {
                        self.task_calls.insert(call_id.clone());
                        self.push(
                            seq,
                            time,
                            EventKind::SubagentDescriptor(Box::new(SubagentDescriptor {
                                call_id: Some(call_id),
                                session_id: None,
                                name: str_field(&input, &["subagent_type"]).map(str::to_owned),
                                description: str_field(&input, &["description"]).map(str::to_owned),
                                prompt: str_field(&input, &["prompt"]).map(str::to_owned),
                            })),
                        )
                    }
                    _ => {}
                }
            }
        }
    }

    fn finish(&mut self) {
        let seq = self.last_pushed.unwrap_or(0);
        self.close_group(seq);
        if !self.turn_open || !self.open_calls.is_empty() || self.last_was_result {
            return; // still working (or nothing open)
        }
        match self.last_stop.as_deref() {
            Some("tool_use") | None => {}
            Some("error") => self.close_turn(seq, TurnEndKind::Error, None),
            Some(_) => self.close_turn(seq, TurnEndKind::Completed, None),
        }
    }
}

/// Resumable Claude Code reader state for a main session file (see
/// [`crate::live::LiveReader`]).
///
/// **Choice:** the assistant lines of one response (same `message.id`) are merged into one
/// step whose usage, finish reason and end are only known when the response is closed (by the
/// next input, another response or an API error). Nothing that a later line could still change
/// is committed: the open response's closing events stay in the uncommitted tail, which a
/// caller shows provisionally (see [`crate::live::LiveGraph`]). Sidechain lines are counted but
/// not converted (they are child sessions). Main lines are held unconverted until a line names
/// the session id and a timestamp (at most 64 lines); a header field first seen after that
/// makes the stream diverge (the caller re-reads the file).
#[derive(Default)]
pub(crate) struct Stream {
    seen: HashSet<String>,
    side_lines: usize,
    scan: Scan,
    /// Main lines held until the header is known (`conv` is `None` meanwhile).
    early: Vec<(u64, Value)>,
    conv: Option<ClaudeConverter>,
    next_line: u64,
    diverged: bool,
    /// Decided by the first lines: the file holds only sidechain lines (a subagent transcript
    /// opened on its own), so they are the session's lines, as [`parse`] reads them.
    subagent: Option<bool>,
    /// The file label (a subagent's id falls back to its file name).
    file: String,
}

/// At most this many main lines are held back waiting for the header fields.
const EARLY_LINES: usize = 64;

impl Stream {
    /// A stream over the file labelled `file`.
    pub(crate) fn new(file: &str) -> Self {
        Stream {
            file: file.to_owned(),
            ..Stream::default()
        }
    }

    /// The header the whole-file read gives the lines scanned so far.
    fn header(&self) -> SessionStart {
        if self.subagent != Some(true) {
            return self.scan.header(None);
        }
        let mut h = self.scan.header(self.scan.session_id.as_deref());
        h.id = subagent_id(self.scan.agent_id.as_deref(), &self.file);
        h
    }

    /// Applies complete lines; `next_line` is the number after the last line consumed.
    pub(crate) fn feed(&mut self, lines: Vec<(u64, Value)>, next_line: u64) {
        self.next_line = next_line;
        if self.diverged {
            return;
        }
        let is_side = |v: &Value| {
            v.get("isSidechain")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let mut fresh = Vec::new();
        for (line, v) in lines {
            if let Some(u) = str_field(&v, &["uuid"])
                && !self.seen.insert(u.to_owned())
            {
                continue;
            }
            fresh.push((line, v));
        }
        if self.subagent.is_none() && !fresh.is_empty() {
            self.subagent = Some(fresh.iter().all(|(_, v)| is_side(v)));
        }
        let mut main = Vec::new();
        for (line, v) in fresh {
            match (self.subagent, is_side(&v)) {
                (Some(true), false) => {
                    // Not a subagent transcript after all: read the file again.
                    self.diverged = true;
                    return;
                }
                (Some(true), true) => main.push((line, v)),
                (_, true) => self.side_lines += 1,
                (_, false) => main.push((line, v)),
            }
        }
        if main.is_empty() {
            return;
        }
        if let Some(c) = &mut self.conv {
            for (_, v) in &main {
                if self.scan.add(v) {
                    self.diverged = true;
                    return;
                }
            }
            for (line, v) in &main {
                c.feed_line(*line, v);
            }
            return;
        }
        // Hold the first lines (often a `summary` without header fields) until the header is
        // known, so that a late header does not force a re-read.
        for (_, v) in &main {
            self.scan.add(v);
        }
        self.early.extend(main);
        if (self.scan.session_id.is_some() && self.scan.first_time.is_some())
            || self.early.len() >= EARLY_LINES
        {
            let mut c = ClaudeConverter::start(&self.header());
            for (line, v) in std::mem::take(&mut self.early) {
                c.feed_line(line, &v);
            }
            self.conv = Some(c);
        }
    }

    /// Whether a line could not be applied incrementally.
    pub(crate) fn diverged(&self) -> bool {
        self.diverged
    }

    /// Sidechain lines seen so far (each changes the child sessions).
    pub(crate) fn side_lines(&self) -> usize {
        self.side_lines
    }

    /// Takes the events no later line can change or reorder.
    pub(crate) fn commit(&mut self) -> Vec<Event> {
        let Some(c) = self.conv.as_mut() else {
            return Vec::new();
        };
        // An open response closes at its last line's `seq`; `finish` pushes at the last
        // pushed `seq`; everything else at the line being read.
        let feed = if c.step_open && c.step_has_response {
            c.group_last_seq
        } else {
            self.next_line
        };
        let w = feed.min(c.last_pushed.unwrap_or(0));
        super::take_before(&mut c.events, w)
    }

    /// The events a whole-file read would add after the committed ones, as of now.
    pub(crate) fn tail(&self) -> Vec<Event> {
        let mut c = match &self.conv {
            Some(c) => c.clone(),
            None => {
                let mut c = ClaudeConverter::start(&self.header());
                for (line, v) in &self.early {
                    c.feed_line(*line, v);
                }
                c
            }
        };
        c.finish();
        crate::session::normalize_events(&mut c.events);
        c.events
    }
}
