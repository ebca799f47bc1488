//! `mindgate export --html` redaction by construction, with the real binary: a run with a
//! known secret in every place an app can put one (inputs, outputs, streamed text, reasoning
//! and tool-call arguments, `toolCalls` and `tool_calls` in model messages, tool results,
//! `node.started` extras such as `otel.attributes`, error and usage extras, run metadata,
//! a resume's principal) is exported with each of the 16 combinations of the hide switches,
//! and the file is searched for every value: what a switch hides is nowhere in it, what the
//! page does not read is never in it, and everything else is still there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use mindgate_testkit::{ServeProcess, frames::frame};
use serde_json::json;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mindgate"))
}

/// Never in the file: fields the page does not read.
const NEVER: [&str; 8] = [
    "META-SECRET",
    "SDK-SECRET",
    "OTEL-ATTR-SECRET",
    "STARTED-EXTRA",
    "USAGE-EXTRA",
    "ERROR-DATA-SECRET",
    "RUN-ERROR-DATA",
    "PRINCIPAL-SECRET",
];
/// What `--hide-inputs` leaves out.
const INPUTS: [&str; 6] = [
    "AGENT-INPUT",
    "LLM-PROMPT",
    "OLD-CALL-ARG",
    "REPLAYED-RESULT",
    "TOOL-INPUT-ARG",
    "TOOL-STREAMED-ARG",
];
/// What `--hide-outputs` leaves out.
const OUTPUTS: [&str; 8] = [
    "AGENT-OUTPUT",
    "LLM-STREAM-TEXT",
    "LLM-REASONING",
    "LLM-OUTPUT-TEXT",
    "LLM-TOOLCALL-ARG",
    "LLM-STREAMED-ARG",
    "TOOL-STREAM-TEXT",
    "TOOL-RESULT",
];
/// What `--hide-tool-args` leaves out: tools' input and streamed arguments, the LLM's
/// streamed tool-call deltas and the arguments of the calls in its input and output.
const TOOL_ARGS: [&str; 5] = [
    "TOOL-INPUT-ARG",
    "TOOL-STREAMED-ARG",
    "LLM-STREAMED-ARG",
    "LLM-TOOLCALL-ARG",
    "OLD-CALL-ARG",
];
/// What `--hide-tool-results` leaves out: tools' output and streamed text, and the tool
/// results replayed in a model's input.
const TOOL_RESULTS: [&str; 3] = ["TOOL-RESULT", "TOOL-STREAM-TEXT", "REPLAYED-RESULT"];
/// Always in the file (names, error messages).
const KEPT: [&str; 4] = [
    "secret-run",
    "search-tool",
    "the tool failed",
    "the run failed",
];

fn secret_run(run: &str) -> Vec<String> {
    vec![
        frame(
            run,
            1,
            "run.started",
            json!({"app": "sec-app", "sdk": {"name": "t", "version": "1", "key": "SDK-SECRET"},
                   "meta": {"name": "secret-run", "customer": "META-SECRET"}}),
        ),
        frame(
            run,
            2,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1",
                   "input": {"q": "AGENT-INPUT"}, "custom": "STARTED-EXTRA",
                   "otel": {"traceId": "t", "attributes": {"db.password": "OTEL-ATTR-SECRET"}}}),
        ),
        frame(
            run,
            3,
            "node.started",
            json!({"nodeId": "llm:m", "kind": "llm", "name": "m", "instanceId": "m1", "parentId": "agent:a",
            "input": {"messages": [
                {"role": "user", "content": "LLM-PROMPT"},
                {"role": "assistant", "tool_calls": [{"id": "c0", "function": {"name": "search-tool", "arguments": "{\"q\":\"OLD-CALL-ARG\"}"}}]},
                {"role": "tool", "tool_call_id": "c0", "content": "REPLAYED-RESULT"}
            ]}}),
        ),
        frame(
            run,
            4,
            "node.token",
            json!({"nodeId": "llm:m", "instanceId": "m1", "deltas": [
                {"t": "text", "v": "LLM-STREAM-TEXT"},
                {"t": "reasoning", "v": "LLM-REASONING"},
                {"t": "tool-args", "v": "LLM-STREAMED-ARG"}
            ]}),
        ),
        frame(
            run,
            5,
            "node.finished",
            json!({"nodeId": "llm:m", "instanceId": "m1", "durationMs": 5, "status": "ok",
                   "output": {"text": "LLM-OUTPUT-TEXT", "toolCalls": [{"toolName": "search-tool", "args": {"q": "LLM-TOOLCALL-ARG"}}]},
                   "usage": {"inputTokens": 10, "outputTokens": 5, "note": "USAGE-EXTRA"}}),
        ),
        frame(
            run,
            6,
            "node.started",
            json!({"nodeId": "tool:search", "kind": "tool", "name": "search-tool", "instanceId": "t1",
                   "parentId": "agent:a", "input": {"q": "TOOL-INPUT-ARG"}}),
        ),
        frame(
            run,
            7,
            "node.token",
            json!({"nodeId": "tool:search", "instanceId": "t1", "deltas": [
                {"t": "tool-args", "v": "TOOL-STREAMED-ARG"}, {"t": "text", "v": "TOOL-STREAM-TEXT"}
            ]}),
        ),
        frame(
            run,
            8,
            "node.error",
            json!({"nodeId": "tool:search", "instanceId": "t1",
                   "error": {"name": "ToolError", "message": "the tool failed", "stack": "at search()",
                             "data": {"token": "ERROR-DATA-SECRET"}}}),
        ),
        frame(
            run,
            9,
            "exec.paused",
            json!({"pauseId": "p1", "nodeId": "tool:search", "instanceId": "t1", "point": "error", "reason": "error"}),
        ),
        frame(
            run,
            10,
            "exec.resumed",
            json!({"pauseId": "p1", "action": "continue",
                   "principal": {"kind": "viewer", "token": "PRINCIPAL-SECRET"}}),
        ),
        frame(
            run,
            11,
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "t1", "durationMs": 3, "status": "ok", "output": "TOOL-RESULT"}),
        ),
        frame(
            run,
            12,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "a1", "durationMs": 9, "status": "error", "output": "AGENT-OUTPUT"}),
        ),
        frame(
            run,
            13,
            "run.finished",
            json!({"status": "error", "error": {"name": "E", "message": "the run failed", "data": "RUN-ERROR-DATA"}}),
        ),
    ]
}

#[test]
fn every_hidden_value_is_out_of_the_file_with_every_switch_combination() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let server = ServeProcess::start(bin(), &["--db", db_s]);
    server.ingest("sec", &secret_run("sec"));
    assert!(server.stop().success());

    let switches = [
        ("--hide-inputs", &INPUTS[..]),
        ("--hide-outputs", &OUTPUTS[..]),
        ("--hide-tool-args", &TOOL_ARGS[..]),
        ("--hide-tool-results", &TOOL_RESULTS[..]),
    ];
    let every: Vec<&str> = switches
        .iter()
        .flat_map(|(_, values)| values.iter().copied())
        .collect();
    let mut failures = Vec::new();
    for mask in 0u32..16 {
        let mut args = vec!["export", "sec", "--html"];
        let file = dir.path().join(format!("page-{mask}.html"));
        args.push(file.to_str().unwrap());
        args.extend(["--db", db_s]);
        let mut hidden: Vec<&str> = NEVER.to_vec();
        for (bit, (flag, values)) in switches.iter().enumerate() {
            if mask & (1 << bit) != 0 {
                args.push(flag);
                hidden.extend(values.iter().copied());
            }
        }
        let out = Command::new(bin())
            .args(&args)
            .env(mindgate_home::env::MINDGATE_HOME, dir.path().join("home"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let page = std::fs::read_to_string(&file).unwrap();
        for value in &hidden {
            if page.contains(value) {
                failures.push(format!("{args:?}: {value} is in the file"));
            }
        }
        let shown = every
            .iter()
            .chain(KEPT.iter())
            .filter(|v| !hidden.contains(v));
        for value in shown {
            if !page.contains(value) {
                failures.push(format!("{args:?}: {value} is missing (not hidden)"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing hidden: the model call reads as a conversation (read from what the page keeps).
    let page = std::fs::read_to_string(dir.path().join("page-0.html")).unwrap();
    for part in [
        r#""transcript":{"messages":[{"role":"user","parts":[{"type":"text","content":"LLM-PROMPT"}]}"#,
        r#"{"role":"tool","parts":[{"type":"tool_call_response","id":"c0","response":"REPLAYED-RESULT"}]}"#,
    ] {
        assert!(page.contains(part), "{part} is not in the page");
    }
}
