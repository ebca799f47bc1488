//! `/api/annotations`: what people and agents say about runs and node instances
//! (`mindgate_store::annotations`). Reads are open like every read; a write needs a
//! token: the control token writes as the person, the agent token as an agent (its
//! annotations are marked so), and an agent edits or deletes only an agent's annotation.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mindgate_store::{
    AnnotationFilter, AnnotationKind, AnnotationPatch, Author, AuthorKind, NewAnnotation,
};
use serde::Deserialize;
use serde_json::json;

use super::{ApiResult, blocking};
use crate::error::ApiError;
use crate::guard::principal::Principal;
use crate::request::{body, query};
use crate::state::AppState;

/// Query of `GET /api/annotations`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationsQuery {
    run_id: Option<String>,
    node_id: Option<String>,
    label: Option<String>,
    kind: Option<String>,
    include_deleted: Option<bool>,
    limit: Option<u32>,
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty())
}

/// Who a write is recorded as; anonymous writes never reach here (the guard refuses them).
fn author(principal: Option<axum::Extension<Principal>>) -> ApiResult<Author> {
    match principal.map(|p| p.0) {
        Some(Principal::Person) => Ok(Author::person()),
        Some(Principal::Agent) => Ok(Author::agent()),
        _ => Err(ApiError::new(
            mindgate_errors::ErrorCode::Unauthorized,
            "writing an annotation needs the control token (or the agent token)",
        )),
    }
}

/// `GET /api/annotations?runId&nodeId&label&kind&includeDeleted&limit` — oldest first.
pub async fn list(
    State(state): State<AppState>,
    q: Result<Query<AnnotationsQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let kind = match nonempty(q.kind).as_deref() {
        None => None,
        Some("note") => Some(AnnotationKind::Note),
        Some("check") => Some(AnnotationKind::Check),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unknown kind '{other}' (note, check)"
            )));
        }
    };
    let filter = AnnotationFilter {
        run_id: nonempty(q.run_id),
        node_id: nonempty(q.node_id),
        label: nonempty(q.label),
        kind,
        include_deleted: q.include_deleted.unwrap_or(false),
        limit: q.limit,
    };
    let annotations = blocking(&state, move |s| s.list_annotations(&filter)).await?;
    Ok(Json(json!({ "annotations": annotations })).into_response())
}

/// `POST /api/annotations` — 201 with the stored annotation.
pub async fn create(
    State(state): State<AppState>,
    principal: Option<axum::Extension<Principal>>,
    new: Result<Json<NewAnnotation>, JsonRejection>,
) -> ApiResult<Response> {
    let by = author(principal)?;
    let new = body(new)?;
    let made = blocking(&state, move |s| s.create_annotation(new, by)).await?;
    Ok((StatusCode::CREATED, Json(made)).into_response())
}

/// `GET /api/annotations/{id}` — one annotation (a deleted one too) with its history.
pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let key = id.clone();
    let (found, history) = blocking(&state, move |s| {
        Ok((s.get_annotation(&key)?, s.annotation_history(&key)?))
    })
    .await?;
    let found = found.ok_or_else(|| ApiError::not_found(format!("no annotation {id}")))?;
    let mut v = serde_json::to_value(found).unwrap_or_default();
    v["history"] = json!(history);
    Ok(Json(v).into_response())
}

/// An agent may change only an agent's annotation.
async fn check_may_change(state: &AppState, id: &str, by: &Author) -> ApiResult<()> {
    if by.kind != AuthorKind::Agent {
        return Ok(());
    }
    let key = id.to_owned();
    let found = blocking(state, move |s| s.get_annotation(&key)).await?;
    match found {
        Some(a) if a.author.kind != AuthorKind::Agent => Err(ApiError::new(
            mindgate_errors::ErrorCode::Forbidden,
            "an agent edits or deletes only an agent's annotation; a person's needs the control token",
        )),
        _ => Ok(()),
    }
}

/// `PATCH /api/annotations/{id}` — the fields given replace the stored ones (`null`
/// clears one); the version before goes to the history.
pub async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    principal: Option<axum::Extension<Principal>>,
    patch: Result<Json<AnnotationPatch>, JsonRejection>,
) -> ApiResult<Response> {
    let by = author(principal)?;
    let patch = body(patch)?;
    check_may_change(&state, &id, &by).await?;
    let edited = blocking(&state, move |s| s.update_annotation(&id, patch, by)).await?;
    Ok(Json(edited).into_response())
}

/// `DELETE /api/annotations/{id}` — kept with its history, marked deleted.
pub async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
    principal: Option<axum::Extension<Principal>>,
) -> ApiResult<Response> {
    let by = author(principal)?;
    check_may_change(&state, &id, &by).await?;
    let deleted = blocking(&state, move |s| s.delete_annotation(&id, by)).await?;
    Ok(Json(deleted).into_response())
}
