//! One message, in any provider's spelling, as a [`Message`].

use serde_json::Value;

use crate::part::{self, content_parts};
use crate::{Budget, Message, Part, first_str, str_of};

/// A message list: `Some` when every item is a message (nested lists, as LangChain's
/// `[[…]]` batches, are flattened one level) and the list is not empty.
pub(crate) fn list(items: &[Value], budget: &mut Budget) -> Option<Vec<Message>> {
    let mut out = Vec::with_capacity(items.len().min(1_024));
    for item in items {
        match item {
            Value::Array(inner) => {
                for m in inner {
                    out.push(message(m, budget)?);
                }
            }
            m => out.push(message(m, budget)?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The role a message names, provider aliases folded.
fn role_of(m: &Value) -> Option<String> {
    let role = str_of(m, "role").or_else(|| match str_of(m, "type") {
        Some(t @ ("human" | "ai" | "system" | "tool" | "function" | "chat")) => Some(t),
        _ => None,
    })?;
    Some(
        match role {
            "human" => "user",
            "ai" | "model" => "assistant",
            "developer" => "system",
            "function" => "tool",
            other => other,
        }
        .to_owned(),
    )
}

/// One message, or `None` when `m` is not one (or the budget ran out).
pub(crate) fn message(m: &Value, budget: &mut Budget) -> Option<Message> {
    if !budget.take_message() {
        return None;
    }
    if let Some(item) = response_item(m, budget) {
        return item;
    }
    let role = role_of(m)?;
    let mut parts = match m.get("parts") {
        Some(Value::Array(ps)) => ps
            .iter()
            .map(|p| part::part(p, budget))
            .collect::<Option<Vec<_>>>()?,
        _ => body(m, budget)?,
    };
    tool_calls(m, &mut parts, budget)?;
    let tool_call_id = first_str(m, &["tool_call_id", "toolCallId"]);
    let role = if role == "tool" || tool_call_id.is_some() {
        answer_parts(&mut parts, tool_call_id, str_of(m, "name"));
        "tool".to_owned()
    } else if !parts.is_empty()
        && parts
            .iter()
            .all(|p| matches!(p, Part::ToolCallResponse { .. }))
    {
        "tool".to_owned()
    } else {
        role
    };
    Some(Message {
        role,
        parts,
        name: str_of(m, "name").map(str::to_owned),
    })
}

/// A message's body: `content` (string or parts), else OpenInference's `contents`.
fn body(m: &Value, budget: &mut Budget) -> Option<Vec<Part>> {
    if let Some(contents) = m.get("contents").filter(|c| c.is_array())
        && m.get("content").is_none_or(Value::is_null)
    {
        return content_parts(contents, budget);
    }
    content_parts(m.get("content").unwrap_or(&Value::Null), budget)
}

/// A tool message's body as one response to `id`: its text parts become the response
/// (a lone text is kept as a string); parts that already are responses stay.
fn answer_parts(parts: &mut Vec<Part>, id: Option<&str>, name: Option<&str>) {
    if parts
        .iter()
        .any(|p| matches!(p, Part::ToolCallResponse { .. }))
    {
        return;
    }
    let texts: Vec<String> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { content } => Some(content.clone()),
            _ => None,
        })
        .collect();
    let response = match texts.as_slice() {
        [one] => Value::from(one.as_str()),
        _ => Value::from(texts.join("\n")),
    };
    // The text was charged to the budget once, as text; the response reuses it.
    parts.retain(|p| !matches!(p, Part::Text { .. }));
    parts.insert(
        0,
        Part::ToolCallResponse {
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            response,
        },
    );
}

/// The tool calls a message lists beside its content: OpenAI's `tool_calls`
/// (`{id, function: {name, arguments}}`), LangChain's (`{id, name, args}`), the indexed
/// conventions' (`{id, name, arguments}`, OpenInference's `{tool_call: {…}}`) and the
/// legacy `function_call`.
pub(crate) fn tool_calls(m: &Value, parts: &mut Vec<Part>, budget: &mut Budget) -> Option<()> {
    let calls = ["tool_calls", "toolCalls"]
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_array));
    for call in calls.into_iter().flatten() {
        let call = call.get("tool_call").unwrap_or(call);
        let function = call.get("function").unwrap_or(call);
        let name = first_str(function, &["name", "toolName"]).unwrap_or("tool");
        let id = first_str(call, &["id", "toolCallId"]);
        let args = ["arguments", "args", "input"]
            .iter()
            .find_map(|k| function.get(*k));
        parts.push(part::tool_call(id, name, args, budget)?);
    }
    if let Some(f) = m.get("function_call").filter(|f| f.is_object()) {
        let name = str_of(f, "name").unwrap_or("function");
        parts.push(part::tool_call(None, name, f.get("arguments"), budget)?);
    }
    Some(())
}

/// An OpenAI Responses item that is not a plain `{role, content}` message:
/// `function_call` (the assistant's call), `function_call_output` (the tool's answer),
/// `reasoning`. `Some(None)` = it is one but the budget ran out; `None` = not one.
fn response_item(m: &Value, budget: &mut Budget) -> Option<Option<Message>> {
    let kind = str_of(m, "type")?;
    let (role, part) = match kind {
        "function_call" | "custom_tool_call" => (
            "assistant",
            part::tool_call(
                first_str(m, &["call_id", "id"]),
                str_of(m, "name").unwrap_or("tool"),
                m.get("arguments").or_else(|| m.get("input")),
                budget,
            ),
        ),
        "function_call_output" | "custom_tool_call_output" => (
            "tool",
            part::tool_response(
                first_str(m, &["call_id", "id"]),
                None,
                m.get("output").cloned().unwrap_or(Value::Null),
                budget,
            ),
        ),
        "reasoning" => {
            let text: Vec<&str> = m
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| str_of(s, "text"))
                .collect();
            ("assistant", part::reasoning(&text.join("\n"), budget))
        }
        "message" if m.get("role").is_none() => ("assistant", None),
        _ => return None,
    };
    if kind == "message" {
        let parts = content_parts(m.get("content").unwrap_or(&Value::Null), budget);
        return Some(parts.map(|parts| Message {
            role: role.to_owned(),
            parts,
            name: None,
        }));
    }
    Some(part.map(|p| Message {
        role: role.to_owned(),
        parts: vec![p],
        name: None,
    }))
}
