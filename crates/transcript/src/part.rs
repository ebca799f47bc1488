//! One content part, in any provider's spelling, as a [`Part`].

use serde_json::Value;

use crate::{Budget, Part, first_str, str_of};

/// The parts of a message's `content`: a string is one text part, a list is read part by
/// part (a string item is text). `None` when it is neither (or the budget ran out).
pub(crate) fn content_parts(content: &Value, budget: &mut Budget) -> Option<Vec<Part>> {
    match content {
        Value::String(s) => Some(if s.is_empty() {
            Vec::new()
        } else {
            vec![text(s, budget)?]
        }),
        Value::Array(items) => items.iter().map(|p| part(p, budget)).collect(),
        Value::Null => Some(Vec::new()),
        Value::Object(_) => Some(vec![part(content, budget)?]),
        _ => None,
    }
}

/// A text part, charged to the budget.
pub(crate) fn text(s: &str, budget: &mut Budget) -> Option<Part> {
    budget.take_bytes(s.len()).then(|| Part::Text {
        content: s.to_owned(),
    })
}

/// A reasoning part, charged to the budget.
pub(crate) fn reasoning(s: &str, budget: &mut Budget) -> Option<Part> {
    budget.take_bytes(s.len()).then(|| Part::Reasoning {
        content: s.to_owned(),
    })
}

/// Tool-call arguments: a JSON string is parsed (so the views can show it pretty), any
/// other value kept as sent.
pub(crate) fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::from(s.as_str()))
        }
        Some(v) => v.clone(),
        None => Value::Object(serde_json::Map::new()),
    }
}

/// A tool call, charged to the budget.
pub(crate) fn tool_call(
    id: Option<&str>,
    name: &str,
    args: Option<&Value>,
    budget: &mut Budget,
) -> Option<Part> {
    let arguments = arguments(args);
    budget.take_value(&arguments).then(|| Part::ToolCall {
        id: id.map(str::to_owned),
        name: name.to_owned(),
        arguments,
    })
}

/// A tool's response, charged to the budget.
pub(crate) fn tool_response(
    id: Option<&str>,
    name: Option<&str>,
    response: Value,
    budget: &mut Budget,
) -> Option<Part> {
    budget
        .take_value(&response)
        .then(|| Part::ToolCallResponse {
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            response,
        })
}

/// One part. `None` only when the budget ran out.
pub(crate) fn part(p: &Value, budget: &mut Budget) -> Option<Part> {
    if let Value::String(s) = p {
        return text(s, budget);
    }
    let Some(kind) = str_of(p, "type") else {
        return untyped(p, budget);
    };
    match kind {
        "text" | "input_text" | "output_text" => {
            text(first_str(p, &["text", "content"]).unwrap_or(""), budget)
        }
        "thinking" | "reasoning" | "redacted_thinking" | "reasoning_text" => reasoning(
            first_str(p, &["thinking", "text", "content"]).unwrap_or("[redacted]"),
            budget,
        ),
        "tool_use" | "tool_call" | "tool-call" | "function_call" => {
            let name = first_str(p, &["name", "toolName"]).unwrap_or("tool");
            let id = first_str(p, &["id", "toolCallId", "call_id"]);
            let args = ["input", "arguments", "args"]
                .iter()
                .find_map(|k| p.get(*k));
            tool_call(id, name, args, budget)
        }
        "tool_result" | "tool_call_response" | "tool-result" | "function_call_output" => {
            let id = first_str(p, &["tool_use_id", "id", "toolCallId", "call_id"]);
            let response = ["content", "response", "output", "result"]
                .iter()
                .find_map(|k| p.get(*k))
                .map(unwrap_tool_output)
                .unwrap_or(Value::Null);
            tool_response(id, first_str(p, &["toolName", "name"]), response, budget)
        }
        "image" | "image_url" | "input_image" => Some(image(p)),
        "file"
            if first_str(p, &["mediaType", "mimeType", "mime_type"])
                .is_some_and(|m| m.starts_with("image/")) =>
        {
            Some(image(p))
        }
        other => budget.take_value(p).then(|| Part::Other {
            kind: other.to_owned(),
            value: p.clone(),
        }),
    }
}

/// The AI SDK's typed tool output (`{type: "json" | "text" | "error-text" | …, value}`)
/// as its value; anything else as sent.
fn unwrap_tool_output(v: &Value) -> Value {
    match (str_of(v, "type"), v.get("value")) {
        (Some("json" | "text" | "error-text" | "error-json"), Some(value)) => value.clone(),
        _ => v.clone(),
    }
}

/// A part without a `type`: text when it has one (`{text}`, OpenInference's
/// `{message_content: {type, text}}`), Gemini's `functionCall` / `functionResponse` /
/// `inlineData`, else labelled `other`.
fn untyped(p: &Value, budget: &mut Budget) -> Option<Part> {
    if let Some(inner) = p.get("message_content") {
        return part(inner, budget);
    }
    if let Some(s) = str_of(p, "text") {
        return if p.get("thought").and_then(Value::as_bool) == Some(true) {
            reasoning(s, budget)
        } else {
            text(s, budget)
        };
    }
    if let Some(call) = p.get("functionCall") {
        let name = str_of(call, "name").unwrap_or("tool");
        return tool_call(str_of(call, "id"), name, call.get("args"), budget);
    }
    if let Some(answer) = p.get("functionResponse") {
        let response = answer.get("response").cloned().unwrap_or(Value::Null);
        return tool_response(
            str_of(answer, "id"),
            str_of(answer, "name"),
            response,
            budget,
        );
    }
    if let Some(data) = p.get("inlineData").or_else(|| p.get("fileData")) {
        let mime = first_str(data, &["mimeType", "mime_type"]);
        if mime.is_some_and(|m| m.starts_with("image/")) {
            return Some(Part::Image {
                mime_type: mime.map(str::to_owned),
                uri: str_of(data, "fileUri").map(str::to_owned),
            });
        }
    }
    budget.take_value(p).then(|| Part::Other {
        kind: "object".to_owned(),
        value: p.clone(),
    })
}

/// An image part: its media type and its address, never its bytes.
fn image(p: &Value) -> Part {
    let source = p.get("source");
    let url = p
        .get("image_url")
        .and_then(|u| u.as_str().or_else(|| u.get("url").and_then(Value::as_str)))
        .or_else(|| str_of(p, "url"))
        .or_else(|| source.and_then(|s| str_of(s, "url")))
        .or_else(|| str_of(p, "uri"))
        .or_else(|| str_of(p, "image").filter(|s| s.starts_with("http")));
    let mime = first_str(p, &["mediaType", "mimeType", "mime_type", "media_type"])
        .or_else(|| source.and_then(|s| str_of(s, "media_type")))
        .map(str::to_owned)
        .or_else(|| url.and_then(data_url_mime));
    Part::Image {
        mime_type: mime,
        uri: url
            .filter(|u| !u.starts_with("data:"))
            .map(|u| u.chars().take(2_048).collect()),
    }
}

/// The media type of a `data:` URL.
fn data_url_mime(url: &str) -> Option<String> {
    let rest = url.strip_prefix("data:")?;
    let end = rest.find([';', ','])?;
    (end > 0).then(|| rest[..end].to_owned())
}
