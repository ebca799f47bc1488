//! DeepSeek Harness (DSH) session files.
//!
//! v0 `session.jsonl.zstd` is a run of zstd frames appended one after another; newer writers
//! produce `session.v1…v4.jsonl[.zstd]`. All versions share the line shape: a header
//! `{type:"session", …}` then `{type, seq, time, data}` lines. The shapes that moved between
//! versions (usage in `assistant/chunk` vs `assistant/message`, failed attempts in
//! `llm/retry` vs `assistant/attempt`, tool results with role `tool`) are all accepted.

use std::io::Read;

use serde_json::Value;

use super::dsh_envelope;
use super::dsh_fast::Fast;
use super::dsh_lines::{self, SplitReader, newlines};
use crate::event::{
    Event, EventKind, Failure, SessionStart, SubagentDescriptor, Todo, TurnEndKind, TurnReason,
    Usage,
};
use crate::json_fields::{code_string, parse_arguments, str_field, u64_field, value_text};
use crate::session::{Agent, ReadWarning, Session, is_normal};
use crate::timestamp::time_value_ms;

/// The 4-byte zstd frame magic number (`28 B5 2F FD`).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Decodes a file made of concatenated zstd frames.
///
/// The input is split on the frame magic and each frame decoded on its own, so a torn (partly
/// written) last frame still yields every complete line before it; the damage is reported in
/// `warnings`. Never panics.
pub fn decode_zstd_frames(bytes: &[u8], file: &str, warnings: &mut Vec<ReadWarning>) -> Vec<u8> {
    decode_zstd_frames_limited(bytes, file, warnings, usize::MAX).unwrap_or_default()
}

/// The decoded output of [`decode_zstd_frames_limited`] would pass its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedTooLarge;

/// [`decode_zstd_frames`] that stops with [`DecodedTooLarge`] as soon as the output would pass
/// `limit` bytes (a few KB of zstd can expand to gigabytes).
pub fn decode_zstd_frames_limited(
    bytes: &[u8],
    file: &str,
    warnings: &mut Vec<ReadWarning>,
    limit: usize,
) -> Result<Vec<u8>, DecodedTooLarge> {
    let mut out = Vec::new();
    for_each_zstd_frame(bytes, file, warnings, limit, &mut |piece| {
        out.extend_from_slice(&piece)
    })?;
    Ok(out)
}

/// The frame walk of [`decode_zstd_frames_limited`], handing each decoded frame (or the complete
/// lines of a torn one) to `sink` in file order instead of keeping them all.
fn for_each_zstd_frame(
    bytes: &[u8],
    file: &str,
    warnings: &mut Vec<ReadWarning>,
    limit: usize,
    sink: &mut dyn FnMut(Vec<u8>),
) -> Result<(), DecodedTooLarge> {
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
        return Ok(());
    };
    if first > 0 {
        warnings.push(ReadWarning::new(
            file,
            0,
            format!("{first} bytes before the first zstd frame skipped"),
        ));
    }
    let mut decoded_len = 0usize;
    let mut i = 0;
    while i < starts.len() {
        let start = starts[i];
        // A magic inside compressed data would split a frame in two: on failure, retry with
        // the next few boundaries joined before giving up on the frame.
        let mut decoded = None;
        let mut first_partial = Vec::new();
        for j in (i + 1)..=(i + 4).min(starts.len()) {
            let end = starts.get(j).copied().unwrap_or(bytes.len());
            match decode_one(&bytes[start..end], limit - decoded_len)? {
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
                decoded_len += buf.len();
                sink(buf);
                i = next;
            }
            None => {
                // Keep the complete lines of the torn frame.
                let keep = first_partial
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |p| p + 1);
                decoded_len += keep;
                first_partial.truncate(keep);
                sink(first_partial);
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
    Ok(())
}

/// Decodes one (or several) complete frames; on error returns what was decoded before it.
/// Stops with [`DecodedTooLarge`] once more than `budget` bytes come out.
#[allow(clippy::type_complexity)]
fn decode_one(frame: &[u8], budget: usize) -> Result<Result<Vec<u8>, Vec<u8>>, DecodedTooLarge> {
    let mut out = Vec::new();
    let Ok(mut dec) = zstd::stream::read::Decoder::with_buffer(frame) else {
        return Ok(Err(out));
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match dec.read(&mut buf) {
            Ok(0) => return Ok(Ok(out)),
            Ok(n) if n > budget - out.len() => return Err(DecodedTooLarge),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => return Ok(Err(out)),
        }
    }
}

/// Parses decompressed DSH JSONL into a session (path left empty).
///
/// The usual line shapes go through a typed, borrowing fast path (no `Value` tree per line);
/// everything else through the lenient `Value` reader. Both give the same events.
pub fn parse(bytes: &[u8], file: &str) -> Session {
    parse_with(bytes, file, true)
}

/// [`parse`] with the typed fast path on or off (off: every line through the lenient reader,
/// the reference the fast path is tested against).
fn parse_with(bytes: &[u8], file: &str, fast: bool) -> Session {
    let mut reader = LineReader::new(file, fast, bytes.len() / 160);
    reader.lines(bytes, true);
    reader.finish().0
}

/// Parses a v0 `session.jsonl.zstd` (concatenated zstd frames) frame by frame, as
/// [`decode_zstd_frames_limited`] + [`parse`] would, without ever holding the whole decoded
/// text (35.6 MB for the 100,000-event reference session): each frame's complete lines are
/// parsed as they come out, on two threads when the machine has two cores (see
/// [`super::dsh_lines`]). Stops with [`DecodedTooLarge`] past `limit` decoded bytes.
pub fn parse_zstd_limited(
    bytes: &[u8],
    file: &str,
    limit: usize,
) -> Result<Session, DecodedTooLarge> {
    parse_zstd_read(bytes, file, limit, None).map(|(s, _)| s)
}

/// Takes a session's events while they are read, in file order, a zstd frame's lines at a
/// time: work on the events (the task graph's build) that runs beside the read instead of
/// after it. See [`parse_zstd_feeding`].
pub trait EventSink {
    /// About how many events the session holds, as the reader estimates from the file's
    /// size before the first [`feed`](Self::feed) (an upper estimate; room to reserve).
    fn expect(&mut self, _events: usize) {}

    /// The events of the lines applied since the last call, in file order.
    fn feed(&mut self, events: &[Event]);
}

/// [`parse_zstd_limited`] that hands the events to `sink` while it reads. Also says whether
/// `sink` was fed exactly the session's events, in their order (`false` when reading
/// changed them after they were fed: lines out of `seq` order or repeated, a fork's replayed
/// events dropped; then what was fed is not the session and a build must start again from
/// [`Session::events`]).
pub fn parse_zstd_feeding(
    bytes: &[u8],
    file: &str,
    limit: usize,
    sink: &mut dyn EventSink,
) -> Result<(Session, bool), DecodedTooLarge> {
    parse_zstd_read(bytes, file, limit, Some(sink))
}

fn parse_zstd_read<'f>(
    bytes: &[u8],
    file: &'f str,
    limit: usize,
    sink: Option<&'f mut dyn EventSink>,
) -> Result<(Session, bool), DecodedTooLarge> {
    let mut warnings = Vec::new();
    // Decoded DSH lines run ~8× their zstd size and ~360 bytes an event: a capacity hint
    // with some room (a short one would double the vector at the end).
    let events_hint = bytes.len().saturating_mul(8) / 300;
    let mut reader = LineReader::new(file, true, events_hint);
    let mut sink = sink;
    if let Some(sink) = sink.as_deref_mut() {
        sink.expect(events_hint);
    }
    reader.sink = sink;
    let rest = dsh_lines::read_frames(file, &mut reader, |frames| {
        for_each_zstd_frame(bytes, file, &mut warnings, limit, frames)
    })?;
    reader.lines(&rest, true);
    let (mut s, fed_whole) = reader.finish();
    warnings.append(&mut s.warnings);
    s.warnings = warnings;
    Ok((s, fed_whole))
}

/// The DSH line reader: fed whole lines in pieces, in file order.
///
/// Reading a line is split in two: [`read_line`] (no state: the typed fast path, else the
/// line's JSON object or its warning), which may run on another thread, and
/// [`LineReader::apply`] (in file order: times carried over, the header, the fork marker).
struct LineReader<'f> {
    file: &'f str,
    fast: bool,
    warnings: Vec<ReadWarning>,
    session: Session,
    events: Vec<Event>,
    header_seen: bool,
    seed_end: Option<u64>,
    last_time: i64,
    /// Lines read before the current piece.
    lines_before: u64,
    /// Where the events go as they are read, if anywhere.
    sink: Option<&'f mut dyn EventSink>,
    /// How many of `events` the sink has been fed.
    fed: usize,
}

/// One line as [`read_line`] read it, before the reader's state is applied.
enum ReadLine {
    /// The typed fast path's events of an ordinary line, with its `seq` and `time` (if any).
    Fast {
        seq: u64,
        time: Option<i64>,
        kinds: Vec<EventKind>,
    },
    /// A line for the lenient reader: its JSON object, with its 1-based line number.
    Object { line: u64, value: Value },
    /// A line that is not a JSON object: its warning.
    Invalid(ReadWarning),
}

/// Reads one line of `file` without the reader's state: the typed fast path when `fast` and
/// the line has the usual shape, else the line's JSON object (or the warning saying why it
/// is not one; `truncated_ok` at a possibly torn end of file).
fn read_line(file: &str, fast: bool, line: u64, raw: &[u8], truncated_ok: bool) -> ReadLine {
    if fast
        && let Some(env) = dsh_envelope::envelope(raw)
        && let Some(seq) = env.seq
    {
        let time = env.time_ms();
        let ty = env.ty.as_deref().unwrap_or_default();
        if ty != "session"
            && ty != "session/end-seed"
            && let Some(data) = env.data
            && let Fast::Events(kinds) = dsh_envelope::convert(ty, data)
        {
            return ReadLine::Fast { seq, time, kinds };
        }
    }
    let mut warnings = Vec::new();
    match super::object_line(raw, line, truncated_ok, file, &mut warnings) {
        Some(value) => ReadLine::Object { line, value },
        None => match warnings.pop() {
            Some(w) => ReadLine::Invalid(w),
            None => ReadLine::Invalid(ReadWarning::new(file, line, "line is not a JSON object")),
        },
    }
}

impl<'f> LineReader<'f> {
    fn new(file: &'f str, fast: bool, events_hint: usize) -> Self {
        Self {
            file,
            fast,
            warnings: Vec::new(),
            session: Session::new("", Agent::Dsh),
            events: Vec::with_capacity(events_hint),
            header_seen: false,
            seed_end: None,
            last_time: 0,
            lines_before: 0,
            sink: None,
            fed: 0,
        }
    }

    /// Feeds the sink the events it has not had yet.
    fn feed_sink(&mut self) {
        if let Some(sink) = self.sink.as_deref_mut()
            && let Some(new) = self.events.get(self.fed..)
            && !new.is_empty()
        {
            sink.feed(new);
            self.fed = self.events.len();
        }
    }

    /// Reads `bytes`, whole lines (each ending in a newline) unless `last` (the file's end,
    /// where a last line without a newline may be torn).
    fn lines(&mut self, bytes: &[u8], last: bool) {
        let before = self.lines_before;
        let (file, fast) = (self.file, self.fast);
        super::for_each_line(bytes, |line, raw, truncated_ok| {
            self.apply(read_line(
                file,
                fast,
                before + line,
                raw,
                last && truncated_ok,
            ));
        });
        self.lines_before += newlines(bytes);
    }

    /// A line's JSON object through the lenient reader.
    fn object(&mut self, line: u64, v: &Value) {
        let file = self.file;
        let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
        if ty == "session" && !self.header_seen {
            self.header_seen = true;
            let header = header_from(v);
            self.last_time = header.created_ms.unwrap_or(0);
            self.session.id = header.id.clone();
            self.session.header = header.clone();
            self.events.push(Event::new(
                0,
                self.last_time,
                EventKind::Session(Box::new(header)),
            ));
            return;
        }
        let Some(seq) = u64_field(v, &["seq"]) else {
            self.warnings.push(ReadWarning::new(
                file,
                line,
                format!("event `{ty}` without seq"),
            ));
            return;
        };
        let time = v
            .get("time")
            .and_then(time_value_ms)
            .unwrap_or(self.last_time);
        self.last_time = time;
        let data = v.get("data").unwrap_or(&Value::Null);
        if ty == "session/end-seed" {
            self.seed_end = Some(seq);
            return;
        }
        convert(
            ty,
            seq,
            time,
            data,
            &mut self.events,
            file,
            line,
            &mut self.warnings,
        );
    }

    /// The session read, its events in `seq` order; and whether the sink (if any) was fed
    /// exactly those events in that order.
    fn finish(mut self) -> (Session, bool) {
        self.feed_sink();
        let fed_whole = self.sink.is_some() && self.seed_end.is_none() && is_normal(&self.events);
        let Self {
            file,
            mut warnings,
            mut session,
            mut events,
            header_seen,
            seed_end,
            ..
        } = self;
        if !header_seen {
            warnings.push(ReadWarning::new(file, 1, "no session header line"));
        }
        if let Some(seed) = seed_end {
            // A fork replays its parent's events up to the marker: those belong to the parent.
            let before = events.len();
            events
                .retain(|e| e.seq == 0 && matches!(e.kind, EventKind::Session(_)) || e.seq > seed);
            session.meta.insert(
                "seed_events".into(),
                Value::from((before - events.len()) as u64),
            );
        }
        session.events = events;
        session.normalize_events();
        session.warnings = warnings;
        (session, fed_whole)
    }
}

impl SplitReader for LineReader<'_> {
    type Line = ReadLine;

    fn read(file: &str, line: u64, raw: &[u8]) -> ReadLine {
        // Chunks are only cut from v0 files, which the fast path always reads.
        read_line(file, true, line, raw, false)
    }

    fn apply(&mut self, read: ReadLine) {
        match read {
            ReadLine::Fast { seq, time, kinds } => {
                let time = time.unwrap_or(self.last_time);
                self.last_time = time;
                self.events
                    .extend(kinds.into_iter().map(|k| Event::new(seq, time, k)));
            }
            ReadLine::Object { line, value } => self.object(line, &value),
            ReadLine::Invalid(w) => self.warnings.push(w),
        }
    }

    fn skip_lines(&mut self, n: u64) {
        self.lines_before += n;
    }

    fn chunk_applied(&mut self) {
        self.feed_sink();
    }
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
        cache_write: 0,
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
        "assistant/chunk" => assistant_chunk(data, &mut push),
        "assistant/message" => assistant_message(data, &mut push),
        "assistant/attempt" | "llm/retry" => {
            if let Some(retry) = llm_retry(ty, data) {
                push(retry);
            }
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
                )
                .into(),
            });
        }
        "tool/result" if !tool_results(data, &mut push) => {
            warnings.push(ReadWarning::new(file, line, "tool/result without call id"));
        }
        "todo/write" => push(EventKind::TodoWrite {
            todos: Todo::list_from_value(data.get("todos").unwrap_or(data)),
            call_id: str_field(data, &["callId"]).map(str::to_owned),
        }),
        "subagent/descriptor" => push(subagent_descriptor(data)),
        // Known but not graphed, or unknown: ignored on purpose (a type graphed here must not
        // be in `dsh_fast::IGNORED`).
        _ => {}
    }
}

/// Pushes the results of one `tool/result` line (one per tool-result part, else one for the
/// message's call id); false when it names no call id.
fn tool_results(data: &Value, push: &mut impl FnMut(EventKind)) -> bool {
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
            let is_error =
                p.get("isError").and_then(Value::as_bool).unwrap_or(false) || top_error.is_some();
            any = true;
            push(EventKind::ToolResult {
                call_id: id.to_owned(),
                output: out.into(),
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
                    output: out.into(),
                    is_error: top_error.is_some()
                        || data
                            .get("isError")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                });
            }
            None => return false,
        }
    }
    true
}

/// An `assistant/chunk` line: its usage or its finish reason.
fn assistant_chunk(data: &Value, push: &mut impl FnMut(EventKind)) {
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

/// An `assistant/message` line: its usage and its finish reason.
fn assistant_message(data: &Value, push: &mut impl FnMut(EventKind)) {
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

/// An `llm/retry` (v0/v1) or failed `assistant/attempt` (v2+) line; `None` for a successful
/// attempt.
fn llm_retry(ty: &str, data: &Value) -> Option<EventKind> {
    // v2+ records each failed attempt; v0/v1 record the retry.
    let failure = failure_from(
        data.get("failure")
            .or_else(|| data.get("error"))
            .unwrap_or(&Value::Null),
    );
    if ty == "assistant/attempt" && data.get("failure").is_none() && data.get("error").is_none() {
        return None; // a successful attempt record: nothing to add
    }
    Some(EventKind::LlmRetry {
        retry: num(data, &["retry", "attempt"]).unwrap_or(1),
        max_retries: num(data, &["maxRetries"]),
        delay_ms: u64_field(data, &["delayMs"]),
        failure,
    })
}

/// A `subagent/descriptor` line: the child session a tool call started.
fn subagent_descriptor(data: &Value) -> EventKind {
    let d = data.get("descriptor").unwrap_or(data);
    EventKind::SubagentDescriptor(Box::new(SubagentDescriptor {
        call_id: str_field(d, &["callId", "toolCallId"]).map(str::to_owned),
        session_id: str_field(d, &["sessionId", "childSession", "session"]).map(str::to_owned),
        name: str_field(d, &["name", "agent", "type"]).map(str::to_owned),
        description: str_field(d, &["description"]).map(str::to_owned),
        prompt: str_field(d, &["prompt", "task"]).map(str::to_owned),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frame-by-frame parsing gives what decoding the whole text and parsing it gives: whole
    /// frames, a line cut across two frames, a torn last frame; and it stops at the limit.
    #[test]
    fn zstd_is_parsed_frame_by_frame_like_the_decoded_text() {
        let jsonl = crate::synth::dsh_jsonl(&crate::synth::session_events(2_000));
        let whole = crate::synth::zstd_frames(&jsonl, 64).unwrap_or_default();
        let mid = jsonl.len() / 2;
        assert_ne!(jsonl[mid - 1], b'\n');
        let mut split = zstd::encode_all(&jsonl[..mid], 3).unwrap_or_default();
        split.extend(zstd::encode_all(&jsonl[mid..], 3).unwrap_or_default());
        let torn = whole[..whole.len() - 100].to_vec();
        for z in [&whole, &split, &torn] {
            let mut expected_warnings = Vec::new();
            let text = decode_zstd_frames(z, "f", &mut expected_warnings);
            let expected = parse(&text, "f");
            expected_warnings.extend(expected.warnings.iter().cloned());
            let got = parse_zstd_limited(z, "f", usize::MAX);
            let Ok(got) = got else {
                panic!("no limit, yet {got:?}");
            };
            assert!(got.events.len() > 1_000);
            assert_eq!(got.events, expected.events);
            assert_eq!(got.warnings, expected_warnings);
            assert_eq!(got.header, expected.header);
            assert_eq!(got.meta, expected.meta);
        }
        assert!(
            decode_zstd_frames(&torn, "f", &mut Vec::new()).len() < jsonl.len(),
            "the torn input lost its last frame's tail"
        );
        assert_eq!(
            parse_zstd_limited(&whole, "f", jsonl.len() - 1).err(),
            Some(DecodedTooLarge)
        );
    }

    /// Odd lines among ordinary ones, in frames cut anywhere (mid-line too): the two-thread
    /// reader gives what reading the decoded text gives, warnings and their line numbers
    /// included.
    #[test]
    fn odd_lines_across_many_frames_read_as_the_decoded_text() {
        let synth = crate::synth::dsh_jsonl(&crate::synth::session_events(600));
        let mut jsonl = Vec::new();
        let lines = synth.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        for (i, line) in lines.enumerate() {
            jsonl.extend_from_slice(line);
            jsonl.push(b'\n');
            if i % 11 == 7 {
                jsonl.extend_from_slice(ODD_LINES[(i / 11) % ODD_LINES.len()].as_bytes());
                jsonl.push(b'\n');
            }
        }
        let mut z = Vec::new();
        for piece in jsonl.chunks(7_919) {
            z.extend(zstd::encode_all(piece, 3).unwrap_or_default());
        }
        let mut expected_warnings = Vec::new();
        let text = decode_zstd_frames(&z, "f", &mut expected_warnings);
        assert_eq!(text, jsonl);
        let expected = parse(&text, "f");
        assert!(expected.warnings.len() >= 3, "{:?}", expected.warnings);
        expected_warnings.extend(expected.warnings.iter().cloned());
        let Ok(got) = parse_zstd_limited(&z, "f", usize::MAX) else {
            panic!("no limit, yet too large");
        };
        assert_eq!(got.events, expected.events);
        assert_eq!(got.warnings, expected_warnings);
        assert_eq!(got.header, expected.header);
        assert_eq!(got.meta, expected.meta);
    }

    /// The fast path and the lenient reader agree on `bytes` (events, warnings, header, meta).
    fn assert_same(bytes: &[u8]) {
        let fast = parse_with(bytes, "f", true);
        let slow = parse_with(bytes, "f", false);
        assert_eq!(fast.events, slow.events);
        assert_eq!(fast.warnings, slow.warnings);
        assert_eq!(fast.header, slow.header);
        assert_eq!(fast.meta, slow.meta);
    }

    #[test]
    fn fast_path_matches_the_lenient_reader_on_every_fixture() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dsh");
        let mut seen = 0;
        let mut stack = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let raw = std::fs::read(&p).unwrap_or_default();
                let bytes = if raw.starts_with(&ZSTD_MAGIC) {
                    decode_zstd_frames(&raw, "f", &mut Vec::new())
                } else {
                    raw
                };
                assert_same(&bytes);
                seen += 1;
            }
        }
        assert!(seen >= 4, "fixtures not found under {root}");
    }

    #[test]
    fn fast_path_matches_the_lenient_reader_on_the_synthetic_session() {
        let bytes = crate::synth::dsh_jsonl(&crate::synth::session_events(5_000));
        assert_same(&bytes);
    }

    /// Lines in every odd shape the readers meet (aliases, nulls, strings for numbers, bad
    /// JSON, missing `seq` or `time`, a torn last line).
    const ODD_LINES: &[&str] = &[
        r#"{"type":"session","version":1,"id":"s","createdAt":1000,"cwd":"/w","delegationDepth":0}"#,
        r#"{"type":"step/start","seq":1,"time":1700000000,"data":{"turn":1,"step":1}}"#,
        r#"{"type":"step/start","seq":"2","time":"2026-01-01T00:00:00Z","data":{"turn":"1","step":2.0}}"#,
        r#"{"type":"step/end","seq":3,"data":null}"#,
        r#"{"type":"step/end","seq":3,"data":{"turn":-1,"step":null}}"#,
        r#"{"type":"step/end","seq":4,"time":5,"data":{"turn":1,"turn":2,"step":1}}"#,
        r#"{"type":"request/header","seq":5,"data":{"header":{"config":null},"config":{"model":"x"}}}"#,
        r#"{"type":"request/header","seq":6,"data":{"header":"h","config":{"modelId":"m","provider":"p"}}}"#,
        r#"{"type":"request/header","seq":7,"data":{"provider":"p","model":null,"modelId":"m2"}}"#,
        r#"{"type":"assistant/chunk","seq":8,"data":{"chunk":{"type":"usage","usage":{"input_tokens":3,"outputTokens":"4","cacheRead":1}}}}"#,
        r#"{"type":"assistant/chunk","seq":9,"data":{"chunk":{"type":"usage","inputTokens":7,"input":9}}}"#,
        r#"{"type":"assistant/chunk","seq":10,"data":{"type":"finish","reason":"stop"}}"#,
        r#"{"type":"assistant/chunk","seq":11,"data":{"chunk":{"type":"finish","reason":{"type":"length"}}}}"#,
        r#"{"type":"assistant/chunk","seq":12,"data":{"chunk":{"type":"finish","reason":null}}}"#,
        r#"{"type":"assistant/chunk","seq":13,"data":{"chunk":null}}"#,
        r#"{"type":"tool/call","seq":14,"data":{"turn":1,"step":1,"toolCallId":"c0","name":"bash","arguments":"{"a":1}"}}"#,
        r#"{"type":"tool/call","seq":15,"data":{"turn":1,"step":1,"callId":"c1","toolName":"read","args":{"p":1}}}"#,
        r#"{"type":"tool/call","seq":16,"data":{"callId":"c2","name":"x","arguments":null,"args":{"p":1}}}"#,
        r#"{"type":"tool/call","seq":17,"data":{"callId":"c3","name":"x","arguments":" [1, 2 "}}"#,
        r#"{"type":"tool/call","seq":18,"data":{"callId":"c4","name":"e"dit","arguments":{"path":"a"}}}"#,
        r#"{"type":"tool/call","seq":19,"data":{"callId":"","name":"x"}}"#,
        r#"{"type":"tool/result","seq":20,"data":{"message":{"source":{"callId":"c1"},"content":[{"type":"text","text":"t"},{"type":"tool-result","content":[{"type":"text","text":"ok"}],"isError":true}]}}}"#,
        r#"{"type":"tool/result","seq":21,"data":{"message":{"content":[{"toolCallId":"c2","content":null,"output":"o"}]},"error":null}}"#,
        r#"{"type":"tool/result","seq":22,"data":{"message":{"content":[{"callId":"c3","output":{"text":"o"}}]},"error":"boom"}}"#,
        r#"{"type":"tool/result","seq":23,"data":{"callId":"c4","message":{"role":"tool","content":"plain"}}}"#,
        r#"{"type":"tool/result","seq":24,"data":{"message":{"source":"c","content":[{"toolCallId":"c4","isError":"yes"}]}}}"#,
        r#"{"type":"request/context","seq":25,"time":9e3,"data":{"huge":[1,2,3]}}"#,
        r#"{"type":"request/context","seq":26,"data":{"huge":[1,2,3}}"#,
        r#" {"type":"step/start","seq":27,"data":{"turn":2,"step":1}}"#,
        r#"[1,2]"#,
        r#"{"type":"step/end","data":{"turn":2,"step":1}}"#,
        r#"{"type":"step/end","seq":28,"time":-99999999999999999,"data":{"turn":2,"step":1}}"#,
        r#"{"type":"step/end","seq":29,"time":1e400,"data":{"turn":2,"step":1}} x"#,
        r#"{"seq":40,"data":{"message":{"content":[{"toolCallId":"c5","content":"x"}]}},"type":"tool/result"}"#,
        r#"{"type":"tool/result","seq":41,"data":{"message":{"content":[{"toolCallId":"c6","content":[{"type":"text","text":"a"},{"type":"text","text":""},{"text":"b\nc \"q\""}]}]}}}"#,
        r#"{"type":"tool/result","seq":42,"data":{"message":{"content":[{"toolCallId":"c7","content":[{"type":"image","data":"x"},{"type":"text","text":null}]}]}}}"#,
        r#"{"type":"tool/result","seq":43,"data":{"message":{"content":[["tool-result","c8"]]}}}"#,
        r#"{"type":"tool/result","seq":44,"data":{"message":{"content":[{"toolCallId":"c9","content":"a"}]}},"data":{"message":{"content":[{"toolCallId":"c9","content":"b"}]}}}"#,
        r#"{"type":"tool/call","type":"tool/call","seq":45,"data":{"callId":"c10","name":"x"}}"#,
        r#"{"type":"tool/result","seq":46,"data":{"message":null,"callId":"c1"}}"#,
        r#"{"type":"tool/result","seq":47,"data":{"message":{"source":null,"content":[{"toolCallId":"c1","content":"s"}]}}}"#,
        r#"{"type":"tool/result","seq":48,"data":{"message":{"content":[{"toolCallId":"c1","content":[{"text":"t","content":"u"},"plain",5]}]}}}"#,
        r#"{"type":"tool/call","seq":49,"data":["c","x"]}"#,
        r#"{"type":null,"seq":50,"data":{}}"#,
        r#"{"type":"tool\/result","seq":51,"data":{"message":{"content":[{"toolCallId":"c1","content":"esc\u00e9"}]}}}"#,
        r#"{"type":"tool/result","seq":52,"data":{"message":{"source":{"callId":"c2"},"content":[{"type":"tool-result","content":[{"type":"text","text":"x","text":"y"}]},{"type":"text","text":"skipped"}]}}}"#,
        r#"{"type":"tool/result","seq":53,"time":7,"data":{"message":{"source":{"callId":"c3"},"content":[{"type":"tool-result","content":[]},{"type":"tool_result","content":[{"text":"one"},{"text":"two"}],"isError":false}]}}}"#,
        r#"{"type":"turn/end","seq":30,"data":{"turn":1,"reason":{"kind":"error","message":"m"}}}"#,
        r#"{"type":"step/start","seq":31,"time":12,"data":{"turn":3,"st"#,
    ];

    #[test]
    fn fast_path_matches_the_lenient_reader_on_odd_lines() {
        let odd = ODD_LINES;
        let text = odd.join("\n");
        assert_same(text.as_bytes());
        assert_same(format!("{text}\n").as_bytes());
        // Every prefix cut at a line end, so a torn tail lands on each kind of line.
        for k in 1..odd.len() {
            assert_same(odd[..k].join("\n").as_bytes());
        }
    }

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
