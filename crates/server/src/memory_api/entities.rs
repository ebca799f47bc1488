//! The entity graph: list, one entity with its facts, merge, unmerge.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use mindgate_memory::agent;
use mindgate_memory::{EntityGraph, Memory, MemoryError, MemoryStore};
use serde::Deserialize;
use serde_json::json;

use super::{ApiResult, Caller, UserQuery, json_ok, mem, named, user_arg};
use crate::request::{body, query};
use crate::state::AppState;

/// `GET /api/memory/entities?userId=` → `{entities}` (roots and merged).
pub(super) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, caller, query(q)?.user_id)?;
    let entities = mem(&state, move |m| m.entities().list(&user)).await?;
    Ok(named("entities", &entities))
}

/// `GET /api/memory/entities/{id}` → `{entity, facts, link}` (ids of the live facts linked
/// to it).
pub(super) async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult {
    let bound = caller.bound(&state);
    let (entity, facts) = mem(&state, move |m| {
        check_entity_owner(m, &id, bound.as_deref())?;
        Ok((m.entities().get(&id)?, m.entities().facts_for(&id)?))
    })
    .await?;
    let link = agent::entity_route(&entity.id);
    Ok(json_ok(
        &json!({ "entity": entity, "facts": facts, "link": link }),
    ))
}

/// Body of `POST …/merge`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergeBody {
    into: String,
}

/// `POST /api/memory/entities/{id}/merge` (`{into}`) → the root.
pub(super) async fn merge(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    b: Result<Json<MergeBody>, JsonRejection>,
) -> ApiResult {
    let into = body(b)?.into;
    let bound = caller.bound(&state);
    let root = mem(&state, move |m| {
        check_entity_owner(m, &id, bound.as_deref())?;
        check_entity_owner(m, &into, bound.as_deref())?;
        m.entities().merge(&id, &into, caller.actor())
    })
    .await?;
    Ok(json_ok(&root))
}

/// `POST /api/memory/entities/{id}/unmerge` → the entity as restored.
pub(super) async fn unmerge(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult {
    let bound = caller.bound(&state);
    let e = mem(&state, move |m| {
        check_entity_owner(m, &id, bound.as_deref())?;
        m.entities().unmerge(&id, caller.actor())
    })
    .await?;
    Ok(json_ok(&e))
}

/// Refuses (as not found) an entity of another user than `bound` (`None`: any user).
fn check_entity_owner(m: &Memory, id: &str, bound: Option<&str>) -> mindgate_memory::Result<()> {
    match bound {
        Some(user) if m.entities().get(id)?.user_id != user => Err(MemoryError::NotFound {
            what: "entity",
            id: id.to_owned(),
        }),
        _ => Ok(()),
    }
}
