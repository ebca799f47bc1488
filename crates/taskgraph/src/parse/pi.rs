//! pi coding agent sessions (`~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`).
//!
//! A header `{type:"session", version:3, id, timestamp, cwd, parentSession?}` is followed by
//! entries `{type, id, parentId, timestamp, …}` that form a tree: branching (editing an old
//! message) leaves the abandoned branch in the file. The current branch is the path from the
//! root to the last entry written (the leaf); the other branches are kept in
//! `meta.abandoned_branches` as `{leaf_id, fork_id, entry_ids, lines}` so a UI can still reach
//! them.
//!
//! Mapping: a user message opens a turn; each assistant message is one LLM step (it starts when
//! the previous entry on the branch was written); an assistant message with `stopReason:error`
//! directly followed by another assistant message is a failed attempt of the same step
//! (`llm/retry`); tool results close their calls.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::event::{Event, EventKind, Failure, SessionStart, TurnEndKind, TurnReason, Usage};
use crate::json_fields::{code_string, parse_arguments, str_field, u64_field, value_text};
use crate::session::{Agent, ReadWarning, Session};
use crate::timestamp::time_value_ms;

struct Entry {
    line: u64,
    id: Option<String>,
    parent: Option<String>,
    value: Value,
}

/// Parses a pi session file.
pub fn parse(bytes: &[u8], file: &str) -> Session {
    let mut warnings = Vec::new();
    let mut session = Session::new("", Agent::Pi);
    let mut header: Option<(u64, Value)> = None;
    let mut entries: Vec<Entry> = Vec::new();
    super::for_each_json_line(bytes, file, &mut warnings, |line, v, _| {
        if header.is_none() && v.get("type").and_then(Value::as_str) == Some("session") {
            header = Some((line, v));
            return;
        }
        entries.push(Entry {
            line,
            id: str_field(&v, &["id"]).map(str::to_owned),
            parent: str_field(&v, &["parentId"]).map(str::to_owned),
            value: v,
        });
    });
    let mut events = Vec::new();
    match &header {
        Some((line, h)) => {
            let start = header_of(h);
            session.id = start.id.clone();
            events.push(header_event(*line, &start));
            session.header = start;
        }
        None => warnings.push(ReadWarning::new(file, 1, "no session header line")),
    }

    let branch = current_branch(&entries, &mut session.meta, file, &mut warnings);
    let mut conv = Converter::new(events, session.header.created_ms.unwrap_or(0));
    for &i in &branch {
        conv.entry(&entries[i]);
    }
    conv.finish();
    session.events = conv.events;
    session.normalize_events();
    session.warnings = warnings;
    session
}

/// Indices (file order) of the entries on the current branch, root first. Records the other
/// branches in `meta`.
fn current_branch(
    entries: &[Entry],
    meta: &mut Map<String, Value>,
    file: &str,
    warnings: &mut Vec<ReadWarning>,
) -> Vec<usize> {
    if entries.iter().all(|e| e.id.is_none()) {
        // Old linear files: no tree.
        return (0..entries.len()).collect();
    }
    let by_id: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.id.as_deref().map(|id| (id, i)))
        .collect();
    // An entry whose parent is missing (most often: the parent's line could not be read) is
    // re-attached to the entry before it in file order, so one bad line does not cut off every
    // earlier entry. The first entry of the file has nothing before it: its branch starts there.
    let mut orphans: Vec<usize> = Vec::new();
    let parent_of = |i: usize, orphans: &mut Vec<usize>| -> Option<usize> {
        let p = entries[i].parent.as_deref()?;
        match by_id.get(p) {
            Some(&k) => Some(k),
            None if i > 0 => {
                orphans.push(i);
                Some(i - 1)
            }
            None => None,
        }
    };
    let mut walk = |leaf: usize, stop: &HashSet<usize>| -> (Vec<usize>, Option<usize>) {
        let mut path = vec![leaf];
        let mut seen = HashSet::from([leaf]);
        let mut cur = leaf;
        while let Some(p) = parent_of(cur, &mut orphans) {
            if stop.contains(&p) {
                return (path, Some(p));
            }
            if !seen.insert(p) {
                break; // cycle
            }
            path.push(p);
            cur = p;
        }
        (path, None)
    };
    let Some(leaf) = (0..entries.len()).rev().find(|&i| entries[i].id.is_some()) else {
        return Vec::new();
    };
    let (mut path, _) = walk(leaf, &HashSet::new());
    path.reverse();
    if let Some(first) = path.first()
        && let Some(p) = entries[*first].parent.as_deref()
        && !by_id.contains_key(p)
    {
        warnings.push(ReadWarning::new(
            file,
            entries[*first].line,
            format!("parent entry {p} not found; branch starts here"),
        ));
    }
    let on_path: HashSet<usize> = path.iter().copied().collect();
    let parents: HashSet<&str> = entries.iter().filter_map(|e| e.parent.as_deref()).collect();
    let mut branches = Vec::new();
    let mut covered: HashSet<usize> = on_path.clone();
    for i in (0..entries.len()).rev() {
        let Some(id) = entries[i].id.as_deref() else {
            continue;
        };
        if covered.contains(&i) || parents.contains(id) {
            continue;
        }
        let (mut b, fork) = walk(i, &covered);
        b.reverse();
        covered.extend(b.iter().copied());
        branches.push(json!({
            "leaf_id": id,
            "fork_id": fork.and_then(|f| entries[f].id.clone()),
            "entry_ids": b.iter().filter_map(|&k| entries[k].id.clone()).collect::<Vec<_>>(),
            "lines": b.iter().map(|&k| entries[k].line).collect::<Vec<_>>(),
        }));
    }
    orphans.sort_unstable();
    orphans.dedup();
    for &i in &orphans {
        let kept = path.iter().position(|&k| k == i).unwrap_or(0);
        warnings.push(ReadWarning::new(
            file,
            entries[i].line,
            format!(
                "parent entry {} not found (an unreadable line?): re-attached to the entry on line {}; {kept} earlier entries of the branch kept",
                entries[i].parent.as_deref().unwrap_or_default(),
                entries[i - 1].line,
            ),
        ));
    }
    if !branches.is_empty() {
        branches.reverse();
        meta.insert("abandoned_branches".into(), Value::Array(branches));
    }
    meta.insert(
        "leaf_id".into(),
        Value::from(entries[leaf].id.clone().unwrap_or_default()),
    );
    path
}

fn header_of(h: &Value) -> SessionStart {
    SessionStart {
        id: str_field(h, &["id"]).unwrap_or_default().to_owned(),
        version: h.get("version").map(|x| match x {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        cwd: str_field(h, &["cwd"]).map(str::to_owned),
        created_ms: h.get("timestamp").and_then(time_value_ms),
        parent_session: str_field(h, &["parentSession"]).map(str::to_owned),
        delegation_depth: 0,
        origin: Some("pi".into()),
        raw: h.clone(),
    }
}

fn header_event(line: u64, start: &SessionStart) -> Event {
    Event::new(
        line,
        start.created_ms.unwrap_or(0),
        EventKind::Session(Box::new(start.clone())),
    )
}

#[derive(Clone)]
struct Converter {
    /// Events pushed and not yet taken (all of them for a whole-file parse).
    events: Vec<Event>,
    /// `seq` of the last event pushed (the header counts).
    last_pushed: Option<u64>,
    turn: u32,
    step: u32,
    turn_open: bool,
    step_open: bool,
    /// The failed attempt that an immediately following assistant message retries.
    pending_error: Option<Failure>,
    retries: u32,
    last_time: i64,
    last_stop: Option<String>,
}

impl Converter {
    fn new(events: Vec<Event>, last_time: i64) -> Self {
        Self {
            last_pushed: events.last().map(|e| e.seq),
            events,
            turn: 0,
            step: 0,
            turn_open: false,
            step_open: false,
            pending_error: None,
            retries: 0,
            last_time,
            last_stop: None,
        }
    }

    fn push(&mut self, seq: u64, time: i64, kind: EventKind) {
        self.last_pushed = Some(seq);
        self.events.push(Event::new(seq, time, kind));
    }

    fn close_step(&mut self, seq: u64, time: i64) {
        if self.step_open {
            self.step_open = false;
            self.pending_error = None;
            let (turn, step) = (self.turn, self.step);
            self.push(seq, time, EventKind::StepEnd { turn, step });
        }
    }

    fn close_turn(&mut self, seq: u64, time: i64, kind: TurnEndKind, message: Option<String>) {
        self.close_step(seq, time);
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

    fn open_turn(&mut self, seq: u64, time: i64) {
        self.turn += 1;
        self.step = 0;
        self.turn_open = true;
        self.last_stop = None;
        let turn = self.turn;
        self.push(seq, time, EventKind::TurnStart { turn });
    }

    fn entry(&mut self, e: &Entry) {
        let v = &e.value;
        let seq = e.line;
        let msg = v.get("message").unwrap_or(&Value::Null);
        let time = v
            .get("timestamp")
            .and_then(time_value_ms)
            .or_else(|| msg.get("timestamp").and_then(time_value_ms))
            .unwrap_or(self.last_time);
        match str_field(v, &["type"]).unwrap_or_default() {
            "session_info" => {
                if let Some(name) = str_field(v, &["name", "title"]) {
                    self.push(
                        seq,
                        time,
                        EventKind::Title {
                            title: name.to_owned(),
                        },
                    );
                }
            }
            "message" => match str_field(msg, &["role"]).unwrap_or_default() {
                "user" => {
                    let (kind, message) = self.turn_outcome();
                    if let Some(kind) = kind {
                        self.close_turn(seq, self.last_time, kind, message);
                    } else {
                        // The user interrupted an unfinished turn.
                        self.close_turn(seq, self.last_time, TurnEndKind::Aborted, None);
                    }
                    let text = msg.get("content").map(value_text).unwrap_or_default();
                    self.push(seq, time, EventKind::UserMessage { text });
                    self.open_turn(seq, time);
                }
                "assistant" => self.assistant(seq, time, msg),
                "toolResult" | "tool" => {
                    self.close_step(seq, self.last_time);
                    let call_id = str_field(msg, &["toolCallId", "callId"]).unwrap_or_default();
                    self.push(
                        seq,
                        time,
                        EventKind::ToolResult {
                            call_id: call_id.to_owned(),
                            output: msg
                                .get("content")
                                .map(value_text)
                                .unwrap_or_default()
                                .into(),
                            is_error: msg.get("isError").and_then(Value::as_bool).unwrap_or(false),
                        },
                    );
                    self.last_stop = None;
                }
                _ => {}
            },
            _ => {}
        }
        self.last_time = time;
    }

    fn assistant(&mut self, seq: u64, time: i64, msg: &Value) {
        if !self.turn_open {
            self.open_turn(seq, self.last_time);
        }
        if let (true, Some(failure)) = (self.step_open, self.pending_error.take()) {
            self.retries += 1;
            let retry = self.retries;
            self.push(
                seq,
                self.last_time,
                EventKind::LlmRetry {
                    retry,
                    max_retries: None,
                    delay_ms: None,
                    failure,
                },
            );
        } else {
            self.close_step(seq, self.last_time);
            self.step += 1;
            self.retries = 0;
            self.step_open = true;
            let (turn, step) = (self.turn, self.step);
            self.push(seq, self.last_time, EventKind::StepStart { turn, step });
        }
        self.push(
            seq,
            time,
            EventKind::RequestHeader {
                provider: str_field(msg, &["provider", "api"]).map(str::to_owned),
                model: str_field(msg, &["model"]).map(str::to_owned),
            },
        );
        if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
            self.push(
                seq,
                time,
                EventKind::Usage(Usage {
                    // One convention for every agent: input is every input token that was not
                    // a cache read, so cache writes count as input.
                    input: u64_field(u, &["input"]).unwrap_or(0)
                        + u64_field(u, &["cacheWrite"]).unwrap_or(0),
                    output: u64_field(u, &["output"]).unwrap_or(0),
                    cache_read: u64_field(u, &["cacheRead"]).unwrap_or(0),
                    cache_write: u64_field(u, &["cacheWrite"]).unwrap_or(0),
                }),
            );
        }
        let mut calls = Vec::new();
        if let Some(Value::Array(parts)) = msg.get("content") {
            for p in parts {
                if str_field(p, &["type"]) == Some("text")
                    && let Some(text) = str_field(p, &["text"]).filter(|t| !t.trim().is_empty())
                {
                    let text = text.to_owned();
                    self.push(seq, time, EventKind::AssistantText { text });
                }
                if str_field(p, &["type"]) != Some("toolCall") {
                    continue;
                }
                let (turn, step) = (self.turn, self.step);
                let call_id = str_field(p, &["id"]).unwrap_or_default().to_owned();
                calls.push(call_id.clone());
                self.push(
                    seq,
                    time,
                    EventKind::ToolCall {
                        turn,
                        step,
                        call_id,
                        name: str_field(p, &["name"]).unwrap_or("tool").to_owned(),
                        arguments: parse_arguments(p.get("arguments").unwrap_or(&Value::Null))
                            .into(),
                    },
                );
            }
        }
        let stop = str_field(msg, &["stopReason"]).unwrap_or("stop").to_owned();
        if matches!(stop.as_str(), "error" | "aborted") {
            // pi runs a message's tool calls only once it completed: these never ran.
            let reason = str_field(msg, &["errorMessage"]).unwrap_or(stop.as_str());
            for id in calls {
                self.push(
                    seq,
                    time,
                    EventKind::ToolCancelled {
                        call_id: id,
                        reason: reason.to_owned(),
                    },
                );
            }
        }
        self.push(
            seq,
            time,
            EventKind::Finish {
                reason: stop.clone(),
            },
        );
        if stop == "error" {
            // Keep the step open: an assistant message right after this one is its retry.
            self.pending_error = Some(Failure {
                message: str_field(msg, &["errorMessage"])
                    .unwrap_or("error")
                    .to_owned(),
                code: code_string(msg.get("errorCode")),
            });
        } else {
            self.close_step(seq, time);
        }
        self.last_stop = Some(stop);
    }

    /// How the open turn would end now: `None` when it is unfinished (waiting on tools).
    fn turn_outcome(&self) -> (Option<TurnEndKind>, Option<String>) {
        match self.last_stop.as_deref() {
            Some("error") => (Some(TurnEndKind::Error), None),
            Some("aborted") => (Some(TurnEndKind::Aborted), None),
            Some("toolUse") | None => (None, None),
            Some(_) => (Some(TurnEndKind::Completed), None),
        }
    }

    fn finish(&mut self) {
        let seq = self.last_pushed.unwrap_or(0);
        if let (Some(kind), message) = self.turn_outcome() {
            let t = self.last_time;
            self.close_turn(seq, t, kind, message);
        }
    }
}

/// Resumable pi reader state (see [`crate::live::LiveReader`]).
///
/// It follows the current branch as long as every new entry extends it (its parent is the
/// current leaf). An entry that starts another branch, re-uses an id, arrives before the header
/// or turns a linear (id-less) file into a tree cannot be applied incrementally: the stream
/// reports divergence and the caller re-reads the whole file.
#[derive(Default)]
pub(crate) struct Stream {
    header: Option<SessionStart>,
    conv: Option<Converter>,
    /// `None` before the first entry; `Some(true)` when entries carry ids (a tree).
    tree: Option<bool>,
    ids: HashSet<String>,
    leaf: Option<String>,
    /// The unknown parent of the branch root (an entry with this id would re-root the branch).
    root_parent: Option<String>,
    next_line: u64,
    diverged: bool,
}

impl Stream {
    /// Applies complete lines; `next_line` is the number after the last line consumed.
    pub(crate) fn feed(&mut self, lines: Vec<(u64, Value)>, next_line: u64, file: &str) {
        self.next_line = next_line;
        if self.diverged {
            return;
        }
        let mut fresh: Vec<Entry> = Vec::new();
        for (line, v) in lines {
            if self.header.is_none() && v.get("type").and_then(Value::as_str) == Some("session") {
                if self.conv.is_some() {
                    // Entries were converted without the header's start time.
                    self.diverged = true;
                    return;
                }
                self.header = Some(header_of(&v));
                let ev = header_event(
                    line,
                    self.header.as_ref().unwrap_or(&SessionStart::default()),
                );
                let t = self.header.as_ref().and_then(|h| h.created_ms).unwrap_or(0);
                self.conv = Some(Converter::new(vec![ev], t));
                continue;
            }
            fresh.push(Entry {
                line,
                id: str_field(&v, &["id"]).map(str::to_owned),
                parent: str_field(&v, &["parentId"]).map(str::to_owned),
                value: v,
            });
        }
        if fresh.is_empty() {
            return;
        }
        let conv = self
            .conv
            .get_or_insert_with(|| Converter::new(Vec::new(), 0));
        if self.tree.is_none() {
            // First entries: the whole-file branch logic over them.
            let mut meta = Map::new();
            let branch = current_branch(&fresh, &mut meta, file, &mut Vec::new());
            let tree = fresh.iter().any(|e| e.id.is_some());
            self.tree = Some(tree);
            self.ids = fresh.iter().filter_map(|e| e.id.clone()).collect();
            if tree {
                self.leaf = fresh.iter().rev().find_map(|e| e.id.clone());
                self.root_parent = branch
                    .first()
                    .and_then(|&i| fresh[i].parent.clone())
                    .filter(|p| !self.ids.contains(p));
            }
            for &i in &branch {
                conv.entry(&fresh[i]);
            }
            return;
        }
        for e in fresh {
            match (self.tree, &e.id) {
                (Some(false), None) => conv.entry(&e),
                (Some(true), None) => {} // not on any branch
                (Some(true), Some(id))
                    if e.parent.is_some()
                        && e.parent == self.leaf
                        && !self.ids.contains(id)
                        && self.root_parent.as_deref() != Some(id.as_str()) =>
                {
                    self.ids.insert(id.clone());
                    self.leaf = Some(id.clone());
                    conv.entry(&e);
                }
                _ => {
                    self.diverged = true;
                    return;
                }
            }
        }
    }

    /// Whether a line could not be applied incrementally.
    pub(crate) fn diverged(&self) -> bool {
        self.diverged
    }

    /// Takes the events no later line can change or reorder.
    pub(crate) fn commit(&mut self) -> Vec<Event> {
        let Some(conv) = self.conv.as_mut() else {
            return Vec::new();
        };
        // Entries push at their own line; `finish` pushes at the last pushed `seq`.
        let w = self.next_line.min(conv.last_pushed.unwrap_or(0));
        super::take_before(&mut conv.events, w)
    }

    /// The events a whole-file read would add after the committed ones, as of now.
    pub(crate) fn tail(&self) -> Vec<Event> {
        let Some(conv) = &self.conv else {
            return Vec::new();
        };
        let mut c = conv.clone();
        c.finish();
        crate::session::normalize_events(&mut c.events);
        c.events
    }
}
