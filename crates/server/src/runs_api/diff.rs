//! `GET /api/diff?a=<runId>&b=<runId>`: two runs compared by the store
//! ([`mindgate_store::RunStore::diff_runs`]); the handler only translates.
//!
//! A diff folds both runs with their inputs and outputs, the heaviest read of the API,
//! so at most [`MAX_DIFFS`] run at once; a request that cannot start one within
//! [`DIFF_WAIT`] is answered `503` with `Retry-After`.

use std::time::Duration;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use mindgate_errors::ErrorCode;
use mindgate_store::DiffError;
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::error::ApiError;
use crate::request::query;
use crate::state::AppState;

/// Most diffs computed at once (per process).
pub const MAX_DIFFS: usize = 1;
/// How long a request waits for its turn before it is answered `503`.
pub const DIFF_WAIT: Duration = Duration::from_secs(10);

static DIFFS: Semaphore = Semaphore::const_new(MAX_DIFFS);

/// Query of `GET /api/diff`.
#[derive(Debug, Deserialize)]
pub struct DiffQuery {
    a: Option<String>,
    b: Option<String>,
}

fn run_id(value: Option<String>, name: &str) -> Result<String, ApiError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::bad_request(format!("`{name}` (a run id) is required")))
}

/// `GET /api/diff?a=&b=`
pub async fn diff(
    State(state): State<AppState>,
    q: Result<Query<DiffQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let a = run_id(q.a, "a")?;
    let b = run_id(q.b, "b")?;
    let Ok(Ok(_permit)) = tokio::time::timeout(DIFF_WAIT, DIFFS.acquire()).await else {
        let mut response = ApiError::new(
            ErrorCode::Unavailable,
            "another diff is running; retry shortly",
        )
        .into_response();
        response.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from_static("2"),
        );
        return Ok(response);
    };
    let store = state.store.clone();
    let result = tokio::task::spawn_blocking(move || store.diff_runs(&a, &b))
        .await
        .map_err(|e| ApiError::internal(format!("diff task failed: {e}")))?;
    match result {
        Ok(diff) => Ok(Json(diff).into_response()),
        Err(DiffError::NotFound(id)) => Err(ApiError::not_found(format!("no run {id}"))),
        Err(DiffError::Store(e)) => Err(e.into()),
    }
}
