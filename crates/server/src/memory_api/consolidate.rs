//! Consolidation of a session with the configured chat model (`ServeConfig::memory_chat`):
//! the memory crate's one implementation (`mindgate_memory::consolidate`), run on the
//! blocking pool like every memory call.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use mindgate_memory::consolidate::{self, ConsolidateError, ConsolidateOptions, OpenAiChat};
use serde::Deserialize;

use super::{ApiResult, Caller, json_ok, memory_error, user_arg};
use crate::error::ApiError;
use crate::request::body;
use crate::state::AppState;

/// Body of `POST …/consolidate` (optional).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConsolidateBody {
    /// Whose session (a session id is per user; default: the server's `--memory-user`,
    /// else the one user with messages in it).
    user_id: Option<String>,
}

/// `POST /api/memory/sessions/{sessionId}/consolidate` (`{userId?}`) → the consolidation
/// report; 503 `unavailable` when no chat model is configured or it failed.
pub(super) async fn consolidate(
    State(state): State<AppState>,
    caller: Caller,
    Path(session_id): Path<String>,
    b: Result<Json<ConsolidateBody>, JsonRejection>,
) -> ApiResult {
    // An empty body means `{}`.
    let user_id = match b {
        Err(JsonRejection::MissingJsonContentType(_)) => None,
        other => body(other)?.user_id,
    };
    // A session id is per user: the one named, else the server's --memory-user, else the
    // one user with messages in a session of that id.
    let user_id = match user_id.filter(|u| !u.is_empty()) {
        Some(user) => Some(user_arg(&state, caller, Some(user))?),
        None => state.config.memory_user.clone(),
    };
    let chat = state
        .config
        .memory_chat
        .clone()
        .ok_or(ConsolidateError::NotConfigured)
        .and_then(OpenAiChat::new)
        .map_err(consolidate_error)?;
    let lazy = state.memory.clone();
    let report = tokio::task::spawn_blocking(move || {
        let store = lazy.get()?;
        let mut options = ConsolidateOptions::new(session_id);
        options.user_id = user_id;
        options.by = caller.actor();
        consolidate::consolidate(&store, &chat, &options)
    })
    .await
    .map_err(|e| ApiError::internal(format!("consolidation task failed: {e}")))?
    .map_err(consolidate_error)?;
    Ok(json_ok(&report))
}

fn consolidate_error(e: ConsolidateError) -> ApiError {
    match e {
        ConsolidateError::Memory(e) => memory_error(e),
        other => {
            let message = mindgate_errors::error_chain(&other);
            if !matches!(other, ConsolidateError::NotConfigured) {
                tracing::warn!(error = %message, "consolidation failed");
            }
            let reason = match other {
                ConsolidateError::NotConfigured => "not_configured",
                ConsolidateError::Config(_) => "chat_config",
                ConsolidateError::Remote(_) => "chat_failed",
                _ => "malformed_completion",
            };
            ApiError::new(other.code(), message).with_reason(reason)
        }
    }
}
