//! `GET /api/memory/search`: hybrid search with every `MemorySearchOptions` field.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use mindgate_memory::agent::{self, SearchAnswer};
use mindgate_memory::{DateRange, MemorySearchOptions, SearchMode};
use serde::Deserialize;

use super::{ApiResult, Caller, kind_arg, mem, user_arg};
use crate::error::ApiError;
use crate::request::query;
use crate::state::AppState;

/// Query of `GET /api/memory/search`: every `MemorySearchOptions` field, flat
/// (`tags` and `kinds` comma-separated, `dateFrom` / `dateTo` for `dateRange`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQuery {
    query: Option<String>,
    user_id: Option<String>,
    agent_id: Option<String>,
    session_id: Option<String>,
    top_k: Option<usize>,
    tags: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    include_archived: Option<bool>,
    include_quarantined: Option<bool>,
    as_of: Option<String>,
    known_at: Option<String>,
    kinds: Option<String>,
    mode: Option<String>,
    candidate_pool: Option<usize>,
    vector_weight: Option<f64>,
    vector_floor: Option<f64>,
    decay: Option<bool>,
    expand_entities: Option<bool>,
}

impl SearchQuery {
    fn options(self, state: &AppState, caller: Caller) -> ApiResult<MemorySearchOptions> {
        let query = self.query.filter(|q| !q.trim().is_empty()).ok_or_else(|| {
            ApiError::bad_request("query is required").with_reason("bad_argument")
        })?;
        let kinds = match csv(self.kinds.as_deref()) {
            Some(list) => Some(
                list.iter()
                    .map(|k| kind_arg("kind", k))
                    .collect::<ApiResult<Vec<_>>>()?,
            ),
            None => None,
        };
        let mode = match self.mode.as_deref() {
            None | Some("") => None,
            Some("hybrid") => Some(SearchMode::Hybrid),
            Some("lexical") => Some(SearchMode::Lexical),
            Some("vector") => Some(SearchMode::Vector),
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "unknown mode '{other}' (hybrid, lexical, vector)"
                )));
            }
        };
        if let Some(w) = self.vector_weight
            && !(w.is_finite() && w >= 0.0)
        {
            return Err(ApiError::bad_request(
                "vectorWeight must be a finite number ≥ 0",
            ));
        }
        let date_range =
            (self.date_from.is_some() || self.date_to.is_some()).then_some(DateRange {
                from: self.date_from,
                to: self.date_to,
            });
        Ok(MemorySearchOptions {
            query,
            top_k: self.top_k,
            tags: csv(self.tags.as_deref()),
            date_range,
            include_archived: self.include_archived,
            include_quarantined: self.include_quarantined,
            as_of: self.as_of,
            known_at: self.known_at,
            user_id: Some(user_arg(state, caller, self.user_id)?),
            agent_id: self.agent_id.filter(|a| !a.is_empty()),
            session_id: self.session_id.filter(|s| !s.is_empty()),
            kinds,
            mode,
            candidate_pool: self.candidate_pool,
            vector_weight: self.vector_weight,
            fusion: None,
            vector_floor: self.vector_floor,
            decay: self.decay,
            expand_entities: self.expand_entities,
            query_feedback: None,
            neighbour_weight: None,
            recall_by: caller.recall_by(),
        })
    }
}

/// The items of a comma-separated list, trimmed, empty ones dropped.
fn csv(s: Option<&str>) -> Option<Vec<String>> {
    s.map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect()
    })
}

/// `GET /api/memory/search` → `{hits: [HitView…], asOf?, knownAt?, emptyBecause?}`
/// ([`SearchAnswer`]: the time filters applied, and why nothing came back when they
/// excluded every match). A search with the control or the
/// agent token recalls its facts (`mindgate_memory::recall`: strength once per principal
/// per hour); one without a token changes nothing.
pub(super) async fn search(
    State(state): State<AppState>,
    caller: Caller,
    q: Result<Query<SearchQuery>, QueryRejection>,
) -> ApiResult {
    let options = query(q)?.options(&state, caller)?;
    let answer: SearchAnswer = mem(&state, move |m| agent::search(m, &options)).await?;
    Ok(Json(answer).into_response())
}
