//! Procedures induced from task graphs: `POST /api/memory/procedures/induce` turns a
//! succeeded coding-agent task (resolved as `/task-graph/api/task?id=` resolves it) into a
//! quarantined induced procedure, or finds the one with (nearly) the same steps;
//! `POST /api/memory/procedures/{id}/outcome` records a verified reuse (the store promotes a
//! quarantined induced procedure at its threshold). The rules are
//! `mindgate_memory::induction`'s (`docs/memory-induction.md`).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use mindgate_memory::agent;
use mindgate_memory::induction::{self, InduceArgs, OutcomeArgs};

use super::{ApiResult, Caller, created, json_ok, mem, memory_error};
use crate::error::ApiError;
use crate::request::body;
use crate::state::AppState;

/// `POST /api/memory/procedures/induce` (`{taskId, userId?, agentId?, sessionId?}`) →
/// `InduceOutcome` `{procedure, created, matched?, taskId, link}`: 201 when a procedure was
/// stored, 200 when an existing one matched; 409 (`not_inducible`) for a task that did not
/// succeed, naming why; 404 for an unknown task.
pub(super) async fn induce(
    State(state): State<AppState>,
    caller: Caller,
    b: Result<Json<InduceArgs>, JsonRejection>,
) -> ApiResult {
    let args = body(b)?;
    let task_id = args.task_id.trim().to_owned();
    if task_id.is_empty() {
        return Err(ApiError::bad_request("taskId is required").with_reason("bad_argument"));
    }
    args.scope
        .check_bound(caller.bound(&state).as_deref())
        .map_err(memory_error)?;
    let scope = args
        .scope
        .resolve(state.config.memory_user.as_deref())
        .map_err(memory_error)?;
    let task_graphs = state.task_graphs.clone();
    let graph = tokio::task::spawn_blocking(move || task_graphs.typed_graph(&task_id))
        .await
        .map_err(|e| ApiError::internal(format!("task graph read failed: {e}")))??;
    let out = mem(&state, move |m| {
        induction::induce(m, &graph, scope, caller.actor())
    })
    .await?;
    Ok(if out.created {
        created(&out)
    } else {
        json_ok(&out)
    })
}

/// `POST /api/memory/procedures/{id}/outcome` (`{success}`) → `OutcomeView`
/// `{procedure, promoted, promoteAfter}`.
pub(super) async fn outcome(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    b: Result<Json<OutcomeArgs>, JsonRejection>,
) -> ApiResult {
    let args = body(b)?;
    let bound = caller.bound(&state);
    let view = mem(&state, move |m| {
        agent::check_owner(m, &id, bound.as_deref())?;
        induction::record_outcome(m, &id, &args, caller.actor())
    })
    .await?;
    Ok(json_ok(&view))
}
