//! The crate's error types.

use mindgate_errors::{ErrorCode, error_chain};

/// Errors that stop the MCP server itself (start-up and transport).
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The stdio transport could not be set up or failed while serving.
    #[error("MCP transport failed: {0}")]
    Transport(String),
}

/// An echoed input, cut to [`MAX_ECHO_CHARS`](crate::output_limits::MAX_ECHO_CHARS).
fn shown(s: &str) -> String {
    crate::output_limits::cut_str(s, crate::output_limits::MAX_ECHO_CHARS)
}

/// Why one tool call failed. Every variant becomes a tool result with
/// `isError: true` and a message written for the model reading it; none of
/// them is a protocol failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// An argument is missing, malformed or out of range.
    #[error("invalid argument `{field}`: {message}")]
    BadArgument {
        /// The argument's name as the tool schema spells it.
        field: &'static str,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// No run has this id.
    #[error("no run with id `{}` (call list_runs to see the stored runs)", shown(.run_id))]
    UnknownRun {
        /// The id asked for.
        run_id: String,
    },
    /// No run names this thread.
    #[error("no run has thread `{}` (call list_threads to see the threads)", shown(.thread_id))]
    UnknownThread {
        /// The id asked for.
        thread_id: String,
    },
    /// The run exists but no event names this node.
    #[error(
        "run `{}` has no node `{}` (call get_run {{\"runId\": \"{}\"}} to see its nodes)",
        shown(.run_id), shown(.node_id), shown(.run_id)
    )]
    UnknownNode {
        /// The run.
        run_id: String,
        /// The node id asked for.
        node_id: String,
    },
    /// The node exists but has no instance with this id.
    #[error("node `{}` of run `{}` has no instance `{}`", shown(.node_id), shown(.run_id), shown(.instance_id))]
    UnknownInstance {
        /// The run.
        run_id: String,
        /// The node.
        node_id: String,
        /// The instance id asked for.
        instance_id: String,
    },
    /// No coding-agent session matches the id.
    #[error("no task session with id or path `{}` (call list_tasks to see the sessions found)", shown(.id))]
    UnknownTask {
        /// The id asked for.
        id: String,
    },
    /// Several sessions match an id prefix.
    #[error("`{}` matches {count} task sessions; give more of the id: {}", shown(.id), shown(.candidates))]
    AmbiguousTask {
        /// The prefix asked for.
        id: String,
        /// How many matched.
        count: usize,
        /// Their paths, comma separated.
        candidates: String,
    },
    /// `get_task_graph` was given a path it may not read.
    #[error("`{}` is not a session this server reads: {reason}", shown(.path))]
    PathNotAllowed {
        /// The path asked for.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// The run database does not exist or cannot be opened.
    #[error("the run database {database} is not available: {message}")]
    NoDatabase {
        /// Where it was looked for (a file, or a PostgreSQL URL without its password).
        database: String,
        /// Why it cannot be used.
        message: String,
    },
    /// The user's price file (`<home>/prices.toml`) cannot be used.
    #[error("{message} (fix or remove the price file; see docs/cost.md)")]
    BadPrices {
        /// The file, the line and what is wrong.
        message: String,
    },
    /// Reading the database or a session failed.
    #[error("read failed: {0}")]
    Read(ReadFailure),
    /// No running `mindgate serve` could be reached for a control tool.
    #[error("no running Mindgate server: {0}")]
    NoServer(String),
    /// A memory operation failed (bad argument, unknown id, quarantine rule, store error).
    #[error("{message}")]
    Memory {
        /// The code of the shared vocabulary ([`mindgate_memory::MemoryError::code`]).
        code: ErrorCode,
        /// The memory tools' finer reason (`bad_argument`, `not_found`, `conflict`,
        /// `flagged`, …).
        reason: &'static str,
        /// The memory error's message.
        message: String,
    },
    /// The server refused or failed a control request.
    #[error("the server answered {status}: {message}")]
    Server {
        /// HTTP status code.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The referee answered a resume with something other than `resumed`.
    #[error(
        "pause `{}` of run `{}` was not resumed: {}{}",
        shown(.pause_id), shown(.run_id),
        if .result.is_empty() { "no result" } else { .result.as_str() },
        if .message.is_empty() { String::new() } else { format!(" ({})", .message) }
    )]
    NotResumed {
        /// The run.
        run_id: String,
        /// The pause.
        pause_id: String,
        /// The referee's answer (`taken`, `no-such-pause`, `refused`).
        result: String,
        /// Its message, if any.
        message: String,
    },
}

impl ToolError {
    /// The code of the shared vocabulary sent in the structured error content (the same
    /// codes the HTTP API answers with).
    pub fn code(&self) -> ErrorCode {
        match self {
            ToolError::BadArgument { .. } | ToolError::AmbiguousTask { .. } => {
                ErrorCode::BadRequest
            }
            ToolError::UnknownRun { .. }
            | ToolError::UnknownThread { .. }
            | ToolError::UnknownNode { .. }
            | ToolError::UnknownInstance { .. }
            | ToolError::UnknownTask { .. } => ErrorCode::NotFound,
            ToolError::PathNotAllowed { .. } => ErrorCode::Forbidden,
            ToolError::NoDatabase { .. } | ToolError::NoServer(_) | ToolError::BadPrices { .. } => {
                ErrorCode::Unavailable
            }
            ToolError::Read(read) => read.code,
            ToolError::Server { status, .. } => ErrorCode::from_http_status(*status),
            ToolError::NotResumed { result, .. } => match result.as_str() {
                "no-such-pause" => ErrorCode::NotFound,
                _ => ErrorCode::Conflict,
            },
            ToolError::Memory { code, .. } => *code,
        }
    }

    /// A finer reason sent beside the code (`reason` in the structured content), when the
    /// error has one: the memory tools' words (`bad_argument`, `over_limit`, `flagged`, …).
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            ToolError::Memory { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// A failed read of the database or a session, with its code.
    pub(crate) fn read(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError::Read(ReadFailure {
            code,
            message: message.into(),
        })
    }

    pub(crate) fn bad(field: &'static str, message: impl Into<String>) -> Self {
        ToolError::BadArgument {
            field,
            message: message.into(),
        }
    }
}

/// Why a read failed, and the code the library gave it (`too_large`, `bad_request` for a
/// path that is no regular file, `internal`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadFailure {
    /// The code.
    pub code: ErrorCode,
    /// The message, causes included.
    pub message: String,
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<mindgate_store::StoreError> for ToolError {
    fn from(e: mindgate_store::StoreError) -> Self {
        ToolError::read(e.code(), error_chain(&e))
    }
}

impl From<mindgate_taskgraph::Error> for ToolError {
    fn from(e: mindgate_taskgraph::Error) -> Self {
        match e {
            mindgate_taskgraph::Error::NotFound { id } => ToolError::UnknownTask { id },
            mindgate_taskgraph::Error::Ambiguous { id, candidates } => ToolError::AmbiguousTask {
                id,
                count: candidates.len(),
                candidates: candidates
                    .iter()
                    .take(10)
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            },
            other => ToolError::read(other.code(), error_chain(&other)),
        }
    }
}
