//! Tool arguments. Their JSON Schemas (the tools' `inputSchema`) are generated
//! from these types, so the schema and the parser never disagree.

use mindgate_protocol::ResumeAction;
use mindgate_store::RunState;
use mindgate_taskgraph::Agent;
use schemars::JsonSchema;
use serde::Deserialize;

/// The schema of a string that is one of `names` (a core enum's spellings).
fn one_of_names<'a>(names: impl Iterator<Item = &'a str>, description: &str) -> schemars::Schema {
    let names: Vec<&str> = names.collect();
    schemars::json_schema!({
        "type": "string",
        "enum": names,
        "description": description,
    })
}

/// A run's lifecycle state, as a filter, by its stored name ([`RunState::as_str`]:
/// `running`, `ok`, `error`, `aborted`, `abandoned`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct RunStatusArg(pub RunState);

impl JsonSchema for RunStatusArg {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RunStatusArg".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        one_of_names(
            RunState::ALL.iter().map(|s| s.as_str()),
            "A run's lifecycle state: running (events may still arrive), ok, error, aborted, or abandoned (the app went away without finishing it).",
        )
    }
}

impl From<RunStatusArg> for RunState {
    fn from(s: RunStatusArg) -> Self {
        s.0
    }
}

/// `list_runs` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListRunsArgs {
    /// Most runs to return, newest first (default 20, at most 100).
    pub limit: Option<u32>,
    /// Only runs in this state.
    pub status: Option<RunStatusArg>,
    /// Only runs of this app (exact name).
    pub app: Option<String>,
    /// Case-insensitive substring of the run id, name or app.
    pub query: Option<String>,
    /// Only runs started strictly before this epoch-ms time (pass the previous
    /// answer's `nextBefore` to page).
    pub before: Option<i64>,
    /// Only runs of this thread (run meta `threadId`, `conversationId` or `sessionId`).
    pub thread: Option<String>,
    /// Only runs of this user (run meta `userId`).
    pub user: Option<String>,
    /// Only runs carrying this tag (run meta `tags`).
    pub tag: Option<String>,
    /// Only runs with an annotation carrying this label.
    pub label: Option<String>,
    /// Only runs with an annotation of this verdict.
    pub verdict: Option<VerdictArg>,
}

/// `list_threads` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListThreadsArgs {
    /// Most threads to return, latest active first (default 20, at most 100).
    pub limit: Option<u32>,
    /// Only threads with a run of this user (run meta `userId`).
    pub user: Option<String>,
    /// Only threads with a run carrying this tag (run meta `tags`).
    pub tag: Option<String>,
    /// Only threads whose latest run started strictly before this epoch-ms time (pass
    /// the previous answer's `nextBefore` to page).
    pub before: Option<i64>,
}

/// `get_thread` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetThreadArgs {
    /// The thread id (from list_threads, or a run's `threadId`).
    pub thread_id: String,
}

/// `get_run` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetRunArgs {
    /// The run id (from list_runs, find_errors or search_events).
    pub run_id: String,
}

/// `diff_runs` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffRunsArgs {
    /// Run A, the reference (the first divergence is the earliest difference in its order).
    #[serde(rename = "runA")]
    pub run_a: String,
    /// Run B, compared with A.
    #[serde(rename = "runB")]
    pub run_b: String,
}

/// `get_node` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetNodeArgs {
    /// The run id.
    pub run_id: String,
    /// The logical node id (e.g. `tool:search`), from get_run.
    pub node_id: String,
    /// How many executions (instances) to return, latest first (default 3, at most 20).
    pub instances: Option<u32>,
    /// Return only this instance.
    pub instance_id: Option<String>,
    /// Characters kept per string in inputs, outputs, errors and streamed text
    /// (default 2000, at most 20000).
    pub max_chars: Option<u32>,
}

/// A point in time: epoch milliseconds, an RFC 3339 time, or a span back from
/// now such as `30m`, `2h`, `7d`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SinceArg {
    /// Epoch milliseconds.
    Millis(i64),
    /// `30s`, `15m`, `2h`, `7d`, or an RFC 3339 time.
    Text(String),
}

/// `find_errors` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindErrorsArgs {
    /// Most failed nodes (and, separately, failed runs) to return (default 20, at most 100).
    pub limit: Option<u32>,
    /// Only errors at or after this time: epoch ms, RFC 3339, or `30m` / `2h` / `7d` ago.
    pub since: Option<SinceArg>,
}

/// `search_events` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchEventsArgs {
    /// Text to find in event payloads (case-insensitive for ASCII).
    pub query: String,
    /// Only search this run.
    pub run_id: Option<String>,
    /// Most hits to return, newest run first (default 20, at most 100).
    pub limit: Option<u32>,
}

/// A coding agent whose sessions Mindgate reads, by its name ([`Agent::as_str`]: `dsh`,
/// `pi`, `claude_code`, `codex`, `gemini`, `opencode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct AgentArg(pub Agent);

impl JsonSchema for AgentArg {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AgentArg".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        one_of_names(
            Agent::ALL.iter().map(|a| a.as_str()),
            "A coding agent whose sessions Mindgate reads.",
        )
    }
}

impl From<AgentArg> for Agent {
    fn from(a: AgentArg) -> Self {
        a.0
    }
}

/// `list_tasks` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListTasksArgs {
    /// Most sessions to return, newest first (default 20, at most 200).
    pub limit: Option<u32>,
    /// Only sessions of this coding agent.
    pub agent: Option<AgentArg>,
}

/// `search_tasks` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchTasksArgs {
    /// Text to find (case-insensitive substring) in user messages, the model's text, tool
    /// arguments and tool output.
    pub query: String,
    /// Most hits to return (default 20, at most 200).
    pub limit: Option<u32>,
}

/// `get_usage` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetUsageArgs {
    /// Group by `day` (default), `week`, `month`, `session`, `agent`, `model` or `project`.
    pub by: Option<mindgate_taskgraph::usage::UsageBy>,
    /// Only usage from this time on: a span back from now (`7d`), an RFC 3339 time, a date or
    /// Unix milliseconds.
    pub since: Option<String>,
    /// IANA time zone days, weeks and months are counted in (default `UTC`).
    pub tz: Option<String>,
}

/// How much of a task graph to return.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DetailArg {
    /// Summary, critical path, failures, files changed (default).
    #[default]
    Summary,
    /// The summary plus every node (bounded).
    Full,
    /// The turn-level overview the task page opens on: each turn's message, times, counts,
    /// failures, retries, tokens and cost; the critical path as work and waiting segments;
    /// totals with each subagent session once.
    Overview,
}

/// `get_task_graph` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTaskGraphArgs {
    /// Session id (exact or a unique prefix, from list_tasks) or a session file path.
    pub id: String,
    /// `summary` (default), `full` (adds the node list) or `overview` (one entry per turn, as
    /// the task page opens on).
    pub detail: Option<DetailArg>,
}

/// `list_pauses` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListPausesArgs {
    /// Only pauses of this run.
    pub run_id: Option<String>,
}

/// `resume` arguments.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeArgs {
    /// The run holding the gate.
    pub run_id: String,
    /// The pause id (from list_pauses).
    pub pause_id: String,
    /// `continue`, `retry`, `inject` or `abort` (the protocol's action, parsed here once).
    pub action: ResumeAction,
    /// The value to use instead of the node's output (required by `inject`).
    pub output: Option<serde_json::Value>,
}

/// `procedure_outcome`: one reuse of a procedure, and whether it met its success criteria.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcedureOutcomeArgs {
    /// The procedure's id.
    pub id: String,
    /// Whether the reuse met the procedure's success criteria.
    pub success: bool,
}

/// A verdict, as an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerdictArg {
    /// Thumbs up: good.
    Up,
    /// Thumbs down: bad.
    Down,
}

impl From<VerdictArg> for mindgate_store::Verdict {
    fn from(v: VerdictArg) -> Self {
        match v {
            VerdictArg::Up => mindgate_store::Verdict::Up,
            VerdictArg::Down => mindgate_store::Verdict::Down,
        }
    }
}

/// `annotate` arguments.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnnotateArgs {
    /// The run (from list_runs).
    pub run_id: String,
    /// The node, to annotate one node rather than the run.
    pub node_id: Option<String>,
    /// The node instance (needs nodeId).
    pub instance_id: Option<String>,
    /// Thumbs up or down.
    pub verdict: Option<VerdictArg>,
    /// A score from 0 to 1 (any number when scoreName is given).
    pub score: Option<f64>,
    /// The name of a named numeric score.
    pub score_name: Option<String>,
    /// Free labels (each 1 to 64 bytes, at most 32).
    pub labels: Option<Vec<String>>,
    /// A comment.
    pub comment: Option<String>,
}

/// `list_annotations` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListAnnotationsArgs {
    /// Of this run.
    pub run_id: Option<String>,
    /// Of this node (with runId).
    pub node_id: Option<String>,
    /// Carrying this label.
    pub label: Option<String>,
}

/// `dataset_add` arguments.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DatasetAddArgs {
    /// The dataset (made when absent): 1 to 128 letters, digits, '.', '_' or '-'.
    pub dataset: String,
    /// The run (from list_runs): without nodeId, its agent input and final output.
    pub run_id: String,
    /// A node of the run: its input and output (its last instance without instanceId).
    pub node_id: Option<String>,
    /// The node instance (needs nodeId).
    pub instance_id: Option<String>,
    /// Free fields kept with the example (an object).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `dataset_list` arguments (none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetListArgs {}

/// `dataset_show` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DatasetShowArgs {
    /// The dataset.
    pub dataset: String,
    /// This version rather than the newest.
    pub version: Option<u32>,
}
