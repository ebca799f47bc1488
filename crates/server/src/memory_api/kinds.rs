//! The per-kind routes: the lists of episodes, procedures and insights (one handler, a
//! table of paths) and the writes of episodes, procedures and insights.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::routing::{MethodRouter, get};
use mindgate_memory::agent;
use mindgate_memory::{
    EpisodicMemory, InsightMemory, MemoryKind, MemoryStore, NewEpisode, NewInsight, NewRule,
    ProceduralMemory,
};

use super::{ApiResult, Caller, UserQuery, created, mem, named, user_arg};
use crate::request::{body, query};
use crate::state::AppState;

/// The list routes, one per kind: `GET <path>?userId=&includeQuarantined=&limit=` →
/// `{records}`.
pub(super) const LISTS: [(&str, MemoryKind); 3] = [
    ("/api/memory/episodes", MemoryKind::Episodic),
    ("/api/memory/procedures", MemoryKind::Procedural),
    ("/api/memory/insights", MemoryKind::Insight),
];

/// `GET` of the records of `kind`.
pub(super) fn list_route(kind: MemoryKind) -> MethodRouter<AppState> {
    get(
        move |State(state): State<AppState>,
              caller: Caller,
              q: Result<Query<UserQuery>, QueryRejection>| async move {
            list(&state, caller, q, kind).await
        },
    )
}

async fn list(
    state: &AppState,
    caller: Caller,
    q: Result<Query<UserQuery>, QueryRejection>,
    kind: MemoryKind,
) -> ApiResult {
    let q = query(q)?;
    let user = user_arg(state, caller, q.user_id)?;
    let include = q.include_quarantined.unwrap_or(false);
    let limit = q.limit;
    let records = mem(state, move |m| {
        agent::list_kind(m, &user, kind, include, limit)
    })
    .await?;
    Ok(named("records", &records))
}

/// `POST /api/memory/episodes` (body: `NewEpisode`; `by` is the caller) → the episode (201).
pub(super) async fn put_episode(
    State(state): State<AppState>,
    caller: Caller,
    b: Result<Json<NewEpisode>, JsonRejection>,
) -> ApiResult {
    let mut e = body(b)?;
    e.meta.by = caller.actor();
    agent::check_user_bound(Some(&e.meta.scope.user_id), caller.bound(&state).as_deref())
        .and_then(|()| agent::check_voice(e.meta.by, e.meta.provenance))
        .map_err(super::memory_error)?;
    let stored = mem(&state, move |m| m.episodic().put(e)).await?;
    Ok(created(&stored))
}

/// `POST /api/memory/procedures` (body: `NewRule`; `by` is the caller) → the rule (201).
pub(super) async fn add_procedure(
    State(state): State<AppState>,
    caller: Caller,
    b: Result<Json<NewRule>, JsonRejection>,
) -> ApiResult {
    let mut r = body(b)?;
    r.meta.by = caller.actor();
    agent::check_user_bound(Some(&r.meta.scope.user_id), caller.bound(&state).as_deref())
        .and_then(|()| agent::check_voice(r.meta.by, r.meta.provenance))
        .map_err(super::memory_error)?;
    let stored = mem(&state, move |m| m.procedural().add(r)).await?;
    Ok(created(&stored))
}

/// `POST /api/memory/insights` (body: `NewInsight`; `by` is the caller) → the insight (201);
/// it lands quarantined with provenance `reflection` unless the body names another.
pub(super) async fn add_insight(
    State(state): State<AppState>,
    caller: Caller,
    b: Result<Json<NewInsight>, JsonRejection>,
) -> ApiResult {
    let mut i = body(b)?;
    i.meta.by = caller.actor();
    agent::check_user_bound(Some(&i.meta.scope.user_id), caller.bound(&state).as_deref())
        .and_then(|()| agent::check_voice(i.meta.by, i.meta.provenance))
        .map_err(super::memory_error)?;
    let stored = mem(&state, move |m| m.insights().add(i)).await?;
    Ok(created(&stored))
}
