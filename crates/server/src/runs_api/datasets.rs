//! `/api/datasets`: named, versioned collections of examples (`mindgate_store::datasets`).
//! Reads are open like every read; every write needs the control token (the person), and
//! the guard refuses it to the agent token (agents add through MCP, recorded as an
//! agent's).

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mindgate_store::datasets::jsonl;
use mindgate_store::{AddExamples, Author, ExamplePatch};
use serde::Deserialize;
use serde_json::json;

use super::{ApiResult, blocking};
use crate::error::ApiError;
use crate::guard::principal::Principal;
use crate::request::{body, query, utf8_body};
use crate::state::AppState;

/// Largest body of `POST /api/datasets` (a JSON Lines export).
pub const MAX_IMPORT_BYTES: usize = 64 * 1024 * 1024;

/// `?version=N` of the reads.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionQuery {
    version: Option<u32>,
}

/// `?name=` of the import.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportQuery {
    name: Option<String>,
}

/// The person; the guard lets no other principal write here, this says so if one does.
fn person(principal: Option<axum::Extension<Principal>>) -> ApiResult<Author> {
    match principal.map(|p| p.0) {
        Some(Principal::Person) => Ok(Author::person()),
        _ => Err(ApiError::new(
            mindgate_errors::ErrorCode::Unauthorized,
            "changing a dataset needs the control token",
        )),
    }
}

/// `GET /api/datasets` — the live datasets at their newest versions, by name.
pub async fn list(State(state): State<AppState>) -> ApiResult<Response> {
    let datasets = blocking(&state, |s| s.list_datasets()).await?;
    Ok(Json(json!({ "datasets": datasets })).into_response())
}

/// `GET /api/datasets/{name}?version=N` — one version (the newest by default) with its
/// examples in order.
pub async fn get(
    State(state): State<AppState>,
    Path(name): Path<String>,
    q: Result<Query<VersionQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let version = query(q)?.version;
    let (dataset, examples) = blocking(&state, move |s| s.get_dataset(&name, version)).await?;
    Ok(Json(json!({ "dataset": dataset, "examples": examples })).into_response())
}

/// `GET /api/datasets/{name}/versions` — what each version did, oldest first.
pub async fn versions(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let versions = blocking(&state, move |s| s.dataset_versions(&name)).await?;
    Ok(Json(json!({ "versions": versions })).into_response())
}

/// `GET /api/datasets/{name}/export?version=N` — the version as JSON Lines.
pub async fn export(
    State(state): State<AppState>,
    Path(name): Path<String>,
    q: Result<Query<VersionQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let version = query(q)?.version;
    let (dataset, bytes) = blocking(&state, move |s| {
        let mut out = Vec::new();
        let ds = s.export_dataset(&name, version, &mut out)?;
        Ok((ds, out))
    })
    .await?;
    let file = format!(
        "attachment; filename=\"{}-v{}.jsonl\"",
        dataset.name, dataset.version
    );
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_owned()),
            (header::CONTENT_DISPOSITION, file),
        ],
        bytes,
    )
        .into_response())
}

/// `POST /api/datasets/{name}/examples` — adds examples (or the one taken `from` a run or
/// node instance) as one new version; 201 with the dataset and the stored examples.
pub async fn add(
    State(state): State<AppState>,
    Path(name): Path<String>,
    principal: Option<axum::Extension<Principal>>,
    add: Result<Json<AddExamples>, JsonRejection>,
) -> ApiResult<Response> {
    let by = person(principal)?;
    let add = body(add)?;
    let (dataset, examples) = blocking(&state, move |s| s.add_to_dataset(&name, add, by)).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "dataset": dataset, "examples": examples })),
    )
        .into_response())
}

/// `PATCH /api/datasets/{name}/examples/{id}` — the fields given replace the stored ones
/// (a new version).
pub async fn update(
    State(state): State<AppState>,
    Path((name, id)): Path<(String, String)>,
    principal: Option<axum::Extension<Principal>>,
    patch: Result<Json<ExamplePatch>, JsonRejection>,
) -> ApiResult<Response> {
    let by = person(principal)?;
    let patch = body(patch)?;
    let (dataset, example) =
        blocking(&state, move |s| s.update_example(&name, &id, patch, by)).await?;
    Ok(Json(json!({ "dataset": dataset, "example": example })).into_response())
}

/// `DELETE /api/datasets/{name}/examples/{id}` — removes one example (a new version).
pub async fn remove(
    State(state): State<AppState>,
    Path((name, id)): Path<(String, String)>,
    principal: Option<axum::Extension<Principal>>,
) -> ApiResult<Response> {
    let by = person(principal)?;
    let dataset = blocking(&state, move |s| s.remove_examples(&name, &[id], by)).await?;
    Ok(Json(json!({ "dataset": dataset })).into_response())
}

/// `?ids=` of the removal of several examples.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdsQuery {
    ids: String,
}

/// `DELETE /api/datasets/{name}/examples?ids=ID,ID…` — removes several examples in one new
/// version.
pub async fn remove_many(
    State(state): State<AppState>,
    Path(name): Path<String>,
    principal: Option<axum::Extension<Principal>>,
    q: Result<Query<IdsQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let by = person(principal)?;
    let ids: Vec<String> = query(q)?
        .ids
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let dataset = blocking(&state, move |s| s.remove_examples(&name, &ids, by)).await?;
    Ok(Json(json!({ "dataset": dataset })).into_response())
}

/// `DELETE /api/datasets/{name}` — deletes the dataset (a last, empty version; its history
/// is kept).
pub async fn delete(
    State(state): State<AppState>,
    Path(name): Path<String>,
    principal: Option<axum::Extension<Principal>>,
) -> ApiResult<Response> {
    let by = person(principal)?;
    let dataset = blocking(&state, move |s| s.delete_dataset(&name, by)).await?;
    Ok(Json(json!({ "dataset": dataset })).into_response())
}

/// `POST /api/datasets?name=` (import) — the body is a JSON Lines export; stored under its
/// own name (or `name`); 201 with the dataset.
pub async fn import(
    State(state): State<AppState>,
    principal: Option<axum::Extension<Principal>>,
    q: Result<Query<ImportQuery>, QueryRejection>,
    text: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let by = person(principal)?;
    let name = query(q)?.name.filter(|n| !n.is_empty());
    let text = utf8_body(text, "a dataset export (JSON Lines)")?;
    let file = jsonl::parse(&text).map_err(ApiError::from)?;
    let dataset = blocking(&state, move |s| s.import_dataset(file, name.as_deref(), by)).await?;
    Ok((StatusCode::CREATED, Json(json!({ "dataset": dataset }))).into_response())
}
