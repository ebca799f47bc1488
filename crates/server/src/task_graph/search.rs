//! `GET /task-graph/api/search?q=…&limit=…`: full-text search of every discovered session —
//! user messages, the model's text, tool arguments and tool output — through the session
//! search index in the Mindgate home
//! ([`SessionIndex`](mindgate_store::search::sessions::SessionIndex), shared with the CLI
//! and MCP). Each hit names its session, node and turn, so the page opens the exact node.
//!
//! Answer: `{query, hits: [SessionHit…], indexed: {indexed, unchanged, failed, removed}}`;
//! `limit` defaults to 50 (at most 500). A query of one or two characters is answered by a
//! scan instead of the index.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use mindgate_store::search::sessions::{MAX_SESSION_HITS, SessionIndex};
use serde::Deserialize;
use serde_json::json;

use super::{TaskGraphs, blocking};
use crate::error::ApiError;

/// Hits returned when `limit` is not given.
const DEFAULT_LIMIT: usize = 50;

/// The route's query.
#[derive(Debug, Default, Deserialize)]
pub(super) struct SearchParams {
    q: Option<String>,
    limit: Option<String>,
}

/// The hits as JSON.
pub(super) async fn search(
    State(tg): State<Arc<TaskGraphs>>,
    q: Result<Query<SearchParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let query = q.q.as_deref().map(str::trim).unwrap_or_default().to_owned();
    if query.is_empty() {
        return Err(ApiError::bad_request("missing query parameter `q`"));
    }
    if query.chars().count() > 500 {
        return Err(ApiError::bad_request(
            "query parameter `q` is longer than 500 characters",
        ));
    }
    let limit = match super::parse_u64("limit", q.limit.as_deref())? {
        None => DEFAULT_LIMIT,
        Some(n) if (1..=MAX_SESSION_HITS as u64).contains(&n) => n as usize,
        Some(n) => {
            return Err(ApiError::bad_request(format!(
                "query parameter `limit` must be between 1 and {MAX_SESSION_HITS}, got {n}"
            )));
        }
    };
    let body = blocking(move || {
        let index = tg.session_index()?;
        let tasks = tg.refresh();
        let config = tg.config();
        let (indexed, hits) = index
            .search_current(&query, &tasks, &config, limit)
            .map_err(|e| ApiError::internal(mindgate_errors::error_chain(&e)))?;
        Ok(json!({ "query": query, "hits": hits, "indexed": indexed }))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

impl TaskGraphs {
    /// The session search index, opened at the first search.
    fn session_index(&self) -> Result<Arc<SessionIndex>, ApiError> {
        if let Some(i) = self.search.get() {
            return Ok(i.clone());
        }
        let opened = SessionIndex::open(&self.search_db).map_err(|e| {
            ApiError::internal(format!(
                "cannot open the session search index {}: {}",
                self.search_db.display(),
                mindgate_errors::error_chain(&e)
            ))
        })?;
        Ok(self.search.get_or_init(|| Arc::new(opened)).clone())
    }
}
