//! The turn and step bookkeeping shared by the readers of message-list formats (Gemini CLI,
//! OpenCode): a user message opens a turn, each model message is one LLM step, its tool calls
//! and results follow, and a turn ends when the next user message arrives or an error or
//! cancellation notice closes it.

use serde_json::Value;

use crate::event::{Event, EventKind, TurnEndKind, TurnReason, Usage};

/// One tool call of a model message, as the readers hand it over.
pub(crate) struct CallRecord {
    /// Call id, unique within the session.
    pub call_id: String,
    /// Tool name as the agent calls it.
    pub name: String,
    /// Parsed arguments.
    pub arguments: Value,
    /// How it ended.
    pub outcome: CallOutcome,
    /// When the result arrived (Unix ms), when known.
    pub end_ms: Option<i64>,
}

/// How a tool call ended.
pub(crate) enum CallOutcome {
    /// It returned: output text and whether the tool reported an error.
    Result { output: String, is_error: bool },
    /// It never ran (denied, cancelled, or its message was aborted).
    Cancelled(String),
    /// Still running (no result yet).
    Pending,
}

/// One model message (LLM step) as the readers hand it over.
pub(crate) struct StepRecord<'a> {
    /// Ordering key of the events it yields.
    pub seq: u64,
    /// When the response began (the step's start), Unix ms; `None`: when the previous
    /// record ended.
    pub start_ms: Option<i64>,
    /// When the response was complete, Unix ms.
    pub end_ms: i64,
    /// Provider name, when known.
    pub provider: Option<&'a str>,
    /// Model id, when known.
    pub model: Option<&'a str>,
    /// Token usage in the project's convention, when recorded.
    pub usage: Option<Usage>,
    /// The tool calls it asked for.
    pub calls: Vec<CallRecord>,
    /// Finish reason as written (`stop`, `tool-calls`, …); derived from the calls when absent.
    pub finish: Option<String>,
}

/// Builds events turn by turn.
pub(crate) struct Turns {
    /// Events pushed so far.
    pub events: Vec<Event>,
    turn: u32,
    step: u32,
    turn_open: bool,
    /// Whether the open turn's agent is still working (no reply yet, or its last step asked
    /// for tools and has not been answered by another step).
    working: bool,
    /// Time of the last record, Unix ms.
    pub last_time: i64,
    last_seq: u64,
}

impl Turns {
    /// Starts after `events` (the header), at `start_ms`.
    pub fn new(events: Vec<Event>, start_ms: i64) -> Self {
        let last_seq = events.last().map_or(0, |e| e.seq);
        Self {
            events,
            turn: 0,
            step: 0,
            turn_open: false,
            working: false,
            last_time: start_ms,
            last_seq,
        }
    }

    fn push(&mut self, seq: u64, time: i64, kind: EventKind) {
        self.last_seq = seq;
        self.events.push(Event::new(seq, time, kind));
    }

    /// A user message: closes the open turn (completed, or aborted when the agent was still
    /// working) and opens the next.
    pub fn user(&mut self, seq: u64, time: i64, text: String) {
        let kind = if self.working {
            TurnEndKind::Aborted
        } else {
            TurnEndKind::Completed
        };
        self.close_turn(seq, self.last_time, kind, None);
        self.push(seq, time, EventKind::UserMessage { text });
        self.open_turn(seq, time);
        self.last_time = time;
    }

    fn open_turn(&mut self, seq: u64, time: i64) {
        self.turn += 1;
        self.step = 0;
        self.turn_open = true;
        self.working = true;
        let turn = self.turn;
        self.push(seq, time, EventKind::TurnStart { turn });
    }

    fn close_turn(&mut self, seq: u64, time: i64, kind: TurnEndKind, message: Option<String>) {
        if !self.turn_open {
            return;
        }
        self.turn_open = false;
        self.working = false;
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

    /// An error or cancellation notice: ends the open turn with `kind` when its agent was
    /// still working (a notice after a finished reply, such as a command's usage error, does
    /// not change it).
    pub fn notice(&mut self, seq: u64, time: i64, kind: TurnEndKind, message: &str) {
        if self.turn_open && self.working {
            self.close_turn(seq, time, kind, Some(message.to_owned()));
        }
        self.last_time = self.last_time.max(time);
    }

    /// One model message: a step with its request header, usage, calls and results.
    pub fn step(&mut self, r: StepRecord<'_>) {
        let seq = r.seq;
        let start = r.start_ms.unwrap_or(self.last_time).min(r.end_ms);
        if !self.turn_open {
            self.open_turn(seq, start);
        }
        self.step += 1;
        let (turn, step) = (self.turn, self.step);
        self.push(seq, start, EventKind::StepStart { turn, step });
        self.push(
            seq,
            start,
            EventKind::RequestHeader {
                provider: r.provider.map(str::to_owned),
                model: r.model.map(str::to_owned),
            },
        );
        if let Some(u) = r.usage {
            self.push(seq, r.end_ms, EventKind::Usage(u));
        }
        for c in &r.calls {
            self.push(
                seq,
                r.end_ms,
                EventKind::ToolCall {
                    turn,
                    step,
                    call_id: c.call_id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone().into(),
                },
            );
        }
        let finish = r.finish.clone().unwrap_or_else(|| {
            if r.calls.is_empty() {
                "stop"
            } else {
                "tool_use"
            }
            .to_owned()
        });
        self.push(seq, r.end_ms, EventKind::Finish { reason: finish });
        self.push(seq, r.end_ms, EventKind::StepEnd { turn, step });
        // The agent goes on after this step when it asked for tools — or, where the format
        // writes a finish reason (OpenCode), when that reason says so (`stop` with calls in
        // the message means it is done).
        let asked_tools = match r.finish.as_deref() {
            Some(f) => matches!(f, "tool-calls" | "tool_calls" | "tool_use" | "tool-use"),
            None => !r.calls.is_empty(),
        };
        let mut last = r.end_ms;
        for c in r.calls {
            let end = c.end_ms.unwrap_or(r.end_ms).max(r.end_ms);
            match c.outcome {
                CallOutcome::Result { output, is_error } => {
                    last = last.max(end);
                    self.push(
                        seq,
                        end,
                        EventKind::ToolResult {
                            call_id: c.call_id,
                            output: output.into(),
                            is_error,
                        },
                    );
                }
                CallOutcome::Cancelled(reason) => {
                    last = last.max(end);
                    self.push(
                        seq,
                        end,
                        EventKind::ToolCancelled {
                            call_id: c.call_id,
                            reason,
                        },
                    );
                }
                CallOutcome::Pending => {}
            }
        }
        self.working = asked_tools;
        self.last_time = self.last_time.max(last);
    }

    /// Records another event (a subagent descriptor, a todo list) of the current step.
    pub fn event(&mut self, seq: u64, time: i64, kind: EventKind) {
        self.push(seq, time, kind);
    }

    /// Ends the open turn with `kind` whatever state its agent was in (the model message
    /// itself failed or was aborted).
    pub fn end_turn(&mut self, seq: u64, time: i64, kind: TurnEndKind, message: Option<String>) {
        self.close_turn(seq, time, kind, message);
        self.last_time = self.last_time.max(time);
    }

    /// Ends the input: a turn whose last step answered without tools is completed; one still
    /// waiting on its tools stays open (a live session, or one cut off).
    pub fn finish(mut self) -> Vec<Event> {
        if self.turn_open && !self.working {
            let (seq, t) = (self.last_seq, self.last_time);
            self.close_turn(seq, t, TurnEndKind::Completed, None);
        }
        self.events
    }
}
