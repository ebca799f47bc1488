//! `get_node`'s text of a model call read as a conversation: one line per message of the
//! core's transcript (`docs/transcripts.md`), values cut like the other values of the text.

use std::fmt::Write as _;

use mindgate_store::transcript::{Part, Transcript};
use serde_json::Value;

use crate::output_limits::one_line;

/// The most messages the text lists (the structured answer holds them all).
const MAX_MESSAGES: usize = 60;

/// Appends `  conversation (…):` and one line per message (at most [`MAX_MESSAGES`]).
pub(crate) fn conversation_text(text: &mut String, t: &Transcript, max_chars: usize) {
    let _ = write!(text, "  conversation ({} messages", t.messages.len());
    if let Some(model) = &t.model {
        let _ = write!(text, ", model {model}");
    }
    if let Some(reason) = &t.finish_reason {
        let _ = write!(text, ", finish {reason}");
    }
    text.push_str("):\n");
    let part_chars = max_chars.min(600);
    for (i, m) in t.messages.iter().take(MAX_MESSAGES).enumerate() {
        let answer = if i == t.input_count { " (answer)" } else { "" };
        let parts: Vec<String> = m.parts.iter().map(|p| part_text(p, part_chars)).collect();
        let _ = writeln!(text, "    {}{answer}: {}", m.role, parts.join(" | "));
    }
    if t.messages.len() > MAX_MESSAGES {
        let _ = writeln!(
            text,
            "    … {} more messages (in the structured answer)",
            t.messages.len() - MAX_MESSAGES
        );
    }
}

/// One part on one line: text as it reads, a tool call as `→ name(arguments) [id]`, a
/// result as `← [id] response`, placeholders for the rest.
fn part_text(p: &Part, max: usize) -> String {
    let cut = |v: &Value| one_line(v, max);
    match p {
        Part::Text { content } => cut(&Value::String(content.clone())),
        Part::Reasoning { content } => {
            format!("(reasoning) {}", cut(&Value::String(content.clone())))
        }
        Part::ToolCall {
            id,
            name,
            arguments,
        } => format!("→ {name}({}){}", cut(arguments), id_of(id.as_deref())),
        Part::ToolCallResponse { id, response, .. } => {
            format!("←{} {}", id_of(id.as_deref()), cut(response))
        }
        Part::Image { mime_type, .. } => {
            format!(
                "[image{}]",
                mime_type
                    .as_deref()
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default()
            )
        }
        Part::Other { kind, .. } => format!("[{kind}]"),
    }
}

/// ` [id]`, or nothing.
fn id_of(id: Option<&str>) -> String {
    id.map(|i| format!(" [{i}]")).unwrap_or_default()
}
