//! Session messages: page through a session's messages, push one.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use mindgate_memory::{Actor, MemoryStore, Message, Scope, SessionMemory};
use serde::Deserialize;

use super::{ApiResult, created, mem, named, user_arg};
use crate::request::{body, query};
use crate::state::AppState;

/// Messages a page holds without `limit`.
const DEFAULT_PAGE: usize = 100;

/// Query of `GET …/messages`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagesQuery {
    after: Option<u64>,
    limit: Option<usize>,
}

/// `GET /api/memory/sessions/{sessionId}/messages?after=&limit=` → `{messages}`
pub(super) async fn list(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    q: Result<Query<MessagesQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let limit = Some(
        q.limit
            .unwrap_or(DEFAULT_PAGE)
            .min(mindgate_memory::sqlite::MAX_LIST),
    );
    let messages = mem(&state, move |m| {
        m.session().list(&session_id, q.after, limit)
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

/// `POST /api/memory/sessions/{sessionId}/messages` → `{messageId, sequence, persistedAt}` (201).
pub(super) async fn push(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    b: Result<Json<PushBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let scope = Scope {
        user_id: user_arg(&state, b.user_id)?,
        agent_id: b.agent_id,
        session_id: Some(session_id),
    };
    let receipt = mem(&state, move |m| {
        m.session().push(&scope, &b.message, Actor::User)
    })
    .await?;
    Ok(created(&receipt))
}
