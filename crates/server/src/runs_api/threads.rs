//! `/api/threads`: the runs of one conversation, grouped and totalled by the store.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use mindgate_store::ThreadFilter;
use serde::Deserialize;

use super::{ApiResult, blocking};
use crate::error::ApiError;
use crate::request::query;
use crate::state::AppState;

/// Query of `GET /api/threads`.
#[derive(Debug, Deserialize)]
pub struct ThreadsQuery {
    limit: Option<u32>,
    before: Option<i64>,
    user: Option<String>,
    tag: Option<String>,
}

/// `GET /api/threads?limit&before&user&tag` — threads, the latest active first.
pub async fn list_threads(
    State(state): State<AppState>,
    q: Result<Query<ThreadsQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let filter = ThreadFilter {
        limit: q.limit,
        before: q.before,
        user: q.user.filter(|u| !u.is_empty()),
        tag: q.tag.filter(|t| !t.is_empty()),
    };
    let list = blocking(&state, move |s| s.list_threads(&filter)).await?;
    Ok(Json(list).into_response())
}

/// `GET /api/threads/{threadId}` — one thread's totals and its runs in order.
pub async fn get_thread(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
) -> ApiResult<Response> {
    let id = thread_id.clone();
    let detail = blocking(&state, move |s| s.get_thread(&id)).await?;
    let detail = detail.ok_or_else(|| ApiError::not_found(format!("no thread {thread_id}")))?;
    Ok(Json(detail).into_response())
}
