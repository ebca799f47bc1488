//! Each recognised shape, from a fixture of our own: the messages in order (role and
//! parts, one line each), the shape's name, the model, the finish reason and where the
//! input ends. Plus what is not recognised and the budget.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mindgate_transcript::{MAX_MESSAGES, ModelCall, Part, Transcript, recognise};
use serde_json::{Value, json};

/// One line per message: `role: part part …`.
fn lines(t: &Transcript) -> Vec<String> {
    t.messages
        .iter()
        .map(|m| {
            let parts: Vec<String> = m.parts.iter().map(part_line).collect();
            format!("{}: {}", m.role, parts.join(" "))
        })
        .collect()
}

fn part_line(p: &Part) -> String {
    match p {
        Part::Text { content } => format!("text({content})"),
        Part::Reasoning { content } => format!("reasoning({content})"),
        Part::ToolCall {
            id,
            name,
            arguments,
        } => {
            format!(
                "tool_call({} {name} {arguments})",
                id.as_deref().unwrap_or("-")
            )
        }
        Part::ToolCallResponse { id, response, .. } => {
            format!(
                "tool_call_response({} {response})",
                id.as_deref().unwrap_or("-")
            )
        }
        Part::Image { mime_type, .. } => format!("image({})", mime_type.as_deref().unwrap_or("?")),
        Part::Other { kind, .. } => format!("other({kind})"),
    }
}

fn call_of(case: &Value) -> ModelCall<'_> {
    let call = &case["call"];
    ModelCall {
        input: call.get("input").filter(|v| !v.is_null()),
        output: call.get("output").filter(|v| !v.is_null()),
        streamed_text: call["streamedText"].as_str().unwrap_or(""),
        streamed_reasoning: call["streamedReasoning"].as_str().unwrap_or(""),
        model: None,
        usage: None,
        finish_reason: call["finishReason"].as_str(),
    }
}

/// Every case of `fixtures/<file>` reads as it expects.
fn check(file: &str) {
    let path = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let t =
            recognise(&call_of(case)).unwrap_or_else(|| panic!("{file}: {name}: not recognised"));
        let expect: Vec<String> = case["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(lines(&t), expect, "{file}: {name}");
        assert_eq!(
            t.format,
            case["format"].as_str().unwrap(),
            "{file}: {name}: format"
        );
        assert_eq!(
            t.model.as_deref(),
            case["model"].as_str(),
            "{file}: {name}: model"
        );
        assert_eq!(
            t.finish_reason.as_deref(),
            case["finishReason"].as_str(),
            "{file}: {name}: finish reason"
        );
        assert_eq!(
            t.input_count as u64,
            case["inputCount"].as_u64().unwrap(),
            "{file}: {name}: input count"
        );
    }
}

#[test]
fn openai_chat_completions() {
    check("openai_chat.json");
}

#[test]
fn openai_responses() {
    check("openai_responses.json");
}

#[test]
fn anthropic_messages() {
    check("anthropic.json");
}

#[test]
fn opentelemetry_genai_traceloop_openinference_and_ai_sdk_spans() {
    check("otel_genai.json");
}

#[test]
fn graphmind_ai_langchain_and_streamed_outputs() {
    check("graphmind_langchain.json");
}

#[test]
fn rust_sdk_steps() {
    check("rust_sdk.json");
}

#[test]
fn vercel_ai_sdk_prompt_and_content() {
    check("ai_sdk.json");
}

#[test]
fn the_callers_model_and_usage_win() {
    let input = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]});
    let usage = json!({"inputTokens": 3, "outputTokens": 1});
    let t = recognise(&ModelCall {
        input: Some(&input),
        model: Some("gpt-4o-2024-08-06"),
        usage: Some(&usage),
        ..ModelCall::default()
    })
    .unwrap();
    assert_eq!(t.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(t.usage, Some(usage));
    let wire = serde_json::to_value(&t).unwrap();
    assert_eq!(
        wire,
        json!({"messages": [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
               "model": "gpt-4o-2024-08-06", "usage": {"inputTokens": 3, "outputTokens": 1},
               "inputCount": 1, "format": "messages"})
    );
}

#[test]
fn what_is_not_a_model_call_is_none() {
    let cases = [
        (json!({"flights": [1, 2], "plan": "x"}), Value::Null),
        (json!({"messages": [1, 2]}), json!({"ok": true})),
        (json!({"messages": [{"content": "no role"}]}), Value::Null),
        (json!({"messages": []}), json!(42)),
        (json!(7), json!({"result": "done"})),
    ];
    for (input, output) in &cases {
        let call = ModelCall {
            input: Some(input),
            output: (!output.is_null()).then_some(output),
            streamed_text: "streamed, but the input is no conversation",
            ..ModelCall::default()
        };
        assert_eq!(recognise(&call), None, "{input} / {output}");
    }
    assert_eq!(recognise(&ModelCall::default()), None);
}

#[test]
fn a_long_call_is_kept_whole_and_one_over_the_budget_is_not_cut_but_refused() {
    // 200 messages, 1 MB of text: recognised, nothing cut.
    let text = "x".repeat(5_000);
    let messages: Vec<Value> = (0..200)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": text}))
        .collect();
    let input = json!({ "messages": messages });
    let t = recognise(&ModelCall {
        input: Some(&input),
        ..ModelCall::default()
    })
    .unwrap();
    assert_eq!(t.messages.len(), 200);
    assert!(t.messages.iter().all(|m| m.parts
        == vec![Part::Text {
            content: text.clone()
        }]));

    let many: Vec<Value> = (0..=MAX_MESSAGES)
        .map(|_| json!({"role": "user", "content": "hi"}))
        .collect();
    let input = json!({ "messages": many });
    assert_eq!(
        recognise(&ModelCall {
            input: Some(&input),
            ..ModelCall::default()
        }),
        None
    );

    let huge = json!({"messages": [{"role": "user", "content": "y".repeat(mindgate_transcript::MAX_BYTES + 1)}]});
    assert_eq!(
        recognise(&ModelCall {
            input: Some(&huge),
            ..ModelCall::default()
        }),
        None
    );
}

#[test]
fn gemini_generate_content() {
    check("gemini.json");
}
