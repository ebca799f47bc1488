//! The crate's error type.

use std::path::PathBuf;

use mindgate_errors::ErrorCode;

/// Errors of reading and finding sessions. Malformed content is never an error: it becomes
/// [`ReadWarning`](crate::ReadWarning)s on the session.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// What was being read.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The path exists but holds no session file this crate knows.
    #[error("{} is not a DSH, pi, Claude Code, Codex, Gemini CLI or OpenCode session", path.display())]
    NotASession {
        /// The path.
        path: PathBuf,
    },
    /// The path is not a regular file (a FIFO, socket or device); such paths are never read.
    #[error("{} is not a regular file (pipes, sockets and devices are never read)", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file (or its decompressed content) is larger than the reader's cap.
    #[error("{} is larger than the {limit}-byte limit for session files", path.display())]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The cap, in bytes.
        limit: u64,
    },
    /// A session database (OpenCode's `opencode.db`) is locked, corrupt or unreadable.
    #[error("{}: {message}", path.display())]
    Database {
        /// The database file.
        path: PathBuf,
        /// What went wrong, in words.
        message: String,
    },
    /// No discovered session has this id (or path).
    #[error("no session with id or path `{id}`")]
    NotFound {
        /// What was asked for.
        id: String,
    },
    /// Several discovered sessions match this id prefix.
    #[error("`{id}` matches {} sessions", candidates.len())]
    Ambiguous {
        /// What was asked for.
        id: String,
        /// Paths of the matches.
        candidates: Vec<PathBuf>,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The code a view answers this error with: a missing session or file is `not_found`,
    /// an ambiguous id, a path that is no session or no regular file `bad_request`, a file
    /// over the cap `too_large`, any other read failure `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorCode::NotFound
            }
            Error::Io { .. } | Error::Database { .. } => ErrorCode::Internal,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::NotASession { .. } | Error::NotAFile { .. } | Error::Ambiguous { .. } => {
                ErrorCode::BadRequest
            }
            Error::TooLarge { .. } => ErrorCode::TooLarge,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
