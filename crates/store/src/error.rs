//! The store's error type.

use std::path::PathBuf;

use mindgate_errors::ErrorCode;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("database error")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error("PostgreSQL error")]
    Postgres(#[from] postgres::Error),
    /// The PostgreSQL database could not be reached (the message names it and the cause).
    #[error(transparent)]
    Unreachable(#[from] mindgate_pg::ConnectError),
    /// No pooled PostgreSQL connection came free in time (or none could be made).
    #[error("no PostgreSQL connection available")]
    Pool(#[from] mindgate_pg::PoolError),
    /// The PostgreSQL database has no run store yet.
    #[error(
        "the PostgreSQL database {database} has no Mindgate run store yet: run          `mindgate migrate --db URL` (or start `mindgate serve --db URL`, which migrates it)"
    )]
    NotMigrated {
        /// The database (its URL without the password).
        database: String,
    },
    /// Creating or securing the database directory or file failed.
    #[error("cannot prepare {}", .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The writer thread is gone (the store was closed or crashed).
    #[error("the store writer has stopped")]
    WriterGone,
    /// The database was written by a newer Mindgate.
    #[error("database schema version {found} is newer than this build supports ({supported})")]
    SchemaTooNew {
        /// Version found in the file.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
    },
    /// A SQLite file from before a part of the store (opened read-only, so nobody has
    /// brought it up to date yet) was asked to write that part.
    #[error(
        "the run database {} is at schema version {found}, older than the {needed} that {what} \
         need: run `mindgate migrate --db {}` (or start `mindgate serve` on it) to bring it up \
         to date",
        .path.display(), .path.display()
    )]
    SchemaTooOld {
        /// The file.
        path: PathBuf,
        /// Version found in the file.
        found: i64,
        /// The version that part needs.
        needed: i64,
        /// The part (`annotations`, `datasets`).
        what: &'static str,
    },
    /// The database file exists but its owner cannot write it; it is left as it is.
    #[error(
        "database {path} is read-only (mode {mode:o}); Mindgate leaves it as it is: make it writable \
         (`chmod u+w`) or pick another file with --db"
    )]
    ReadOnly {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Another writer held a run's claim longer than [`crate::RUN_CLAIM_WAIT`].
    #[error("run {run_id} is being written by another request or instance; try again")]
    RunBusy {
        /// The run involved.
        run_id: String,
    },
    /// An annotation breaks a rule (the message says which); nothing was stored.
    #[error("{message}")]
    BadAnnotation {
        /// What is wrong.
        message: String,
    },
    /// No live annotation has this id.
    #[error("no annotation {id}")]
    NoAnnotation {
        /// The id asked for.
        id: String,
    },
    /// A dataset or an example breaks a rule (the message says which); nothing was stored.
    #[error("{message}")]
    BadDataset {
        /// What is wrong.
        message: String,
    },
    /// No dataset has this name, no version this number, or no example this id.
    #[error("{message}")]
    NoDataset {
        /// What was not found.
        message: String,
    },
    /// No run has this id.
    #[error("no run {run_id}")]
    NoRun {
        /// The id asked for.
        run_id: String,
    },
    /// A stored value could not be decoded.
    #[error("corrupt stored value in run {run_id}: {message}")]
    Corrupt {
        /// The run involved.
        run_id: String,
        /// What was wrong.
        message: String,
    },
}

impl StoreError {
    /// The code a view answers this error with: the writer gone (the server is
    /// stopping) and an unreachable database are `unavailable`, everything else `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::WriterGone
            | StoreError::Unreachable { .. }
            | StoreError::Pool(_)
            | StoreError::RunBusy { .. } => ErrorCode::Unavailable,
            StoreError::SchemaTooOld { .. } => ErrorCode::Conflict,
            StoreError::BadAnnotation { .. } | StoreError::BadDataset { .. } => {
                ErrorCode::BadRequest
            }
            StoreError::NoAnnotation { .. }
            | StoreError::NoDataset { .. }
            | StoreError::NoRun { .. } => ErrorCode::NotFound,
            _ => ErrorCode::Internal,
        }
    }
}

/// Shorthand result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl From<mindgate_pg::MigrateError> for StoreError {
    fn from(e: mindgate_pg::MigrateError) -> Self {
        match e {
            mindgate_pg::MigrateError::SchemaTooNew { found, supported } => {
                StoreError::SchemaTooNew { found, supported }
            }
            mindgate_pg::MigrateError::Sql(e) => StoreError::Postgres(e),
        }
    }
}
