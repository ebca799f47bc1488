//! The session tier's rule: what a pushed message is checked for and stores.

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::rules::row::{Insert, ItemRow, MAX_TEXT_CHARS};
use crate::types::*;

/// A message checked for the log: its session, its plain text (what is indexed and
/// embedded) and its stored body — the rule both backends push with.
pub(crate) struct PushedMessage {
    pub session_id: String,
    pub text: String,
    body: Value,
}

impl PushedMessage {
    /// Checks `message` (a session in `scope`, text within the limit).
    pub(crate) fn new(scope: &Scope, message: &Message) -> Result<Self> {
        let session_id = scope
            .session_id
            .clone()
            .ok_or_else(|| MemoryError::invalid("sessionId", "a message needs a session"))?;
        let content = message.content();
        let text = content.plain_text();
        if text.chars().count() > MAX_TEXT_CHARS {
            return Err(MemoryError::invalid(
                "content",
                format!("at most {MAX_TEXT_CHARS} characters of text"),
            ));
        }
        let body = match message {
            Message::Assistant { tool_calls, .. } => {
                json!({ "role": message.role().as_str(), "content": content, "toolCalls": tool_calls })
            }
            Message::Tool { tool_call_id, .. } => {
                json!({ "role": "tool", "content": content, "toolCallId": tool_call_id })
            }
            _ => json!({ "role": message.role().as_str(), "content": content }),
        };
        Ok(Self {
            session_id,
            text,
            body,
        })
    }

    /// The text to embed, if any.
    pub(crate) fn embeddable(&self) -> Option<&str> {
        (!self.text.trim().is_empty()).then_some(self.text.as_str())
    }

    /// What the message inserts as the session's `sequence`-th, written by `by`.
    pub(crate) fn insert(&self, scope: &Scope, by: Actor, sequence: i64) -> Insert {
        let mut meta = WriteMeta::new(scope.clone());
        meta.by = by;
        Insert {
            row: ItemRow {
                kind: MemoryKind::Session.as_str().to_owned(),
                text: self.text.clone(),
                sequence: Some(sequence),
                body_json: Some(self.body.to_string()),
                ..ItemRow::default()
            },
            meta,
            detail: Some(json!({ "sequence": sequence })),
        }
    }
}
