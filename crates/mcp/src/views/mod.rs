//! The tools' structured answers as typed views: one `Serialize` struct per answer shape,
//! built from the core's values (the run report, the run graph, a node's detail, a task
//! graph) and serialized once, so the JSON a tool returns is written in one place.

pub mod node;
pub mod run;
pub mod task;

use serde::Serialize;
use serde_json::{Value, json};

/// A view as a tool's structured content. The views hold strings, numbers and JSON values
/// only, so serializing one cannot fail; if it ever did, the answer is an empty object
/// beside the tool's text rather than a panic.
pub fn to_structured(view: &impl Serialize) -> Value {
    serde_json::to_value(view).unwrap_or_else(|_| json!({}))
}
