//! What a model call was sent, as messages.

use serde_json::Value;

use crate::part::content_parts;
use crate::{Budget, Message, Side, message, part, str_of};

/// The input's messages: a prompt string, a message list, or an object holding one
/// (`messages`, Gemini's `contents`, the Responses `input`, the AI SDK's `prompt`,
/// LangChain's `prompts`) with its system prompt (`system`, `instructions`,
/// `systemInstruction`). `None` when it holds none.
pub(crate) fn read(v: &Value, budget: &mut Budget) -> Option<Side> {
    match v {
        Value::String(s) => Some(Side {
            messages: vec![user_text(s, budget)?],
            format: "text",
            ..Side::default()
        }),
        Value::Array(items) => Some(Side {
            messages: message::list(items, budget)?,
            format: "messages",
            ..Side::default()
        }),
        Value::Object(_) => object(v, budget),
        _ => None,
    }
}

/// A user message of one text part.
fn user_text(s: &str, budget: &mut Budget) -> Option<Message> {
    budget.take_message().then_some(())?;
    Some(Message {
        role: "user".to_owned(),
        parts: vec![part::text(s, budget)?],
        name: None,
    })
}

/// An object holding messages (and maybe a system prompt). A `messages` that is itself an
/// object is a whole request nested by a tracing convention (OpenInference's `input.value`,
/// the AI SDK's `ai.prompt`, as `crates/otlp` maps them) and is read as one.
fn object(v: &Value, budget: &mut Budget) -> Option<Side> {
    if let Some(nested) = v.get("messages").filter(|m| m.is_object()) {
        return object(nested, budget);
    }
    let (conversation, format) = conversation(v, budget)?;
    let mut messages = Vec::with_capacity(conversation.len() + 1);
    for key in [
        "system",
        "instructions",
        "system_instructions",
        "systemInstruction",
    ] {
        let Some(system) = v.get(key).filter(|s| !s.is_null()) else {
            continue;
        };
        budget.take_message().then_some(())?;
        // Gemini's systemInstruction is a content: `{parts: [{text}]}`.
        let system = system.get("parts").unwrap_or(system);
        let parts = content_parts(system, budget)?;
        if !parts.is_empty() {
            messages.push(Message {
                role: "system".to_owned(),
                parts,
                name: None,
            });
        }
        break;
    }
    messages.extend(conversation);
    Some(Side {
        messages,
        format,
        model: str_of(v, "model").map(str::to_owned),
        finish_reason: None,
    })
}

/// The conversation an input object holds, and the name of its shape.
fn conversation(v: &Value, budget: &mut Budget) -> Option<(Vec<Message>, &'static str)> {
    let provider = str_of(v, "provider");
    if let Some(Value::Array(items)) = v.get("messages") {
        let format = match provider {
            Some("anthropic") => "anthropic.messages",
            Some("openai") => "openai.chat",
            _ if v.get("system").is_some_and(Value::is_array) => "otel.genai",
            _ => "messages",
        };
        return Some((message::list(items, budget)?, format));
    }
    if let Some(Value::Array(items)) = v.get("contents") {
        return Some((message::list(items, budget)?, "gemini"));
    }
    for (key, format) in [("input", "openai.responses"), ("prompt", "ai-sdk")] {
        match v.get(key) {
            Some(Value::Array(items)) => return Some((message::list(items, budget)?, format)),
            Some(Value::String(s)) => return Some((vec![user_text(s, budget)?], format)),
            _ => {}
        }
    }
    if let Some(Value::Array(prompts)) = v.get("prompts") {
        let messages = prompts
            .iter()
            .map(|p| user_text(p.as_str()?, budget))
            .collect::<Option<Vec<_>>>()?;
        return (!messages.is_empty()).then_some((messages, "langchain.llm"));
    }
    None
}
