//! `/api/memory/…`: the agent memory over HTTP (`docs/http-api.md`, "Memory").
//!
//! Handlers only translate: arguments are the memory crate's own types
//! (`mindgate_memory::agent`), every rule is the store's. Reads follow the server's read
//! rules; every mutation (POST / PUT / DELETE) needs the control token (the guard checks
//! it); bodies are capped at [`MAX_MEMORY_BODY`] and query strings at [`MAX_MEMORY_QUERY`].
//! Errors are `{"error": "…", "code": "…"}`: 400 bad input, 404 unknown id, 409 a state
//! conflict (read-only block, not quarantined, flagged text), 503 when the memory store
//! cannot be opened (its message says why).
//!
//! One module per resource: [`search`] (hybrid search), `records` (reads of any kind:
//! users, counters, lists, one record, history, the quarantine queue, open conflicts),
//! `facts` (the fact lifecycle: remember, supersede, forget, validate, reject, a conflict
//! decision), `kinds` (the per-kind lists
//! and writes: episodes, procedures, insights), `procedures` (induction from a task graph,
//! outcomes of reuses), `blocks` (working-memory blocks), `sessions` (session messages),
//! `consolidate` (a session through the chat model), `entities` (the entity graph) and `feed` (the change
//! feed). This file holds the router and what the handlers share.

mod blocks;
mod consolidate;
mod entities;
mod facts;
mod feed;
mod kinds;
mod procedures;
mod records;
mod search;
mod sessions;

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mindgate_memory::agent;
use mindgate_memory::{Actor, Memory, MemoryError, MemoryKind};
use serde::Deserialize;
use serde_json::json;

use crate::error::ApiError;
use crate::guard::principal::Principal;
use crate::state::AppState;

pub use blocks::{AppendBody, BlockBody, ReplaceBody};
pub use consolidate::ConsolidateBody;
pub use entities::MergeBody;
pub use facts::{ReasonBody, SupersedeBody, ValidateBody};
pub use feed::FeedQuery;
pub use records::{BeliefQuery, RecordsQuery};
pub use search::SearchQuery;
pub use sessions::{MessagesQuery, PushBody};

/// Largest request body of a memory route.
pub const MAX_MEMORY_BODY: usize = 256 * 1024;
/// Longest query string of a memory route.
pub const MAX_MEMORY_QUERY: usize = 8 * 1024;

type ApiResult<T = Response> = Result<T, ApiError>;

/// The memory routes (merged into the server's router).
pub(crate) fn router(state: &AppState) -> Router<AppState> {
    let _ = state;
    let mut routes = Router::new()
        .route("/api/memory/search", get(search::search))
        .route("/api/memory/users", get(records::users))
        .route("/api/memory/metadata", get(records::metadata))
        .route("/api/memory/records", get(records::list))
        .route("/api/memory/records/{id}", get(records::get))
        .route("/api/memory/records/{id}/history", get(records::history))
        .route("/api/memory/records/{id}/belief", get(records::belief))
        .route("/api/memory/records/{id}/supersede", post(facts::supersede))
        .route("/api/memory/records/{id}/forget", post(facts::forget))
        .route("/api/memory/records/{id}/validate", post(facts::validate))
        .route("/api/memory/records/{id}/reject", post(facts::reject))
        .route(
            "/api/memory/records/{id}/conflict",
            post(facts::decide_conflict),
        )
        .route("/api/memory/facts", post(facts::remember))
        .route("/api/memory/quarantine", get(records::quarantine))
        .route("/api/memory/conflicts", get(records::conflicts))
        .route("/api/memory/blocks", get(blocks::list))
        .route(
            "/api/memory/blocks/{label}",
            get(blocks::get).put(blocks::put).delete(blocks::delete),
        )
        .route("/api/memory/blocks/{label}/append", post(blocks::append))
        .route("/api/memory/blocks/{label}/replace", post(blocks::replace))
        .route(
            "/api/memory/sessions/{session_id}/messages",
            get(sessions::list).post(sessions::push),
        )
        .route(
            "/api/memory/sessions/{session_id}/consolidate",
            post(consolidate::consolidate),
        )
        .route("/api/memory/episodes", post(kinds::put_episode))
        .route("/api/memory/procedures", post(kinds::add_procedure))
        .route("/api/memory/procedures/induce", post(procedures::induce))
        .route(
            "/api/memory/procedures/{id}/outcome",
            post(procedures::outcome),
        )
        .route("/api/memory/insights", post(kinds::add_insight))
        .route("/api/memory/entities", get(entities::list))
        .route("/api/memory/entities/{id}", get(entities::get))
        .route("/api/memory/entities/{id}/merge", post(entities::merge))
        .route("/api/memory/entities/{id}/unmerge", post(entities::unmerge))
        .route("/api/memory/feed", get(feed::feed));
    for (path, kind) in kinds::LISTS {
        routes = routes.route(path, kinds::list_route(kind));
    }
    routes
        .layer(DefaultBodyLimit::max(MAX_MEMORY_BODY))
        .layer(middleware::from_fn(bound_query))
}

async fn bound_query(req: Request, next: Next) -> Response {
    if req
        .uri()
        .query()
        .is_some_and(|q| q.len() > MAX_MEMORY_QUERY)
    {
        return ApiError::bad_request(format!(
            "the query string is longer than {MAX_MEMORY_QUERY} bytes"
        ))
        .into_response();
    }
    next.run(req).await
}

/// Wakes the feeds after a mutation through this server (others are found by polling).
pub(crate) async fn notify_changes(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let mutating = !matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    let res = next.run(req).await;
    if mutating && res.status().is_success() {
        state.memory_changed.notify_waiters();
    }
    res
}

/// The HTTP form of a memory error: the code the memory crate gives it, with the memory
/// tools' finer reason.
fn memory_error(e: MemoryError) -> ApiError {
    let message = mindgate_errors::error_chain(&e);
    if !agent::is_caller_error(&e) {
        tracing::warn!(error = %message, "memory store error");
    }
    ApiError::new(e.code(), message).with_reason(agent::error_code(&e))
}

/// Runs `f` on the blocking pool against the (lazily opened) memory store.
async fn mem<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&Memory) -> mindgate_memory::Result<T> + Send + 'static,
) -> ApiResult<T> {
    let lazy = state.memory.clone();
    match tokio::task::spawn_blocking(move || {
        let store = lazy.get()?;
        f(&store)
    })
    .await
    {
        Ok(r) => r.map_err(memory_error),
        Err(e) => Err(ApiError::internal(format!("memory task failed: {e}"))),
    }
}

/// `v` as the JSON body.
fn json_ok<T: serde::Serialize>(v: &T) -> Response {
    Json(v).into_response()
}

/// `{"<key>": v}`: a list (or one value) under the name the route documents.
fn named<T: serde::Serialize>(key: &str, v: &T) -> Response {
    Json(json!({ key: v })).into_response()
}

/// `v` as the JSON body of a `201 Created`.
fn created<T: serde::Serialize>(v: &T) -> Response {
    (axum::http::StatusCode::CREATED, Json(v)).into_response()
}

/// `{"ok": true, "id": id}`: the answer of a mutation that returns nothing.
fn ok_id(id: &str) -> Response {
    Json(json!({ "ok": true, "id": id })).into_response()
}

fn kind_arg(field: &str, s: &str) -> ApiResult<MemoryKind> {
    MemoryKind::parse(s).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown {field} '{s}' (semantic, episodic, procedural, insight, session)"
        ))
    })
}

/// The user a request names, else the server's `--memory-user`; for a caller bound to
/// one user (the agent token on a server with `--memory-user`), another user is refused.
fn user_arg(state: &AppState, caller: Caller, user: Option<String>) -> ApiResult<String> {
    let user = user
        .filter(|u| !u.is_empty())
        .or_else(|| state.config.memory_user.clone())
        .ok_or_else(|| {
            ApiError::bad_request(
                "userId is required (or start the server with --memory-user NAME)",
            )
            .with_reason("bad_argument")
        })?;
    agent::check_user_bound(Some(&user), caller.bound(state).as_deref()).map_err(memory_error)?;
    Ok(user)
}

/// Who makes a memory request: the guard's [`Principal`] (anonymous when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caller(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Caller(
            parts
                .extensions
                .get::<Principal>()
                .copied()
                .unwrap_or(Principal::Anonymous),
        ))
    }
}

impl Caller {
    /// Who its writes are recorded as: `user` for the person, `agent` for anyone else
    /// (never more than an agent without the control token).
    fn actor(self) -> Actor {
        match self.0 {
            Principal::Person => Actor::User,
            Principal::Agent | Principal::Anonymous => Actor::Agent,
        }
    }

    /// Who its searches recall as (`mindgate_memory::recall`): nobody for a request
    /// without a token, so such a read changes nothing.
    fn recall_by(self) -> Option<Actor> {
        self.0.actor()
    }

    /// The one user it may act for: the server's `--memory-user` for the agent token; none
    /// (any user) for the person, and for a tokenless read (reads on a loopback server are
    /// open, as every read of the viewer is).
    fn bound(self, state: &AppState) -> Option<String> {
        match self.0 {
            Principal::Agent => state.config.memory_user.clone(),
            Principal::Person | Principal::Anonymous => None,
        }
    }
}

/// Query naming a user.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserQuery {
    user_id: Option<String>,
    include_quarantined: Option<bool>,
    limit: Option<usize>,
}
