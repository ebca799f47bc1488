//! JSON Schema (draft 2020-12) of the memory model, generated from the Rust types.

use schemars::{SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::types::*;

/// The JSON Schema of every memory type, as `$defs` of one document.
pub fn json_schema() -> Value {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut roots = Vec::new();
    macro_rules! root {
        ($($ty:ty),+ $(,)?) => {$(
            roots.push(generator.subschema_for::<$ty>());
        )+};
    }
    root!(
        MemoryKind,
        MemoryProvenance,
        MemoryStatus,
        Sensitivity,
        MemoryRecord,
        Block,
        Fact,
        Episode,
        Rule,
        Insight,
        SessionMessage,
        GraphEntity,
        EntityRole,
        MemorySearchOptions,
        MemoryHit,
        MemoryItem,
        MemoryMetadata,
        Message,
        MessageContent,
        HistoryEntry,
        PushReceipt,
        FactHistory,
        NewFact,
        NewEpisode,
        NewRule,
        NewInsight,
        NewBlock,
    );
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Mindgate agent memory (Graphorin model)",
        "description": "Records, inputs, search options and hits of the Mindgate memory store; field names are the seed's camelCase.",
        "anyOf": roots,
        "$defs": defs,
    })
}

/// [`json_schema`] as pretty-printed text with a trailing newline.
pub fn json_schema_string() -> String {
    let mut s = serde_json::to_string_pretty(&json_schema()).unwrap_or_default();
    s.push('\n');
    s
}
