//! Why a consolidation failed. Nothing is written when it fails.

use mindgate_errors::ErrorCode;

use crate::error::MemoryError;

/// Why a consolidation failed; the store is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ConsolidateError {
    /// No chat model is configured: consolidation is off.
    #[error(
        "consolidation is off: no chat model is configured (set MINDGATE_CHAT_URL and MINDGATE_CHAT_MODEL, e.g. http://127.0.0.1:11434/v1 for Ollama)"
    )]
    NotConfigured,
    /// The chat model's configuration is incomplete or malformed.
    #[error("chat model configuration: {0}")]
    Config(String),
    /// The endpoint could not be reached, timed out or answered an error.
    #[error("chat model: {0}")]
    Remote(String),
    /// A completion is not the JSON asked for (or is empty, cut off or too long).
    #[error("refused a malformed completion, nothing was written: {0}")]
    Completion(String),
    /// The memory store refused or failed (bad session, unknown user, database).
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

impl ConsolidateError {
    /// The code a view answers this error with: `unavailable` when no (usable) chat model
    /// is configured or it failed, the store's code otherwise.
    pub fn code(&self) -> ErrorCode {
        match self {
            ConsolidateError::NotConfigured
            | ConsolidateError::Config(_)
            | ConsolidateError::Remote(_)
            | ConsolidateError::Completion(_) => ErrorCode::Unavailable,
            ConsolidateError::Memory(e) => e.code(),
        }
    }
}
