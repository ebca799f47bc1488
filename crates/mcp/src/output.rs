//! What a tool returns (readable text plus structured content) and viewer deep links.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use mindgate_memory::agent::encode_component;

use crate::error::ToolError;
use crate::output_limits::{
    MAX_ERROR_CHARS, MAX_STRUCTURED_CHARS, MAX_TEXT_CHARS, cut_str, cut_within, fit,
};

/// The answer of one tool call: text for a model to read, and the same facts
/// as a JSON object for programs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Readable summary (bounded by [`MAX_TEXT_CHARS`]).
    pub text: String,
    /// Structured content (a JSON object, bounded by [`MAX_STRUCTURED_CHARS`]).
    pub value: Value,
}

impl ToolOutput {
    /// Builds an output, enforcing both size bounds.
    pub fn new(text: String, value: Value) -> Self {
        let (mut value, cut) = fit(value, MAX_STRUCTURED_CHARS);
        if !value.is_object() {
            value = json!({ "preview": value });
        }
        if let (true, Some(obj)) = (cut, value.as_object_mut()) {
            obj.insert("truncated".to_owned(), Value::Bool(true));
        }
        ToolOutput {
            text: cut_str(&text, MAX_TEXT_CHARS),
            value,
        }
    }

    /// The MCP result: text content and structured content, not an error.
    pub fn into_result(self) -> CallToolResult {
        let mut r = CallToolResult::structured(self.value);
        r.content = vec![ContentBlock::text(self.text)];
        r
    }
}

/// The MCP result of a failed call: `isError: true`, the message as text, and
/// `{error: {code, message}}` as structured content.
pub fn error_result(e: &ToolError) -> CallToolResult {
    let message = cut_within(&e.to_string(), MAX_ERROR_CHARS);
    let mut content = e.code().tool_content(&message);
    if let (Some(reason), Some(error)) = (e.reason(), content.get_mut("error")) {
        error["reason"] = json!(reason);
    }
    let mut r = CallToolResult::structured_error(content);
    r.content = vec![ContentBlock::text(format!("Error: {message}"))];
    r
}

/// Bounds a finished tool call whatever produced it: rmcp's own argument
/// errors (`failed to deserialize parameters: …`, which quote the offending
/// value) become `bad_request` tool errors of at most [`MAX_ERROR_CHARS`],
/// and every text block stays within [`MAX_TEXT_CHARS`].
pub fn bound_result(mut r: CallToolResult) -> CallToolResult {
    if r.is_error == Some(true) && r.structured_content.is_none() {
        let text: String = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        let message = text
            .strip_prefix("failed to deserialize parameters: ")
            .unwrap_or(&text);
        return error_result(&ToolError::bad(
            "arguments",
            cut_within(message, MAX_ERROR_CHARS),
        ));
    }
    for block in &mut r.content {
        if let Some(t) = block.as_text()
            && t.text.chars().count() > MAX_TEXT_CHARS
        {
            *block = ContentBlock::text(cut_str(&t.text, MAX_TEXT_CHARS));
        }
    }
    r
}

/// A protocol error with its message cut to [`MAX_ERROR_CHARS`] and oversized
/// `data` dropped.
pub fn bound_error_data(mut e: rmcp::ErrorData) -> rmcp::ErrorData {
    if e.message.chars().count() > MAX_ERROR_CHARS {
        e.message = cut_within(&e.message, MAX_ERROR_CHARS).into();
    }
    if e.data
        .as_ref()
        .is_some_and(|d| crate::output_limits::json_len(d) > MAX_ERROR_CHARS)
    {
        e.data = None;
    }
    e
}

/// Either outcome as an MCP result.
pub fn to_result(r: Result<ToolOutput, ToolError>) -> CallToolResult {
    match r {
        Ok(out) => out.into_result(),
        Err(e) => error_result(&e),
    }
}

/// Builds viewer deep links (`http://127.0.0.1:<port>/#/run/<runId>/node/<nodeId>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    base: String,
}

impl Links {
    /// Links to the viewer on loopback `port`.
    pub fn for_port(port: u16) -> Self {
        Links {
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// The viewer's origin (`http://127.0.0.1:<port>`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The run in the viewer.
    pub fn run(&self, run_id: &str) -> String {
        format!("{}/#/run/{}", self.base, encode_component(run_id))
    }

    /// A thread's page in the viewer.
    pub fn thread(&self, thread_id: &str) -> String {
        format!("{}/#/threads/{}", self.base, encode_component(thread_id))
    }

    /// A node of a coding-agent session's task graph in the viewer: its turn opened, the
    /// node selected (the whole graph when it is in no turn).
    pub fn task_node(&self, session_id: &str, turn: Option<&str>, node_id: &str) -> String {
        let view = match turn {
            Some(t) => format!("turn/{}", encode_component(t)),
            None => "graph".to_owned(),
        };
        format!(
            "{}/#/task/{}/{view}?node={}",
            self.base,
            encode_component(session_id),
            encode_component(node_id)
        )
    }

    /// The node of a run in the viewer.
    pub fn node(&self, run_id: &str, node_id: &str) -> String {
        format!(
            "{}/#/run/{}/node/{}",
            self.base,
            encode_component(run_id),
            encode_component(node_id)
        )
    }

    /// Two runs side by side in the viewer's diff view.
    pub fn diff(&self, run_a: &str, run_b: &str) -> String {
        format!(
            "{}/#/diff/{}/{}",
            self.base,
            encode_component(run_a),
            encode_component(run_b)
        )
    }

    /// A node link when there is a node, else the run link.
    pub fn run_or_node(&self, run_id: &str, node_id: Option<&str>) -> String {
        match node_id {
            Some(n) => self.node(run_id, n),
            None => self.run(run_id),
        }
    }

    /// The HTTP API URL of a node's full detail (nothing cut).
    pub fn api_node(&self, run_id: &str, node_id: &str) -> String {
        format!(
            "{}/api/runs/{}/nodes/{}",
            self.base,
            encode_component(run_id),
            encode_component(node_id)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_like_encode_uri_component() {
        let l = Links::for_port(4747);
        assert_eq!(
            l.node("run 1", "tool:search/é"),
            "http://127.0.0.1:4747/#/run/run%201/node/tool%3Asearch%2F%C3%A9"
        );
        assert_eq!(l.run("r-1_a.b"), "http://127.0.0.1:4747/#/run/r-1_a.b");
        assert_eq!(l.run_or_node("r", None), l.run("r"));
    }

    #[test]
    fn results_carry_text_and_structure() {
        let ok = ToolOutput::new("hello".into(), json!({"a": 1})).into_result();
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(json!({"a": 1})));
        assert_eq!(
            ok.content[0].as_text().map(|t| t.text.as_str()),
            Some("hello")
        );
        let err = error_result(&ToolError::UnknownRun { run_id: "x".into() });
        assert_eq!(err.is_error, Some(true));
        assert_eq!(
            err.structured_content
                .as_ref()
                .map(|v| v["error"]["code"].clone()),
            Some(json!("not_found"))
        );
    }

    #[test]
    fn oversized_outputs_are_bounded() {
        let big = "z".repeat(MAX_STRUCTURED_CHARS * 2);
        let out = ToolOutput::new(big.clone(), json!({"big": big}));
        assert!(out.text.chars().count() < MAX_TEXT_CHARS + 40);
        assert!(crate::output_limits::json_len(&out.value) <= MAX_STRUCTURED_CHARS + 20);
        assert_eq!(out.value["truncated"], true);
    }
}
