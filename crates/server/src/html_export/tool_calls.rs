//! Tool calls inside a model's input and output: an LLM node's output names the tools it
//! calls with their arguments (`toolCalls`, OpenAI `tool_calls`, Anthropic `tool_use`
//! blocks, OpenTelemetry `tool_call` parts), and its input replays earlier calls and their
//! results (`role: "tool"` messages, `tool_result` blocks, `tool_call_response` parts).
//! `--hide-tool-args` and `--hide-tool-results` take those values out of every node's
//! input and output, wherever in the value they sit.

use serde_json::Value;

use super::Redaction;

/// What a hidden value is replaced with (the key stays, so the shape still reads).
pub const HIDDEN: &str = "[hidden]";

/// Keys whose array holds tool calls.
const CALL_LISTS: [&str; 3] = ["toolCalls", "tool_calls", "function_calls"];
/// The fields of one tool call that carry its arguments.
const CALL_ARGS: [&str; 4] = ["arguments", "args", "input", "parameters"];
/// `type` values of a content block or part that is a tool call.
const CALL_TYPES: [&str; 5] = [
    "tool_use",
    "tool_call",
    "tool-call",
    "function_call",
    "server_tool_use",
];
/// `type` values of a content block or part that is a tool's result.
const RESULT_TYPES: [&str; 5] = [
    "tool_result",
    "tool-result",
    "tool_call_response",
    "function_call_output",
    "web_search_tool_result",
];
/// The fields of a tool result that carry it.
const RESULT_FIELDS: [&str; 5] = ["content", "output", "result", "response", "text"];

/// Replaces the tool arguments and tool results `hide` asks for inside `value`.
pub fn scrub_tool_calls(value: &mut Value, hide: Redaction) {
    if !hide.tool_args && !hide.tool_results {
        return;
    }
    // Iterative walk: a deeply nested value cannot exhaust the stack.
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(obj) => {
                let kind = obj.get("type").and_then(Value::as_str).unwrap_or_default();
                let is_call = CALL_TYPES.contains(&kind);
                let is_result = RESULT_TYPES.contains(&kind)
                    || obj.get("role").and_then(Value::as_str) == Some("tool");
                if hide.tool_args {
                    if is_call {
                        hide_fields(obj, &CALL_ARGS);
                    }
                    for list in CALL_LISTS {
                        if let Some(Value::Array(calls)) = obj.get_mut(list) {
                            for call in calls.iter_mut().filter_map(Value::as_object_mut) {
                                hide_fields(call, &CALL_ARGS);
                                if let Some(Value::Object(function)) = call.get_mut("function") {
                                    hide_fields(function, &CALL_ARGS);
                                }
                            }
                        }
                    }
                }
                if hide.tool_results && is_result {
                    hide_fields(obj, &RESULT_FIELDS);
                }
                stack.extend(obj.values_mut());
            }
            _ => {}
        }
    }
}

fn hide_fields(obj: &mut serde_json::Map<String, Value>, fields: &[&str]) {
    for field in fields {
        if let Some(v) = obj.get_mut(*field) {
            *v = Value::String(HIDDEN.to_owned());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scrubbed(mut value: Value, tool_args: bool, tool_results: bool) -> Value {
        scrub_tool_calls(
            &mut value,
            Redaction {
                tool_args,
                tool_results,
                ..Redaction::default()
            },
        );
        value
    }

    #[test]
    fn arguments_of_every_call_shape_are_hidden() {
        let output = json!({
            "toolCalls": [{"toolName": "search", "args": {"q": "A1"}}],
            "messages": [
                {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{\"q\":\"A2\"}"}}]},
                {"role": "assistant", "content": [{"type": "tool_use", "name": "g", "input": {"q": "A3"}}]},
                {"role": "assistant", "parts": [{"type": "tool_call", "name": "h", "arguments": {"q": "A4"}}]}
            ]
        });
        let text = scrubbed(output.clone(), true, false).to_string();
        for secret in ["A1", "A2", "A3", "A4"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(
            text.contains("search") && text.contains("\"name\":\"g\""),
            "names stay: {text}"
        );
        assert_eq!(scrubbed(output.clone(), false, true), output);
    }

    #[test]
    fn results_of_every_result_shape_are_hidden() {
        let input = json!({"messages": [
            {"role": "tool", "tool_call_id": "c", "content": "R1"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u", "content": [{"type": "text", "text": "R2"}]}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": "R3"}]},
            {"role": "user", "content": "keep me"}
        ]});
        let text = scrubbed(input.clone(), false, true).to_string();
        for secret in ["R1", "R2", "R3"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("keep me"));
        assert_eq!(scrubbed(input.clone(), true, false), input);
    }
}
