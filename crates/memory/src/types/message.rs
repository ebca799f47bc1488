//! Chat messages and their content parts, as the session tier stores them.
//!
//! Binary payloads (`image`, `audio`, `file`) travel as strings: a URL, or a `data:` URI
//! carrying base64 bytes, so every message is plain JSON.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One multimodal content part, discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum MessageContent {
    /// Plain UTF-8 text.
    Text {
        /// The text.
        text: String,
        /// Opaque trace of the runtime decisions that produced the part.
        #[serde(
            default,
            rename = "causalityChain",
            skip_serializing_if = "Option::is_none"
        )]
        causality_chain: Option<Vec<String>>,
    },
    /// An image (URL or `data:` URI).
    Image {
        /// URL or `data:` URI.
        image: String,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// See `Text`.
        #[serde(
            default,
            rename = "causalityChain",
            skip_serializing_if = "Option::is_none"
        )]
        causality_chain: Option<Vec<String>>,
    },
    /// An audio clip (URL or `data:` URI).
    Audio {
        /// URL or `data:` URI.
        audio: String,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// See `Text`.
        #[serde(
            default,
            rename = "causalityChain",
            skip_serializing_if = "Option::is_none"
        )]
        causality_chain: Option<Vec<String>>,
    },
    /// A file (URL or `data:` URI); the MIME type is mandatory.
    File {
        /// URL or `data:` URI.
        file: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// File name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<String>,
        /// See `Text`.
        #[serde(
            default,
            rename = "causalityChain",
            skip_serializing_if = "Option::is_none"
        )]
        causality_chain: Option<Vec<String>>,
    },
    /// Reasoning emitted by a reasoning model.
    Reasoning {
        /// The reasoning text.
        text: String,
        /// Provider metadata, round-tripped unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
        /// See `Text`.
        #[serde(
            default,
            rename = "causalityChain",
            skip_serializing_if = "Option::is_none"
        )]
        causality_chain: Option<Vec<String>>,
    },
}

/// A message's content: a plain string or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MessageContentValue {
    /// Plain text.
    Text(String),
    /// Multimodal parts.
    Parts(Vec<MessageContent>),
}

impl MessageContentValue {
    /// The text that is indexed for search: the string, or the `text` parts joined by
    /// newlines (reasoning parts are not indexed).
    pub fn plain_text(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    MessageContent::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// Logical role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MessageRole {
    /// System prompt.
    System,
    /// The human.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

impl MessageRole {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "system" => Self::System,
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "tool" => Self::Tool,
            _ => return None,
        })
    }
}

/// A tool call requested by an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Call id (a tool message's `toolCallId` names it).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as sent.
    #[serde(default)]
    pub arguments: Value,
}

/// A chat message, discriminated by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// System prompt (plain string only).
    System {
        /// The prompt.
        content: String,
    },
    /// The human.
    User {
        /// Content.
        content: MessageContentValue,
        /// Which user persona it came from.
        #[serde(default, rename = "userId", skip_serializing_if = "Option::is_none")]
        user_id: Option<String>,
    },
    /// The model.
    Assistant {
        /// Content.
        content: MessageContentValue,
        /// Tool calls.
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Option::is_none")]
        tool_calls: Option<Vec<ToolCall>>,
        /// Which agent produced it.
        #[serde(default, rename = "agentId", skip_serializing_if = "Option::is_none")]
        agent_id: Option<String>,
    },
    /// A tool result.
    Tool {
        /// The call it answers.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// Content.
        content: MessageContentValue,
    },
}

impl Message {
    /// The role.
    pub fn role(&self) -> MessageRole {
        match self {
            Self::System { .. } => MessageRole::System,
            Self::User { .. } => MessageRole::User,
            Self::Assistant { .. } => MessageRole::Assistant,
            Self::Tool { .. } => MessageRole::Tool,
        }
    }

    /// The content as a content value.
    pub fn content(&self) -> MessageContentValue {
        match self {
            Self::System { content } => MessageContentValue::Text(content.clone()),
            Self::User { content, .. }
            | Self::Assistant { content, .. }
            | Self::Tool { content, .. } => content.clone(),
        }
    }
}
