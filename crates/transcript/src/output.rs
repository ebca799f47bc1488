//! What a model call answered, as messages.

use serde_json::Value;

use crate::message::{self, tool_calls};
use crate::part::{self, content_parts};
use crate::{Budget, Message, ModelCall, Part, Side, first_str, str_of};

/// The answer's messages: the output in any listed shape, else (when the input was a
/// conversation: `asked`) the streamed text. `None` when there is none.
pub(crate) fn read(call: &ModelCall<'_>, asked: bool, budget: &mut Budget) -> Option<Side> {
    let mut side = match call.output {
        Some(v) => value(v, budget),
        None => None,
    };
    if let Some(side) = side.as_mut() {
        add_streamed_reasoning(side, call.streamed_reasoning, budget);
        return (!side.messages.is_empty()).then(|| std::mem::take(side));
    }
    if !asked || (call.streamed_text.is_empty() && call.streamed_reasoning.is_empty()) {
        return None;
    }
    let mut parts = Vec::new();
    if !call.streamed_reasoning.is_empty() {
        parts.push(part::reasoning(call.streamed_reasoning, budget)?);
    }
    if !call.streamed_text.is_empty() {
        parts.push(part::text(call.streamed_text, budget)?);
    }
    side = Some(Side {
        messages: vec![assistant(parts, budget)?],
        format: "streamed",
        ..Side::default()
    });
    side
}

/// Reasoning streamed as tokens joins the answer when the output does not hold it.
fn add_streamed_reasoning(side: &mut Side, reasoning: &str, budget: &mut Budget) {
    if reasoning.is_empty() {
        return;
    }
    let has_reasoning = side
        .messages
        .iter()
        .any(|m| m.parts.iter().any(|p| matches!(p, Part::Reasoning { .. })));
    if has_reasoning {
        return;
    }
    if let (Some(first), Some(p)) = (
        side.messages.first_mut(),
        part::reasoning(reasoning, budget),
    ) {
        first.parts.insert(0, p);
    }
}

/// An assistant message of `parts`.
fn assistant(parts: Vec<Part>, budget: &mut Budget) -> Option<Message> {
    budget.take_message().then(|| Message {
        role: "assistant".to_owned(),
        parts,
        name: None,
    })
}

/// One output value in any listed shape.
fn value(v: &Value, budget: &mut Budget) -> Option<Side> {
    let (messages, format) = match v {
        Value::String(s) => (
            vec![assistant(vec![part::text(s, budget)?], budget)?],
            "text",
        ),
        Value::Array(items) => match message::list(items, budget) {
            Some(messages) => (messages, "messages"),
            None if !budget_spent(budget) => {
                let parts = content_parts(v, budget)?;
                (vec![assistant(parts, budget)?], "ai-sdk")
            }
            None => return None,
        },
        Value::Object(_) => object_messages(v, budget)?,
        _ => return None,
    };
    Some(Side {
        messages,
        format,
        model: first_str(v, &["model", "modelVersion"])
            .or_else(|| nested(v).and_then(|n| str_of(n, "model")))
            .map(str::to_owned),
        finish_reason: finish_reason(v).or_else(|| nested(v).and_then(finish_reason)),
    })
}

/// The whole response a tracing convention nested under `messages`, if it did.
fn nested(v: &Value) -> Option<&Value> {
    v.get("messages").filter(|m| m.is_object())
}

/// Whether the budget ran out (a list that failed for that reason is not retried).
fn budget_spent(budget: &Budget) -> bool {
    budget.exceeded
}

/// The messages an output object holds, and the name of its shape.
fn object_messages(v: &Value, budget: &mut Budget) -> Option<(Vec<Message>, &'static str)> {
    if let Some(Value::Array(candidates)) = v.get("candidates") {
        let messages = candidates
            .iter()
            .filter_map(|c| c.get("content"))
            .map(|m| message::message(m, budget))
            .collect::<Option<Vec<_>>>()?;
        return (!messages.is_empty()).then_some((messages, "gemini"));
    }
    if let Some(Value::Array(choices)) = v.get("choices") {
        let messages = choices
            .iter()
            .filter_map(|c| c.get("message").or_else(|| c.get("delta")))
            .map(|m| message::message(m, budget))
            .collect::<Option<Vec<_>>>()?;
        return (!messages.is_empty()).then_some((messages, "openai.chat"));
    }
    match v.get("messages") {
        Some(Value::Array(items)) => return Some((message::list(items, budget)?, "otel.genai")),
        // A whole response nested by a tracing convention (OpenInference's `output.value`).
        Some(nested @ Value::Object(_)) => return object_messages(nested, budget),
        Some(Value::String(s)) => {
            let mut parts = vec![part::text(s, budget)?];
            tool_calls(v, &mut parts, budget)?;
            return Some((vec![assistant(parts, budget)?], "otel.genai"));
        }
        _ => {}
    }
    if let Some(Value::Array(items)) = v.get("output") {
        return Some((message::list(items, budget)?, "openai.responses"));
    }
    if let Some(content) = v.get("content").filter(|c| c.is_array() || c.is_string()) {
        let parts = content_parts(content, budget)?;
        let format = if v.get("stop_reason").is_some() {
            "anthropic.messages"
        } else {
            "ai-sdk"
        };
        return Some((vec![assistant(parts, budget)?], format));
    }
    summary(v, budget)
}

/// `graphmind-ai`'s summary of an answer (`{text, toolCalls, thinking, finishReason}`;
/// LangChain's `{text, model}`).
fn summary(v: &Value, budget: &mut Budget) -> Option<(Vec<Message>, &'static str)> {
    let text = v.get("text").and_then(Value::as_str);
    let calls = ["toolCalls", "tool_calls"]
        .iter()
        .any(|k| v.get(*k).is_some_and(Value::is_array));
    if text.is_none() && !calls {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(thinking) = str_of(v, "thinking") {
        parts.push(part::reasoning(thinking, budget)?);
    }
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        parts.push(part::text(text, budget)?);
    }
    tool_calls(v, &mut parts, budget)?;
    Some((vec![assistant(parts, budget)?], "graphmind"))
}

/// Why the model stopped, in any spelling: `finishReason`, `finish_reason`,
/// `stop_reason`, the first of `finishReasons`, the first choice's, a response `status`.
fn finish_reason(v: &Value) -> Option<String> {
    first_str(v, &["finishReason", "finish_reason", "stop_reason"])
        .or_else(|| {
            ["finishReasons", "finish_reasons"]
                .iter()
                .find_map(|k| match v.get(*k)? {
                    Value::Array(reasons) => reasons.first()?.as_str(),
                    reason => reason.as_str(),
                })
        })
        .or_else(|| {
            ["choices", "candidates"].iter().find_map(|k| {
                v.get(*k)?
                    .as_array()?
                    .first()
                    .and_then(|c| first_str(c, &["finish_reason", "finishReason"]))
            })
        })
        .or_else(|| {
            v.get("messages")?
                .as_array()?
                .iter()
                .rev()
                .find_map(|m| str_of(m, "finish_reason"))
        })
        .or_else(|| str_of(v, "status"))
        .map(str::to_owned)
}
