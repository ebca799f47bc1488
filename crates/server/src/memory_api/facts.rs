//! The fact lifecycle: remember, supersede, forget, and a person's review of quarantined
//! records (validate, reject) and of conflicting facts (a decision: supersede the old one,
//! keep both, reject). Writes are recorded as by the caller (`user` with the control token,
//! `agent` with the agent token); validate, reject and a conflict decision are a person's
//! acts (the guard answers the agent token 403).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use mindgate_memory::agent::{self, RememberArgs};
use mindgate_memory::{Actor, DecideArgs, Memory, MemoryStore, SemanticMemory};
use serde::Deserialize;

use super::{ApiResult, Caller, created, json_ok, mem, ok_id};
use crate::request::body;
use crate::state::AppState;

/// `POST /api/memory/facts` (body: `RememberArgs`) → the stored fact (201).
pub(super) async fn remember(
    State(state): State<AppState>,
    caller: Caller,
    b: Result<Json<RememberArgs>, JsonRejection>,
) -> ApiResult {
    let args = body(b)?;
    let user = state.config.memory_user.clone();
    let bound = caller.bound(&state);
    let fact = mem(&state, move |m| {
        args.scope.check_bound(bound.as_deref())?;
        agent::remember(m, args, user.as_deref(), caller.actor())
    })
    .await?;
    Ok(created(&fact))
}

/// Body of `POST …/supersede`: the new version and the reason.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SupersedeBody {
    reason: String,
    #[serde(flatten)]
    fact: RememberArgs,
}

/// `POST /api/memory/records/{id}/supersede` → the new fact (201).
pub(super) async fn supersede(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    b: Result<Json<SupersedeBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let args = agent::SupersedeArgs {
        old_id: id,
        reason: b.reason,
        fact: b.fact,
    };
    let user = state.config.memory_user.clone();
    let bound = caller.bound(&state);
    let fact = mem(&state, move |m| {
        args.fact.scope.check_bound(bound.as_deref())?;
        agent::check_owner(m, &args.old_id, bound.as_deref())?;
        agent::supersede(m, args, user.as_deref(), caller.actor())
    })
    .await?;
    Ok(created(&fact))
}

/// Body carrying a reason.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReasonBody {
    reason: String,
}

/// `POST /api/memory/records/{id}/forget` (`{reason}`) → `{ok, id}`
pub(super) async fn forget(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    b: Result<Json<ReasonBody>, JsonRejection>,
) -> ApiResult {
    let reason = body(b)?.reason;
    let bound = caller.bound(&state);
    let shown = id.clone();
    mem(&state, move |m| {
        agent::check_owner(m, &id, bound.as_deref())?;
        m.semantic().forget(&id, &reason, caller.actor())
    })
    .await?;
    Ok(ok_id(&shown))
}

/// `POST /api/memory/records/{id}/reject` (`{reason}`) → `{ok, id}`
pub(super) async fn reject(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<ReasonBody>, JsonRejection>,
) -> ApiResult {
    with_reason(&state, id, b, |m, id, reason| {
        m.reject(id, reason, Actor::User)
    })
    .await
}

/// Applies `op(store, id, reason)` with the body's reason → `{ok, id}`.
async fn with_reason(
    state: &AppState,
    id: String,
    b: Result<Json<ReasonBody>, JsonRejection>,
    op: fn(&Memory, &str, &str) -> mindgate_memory::Result<()>,
) -> ApiResult {
    let reason = body(b)?.reason;
    let shown = id.clone();
    mem(state, move |m| op(m, &id, &reason)).await?;
    Ok(ok_id(&shown))
}

/// Body of `POST …/validate`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValidateBody {
    #[serde(default)]
    force: bool,
}

/// `POST /api/memory/records/{id}/validate` (`{force?}`) → the promoted record.
pub(super) async fn validate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<ValidateBody>, JsonRejection>,
) -> ApiResult {
    // An empty body means `{}`.
    let force = match b {
        Err(JsonRejection::MissingJsonContentType(_)) => false,
        other => body(other)?.force,
    };
    let item = mem(&state, move |m| agent::validate(m, &id, force, Actor::User)).await?;
    Ok(json_ok(&item))
}

/// `POST /api/memory/records/{id}/conflict` (`DecideArgs`: `{decision, reason?, force?}`)
/// → `ConflictOutcome` (`{decided, fact, others}`): a person's decision on the fact's open
/// conflicts (`mindgate_memory::rules::conflicts::decide`).
pub(super) async fn decide_conflict(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<DecideArgs>, JsonRejection>,
) -> ApiResult {
    let args = body(b)?;
    let outcome = mem(&state, move |m| m.decide_conflict(&id, &args, Actor::User)).await?;
    Ok(json_ok(&outcome))
}
