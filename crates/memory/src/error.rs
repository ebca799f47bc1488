//! The memory store's typed errors.

use std::path::PathBuf;

use mindgate_errors::ErrorCode;

/// Result alias of the memory crate.
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// Why a memory operation failed. Nothing is written when an operation fails.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// An argument is malformed (empty, too long, not a date, not a finite number, …).
    #[error("invalid {field}: {reason}")]
    Invalid {
        /// The argument.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// No live record, block or entity has that id.
    #[error("no {what} with id {id:?}")]
    NotFound {
        /// What was looked for.
        what: &'static str,
        /// The id.
        id: String,
    },
    /// A record with that id already exists.
    #[error("a record with id {0:?} already exists")]
    Duplicate(String),
    /// The working block is read-only.
    #[error("working block {label:?} is read-only")]
    ReadOnlyBlock {
        /// Its label.
        label: String,
    },
    /// A write would exceed the block's character limit.
    #[error("working block {label:?} holds at most {limit} characters; the new value has {len}")]
    OverLimit {
        /// Its label.
        label: String,
        /// The limit.
        limit: u32,
        /// The refused value's length.
        len: usize,
    },
    /// The text looks like an injected instruction; validation refuses it unless forced.
    #[error(
        "refused: the text looks like an injected instruction ({0}); validate with force to override"
    )]
    Flagged(String),
    /// Text for a working block looks like an injected instruction: refused (blocks are
    /// rendered into the prompt as they are and have no quarantine).
    #[error(
        "refused: the text for working block {label:?} looks like an injected instruction \
         (flagged: {flags}); working blocks have no quarantine, so it is not stored"
    )]
    FlaggedBlock {
        /// The block's label.
        label: String,
        /// The heuristics that fired, comma-separated.
        flags: String,
    },
    /// The operation does not apply to the record in its current state.
    #[error("{0}")]
    Conflict(String),
    /// The task graph induces no procedure (the task did not succeed, or made no tool call).
    #[error("task {task_id} induces no procedure")]
    NotInducible {
        /// The task.
        task_id: String,
        /// Why (the failing node, the task's status).
        #[source]
        reason: Box<mindgate_taskgraph::induce::Refusal>,
    },
    /// The store's vectors were made by another embedder.
    #[error(
        "this memory store's vectors were made by {stored}, not {active}; re-embed them first with `mindgate memory reembed --embedder {provider}` (or keep using {stored})"
    )]
    EmbedderMismatch {
        /// The embedder of the stored vectors.
        stored: String,
        /// The embedder asked for.
        active: String,
        /// The provider to name in the command.
        provider: String,
    },
    /// The embedder failed.
    #[error(transparent)]
    Embed(#[from] mindgate_embed::EmbedError),
    /// The database file was written by a newer Mindgate.
    #[error(
        "memory database schema version {found} is newer than this build supports ({supported})"
    )]
    SchemaTooNew {
        /// Found version.
        found: i64,
        /// Supported version.
        supported: i64,
    },
    /// The database failed.
    #[error("memory database error")]
    Sqlite(#[from] rusqlite::Error),
    /// The PostgreSQL database failed.
    #[error("PostgreSQL memory database error")]
    Postgres(#[from] postgres::Error),
    /// The PostgreSQL server could not be reached or refused the connection (the message
    /// names the database, never the password; the source says why).
    #[error(transparent)]
    PostgresConnect(mindgate_pg::ConnectError),
    /// The database file could not be prepared.
    #[error("memory database file {}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl MemoryError {
    /// The code a view answers this error with: bad input (a value over its block's limit
    /// too) `bad_request`, an unknown id `not_found`, a write the record's state does not
    /// allow (or that validation flagged) `conflict`, a store whose vectors or schema this
    /// build cannot use `unavailable`, the embedder's own code, and `internal` for the
    /// database. The memory tools' finer reason is [`crate::agent::error_code`].
    pub fn code(&self) -> ErrorCode {
        match self {
            MemoryError::Invalid { .. } | MemoryError::OverLimit { .. } => ErrorCode::BadRequest,
            MemoryError::NotFound { .. } => ErrorCode::NotFound,
            MemoryError::Duplicate(_)
            | MemoryError::ReadOnlyBlock { .. }
            | MemoryError::Flagged(_)
            | MemoryError::FlaggedBlock { .. }
            | MemoryError::Conflict(_)
            | MemoryError::NotInducible { .. } => ErrorCode::Conflict,
            MemoryError::EmbedderMismatch { .. }
            | MemoryError::SchemaTooNew { .. }
            | MemoryError::PostgresConnect { .. } => ErrorCode::Unavailable,
            MemoryError::Embed(e) => e.code(),
            MemoryError::Sqlite(_) | MemoryError::Postgres(_) | MemoryError::Io { .. } => {
                ErrorCode::Internal
            }
        }
    }

    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            field,
            reason: reason.into(),
        }
    }

    pub(crate) fn not_found(what: &'static str, id: impl Into<String>) -> Self {
        Self::NotFound {
            what,
            id: id.into(),
        }
    }
}
