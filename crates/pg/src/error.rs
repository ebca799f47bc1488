//! Why a PostgreSQL URL was refused.

/// Why a PostgreSQL URL was refused.
#[derive(Debug, thiserror::Error)]
#[error("not a usable PostgreSQL URL (postgres://user@host:port/database): {reason}")]
pub struct BadPostgresUrl {
    reason: String,
}

impl BadPostgresUrl {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}
