//! The one mapping of a span to a node: its kind, stable `nodeId`, name, model, input,
//! output and usage, read from the attribute conventions agent frameworks use.
//!
//! The kind comes from `gen_ai.operation.name` (OpenTelemetry GenAI), else
//! `openinference.span.kind` (OpenInference), else `traceloop.span.kind` (Traceloop /
//! OpenLLMetry), else the Vercel AI SDK's `ai.*` span names and pydantic-ai's span names,
//! else the span is a `custom` node named after the span. Repeated calls of one model,
//! tool, agent or retriever share a `nodeId` (`llm:<model>`, `tool:<name>`,
//! `agent:<name>`, `retriever:<source>`), so they are instances of one node. The table is
//! in `docs/otlp.md`; the live rules (runs, parents, pending spans) are in [`crate::live`].

use mindgate_protocol::NodeKind;
use serde_json::{Map, Value, json};

use crate::attrs::{Attrs, first_count, first_json, first_str, json_or_value, str_of};

/// What one span is as a node.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanNode {
    /// Node kind.
    pub kind: NodeKind,
    /// Stable logical node id.
    pub node_id: String,
    /// Display name.
    pub name: String,
    /// The model asked (`gen_ai.request.model` and its fallbacks).
    pub model: Option<String>,
    /// The model that answered (`gen_ai.response.model`).
    pub response_model: Option<String>,
    /// The node's input (messages, tool arguments, `input.value`).
    pub input: Option<Value>,
    /// The node's output (messages, finish reasons, tool result, `output.value`).
    pub output: Option<Value>,
    /// Token usage in the protocol's shape (`inputTokens`, `outputTokens`, cache counts;
    /// `inclusive` on non-model spans, whose counts sum their children's).
    pub usage: Option<Value>,
    /// Attribute keys consumed into input, output or usage (left out of the raw
    /// attributes the event carries).
    pub consumed: Vec<&'static str>,
}

/// Keys whose content becomes the input or output (never copied as raw attributes).
const CONTENT_KEYS: &[&str] = &[
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "input.value",
    "output.value",
    "ai.prompt",
    "ai.prompt.messages",
    "ai.response.text",
    "ai.response.toolCalls",
    "ai.toolCall.args",
    "ai.toolCall.result",
    "tool_arguments",
    "tool_response",
    "all_messages_events",
    "pydantic_ai.all_messages",
    "final_result",
    "traceloop.entity.input",
    "traceloop.entity.output",
];

/// Whether an attribute key is message or tool content (including the legacy indexed
/// `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` and OpenInference `llm.*_messages.N.*`).
pub fn is_content_key(key: &str) -> bool {
    CONTENT_KEYS.contains(&key)
        || key.starts_with("gen_ai.prompt.")
        || key.starts_with("gen_ai.completion.")
        || key.starts_with("llm.input_messages.")
        || key.starts_with("llm.output_messages.")
}

/// The kind a GenAI operation name stands for.
fn kind_of_operation(op: &str) -> Option<NodeKind> {
    Some(match op {
        "chat" | "text_completion" | "generate_content" | "embeddings" => NodeKind::Llm,
        "execute_tool" => NodeKind::Tool,
        "invoke_agent" | "create_agent" => NodeKind::Agent,
        "invoke_workflow" | "plan" => NodeKind::Chain,
        "retrieval" => NodeKind::Retriever,
        op if op.contains("memory") => NodeKind::Custom,
        _ => return None,
    })
}

/// The kind an OpenInference span kind stands for.
fn kind_of_openinference(kind: &str) -> Option<NodeKind> {
    Some(match kind.to_ascii_uppercase().as_str() {
        "LLM" | "EMBEDDING" => NodeKind::Llm,
        "TOOL" => NodeKind::Tool,
        "AGENT" => NodeKind::Agent,
        "CHAIN" => NodeKind::Chain,
        "RETRIEVER" | "RERANKER" => NodeKind::Retriever,
        "GUARDRAIL" | "EVALUATOR" | "PROMPT" => NodeKind::Custom,
        _ => return None,
    })
}

/// The kind a Traceloop span kind stands for.
fn kind_of_traceloop(kind: &str) -> Option<NodeKind> {
    Some(match kind {
        "workflow" | "task" => NodeKind::Chain,
        "agent" => NodeKind::Agent,
        "tool" => NodeKind::Tool,
        _ => return None,
    })
}

/// The kind a span name stands for, for senders without a kind attribute: the Vercel AI
/// SDK (`ai.generateText`, `ai.generateText.doGenerate`, `ai.toolCall`, `ai.embed`) and
/// pydantic-ai (`agent run`, `running tool`, `chat <model>`).
fn kind_of_name(name: &str, attrs: &Attrs) -> Option<NodeKind> {
    if name == "ai.toolCall" {
        return Some(NodeKind::Tool);
    }
    if let Some(op) = name.strip_prefix("ai.") {
        return Some(
            if op.ends_with(".doGenerate") || op.ends_with(".doStream") || op.ends_with(".doEmbed")
            {
                NodeKind::Llm
            } else {
                NodeKind::Chain
            },
        );
    }
    if name == "agent run" || name.starts_with("invoke_agent ") {
        return Some(NodeKind::Agent);
    }
    if name == "running tool" || name.starts_with("execute_tool ") {
        return Some(NodeKind::Tool);
    }
    if name.starts_with("chat ") || str_of(attrs, "gen_ai.request.model").is_some() {
        return Some(NodeKind::Llm);
    }
    None
}

/// Maps one span (its name and attributes) to its node.
pub fn map_span(name: &str, attrs: &Attrs) -> SpanNode {
    let op = str_of(attrs, "gen_ai.operation.name");
    let kind = op
        .and_then(kind_of_operation)
        .or_else(|| str_of(attrs, "openinference.span.kind").and_then(kind_of_openinference))
        .or_else(|| str_of(attrs, "traceloop.span.kind").and_then(kind_of_traceloop))
        .or_else(|| kind_of_name(name, attrs))
        .unwrap_or(NodeKind::Custom);
    let model = first_str(
        attrs,
        &[
            "gen_ai.request.model",
            "llm.model_name",
            "ai.model.id",
            "gen_ai.response.model",
            "model_name",
        ],
    )
    .map(str::to_owned);
    let response_model = str_of(attrs, "gen_ai.response.model").map(str::to_owned);
    let (prefix, label) = match kind {
        NodeKind::Llm => (
            "llm",
            model.clone().unwrap_or_else(|| {
                strip_op(
                    name,
                    &[
                        "chat ",
                        "text_completion ",
                        "generate_content ",
                        "embeddings ",
                    ],
                )
            }),
        ),
        NodeKind::Tool => (
            "tool",
            first_str(
                attrs,
                &["gen_ai.tool.name", "tool.name", "ai.toolCall.name"],
            )
            .map_or_else(|| strip_op(name, &["execute_tool "]), str::to_owned),
        ),
        NodeKind::Agent => (
            "agent",
            first_str(attrs, &["gen_ai.agent.name", "agent_name", "agent.name"]).map_or_else(
                || strip_op(name, &["invoke_agent ", "create_agent "]),
                str::to_owned,
            ),
        ),
        NodeKind::Retriever => (
            "retriever",
            first_str(
                attrs,
                &["gen_ai.data_source.id", "retrieval.source", "db.system"],
            )
            .map_or_else(|| strip_op(name, &["retrieval "]), str::to_owned),
        ),
        NodeKind::Chain => (
            "chain",
            first_str(
                attrs,
                &[
                    "gen_ai.workflow.name",
                    "traceloop.entity.name",
                    "ai.telemetry.functionId",
                ],
            )
            .map_or_else(|| strip_op(name, &["invoke_workflow "]), str::to_owned),
        ),
        _ => match op.filter(|o| o.contains("memory")) {
            Some(op) => ("memory", op.to_owned()),
            None => ("custom", name.to_owned()),
        },
    };
    let label = if label.trim().is_empty() {
        "span".to_owned()
    } else {
        label
    };
    let (input, output) = content(kind, attrs);
    SpanNode {
        kind,
        node_id: format!("{prefix}:{label}"),
        name: label,
        model,
        response_model,
        input,
        output,
        usage: usage(kind, attrs),
        consumed: CONTENT_KEYS.to_vec(),
    }
}

/// `name` without its operation prefix (`execute_tool search` → `search`).
fn strip_op(name: &str, prefixes: &[&str]) -> String {
    prefixes
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name)
        .trim()
        .to_owned()
}

/// Input and output of a span in the GenAI message shape where there is one.
fn content(kind: NodeKind, attrs: &Attrs) -> (Option<Value>, Option<Value>) {
    match kind {
        NodeKind::Tool => (
            first_json(
                attrs,
                &[
                    "gen_ai.tool.call.arguments",
                    "input.value",
                    "ai.toolCall.args",
                    "tool_arguments",
                ],
            ),
            first_json(
                attrs,
                &[
                    "gen_ai.tool.call.result",
                    "output.value",
                    "ai.toolCall.result",
                    "tool_response",
                ],
            ),
        ),
        NodeKind::Llm => (llm_input(attrs), llm_output(attrs)),
        _ => (
            first_json(
                attrs,
                &[
                    "input.value",
                    "traceloop.entity.input",
                    "gen_ai.input.messages",
                    "ai.prompt",
                ],
            ),
            first_json(
                attrs,
                &[
                    "output.value",
                    "traceloop.entity.output",
                    "gen_ai.output.messages",
                    "final_result",
                    "ai.response.text",
                ],
            ),
        ),
    }
}

fn llm_input(attrs: &Attrs) -> Option<Value> {
    let mut input = Map::new();
    let messages = first_json(attrs, &["gen_ai.input.messages", "ai.prompt.messages"])
        .or_else(|| indexed(attrs, "gen_ai.prompt."))
        .or_else(|| indexed(attrs, "llm.input_messages."))
        .or_else(|| first_json(attrs, &["input.value", "ai.prompt"]));
    if let Some(m) = messages {
        input.insert("messages".to_owned(), m);
    }
    if let Some(s) = first_json(attrs, &["gen_ai.system_instructions"]) {
        input.insert("system".to_owned(), s);
    }
    for (key, field) in [
        ("gen_ai.request.temperature", "temperature"),
        ("gen_ai.request.max_tokens", "maxTokens"),
        ("gen_ai.request.top_p", "topP"),
    ] {
        if let Some(v) = attrs.get(key).filter(|v| !v.is_null()) {
            input.insert(field.to_owned(), v.clone());
        }
    }
    (!input.is_empty()).then_some(Value::Object(input))
}

fn llm_output(attrs: &Attrs) -> Option<Value> {
    let mut output = Map::new();
    let messages = first_json(attrs, &["gen_ai.output.messages"])
        .or_else(|| indexed(attrs, "gen_ai.completion."))
        .or_else(|| indexed(attrs, "llm.output_messages."))
        .or_else(|| first_json(attrs, &["output.value", "ai.response.text"]));
    if let Some(m) = messages {
        output.insert("messages".to_owned(), m);
    }
    if let Some(calls) = first_json(attrs, &["ai.response.toolCalls"]) {
        output.insert("toolCalls".to_owned(), calls);
    }
    if let Some(reasons) = first_json(
        attrs,
        &["gen_ai.response.finish_reasons", "ai.response.finishReason"],
    ) {
        output.insert("finishReasons".to_owned(), reasons);
    }
    if let Some(id) = first_str(attrs, &["gen_ai.response.id", "ai.response.id"]) {
        output.insert("responseId".to_owned(), Value::from(id));
    }
    (!output.is_empty()).then_some(Value::Object(output))
}

/// Legacy indexed attributes (`gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, …) as
/// a list of objects, in index order.
fn indexed(attrs: &Attrs, prefix: &str) -> Option<Value> {
    let mut items: Vec<(usize, Map<String, Value>)> = Vec::new();
    for (key, value) in attrs {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        let Ok(index) = index.parse::<usize>() else {
            continue;
        };
        if index > 1_000 {
            continue;
        }
        let field = field.strip_prefix("message.").unwrap_or(field);
        let slot = match items.iter_mut().find(|(i, _)| *i == index) {
            Some((_, m)) => m,
            None => {
                items.push((index, Map::new()));
                &mut items.last_mut()?.1
            }
        };
        insert_path(slot, field, json_or_value(value));
    }
    if items.is_empty() {
        return None;
    }
    items.sort_by_key(|(i, _)| *i);
    Some(Value::Array(
        items
            .into_iter()
            .map(|(_, m)| lists_of_indices(Value::Object(m)))
            .collect(),
    ))
}

/// Puts `value` at the dotted `path` inside `map` (`tool_calls.0.function.name` →
/// `{tool_calls: {"0": {function: {name}}}}`); a path through a non-object is dropped.
fn insert_path(map: &mut Map<String, Value>, path: &str, value: Value) {
    let mut slot = map;
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        if segments.peek().is_none() {
            slot.insert(segment.to_owned(), value);
            return;
        }
        let next = slot
            .entry(segment.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(inner) = next else {
            return;
        };
        slot = inner;
    }
}

/// Objects whose keys are all indices (`{"0": …, "1": …}`) as lists in index order, at
/// every depth: the nested indexed attributes (`tool_calls.N.*`, OpenInference's
/// `contents.N.*`) read as the lists they were.
fn lists_of_indices(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let indexed: Option<Vec<(usize, Value)>> = (!map.is_empty())
                .then(|| {
                    map.iter()
                        .map(|(k, v)| Some((k.parse::<usize>().ok()?, v.clone())))
                        .collect()
                })
                .flatten();
            match indexed {
                Some(mut items) => {
                    items.sort_by_key(|(i, _)| *i);
                    Value::Array(
                        items
                            .into_iter()
                            .map(|(_, v)| lists_of_indices(v))
                            .collect(),
                    )
                }
                None => Value::Object(
                    map.into_iter()
                        .map(|(k, v)| (k, lists_of_indices(v)))
                        .collect(),
                ),
            }
        }
        other => other,
    }
}

fn usage(kind: NodeKind, attrs: &Attrs) -> Option<Value> {
    let input = first_count(
        attrs,
        &[
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
            "ai.usage.inputTokens",
            "ai.usage.promptTokens",
        ],
    );
    let output = first_count(
        attrs,
        &[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
            "ai.usage.outputTokens",
            "ai.usage.completionTokens",
        ],
    );
    if input.is_none() && output.is_none() {
        return None;
    }
    let mut usage = json!({
        "inputTokens": input.unwrap_or(0),
        "outputTokens": output.unwrap_or(0),
    });
    for (keys, field) in [
        (
            &[
                "gen_ai.usage.cache_read.input_tokens",
                "gen_ai.usage.cache_read_input_tokens",
                "llm.token_count.prompt_details.cache_read",
                "ai.usage.cachedInputTokens",
            ][..],
            "cacheReadTokens",
        ),
        (
            &[
                "gen_ai.usage.cache_creation.input_tokens",
                "gen_ai.usage.cache_creation_input_tokens",
                "llm.token_count.prompt_details.cache_write",
            ][..],
            "cacheWriteTokens",
        ),
        (
            &[
                "gen_ai.usage.reasoning.output_tokens",
                "llm.token_count.completion_details.reasoning",
                "ai.usage.reasoningTokens",
            ][..],
            "reasoningTokens",
        ),
    ] {
        if let Some(n) = first_count(attrs, keys) {
            usage[field] = Value::from(n);
        }
    }
    if kind != NodeKind::Llm {
        usage["inclusive"] = Value::Bool(true);
    }
    if let Some(m) = first_str(
        attrs,
        &[
            "gen_ai.response.model",
            "gen_ai.request.model",
            "llm.model_name",
            "ai.model.id",
        ],
    ) {
        usage["model"] = Value::from(m);
    }
    Some(usage)
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;

    fn attrs(v: Value) -> Attrs {
        v.as_object().cloned().unwrap()
    }

    /// One row per convention: (span name, attributes, kind, nodeId, name).
    #[test]
    fn conventions_table() {
        let table: Vec<(&str, Value, NodeKind, &str)> = vec![
            (
                "chat gpt-4o",
                json!({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}),
                NodeKind::Llm,
                "llm:gpt-4o",
            ),
            (
                "text_completion",
                json!({"gen_ai.operation.name": "text_completion", "gen_ai.request.model": "davinci"}),
                NodeKind::Llm,
                "llm:davinci",
            ),
            (
                "generate_content gemini",
                json!({"gen_ai.operation.name": "generate_content", "gen_ai.request.model": "gemini-2.5"}),
                NodeKind::Llm,
                "llm:gemini-2.5",
            ),
            (
                "embeddings text-embedding-3",
                json!({"gen_ai.operation.name": "embeddings", "gen_ai.request.model": "text-embedding-3"}),
                NodeKind::Llm,
                "llm:text-embedding-3",
            ),
            (
                "execute_tool get_weather",
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"}),
                NodeKind::Tool,
                "tool:get_weather",
            ),
            (
                "execute_tool search",
                json!({"gen_ai.operation.name": "execute_tool"}),
                NodeKind::Tool,
                "tool:search",
            ),
            (
                "invoke_agent planner",
                json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}),
                NodeKind::Agent,
                "agent:planner",
            ),
            (
                "create_agent helper",
                json!({"gen_ai.operation.name": "create_agent"}),
                NodeKind::Agent,
                "agent:helper",
            ),
            (
                "invoke_workflow trip",
                json!({"gen_ai.operation.name": "invoke_workflow"}),
                NodeKind::Chain,
                "chain:trip",
            ),
            (
                "plan",
                json!({"gen_ai.operation.name": "plan"}),
                NodeKind::Chain,
                "chain:plan",
            ),
            (
                "retrieval docs",
                json!({"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "kb"}),
                NodeKind::Retriever,
                "retriever:kb",
            ),
            (
                "retrieval docs",
                json!({"gen_ai.operation.name": "retrieval"}),
                NodeKind::Retriever,
                "retriever:docs",
            ),
            (
                "search_memory",
                json!({"gen_ai.operation.name": "search_memory"}),
                NodeKind::Custom,
                "memory:search_memory",
            ),
            (
                "ChatOpenAI",
                json!({"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini"}),
                NodeKind::Llm,
                "llm:gpt-4o-mini",
            ),
            (
                "lookup",
                json!({"openinference.span.kind": "TOOL", "tool.name": "lookup"}),
                NodeKind::Tool,
                "tool:lookup",
            ),
            (
                "RunnableSequence",
                json!({"openinference.span.kind": "CHAIN"}),
                NodeKind::Chain,
                "chain:RunnableSequence",
            ),
            (
                "Agent",
                json!({"openinference.span.kind": "AGENT"}),
                NodeKind::Agent,
                "agent:Agent",
            ),
            (
                "VectorStore",
                json!({"openinference.span.kind": "RETRIEVER"}),
                NodeKind::Retriever,
                "retriever:VectorStore",
            ),
            (
                "joke.workflow",
                json!({"traceloop.span.kind": "workflow", "traceloop.entity.name": "joke"}),
                NodeKind::Chain,
                "chain:joke",
            ),
            (
                "weather.tool",
                json!({"traceloop.span.kind": "tool"}),
                NodeKind::Tool,
                "tool:weather.tool",
            ),
            (
                "ai.generateText",
                json!({"ai.operationId": "ai.generateText", "ai.model.id": "gpt-4o"}),
                NodeKind::Chain,
                "chain:ai.generateText",
            ),
            (
                "ai.generateText.doGenerate",
                json!({"ai.model.id": "gpt-4o", "gen_ai.system": "openai.chat"}),
                NodeKind::Llm,
                "llm:gpt-4o",
            ),
            (
                "ai.toolCall",
                json!({"ai.toolCall.name": "weather", "ai.toolCall.id": "c1"}),
                NodeKind::Tool,
                "tool:weather",
            ),
            (
                "agent run",
                json!({"agent_name": "support", "model_name": "gpt-4o"}),
                NodeKind::Agent,
                "agent:support",
            ),
            (
                "running tool",
                json!({"gen_ai.tool.name": "roll_dice"}),
                NodeKind::Tool,
                "tool:roll_dice",
            ),
            ("chat gpt-4o", json!({}), NodeKind::Llm, "llm:gpt-4o"),
            (
                "GET /health",
                json!({"http.method": "GET"}),
                NodeKind::Custom,
                "custom:GET /health",
            ),
            // gen_ai.operation.name wins over the fallbacks.
            (
                "x",
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "openinference.span.kind": "LLM"}),
                NodeKind::Tool,
                "tool:t",
            ),
        ];
        for (name, a, kind, node_id) in table {
            let node = map_span(name, &attrs(a.clone()));
            assert_eq!(
                (node.kind, node.node_id.as_str()),
                (kind, node_id),
                "{name} {a}"
            );
        }
    }

    #[test]
    fn genai_messages_usage_and_finish_reasons() {
        let a = attrs(json!({
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.response.finish_reasons": ["tool_calls"],
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": "7",
            "gen_ai.usage.cache_read.input_tokens": 4,
            "gen_ai.usage.cache_creation.input_tokens": 2,
            "gen_ai.input.messages": "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"weather?\"}]}]",
            "gen_ai.output.messages": "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}]}]",
        }));
        let node = map_span("chat gpt-4o", &a);
        assert_eq!(node.model.as_deref(), Some("gpt-4o"));
        let input = node.input.unwrap();
        assert_eq!(input["messages"][0]["parts"][0]["content"], "weather?");
        let output = node.output.unwrap();
        assert_eq!(output["messages"][0]["parts"][0]["name"], "get_weather");
        assert_eq!(output["finishReasons"], json!(["tool_calls"]));
        assert_eq!(
            node.usage.unwrap(),
            json!({"inputTokens": 12, "outputTokens": 7, "cacheReadTokens": 4, "cacheWriteTokens": 2, "model": "gpt-4o-2024-08-06"})
        );
    }

    #[test]
    fn tool_arguments_and_results() {
        let genai = map_span(
            "execute_tool get_weather",
            &attrs(
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": "{\"city\":\"Paris\"}", "gen_ai.tool.call.result": "sunny"}),
            ),
        );
        assert_eq!(genai.input, Some(json!({"city": "Paris"})));
        assert_eq!(genai.output, Some(json!("sunny")));
        let oi = map_span(
            "lookup",
            &attrs(
                json!({"openinference.span.kind": "TOOL", "tool.name": "lookup",
                "input.value": "{\"q\":1}", "output.value": "[1,2]"}),
            ),
        );
        assert_eq!(
            (oi.input, oi.output),
            (Some(json!({"q": 1})), Some(json!([1, 2])))
        );
        let vercel = map_span(
            "ai.toolCall",
            &attrs(
                json!({"ai.toolCall.name": "weather", "ai.toolCall.args": "{\"location\":\"SF\"}", "ai.toolCall.result": "{\"t\":72}"}),
            ),
        );
        assert_eq!(
            (vercel.input, vercel.output),
            (Some(json!({"location": "SF"})), Some(json!({"t": 72})))
        );
        let pydantic = map_span(
            "running tool",
            &attrs(
                json!({"gen_ai.tool.name": "roll_dice", "tool_arguments": "{}", "tool_response": "4"}),
            ),
        );
        assert_eq!(
            (pydantic.input, pydantic.output),
            (Some(json!({})), Some(json!("4")))
        );
    }

    #[test]
    fn indexed_tool_calls_and_contents_nest_as_lists() {
        let traceloop = map_span(
            "openai.chat",
            &attrs(json!({
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Oslo?",
                "gen_ai.prompt.1.role": "assistant",
                "gen_ai.prompt.1.tool_calls.0.id": "call_a",
                "gen_ai.prompt.1.tool_calls.0.name": "search_flights",
                "gen_ai.prompt.1.tool_calls.0.arguments": "{\"to\": \"OSL\"}",
                "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.tool_call_id": "call_a",
                "gen_ai.prompt.2.content": "KL1143",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.tool_calls.1.name": "book", "gen_ai.completion.0.tool_calls.0.name": "pay",
            })),
        );
        let input = traceloop.input.unwrap();
        assert_eq!(
            input["messages"][1]["tool_calls"],
            json!([{"id": "call_a", "name": "search_flights", "arguments": {"to": "OSL"}}])
        );
        assert_eq!(input["messages"][2]["tool_call_id"], "call_a");
        assert_eq!(
            traceloop.output.unwrap()["messages"][0]["tool_calls"],
            json!([{"name": "pay"}, {"name": "book"}])
        );
        let oi = map_span(
            "ChatCompletion",
            &attrs(json!({
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.contents.0.message_content.type": "text",
                "llm.input_messages.0.message.contents.0.message_content.text": "Hotels?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_h",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "find_hotels",
            })),
        );
        assert_eq!(
            oi.input.unwrap()["messages"][0]["contents"],
            json!([{"message_content": {"type": "text", "text": "Hotels?"}}])
        );
        assert_eq!(
            oi.output.unwrap()["messages"][0]["tool_calls"],
            json!([{"tool_call": {"id": "call_h", "function": {"name": "find_hotels"}}}])
        );
    }

    #[test]
    fn legacy_indexed_prompts_and_openinference_counts() {
        let a = attrs(json!({
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-3.5-turbo",
            "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "hi",
            "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "be brief",
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "hello",
            "gen_ai.usage.prompt_tokens": 5, "gen_ai.usage.completion_tokens": 1,
        }));
        let node = map_span("openai.chat", &a);
        assert_eq!(node.kind, NodeKind::Llm);
        let input = node.input.unwrap();
        assert_eq!(
            input["messages"][0],
            json!({"role": "system", "content": "be brief"})
        );
        assert_eq!(input["messages"][1]["content"], "hi");
        assert_eq!(node.output.unwrap()["messages"][0]["content"], "hello");
        assert_eq!(node.usage.unwrap()["inputTokens"], 5);
        let oi = map_span(
            "ChatCompletion",
            &attrs(
                json!({"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o",
                "llm.token_count.prompt": 9, "llm.token_count.completion": 3,
                "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "q"}),
            ),
        );
        assert_eq!(
            oi.input.unwrap()["messages"][0],
            json!({"role": "user", "content": "q"})
        );
        assert_eq!(
            oi.usage.unwrap(),
            json!({"inputTokens": 9, "outputTokens": 3, "model": "gpt-4o"})
        );
    }

    #[test]
    fn usage_on_an_agent_span_is_inclusive() {
        let node = map_span(
            "agent run",
            &attrs(
                json!({"agent_name": "a", "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 8}),
            ),
        );
        assert_eq!(node.usage.unwrap()["inclusive"], true);
    }
}
