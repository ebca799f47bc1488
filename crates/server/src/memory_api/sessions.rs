//! Session messages: page through a session's messages, push one.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use mindgate_memory::{MemoryStore, Message, Scope, SessionMemory};
use serde::Deserialize;

use super::{ApiResult, Caller, created, mem, named, user_arg};
use crate::request::{body, query};
use crate::state::AppState;

/// Messages a page holds without `limit`.
const DEFAULT_PAGE: usize = 100;

/// Query of `GET …/messages`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagesQuery {
    user_id: Option<String>,
    after: Option<u64>,
    limit: Option<usize>,
}

/// `GET /api/memory/sessions/{sessionId}/messages?userId=&after=&limit=` → `{messages}`:
/// the user's session of that id (a session id is per user).
pub(super) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(session_id): Path<String>,
    q: Result<Query<MessagesQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let user = user_arg(&state, caller, q.user_id)?;
    let limit = Some(
        q.limit
            .unwrap_or(DEFAULT_PAGE)
            .min(mindgate_memory::sqlite::MAX_LIST),
    );
    let messages = mem(&state, move |m| {
        m.session().list(&user, &session_id, q.after, limit)
    })
    .await?;
    Ok(named("messages", &messages))
}

/// Body of `POST …/messages`: the scope and one message (`{role, content, …}`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushBody {
    user_id: Option<String>,
    agent_id: Option<String>,
    message: Message,
}

/// `POST /api/memory/sessions/{sessionId}/messages` → `{messageId, sequence, persistedAt}`
/// (201): the message ends the user's session of that id.
pub(super) async fn push(
    State(state): State<AppState>,
    caller: Caller,
    Path(session_id): Path<String>,
    b: Result<Json<PushBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let scope = Scope {
        user_id: user_arg(&state, caller, b.user_id)?,
        agent_id: b.agent_id,
        session_id: Some(session_id),
    };
    let receipt = mem(&state, move |m| {
        m.session().push(&scope, &b.message, caller.actor())
    })
    .await?;
    Ok(created(&receipt))
}
