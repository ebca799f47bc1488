//! JSON Schema (draft 2020-12) export of the whole contract, generated from the Rust types.

use schemars::{SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::message::*;

/// The JSON Schema of one envelope: a union discriminated by `type`.
pub fn json_schema() -> Value {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut variants = Vec::new();
    macro_rules! variant {
        ($name:literal, $ty:ty) => {{
            let payload = generator.subschema_for::<$ty>();
            variants.push(json!({
                "type": "object",
                "properties": {
                    "type": { "const": $name },
                    "payload": payload,
                },
                "required": ["type", "payload"],
            }));
        }};
    }
    variant!("run.started", RunStarted);
    variant!("run.finished", RunFinished);
    variant!("graph.hint", GraphHint);
    variant!("node.started", NodeStarted);
    variant!("node.token", NodeToken);
    variant!("node.finished", NodeFinished);
    variant!("node.error", NodeError);
    variant!("exec.paused", ExecPaused);
    variant!("exec.resumed", ExecResumed);
    variant!("exec.refused", ExecRefused);
    variant!("exec.resume", ExecResume);
    variant!("breakpoint.set", BreakpointChange);
    variant!("breakpoint.clear", BreakpointChange);
    variant!("mode.set", ModeSet);
    variant!("hello", Hello);
    variant!("hello.ack", HelloAck);

    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "GraphMind wire protocol v1 envelope",
        "description": "One JSON text frame between an instrumented app and a viewer. Unknown fields are allowed everywhere; unknown `type` values are valid envelopes that receivers ignore (this schema validates the known ones).",
        "type": "object",
        "properties": {
            "gm": { "const": 1, "description": "Protocol major version." },
            "seq": { "type": "integer", "minimum": 0, "description": "Per-sender counter; replays keep it." },
            "ts": { "type": "number", "description": "Sender wall clock, epoch ms." },
            "runId": { "type": "string", "minLength": 1, "description": "Owning run, or \"*\"." },
            "type": { "type": "string" },
            "payload": { "type": "object" }
        },
        "required": ["gm", "seq", "ts", "runId", "type", "payload"],
        "oneOf": variants,
        "$defs": defs,
    })
}

/// [`json_schema`] as pretty-printed text with a trailing newline.
pub fn json_schema_string() -> String {
    let mut s = serde_json::to_string_pretty(&json_schema()).unwrap_or_default();
    s.push('\n');
    s
}
