//! Reading the payloads of Codex rollout items: function outputs, unified-exec process
//! headers, `spawn_agent` outputs and subagent metadata (pure helpers of [`super::codex`]).

use serde_json::Value;

use crate::json_fields::{str_field, value_text};

/// The id of a session's parent thread (Codex subagents name it in two places).
pub(super) fn parent_thread(meta: &Value) -> Option<String> {
    str_field(
        meta,
        &[
            "parent_thread_id",
            "parent_session_id",
            "parent_id",
            "forked_from_id",
        ],
    )
    .or_else(|| {
        meta.pointer("/source/subagent/thread_spawn/parent_thread_id")
            .and_then(Value::as_str)
    })
    .map(str::to_owned)
}

/// The child thread id a `spawn_agent` output names (`{"agent_id": …}`).
pub(super) fn spawned_agent_id(output: &str) -> Option<String> {
    let v: Value = serde_json::from_str(output.trim()).ok()?;
    str_field(&v, &["agent_id", "thread_id", "id"]).map(str::to_owned)
}

/// What a unified-exec output header says about its process.
#[derive(Debug, PartialEq)]
pub(super) enum ExecState {
    /// "Process running with session ID N".
    Running(String),
    /// "Process exited with code N".
    Exited(i64),
}

/// Reads the header lines of a unified-exec output (`Chunk ID`, `Wall time`, the process
/// state, `Original token count`, then `Output:`); `None` for any other text.
pub(super) fn unified_exec_state(text: &str) -> Option<ExecState> {
    for line in text.lines().take(6) {
        if line == "Output:" {
            break;
        }
        if let Some(rest) = line.strip_prefix("Process exited with code ") {
            return rest.trim().parse().ok().map(ExecState::Exited);
        }
        if let Some(rest) = line.strip_prefix("Process running with session ID ") {
            return Some(ExecState::Running(rest.trim().to_owned()));
        }
    }
    None
}

/// Reads a function output: a string (possibly JSON `{output, metadata:{exit_code}}`) or an
/// object `{content, success}`.
pub(super) fn tool_output(v: &Value) -> (String, bool) {
    let parsed;
    let obj = match v {
        Value::String(s) if s.trim_start().starts_with('{') => {
            parsed = serde_json::from_str::<Value>(s).ok();
            parsed.as_ref()
        }
        Value::Object(_) => Some(v),
        _ => None,
    };
    if let Some(o) = obj {
        let exit = o
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64);
        let success = o.get("success").and_then(Value::as_bool);
        let text = o
            .get("output")
            .or_else(|| o.get("content"))
            .map(value_text)
            .unwrap_or_else(|| value_text(v));
        let is_error = exit.is_some_and(|c| c != 0) || success == Some(false);
        return (text, is_error);
    }
    let text = value_text(v);
    let is_error = text.starts_with("Exit code: ") && !text.starts_with("Exit code: 0")
        || text.starts_with("error:")
        || text.starts_with("failed to");
    (text, is_error)
}
