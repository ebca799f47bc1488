//! Model calls read as conversations.
//!
//! [`recognise`] turns what an `llm` node was sent and answered — in whichever shape the
//! app, its provider SDK or its tracing convention wrote it — into one [`Transcript`]:
//! messages with a role and typed parts, modelled on the OpenTelemetry GenAI message shape
//! (`docs/transcripts.md`). The shapes it reads: OpenAI chat completions and Responses,
//! Anthropic Messages, Gemini's generateContent, the OpenTelemetry GenAI attributes (as `mindgate-otlp` maps them:
//! the current `gen_ai.*.messages` parts, the older indexed `gen_ai.prompt.N.*` and
//! OpenInference's `llm.input_messages.N.*`), what `graphmind-ai`'s OpenAI, Anthropic and
//! LangChain integrations send, the Rust SDK's `step()` and the Vercel AI SDK's
//! `LanguageModelV2` prompt and content. Anything else is `None`: the views show the JSON.
//!
//! The one place this is decided: the run store attaches it to each `llm` instance of a
//! node's detail, so the HTTP API, MCP `get_node`, the HTML export and the viewer read the
//! same transcript. No I/O, never panics; bounded by [`Budget`].

mod input;
mod message;
mod output;
mod part;

use serde::Serialize;
use serde_json::Value;

/// The most messages one transcript holds; a call with more is not recognised (the views
/// show its JSON, which holds everything).
pub const MAX_MESSAGES: usize = 5_000;
/// The most bytes of text, arguments and responses one transcript holds (4 MiB); past it
/// the call is not recognised, never cut.
pub const MAX_BYTES: usize = 4 << 20;

/// A model call as a conversation: what it was sent, then what it answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    /// The messages in order: the input's, then the answer's.
    pub messages: Vec<Message>,
    /// The model that answered (the caller's figure, else the one the data names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the model stopped (`stop`, `tool_calls`, `end_turn`, …) as the provider said it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Token usage as the caller gives it (the instance's usage, in the protocol's shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// How many of [`Transcript::messages`] came from the input (the rest are the answer).
    pub input_count: usize,
    /// The shape that was recognised (`openai.chat`, `anthropic.messages`, …), for
    /// diagnostics.
    pub format: String,
}

/// One message: who spoke and what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool` (provider aliases folded: `human` → `user`,
    /// `ai` / `model` → `assistant`, `developer` → `system`); anything else as sent.
    pub role: String,
    /// The message's parts, in order.
    pub parts: Vec<Part>,
    /// The speaker's name, when the message carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One part of a message (OpenTelemetry GenAI part types).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Text, whitespace kept.
    Text {
        /// The text.
        content: String,
    },
    /// The model's reasoning (thinking) text.
    Reasoning {
        /// The text.
        content: String,
    },
    /// The model asks for a tool.
    ToolCall {
        /// The call id (links the response), when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// The arguments: parsed JSON when sent as a JSON string, else as sent.
        arguments: Value,
    },
    /// A tool's answer to a call.
    ToolCallResponse {
        /// The call id it answers, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool's name, when the message names it.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The result as sent.
        response: Value,
    },
    /// An image: never its bytes, only what labels it.
    Image {
        /// Its media type, when known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its address, when it is one (a `data:` URL is not kept).
        #[serde(skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
    /// A part of another kind (audio, file, refusal, …): labelled, its value as sent.
    Other {
        /// The part's own type name.
        kind: String,
        /// The part as sent.
        #[serde(skip_serializing_if = "Value::is_null")]
        value: Value,
    },
}

/// What one model call recorded: the node instance's input and output, and what the
/// store computed for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ModelCall<'a> {
    /// The instance's input as sent.
    pub input: Option<&'a Value>,
    /// The instance's output as sent.
    pub output: Option<&'a Value>,
    /// Text streamed as tokens (the answer when the output does not hold it).
    pub streamed_text: &'a str,
    /// Reasoning streamed as tokens.
    pub streamed_reasoning: &'a str,
    /// The model the core found for the instance (wins over what the data names).
    pub model: Option<&'a str>,
    /// The instance's usage as stored.
    pub usage: Option<&'a Value>,
    /// Why the model stopped, as the event said it beside the output (used when the
    /// output does not say it).
    pub finish_reason: Option<&'a str>,
}

/// The size still allowed while a transcript is built ([`MAX_MESSAGES`], [`MAX_BYTES`]).
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    messages: usize,
    bytes: usize,
    exceeded: bool,
}

impl Budget {
    fn new() -> Budget {
        Budget {
            messages: MAX_MESSAGES,
            bytes: MAX_BYTES,
            exceeded: false,
        }
    }

    /// Takes one message; false (and exceeded) when none is left.
    pub(crate) fn take_message(&mut self) -> bool {
        if self.messages == 0 {
            self.exceeded = true;
            return false;
        }
        self.messages -= 1;
        true
    }

    /// Takes `n` bytes; false (and exceeded) when fewer are left.
    pub(crate) fn take_bytes(&mut self, n: usize) -> bool {
        if n > self.bytes {
            self.exceeded = true;
            self.bytes = 0;
            return false;
        }
        self.bytes -= n;
        true
    }

    /// Takes the serialised size of a JSON value (strings by length, the rest estimated
    /// by walking it).
    pub(crate) fn take_value(&mut self, v: &Value) -> bool {
        self.take_bytes(value_size(v))
    }
}

/// The approximate serialised size of `v`: string lengths plus a few bytes per item.
fn value_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => 2 + a.iter().map(value_size).sum::<usize>(),
        Value::Object(o) => {
            2 + o
                .iter()
                .map(|(k, v)| k.len() + 3 + value_size(v))
                .sum::<usize>()
        }
        _ => 8,
    }
}

/// The transcript of one model call, or `None` when neither its input nor its output is
/// a shape listed in the crate docs (or it is over [`MAX_MESSAGES`] / [`MAX_BYTES`]).
pub fn recognise(call: &ModelCall<'_>) -> Option<Transcript> {
    let mut budget = Budget::new();
    let asked = call.input.and_then(|v| input::read(v, &mut budget));
    let answered = output::read(call, asked.is_some(), &mut budget);
    if budget.exceeded || (asked.is_none() && answered.is_none()) {
        return None;
    }
    let (mut messages, mut format, mut model) = (Vec::new(), None, None);
    if let Some(asked) = asked {
        messages = asked.messages;
        format = Some(asked.format);
        model = asked.model;
    }
    let input_count = messages.len();
    let mut finish_reason = call.finish_reason.map(str::to_owned);
    if let Some(answered) = answered {
        messages.extend(answered.messages);
        format = format.or(Some(answered.format));
        model = answered.model.or(model);
        finish_reason = answered.finish_reason.or(finish_reason);
    }
    Some(Transcript {
        messages,
        model: call.model.map(str::to_owned).or(model),
        finish_reason,
        usage: call.usage.cloned(),
        input_count,
        format: format.unwrap_or("unknown").to_owned(),
    })
}

/// Messages read from one side of a call, with what that side names.
#[derive(Debug, Default)]
pub(crate) struct Side {
    pub(crate) messages: Vec<Message>,
    pub(crate) format: &'static str,
    pub(crate) model: Option<String>,
    pub(crate) finish_reason: Option<String>,
}

/// The non-empty string field `key` of `v`.
pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The first of `keys` that `v` has as a non-empty string.
pub(crate) fn first_str<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| str_of(v, k))
}
