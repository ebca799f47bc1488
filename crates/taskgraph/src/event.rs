//! The format-neutral trajectory event model.
//!
//! Every reader turns its native session format into a list of [`Event`]s drawn from one
//! vocabulary modelled on the DeepSeek Harness (DSH) session log. Serialised, an event reads
//! `{"seq": 12, "time_ms": 1787600000000, "type": "tool/call", "data": {…}}`, which is what
//! the events API serves.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One trajectory event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Ordering key. DSH writes its own `seq`; line-based formats use the 1-based line number
    /// of the line the event came from (several events may share one line).
    pub seq: u64,
    /// Wall-clock time of the event, Unix milliseconds.
    pub time_ms: i64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

impl Event {
    /// Creates an event.
    pub fn new(seq: u64, time_ms: i64, kind: EventKind) -> Self {
        Self { seq, time_ms, kind }
    }
}

/// The event vocabulary (DSH names in `type`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data")]
pub enum EventKind {
    /// Session header (first line of a DSH file, or synthesised by other readers).
    #[serde(rename = "session")]
    Session(Box<SessionStart>),
    /// The session got (or changed) its title.
    #[serde(rename = "session/title")]
    Title {
        /// New title.
        title: String,
    },
    /// A message typed by the user; it names the turn that follows (or the open one).
    #[serde(rename = "user/message")]
    UserMessage {
        /// Message text.
        text: String,
    },
    /// A turn (one user request and the agent's work on it) began.
    #[serde(rename = "turn/start")]
    TurnStart {
        /// Turn number, 1-based.
        turn: u32,
    },
    /// A turn ended.
    #[serde(rename = "turn/end")]
    TurnEnd {
        /// Turn number.
        turn: u32,
        /// Why it ended.
        reason: TurnReason,
    },
    /// An LLM step (one model request/response) began.
    #[serde(rename = "step/start")]
    StepStart {
        /// Turn number.
        turn: u32,
        /// Step number within the turn, 1-based.
        step: u32,
    },
    /// An LLM step ended.
    #[serde(rename = "step/end")]
    StepEnd {
        /// Turn number.
        turn: u32,
        /// Step number within the turn.
        step: u32,
    },
    /// The request of the current step: which provider and model.
    #[serde(rename = "request/header")]
    RequestHeader {
        /// Provider name (`anthropic`, `openai`, `deepseek`, …).
        provider: Option<String>,
        /// Model id.
        model: Option<String>,
    },
    /// Token usage of the current step's response (added to the step's totals).
    #[serde(rename = "usage")]
    Usage(Usage),
    /// The model's finish reason for the current step (`stop`, `tool_use`, `error`, …).
    #[serde(rename = "finish")]
    Finish {
        /// Finish reason as the provider reported it.
        reason: String,
    },
    /// A failed LLM attempt of the current step that will be retried.
    #[serde(rename = "llm/retry")]
    LlmRetry {
        /// Retry number, 1-based.
        retry: u32,
        /// Maximum retries, when known.
        max_retries: Option<u32>,
        /// Back-off before the retry, when known.
        delay_ms: Option<u64>,
        /// What failed.
        failure: Failure,
    },
    /// Text the model wrote for the person (kept for search and the trajectory; it changes
    /// no node and no time of the graph).
    #[serde(rename = "assistant/text")]
    AssistantText {
        /// The text.
        text: String,
    },
    /// The model asked for a tool call.
    #[serde(rename = "tool/call")]
    ToolCall {
        /// Turn number.
        turn: u32,
        /// Step number.
        step: u32,
        /// Call id, unique within the session.
        call_id: String,
        /// Tool name as the agent calls it.
        name: String,
        /// Parsed arguments (a JSON string that does not parse stays a string); shared with
        /// the graph's tool node, which keeps them without a copy.
        arguments: Arc<Value>,
    },
    /// A tool call returned.
    #[serde(rename = "tool/result")]
    ToolResult {
        /// Call id of the call this answers.
        call_id: String,
        /// Output as text; shared with the graph's tool node, which keeps it without a copy.
        output: Arc<str>,
        /// Whether the tool reported an error.
        is_error: bool,
    },
    /// A call that never ran: the model message that asked for it failed or was aborted
    /// before the agent executed it. The call's node becomes `CANCELLED` (an edit that never
    /// ran is not a code change).
    #[serde(rename = "tool/cancelled")]
    ToolCancelled {
        /// Call id of the call that never ran.
        call_id: String,
        /// Why it did not run.
        reason: String,
    },
    /// The agent wrote its todo list (plan).
    #[serde(rename = "todo/write")]
    TodoWrite {
        /// The full list after the write.
        todos: Vec<Todo>,
        /// The tool call that wrote it, when known.
        call_id: Option<String>,
    },
    /// Describes a subagent spawned by a call; links the call to a child session when ids are known.
    #[serde(rename = "subagent/descriptor")]
    SubagentDescriptor(Box<SubagentDescriptor>),
}

impl EventKind {
    /// Short stable discriminant, used for de-duplication keys.
    pub fn tag(&self) -> u8 {
        match self {
            EventKind::Session(_) => 0,
            EventKind::Title { .. } => 1,
            EventKind::UserMessage { .. } => 2,
            EventKind::TurnStart { .. } => 3,
            EventKind::TurnEnd { .. } => 4,
            EventKind::StepStart { .. } => 5,
            EventKind::StepEnd { .. } => 6,
            EventKind::RequestHeader { .. } => 7,
            EventKind::Usage(_) => 8,
            EventKind::Finish { .. } => 9,
            EventKind::LlmRetry { .. } => 10,
            EventKind::ToolCall { .. } => 11,
            EventKind::ToolResult { .. } => 12,
            EventKind::TodoWrite { .. } => 13,
            EventKind::SubagentDescriptor(_) => 14,
            EventKind::ToolCancelled { .. } => 15,
            EventKind::AssistantText { .. } => 16,
        }
    }
}

/// Header data of a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionStart {
    /// Session id.
    pub id: String,
    /// Format version as written by the agent (`"3"`, `"v4"`, …), when known.
    pub version: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Creation time, Unix milliseconds.
    pub created_ms: Option<i64>,
    /// Id of the parent session (subagents, forks).
    pub parent_session: Option<String>,
    /// How deep in a delegation chain this session is (0 for a top-level task).
    pub delegation_depth: u32,
    /// Which program wrote it (`origin`, `originator`, …), when known.
    pub origin: Option<String>,
    /// The raw header object as read.
    pub raw: Value,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnReason {
    /// Outcome.
    pub kind: TurnEndKind,
    /// Error or abort message, when given.
    pub message: Option<String>,
}

impl TurnReason {
    /// A reason without message.
    pub fn new(kind: TurnEndKind) -> Self {
        Self {
            kind,
            message: None,
        }
    }
}

/// Outcome of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndKind {
    /// The agent finished the request.
    Completed,
    /// The turn stopped on an error.
    Error,
    /// The user (or the harness) aborted the turn.
    Aborted,
}

impl TurnEndKind {
    /// Parses a DSH/pi reason string leniently (`completed`, `stop`, `error`, `aborted`, `cancelled`, …).
    pub fn parse_lenient(s: &str) -> Self {
        match s.to_ascii_lowercase().as_str() {
            "error" | "failed" | "failure" => TurnEndKind::Error,
            "aborted" | "abort" | "cancelled" | "canceled" | "interrupted" => TurnEndKind::Aborted,
            _ => TurnEndKind::Completed,
        }
    }

    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEndKind::Completed => "completed",
            TurnEndKind::Error => "error",
            TurnEndKind::Aborted => "aborted",
        }
    }
}

/// Token usage of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens, not counting cache reads.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read: u64,
    /// Of `input`, the tokens written to the prompt cache (priced apart; 0 where the agent
    /// reports no cache writes: DSH, Codex, Gemini CLI).
    #[serde(default)]
    pub cache_write: u64,
}

/// A failure reported by a provider or tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Human-readable message.
    pub message: String,
    /// Error code (HTTP status, provider code), when given.
    pub code: Option<String>,
}

/// One item of a todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress`, `completed`, … as written.
    pub status: String,
}

impl Todo {
    /// Reads todos from a JSON array of `{content|text|title, status}` objects (lenient).
    pub fn list_from_value(v: &Value) -> Vec<Todo> {
        let items = match v {
            Value::Array(a) => a.as_slice(),
            Value::Object(o) => match o.get("todos") {
                Some(Value::Array(a)) => a.as_slice(),
                _ => &[],
            },
            _ => &[],
        };
        items
            .iter()
            .filter_map(|t| match t {
                Value::String(s) => Some(Todo {
                    content: s.clone(),
                    status: "pending".into(),
                }),
                Value::Object(_) => Some(Todo {
                    content: crate::json_fields::str_field(
                        t,
                        &["content", "text", "title", "step"],
                    )
                    .unwrap_or_default()
                    .to_owned(),
                    status: crate::json_fields::str_field(t, &["status", "state"])
                        .unwrap_or("pending")
                        .to_owned(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// A subagent spawned by a tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubagentDescriptor {
    /// The spawning call, when known.
    pub call_id: Option<String>,
    /// The child session id, when known.
    pub session_id: Option<String>,
    /// Agent name or type, when known.
    pub name: Option<String>,
    /// Short description of the delegated work.
    pub description: Option<String>,
    /// The prompt handed to the subagent.
    pub prompt: Option<String>,
}
