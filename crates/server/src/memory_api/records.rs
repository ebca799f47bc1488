//! Reads of records of any kind: the users, a user's counters, filtered lists, one record
//! with its viewer link, its history, the quarantine queue.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use mindgate_memory::agent;
use mindgate_memory::{ItemFilter, MemoryStatus, MemoryStore};
use serde::Deserialize;
use serde_json::json;

use super::{ApiResult, Caller, UserQuery, json_ok, kind_arg, mem, named, user_arg};
use crate::error::ApiError;
use crate::request::query;
use crate::state::AppState;

/// `GET /api/memory/users` → `{users: [...]}`
pub(super) async fn users(State(state): State<AppState>) -> ApiResult {
    let users = mem(&state, |m| m.users()).await?;
    Ok(named("users", &users))
}

/// `GET /api/memory/metadata?userId=` → `StatusView`
pub(super) async fn metadata(
    State(state): State<AppState>,
    caller: Caller,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, caller, query(q)?.user_id)?;
    let view = mem(&state, move |m| agent::status(m, &user)).await?;
    Ok(json_ok(&view))
}

/// Query of `GET /api/memory/records`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordsQuery {
    user_id: Option<String>,
    agent_id: Option<String>,
    session_id: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    include_deleted: Option<bool>,
    include_superseded: Option<bool>,
    limit: Option<usize>,
    offset: Option<usize>,
}

/// `GET /api/memory/records?userId=&kind=&status=…` → `{records: [...]}`
pub(super) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: Result<Query<RecordsQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let kind = q
        .kind
        .as_deref()
        .filter(|k| !k.is_empty())
        .map(|k| kind_arg("kind", k))
        .transpose()?;
    let status = match q.status.as_deref() {
        None | Some("") => None,
        Some(s) => Some(MemoryStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!("unknown status '{s}' (active, quarantined)"))
        })?),
    };
    let filter = ItemFilter {
        user_id: Some(user_arg(&state, caller, q.user_id)?),
        agent_id: q.agent_id.filter(|a| !a.is_empty()),
        session_id: q.session_id.filter(|s| !s.is_empty()),
        kind,
        status,
        include_deleted: q.include_deleted.unwrap_or(false),
        include_superseded: q.include_superseded.unwrap_or(false),
        open_conflicts: false,
        limit: q.limit,
        offset: q.offset,
    };
    let records = mem(&state, move |m| m.list_items(&filter)).await?;
    Ok(named("records", &records))
}

/// `GET /api/memory/records/{id}` → the record (any kind, any state) and its `link`.
pub(super) async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult {
    let bound = caller.bound(&state);
    let item = mem(&state, move |m| {
        agent::check_owner(m, &id, bound.as_deref())?;
        m.get_item(&id)
    })
    .await?;
    let link = agent::viewer_route(item.record().kind, item.id());
    Ok(json_ok(&json!({ "record": item, "link": link })))
}

/// `GET /api/memory/records/{id}/history` → `{chain, events}`
pub(super) async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult {
    let bound = caller.bound(&state);
    let h = mem(&state, move |m| {
        agent::check_owner(m, &id, bound.as_deref())?;
        agent::history(m, &id)
    })
    .await?;
    Ok(json_ok(&h))
}

/// Query of `GET /api/memory/records/{id}/belief`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BeliefQuery {
    as_of: Option<String>,
    known_at: Option<String>,
}

/// `GET /api/memory/records/{id}/belief?asOf=&knownAt=` → `FactAt`: the versions of a
/// fact's chain believed at `knownAt` and the one valid at `asOf` (both default now).
pub(super) async fn belief(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<BeliefQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let as_of = q.as_of.filter(|t| !t.is_empty());
    let known_at = q.known_at.filter(|t| !t.is_empty());
    let at = mem(&state, move |m| {
        m.fact_at(&id, as_of.as_deref(), known_at.as_deref())
    })
    .await?;
    Ok(json_ok(&at))
}

/// `GET /api/memory/quarantine?userId=&limit=` → `{records}` (every user without `userId`).
pub(super) async fn quarantine(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let user = q.user_id.filter(|u| !u.is_empty());
    let limit = q.limit;
    let records = mem(&state, move |m| m.quarantine_queue(user.as_deref(), limit)).await?;
    Ok(named("records", &records))
}

/// `GET /api/memory/conflicts?userId=&limit=` → `{records}`: live facts whose conflicts
/// wait for a person's decision, oldest first (every user without `userId`).
pub(super) async fn conflicts(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let user = q.user_id.filter(|u| !u.is_empty());
    let limit = q.limit;
    let records = mem(&state, move |m| m.open_conflicts(user.as_deref(), limit)).await?;
    Ok(named("records", &records))
}
