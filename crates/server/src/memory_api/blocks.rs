//! Working-memory blocks: list, read, create or replace, delete, append, replace text.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use mindgate_memory::{MemoryStore, NewBlock, Scope, WorkingMemory};
use serde::Deserialize;
use serde_json::json;

use super::{ApiResult, Caller, UserQuery, json_ok, mem, named, user_arg};
use crate::request::{body, query};
use crate::state::AppState;

/// `GET /api/memory/blocks?userId=` → `{blocks}`
pub(super) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, caller, query(q)?.user_id)?;
    let blocks = mem(&state, move |m| m.working().list(&user)).await?;
    Ok(named("blocks", &blocks))
}

/// `GET /api/memory/blocks/{label}?userId=` → the block.
pub(super) async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(label): Path<String>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, caller, query(q)?.user_id)?;
    let block = mem(&state, move |m| m.working().get(&user, &label)).await?;
    Ok(json_ok(&block))
}

/// Body of `PUT /api/memory/blocks/{label}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockBody {
    user_id: Option<String>,
    agent_id: Option<String>,
    session_id: Option<String>,
    value: String,
    description: Option<String>,
    char_limit: Option<u32>,
    #[serde(default)]
    read_only: bool,
}

/// `PUT /api/memory/blocks/{label}` → the block (created or replaced).
pub(super) async fn put(
    State(state): State<AppState>,
    caller: Caller,
    Path(label): Path<String>,
    b: Result<Json<BlockBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let scope = Scope {
        user_id: user_arg(&state, caller, b.user_id)?,
        agent_id: b.agent_id,
        session_id: b.session_id,
    };
    let new = NewBlock {
        scope,
        label,
        description: b.description,
        value: b.value,
        char_limit: b.char_limit,
        read_only: b.read_only,
        by: caller.actor(),
    };
    let block = mem(&state, move |m| m.working().upsert(new)).await?;
    Ok(json_ok(&block))
}

/// `DELETE /api/memory/blocks/{label}?userId=` → `{ok}`
pub(super) async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(label): Path<String>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, caller, query(q)?.user_id)?;
    mem(&state, move |m| {
        m.working().delete(&user, &label, caller.actor())
    })
    .await?;
    Ok(json_ok(&json!({ "ok": true })))
}

/// Body of `POST …/append`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppendBody {
    user_id: Option<String>,
    text: String,
}

/// `POST /api/memory/blocks/{label}/append` (`{userId?, text}`) → the block.
pub(super) async fn append(
    State(state): State<AppState>,
    caller: Caller,
    Path(label): Path<String>,
    b: Result<Json<AppendBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let user = user_arg(&state, caller, b.user_id)?;
    let block = mem(&state, move |m| {
        m.working().append(&user, &label, &b.text, caller.actor())
    })
    .await?;
    Ok(json_ok(&block))
}

/// Body of `POST …/replace`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplaceBody {
    user_id: Option<String>,
    old: String,
    new: String,
}

/// `POST /api/memory/blocks/{label}/replace` (`{userId?, old, new}`) → the block.
pub(super) async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    Path(label): Path<String>,
    b: Result<Json<ReplaceBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let user = user_arg(&state, caller, b.user_id)?;
    let block = mem(&state, move |m| {
        m.working()
            .replace(&user, &label, &b.old, &b.new, caller.actor())
    })
    .await?;
    Ok(json_ok(&block))
}
