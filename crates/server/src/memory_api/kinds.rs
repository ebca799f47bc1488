//! The per-kind routes: the lists of episodes, procedures and insights (one handler, a
//! table of paths) and the writes of episodes, procedures and insights.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::routing::{MethodRouter, get};
use mindgate_memory::agent;
use mindgate_memory::{
    Actor, EpisodicMemory, InsightMemory, Memory, MemoryKind, MemoryStore, NewEpisode, NewInsight,
    NewRule, ProceduralMemory,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ApiResult, UserQuery, created, mem, named, user_arg};
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
        move |State(state): State<AppState>, q: Result<Query<UserQuery>, QueryRejection>| async move {
            list(&state, q, kind).await
        },
    )
}

async fn list(
    state: &AppState,
    q: Result<Query<UserQuery>, QueryRejection>,
    kind: MemoryKind,
) -> ApiResult {
    let q = query(q)?;
    let user = user_arg(state, q.user_id)?;
    let include = q.include_quarantined.unwrap_or(false);
    let limit = q.limit;
    let records = mem(state, move |m| {
        agent::list_kind(m, &user, kind, include, limit)
    })
    .await?;
    Ok(named("records", &records))
}

/// `POST /api/memory/episodes` (body: `NewEpisode`; `by` is `user`) → the episode (201).
pub(super) async fn put_episode(
    State(state): State<AppState>,
    b: Result<Json<NewEpisode>, JsonRejection>,
) -> ApiResult {
    create(&state, b, |m, mut e| {
        e.meta.by = Actor::User;
        m.episodic().put(e)
    })
    .await
}

/// `POST /api/memory/procedures` (body: `NewRule`; `by` is `user`) → the rule (201).
pub(super) async fn add_procedure(
    State(state): State<AppState>,
    b: Result<Json<NewRule>, JsonRejection>,
) -> ApiResult {
    create(&state, b, |m, mut r| {
        r.meta.by = Actor::User;
        m.procedural().add(r)
    })
    .await
}

/// `POST /api/memory/insights` (body: `NewInsight`; `by` is `user`) → the insight (201);
/// it lands quarantined with provenance `reflection` unless the body names another.
pub(super) async fn add_insight(
    State(state): State<AppState>,
    b: Result<Json<NewInsight>, JsonRejection>,
) -> ApiResult {
    create(&state, b, |m, mut i| {
        i.meta.by = Actor::User;
        m.insights().add(i)
    })
    .await
}

/// Writes the body with `write` → what was stored (201).
async fn create<B, R>(
    state: &AppState,
    b: Result<Json<B>, JsonRejection>,
    write: fn(&Memory, B) -> mindgate_memory::Result<R>,
) -> ApiResult
where
    B: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
{
    let new = body(b)?;
    let stored = mem(state, move |m| write(m, new)).await?;
    Ok(created(&stored))
}
