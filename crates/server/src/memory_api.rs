//! `/api/memory/…`: the agent memory over HTTP (`docs/http-api.md`, "Memory").
//!
//! Handlers only translate: arguments are the memory crate's own types
//! (`mindgate_memory::agent`), every rule is the store's. Reads follow the server's read
//! rules; every mutation (POST / PUT / DELETE) needs the control token (the guard checks
//! it); bodies are capped at [`MAX_MEMORY_BODY`] and query strings at [`MAX_MEMORY_QUERY`].
//! Errors are `{"error": "…", "code": "…"}`: 400 bad input, 404 unknown id, 409 a state
//! conflict (read-only block, not quarantined, flagged text), 503 when the memory store
//! cannot be opened (its message says why).

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use mindgate_memory::agent::{self, HitView, RememberArgs};
use mindgate_memory::{
    Actor, DateRange, EntityGraph, EpisodicMemory, MemoryError, MemoryKind, MemorySearchOptions,
    MemoryStore, Message, NewBlock, NewEpisode, NewRule, ProceduralMemory, Scope, SearchMode,
    SemanticMemory, SessionMemory, SqliteMemory, WorkingMemory,
};
use serde::Deserialize;
use serde_json::json;

use mindgate_errors::ErrorCode;

use crate::error::ApiError;
use crate::state::AppState;

/// Largest request body of a memory route.
pub const MAX_MEMORY_BODY: usize = 256 * 1024;
/// Longest query string of a memory route.
pub const MAX_MEMORY_QUERY: usize = 8 * 1024;
/// Ledger rows sent per feed message batch.
const FEED_BATCH: usize = 200;
/// How often the feed looks for changes written by other processes (`mindgate mcp`).
const FEED_POLL: Duration = Duration::from_millis(250);

type ApiResult<T = Response> = Result<T, ApiError>;

/// The memory routes (merged into the server's router).
pub(crate) fn router(state: &AppState) -> Router<AppState> {
    let _ = state;
    Router::new()
        .route("/api/memory/search", get(search))
        .route("/api/memory/users", get(users))
        .route("/api/memory/metadata", get(metadata))
        .route("/api/memory/records", get(list_records))
        .route("/api/memory/records/{id}", get(get_record))
        .route("/api/memory/records/{id}/history", get(history))
        .route("/api/memory/records/{id}/supersede", post(supersede))
        .route("/api/memory/records/{id}/forget", post(forget))
        .route("/api/memory/records/{id}/validate", post(validate))
        .route("/api/memory/records/{id}/reject", post(reject))
        .route("/api/memory/facts", post(remember))
        .route("/api/memory/quarantine", get(quarantine))
        .route("/api/memory/blocks", get(list_blocks))
        .route(
            "/api/memory/blocks/{label}",
            get(get_block).put(put_block).delete(delete_block),
        )
        .route("/api/memory/blocks/{label}/append", post(append_block))
        .route("/api/memory/blocks/{label}/replace", post(replace_block))
        .route(
            "/api/memory/sessions/{session_id}/messages",
            get(list_messages).post(push_message),
        )
        .route("/api/memory/episodes", get(list_episodes).post(put_episode))
        .route(
            "/api/memory/procedures",
            get(list_procedures).post(add_procedure),
        )
        .route("/api/memory/insights", get(list_insights))
        .route("/api/memory/entities", get(list_entities))
        .route("/api/memory/entities/{id}", get(get_entity))
        .route("/api/memory/entities/{id}/merge", post(merge_entity))
        .route("/api/memory/entities/{id}/unmerge", post(unmerge_entity))
        .route("/api/memory/feed", get(feed))
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
    f: impl FnOnce(&SqliteMemory) -> mindgate_memory::Result<T> + Send + 'static,
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

fn query<T>(q: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    q.map(|Query(v)| v)
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))
}

fn body<T>(b: Result<Json<T>, JsonRejection>) -> ApiResult<T> {
    b.map(|Json(v)| v).map_err(|e| {
        ApiError::new(
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ErrorCode::TooLarge
            } else {
                ErrorCode::BadRequest
            },
            format!("bad JSON body: {}", e.body_text()),
        )
    })
}

fn json_ok<T: serde::Serialize>(v: &T) -> Response {
    Json(v).into_response()
}

fn csv(s: Option<&str>) -> Option<Vec<String>> {
    s.map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect()
    })
}

fn kind_arg(field: &str, s: &str) -> ApiResult<MemoryKind> {
    MemoryKind::parse(s).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown {field} '{s}' (semantic, episodic, procedural, insight, session)"
        ))
    })
}

fn user_arg(state: &AppState, user: Option<String>) -> ApiResult<String> {
    user.filter(|u| !u.is_empty())
        .or_else(|| state.config.memory_user.clone())
        .ok_or_else(|| {
            ApiError::bad_request(
                "userId is required (or start the server with --memory-user NAME)",
            )
            .with_reason("bad_argument")
        })
}

/// Query of `GET /api/memory/search`: every `MemorySearchOptions` field, flat
/// (`tags` and `kinds` comma-separated, `dateFrom` / `dateTo` for `dateRange`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQuery {
    query: Option<String>,
    user_id: Option<String>,
    agent_id: Option<String>,
    session_id: Option<String>,
    top_k: Option<usize>,
    tags: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    include_archived: Option<bool>,
    include_quarantined: Option<bool>,
    as_of: Option<String>,
    known_at: Option<String>,
    kinds: Option<String>,
    mode: Option<String>,
    candidate_pool: Option<usize>,
    vector_weight: Option<f64>,
    decay: Option<bool>,
    expand_entities: Option<bool>,
}

impl SearchQuery {
    fn options(self, state: &AppState) -> ApiResult<MemorySearchOptions> {
        let query = self.query.filter(|q| !q.trim().is_empty()).ok_or_else(|| {
            ApiError::bad_request("query is required").with_reason("bad_argument")
        })?;
        let kinds = match csv(self.kinds.as_deref()) {
            Some(list) => Some(
                list.iter()
                    .map(|k| kind_arg("kind", k))
                    .collect::<ApiResult<Vec<_>>>()?,
            ),
            None => None,
        };
        let mode = match self.mode.as_deref() {
            None | Some("") => None,
            Some("hybrid") => Some(SearchMode::Hybrid),
            Some("lexical") => Some(SearchMode::Lexical),
            Some("vector") => Some(SearchMode::Vector),
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "unknown mode '{other}' (hybrid, lexical, vector)"
                )));
            }
        };
        if let Some(w) = self.vector_weight
            && !(w.is_finite() && w >= 0.0)
        {
            return Err(ApiError::bad_request(
                "vectorWeight must be a finite number ≥ 0",
            ));
        }
        let date_range =
            (self.date_from.is_some() || self.date_to.is_some()).then_some(DateRange {
                from: self.date_from,
                to: self.date_to,
            });
        Ok(MemorySearchOptions {
            query,
            top_k: self.top_k,
            tags: csv(self.tags.as_deref()),
            date_range,
            include_archived: self.include_archived,
            include_quarantined: self.include_quarantined,
            as_of: self.as_of,
            known_at: self.known_at,
            user_id: Some(user_arg(state, self.user_id)?),
            agent_id: self.agent_id.filter(|a| !a.is_empty()),
            session_id: self.session_id.filter(|s| !s.is_empty()),
            kinds,
            mode,
            candidate_pool: self.candidate_pool,
            vector_weight: self.vector_weight,
            fusion: None,
            decay: self.decay,
            expand_entities: self.expand_entities,
        })
    }
}

/// `GET /api/memory/search` → `{hits: [HitView…]}`
async fn search(
    State(state): State<AppState>,
    q: Result<Query<SearchQuery>, QueryRejection>,
) -> ApiResult {
    let options = query(q)?.options(&state)?;
    let hits: Vec<HitView> = mem(&state, move |m| agent::search(m, &options)).await?;
    Ok(Json(json!({ "hits": hits })).into_response())
}

/// `GET /api/memory/users` → `{users: [...]}`
async fn users(State(state): State<AppState>) -> ApiResult {
    let users = mem(&state, |m| m.users()).await?;
    Ok(Json(json!({ "users": users })).into_response())
}

/// Query naming a user.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserQuery {
    user_id: Option<String>,
    include_quarantined: Option<bool>,
    limit: Option<usize>,
}

/// `GET /api/memory/metadata?userId=` → `StatusView`
async fn metadata(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, query(q)?.user_id)?;
    let view = mem(&state, move |m| agent::status(m, &user)).await?;
    Ok(json_ok(&view))
}

/// Query of `GET /api/memory/records`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordsQuery {
    user_id: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    include_deleted: Option<bool>,
    include_superseded: Option<bool>,
    limit: Option<usize>,
    offset: Option<usize>,
}

/// `GET /api/memory/records?userId=&kind=&status=…` → `{records: [...]}`
async fn list_records(
    State(state): State<AppState>,
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
        Some(s) => Some(mindgate_memory::MemoryStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!("unknown status '{s}' (active, quarantined)"))
        })?),
    };
    let filter = mindgate_memory::ItemFilter {
        user_id: Some(user_arg(&state, q.user_id)?),
        kind,
        status,
        include_deleted: q.include_deleted.unwrap_or(false),
        include_superseded: q.include_superseded.unwrap_or(false),
        limit: q.limit,
        offset: q.offset,
    };
    let records = mem(&state, move |m| m.list_items(&filter)).await?;
    Ok(Json(json!({ "records": records })).into_response())
}

/// `GET /api/memory/records/{id}` → the record (any kind, any state) and its `link`.
async fn get_record(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let item = mem(&state, move |m| m.get_item(&id)).await?;
    let link = agent::viewer_route(item.record().kind, item.id());
    Ok(Json(json!({ "record": item, "link": link })).into_response())
}

/// `GET /api/memory/records/{id}/history` → `{chain, events}`
async fn history(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let h = mem(&state, move |m| agent::history(m, &id)).await?;
    Ok(json_ok(&h))
}

/// `POST /api/memory/facts` (body: `RememberArgs`) → the stored fact (201).
async fn remember(
    State(state): State<AppState>,
    b: Result<Json<RememberArgs>, JsonRejection>,
) -> ApiResult {
    let args = body(b)?;
    let user = state.config.memory_user.clone();
    let fact = mem(&state, move |m| {
        agent::remember(m, args, user.as_deref(), Actor::User)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(fact)).into_response())
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
async fn supersede(
    State(state): State<AppState>,
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
    let fact = mem(&state, move |m| {
        agent::supersede(m, args, user.as_deref(), Actor::User)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(fact)).into_response())
}

/// Body carrying a reason.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReasonBody {
    reason: String,
}

/// `POST /api/memory/records/{id}/forget` (`{reason}`) → `{ok, id}`
async fn forget(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<ReasonBody>, JsonRejection>,
) -> ApiResult {
    let reason = body(b)?.reason;
    let shown = id.clone();
    mem(&state, move |m| {
        m.semantic().forget(&id, &reason, Actor::User)
    })
    .await?;
    Ok(Json(json!({ "ok": true, "id": shown })).into_response())
}

/// Body of `POST …/validate`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValidateBody {
    #[serde(default)]
    force: bool,
}

/// `POST /api/memory/records/{id}/validate` (`{force?}`) → the promoted record.
async fn validate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<ValidateBody>, JsonRejection>,
) -> ApiResult {
    // An empty body means `{}`.
    let force = match b {
        Err(JsonRejection::MissingJsonContentType(_)) => false,
        other => body(other)?.force,
    };
    let item = mem(&state, move |m| m.validate(&id, force, Actor::User)).await?;
    Ok(json_ok(&item))
}

/// `POST /api/memory/records/{id}/reject` (`{reason}`) → `{ok, id}`
async fn reject(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<ReasonBody>, JsonRejection>,
) -> ApiResult {
    let reason = body(b)?.reason;
    let shown = id.clone();
    mem(&state, move |m| m.reject(&id, &reason, Actor::User)).await?;
    Ok(Json(json!({ "ok": true, "id": shown })).into_response())
}

/// `GET /api/memory/quarantine?userId=&limit=` → `{records}` (every user without `userId`).
async fn quarantine(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let user = q.user_id.filter(|u| !u.is_empty());
    let limit = q.limit;
    let records = mem(&state, move |m| m.quarantine_queue(user.as_deref(), limit)).await?;
    Ok(Json(json!({ "records": records })).into_response())
}

/// `GET /api/memory/blocks?userId=` → `{blocks}`
async fn list_blocks(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, query(q)?.user_id)?;
    let blocks = mem(&state, move |m| m.working().list(&user)).await?;
    Ok(Json(json!({ "blocks": blocks })).into_response())
}

/// `GET /api/memory/blocks/{label}?userId=` → the block.
async fn get_block(
    State(state): State<AppState>,
    Path(label): Path<String>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, query(q)?.user_id)?;
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
async fn put_block(
    State(state): State<AppState>,
    Path(label): Path<String>,
    b: Result<Json<BlockBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let scope = Scope {
        user_id: user_arg(&state, b.user_id)?,
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
        by: Actor::User,
    };
    let block = mem(&state, move |m| m.working().upsert(new)).await?;
    Ok(json_ok(&block))
}

/// `DELETE /api/memory/blocks/{label}?userId=` → `{ok}`
async fn delete_block(
    State(state): State<AppState>,
    Path(label): Path<String>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, query(q)?.user_id)?;
    mem(&state, move |m| {
        m.working().delete(&user, &label, Actor::User)
    })
    .await?;
    Ok(Json(json!({ "ok": true })).into_response())
}

/// Body of `POST …/append`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppendBody {
    user_id: Option<String>,
    text: String,
}

/// `POST /api/memory/blocks/{label}/append` (`{userId?, text}`) → the block.
async fn append_block(
    State(state): State<AppState>,
    Path(label): Path<String>,
    b: Result<Json<AppendBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let user = user_arg(&state, b.user_id)?;
    let block = mem(&state, move |m| {
        m.working().append(&user, &label, &b.text, Actor::User)
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
async fn replace_block(
    State(state): State<AppState>,
    Path(label): Path<String>,
    b: Result<Json<ReplaceBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let user = user_arg(&state, b.user_id)?;
    let block = mem(&state, move |m| {
        m.working()
            .replace(&user, &label, &b.old, &b.new, Actor::User)
    })
    .await?;
    Ok(json_ok(&block))
}

/// Query of `GET …/messages`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagesQuery {
    after: Option<u64>,
    limit: Option<usize>,
}

/// `GET /api/memory/sessions/{sessionId}/messages?after=&limit=` → `{messages}`
async fn list_messages(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    q: Result<Query<MessagesQuery>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    let limit = Some(
        q.limit
            .unwrap_or(100)
            .min(mindgate_memory::sqlite::MAX_LIST),
    );
    let messages = mem(&state, move |m| {
        m.session().list(&session_id, q.after, limit)
    })
    .await?;
    Ok(Json(json!({ "messages": messages })).into_response())
}

/// Body of `POST …/messages`: the scope and one message (`{role, content, …}`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushBody {
    user_id: Option<String>,
    agent_id: Option<String>,
    message: Message,
}

/// `POST /api/memory/sessions/{sessionId}/messages` → `{messageId, sequence, persistedAt}` (201).
async fn push_message(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    b: Result<Json<PushBody>, JsonRejection>,
) -> ApiResult {
    let b = body(b)?;
    let scope = Scope {
        user_id: user_arg(&state, b.user_id)?,
        agent_id: b.agent_id,
        session_id: Some(session_id),
    };
    let receipt = mem(&state, move |m| {
        m.session().push(&scope, &b.message, Actor::User)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(receipt)).into_response())
}

/// `GET /api/memory/episodes?userId=&includeQuarantined=&limit=` → `{records}`
async fn list_episodes(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    list_of(state, q, MemoryKind::Episodic).await
}

/// `GET /api/memory/insights?userId=&includeQuarantined=&limit=` → `{records}`
async fn list_insights(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    list_of(state, q, MemoryKind::Insight).await
}

/// `GET /api/memory/procedures?userId=&includeQuarantined=&limit=` → `{records}`
async fn list_procedures(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    list_of(state, q, MemoryKind::Procedural).await
}

async fn list_of(
    state: AppState,
    q: Result<Query<UserQuery>, QueryRejection>,
    kind: MemoryKind,
) -> ApiResult {
    let q = query(q)?;
    let user = user_arg(&state, q.user_id)?;
    let include = q.include_quarantined.unwrap_or(false);
    let limit = q.limit;
    let records = mem(&state, move |m| {
        agent::list_kind(m, &user, kind, include, limit)
    })
    .await?;
    Ok(Json(json!({ "records": records })).into_response())
}

/// `POST /api/memory/episodes` (body: `NewEpisode`; `by` is `user`) → the episode (201).
async fn put_episode(
    State(state): State<AppState>,
    b: Result<Json<NewEpisode>, JsonRejection>,
) -> ApiResult {
    let mut e = body(b)?;
    e.meta.by = Actor::User;
    let ep = mem(&state, move |m| m.episodic().put(e)).await?;
    Ok((StatusCode::CREATED, Json(ep)).into_response())
}

/// `POST /api/memory/procedures` (body: `NewRule`; `by` is `user`) → the rule (201).
async fn add_procedure(
    State(state): State<AppState>,
    b: Result<Json<NewRule>, JsonRejection>,
) -> ApiResult {
    let mut r = body(b)?;
    r.meta.by = Actor::User;
    let rule = mem(&state, move |m| m.procedural().add(r)).await?;
    Ok((StatusCode::CREATED, Json(rule)).into_response())
}

/// `GET /api/memory/entities?userId=` → `{entities}` (roots and merged).
async fn list_entities(
    State(state): State<AppState>,
    q: Result<Query<UserQuery>, QueryRejection>,
) -> ApiResult {
    let user = user_arg(&state, query(q)?.user_id)?;
    let entities = mem(&state, move |m| m.entities().list(&user)).await?;
    Ok(Json(json!({ "entities": entities })).into_response())
}

/// `GET /api/memory/entities/{id}` → `{entity, facts}` (ids of the live facts linked to it).
async fn get_entity(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let (entity, facts) = mem(&state, move |m| {
        Ok((m.entities().get(&id)?, m.entities().facts_for(&id)?))
    })
    .await?;
    Ok(
        Json(json!({ "entity": entity, "facts": facts, "link": agent::entity_route(&entity.id) }))
            .into_response(),
    )
}

/// Body of `POST …/merge`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergeBody {
    into: String,
}

/// `POST /api/memory/entities/{id}/merge` (`{into}`) → the root.
async fn merge_entity(
    State(state): State<AppState>,
    Path(id): Path<String>,
    b: Result<Json<MergeBody>, JsonRejection>,
) -> ApiResult {
    let into = body(b)?.into;
    let root = mem(&state, move |m| m.entities().merge(&id, &into, Actor::User)).await?;
    Ok(json_ok(&root))
}

/// `POST /api/memory/entities/{id}/unmerge` → the entity as restored.
async fn unmerge_entity(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let e = mem(&state, move |m| m.entities().unmerge(&id, Actor::User)).await?;
    Ok(json_ok(&e))
}

/// Query of `GET /api/memory/feed`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeedQuery {
    after: Option<i64>,
}

/// `GET /api/memory/feed?after=SEQ`: Server-Sent Events, one `change` event (id = ledger
/// `seq`, data = the `HistoryEntry`) per ledger row after `after` (default: from now; a
/// reconnect's `Last-Event-ID` wins), whichever process wrote it.
async fn feed(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: Result<Query<FeedQuery>, QueryRejection>,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let q = query(q)?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let start = match resume.or(q.after) {
        Some(seq) => seq.max(0),
        None => mem(&state, |m| m.ledger_head()).await?,
    };
    let lazy = state.memory.clone();
    let shutdown = state.shutdown.clone();
    let changed = state.memory_changed.clone();
    let stream = futures_util::stream::unfold(start, move |after| {
        let lazy = lazy.clone();
        let shutdown = shutdown.clone();
        let changed = changed.clone();
        async move {
            loop {
                let l = lazy.clone();
                let rows = tokio::task::spawn_blocking(move || {
                    l.get().and_then(|m| m.ledger_since(after, FEED_BATCH))
                })
                .await;
                match rows {
                    Ok(Ok(rows)) if !rows.is_empty() => {
                        let last = rows.last().map_or(after, |r| r.seq);
                        let events: Vec<Result<SseEvent, Infallible>> = rows
                            .iter()
                            .map(|r| {
                                Ok(SseEvent::default()
                                    .event("change")
                                    .id(r.seq.to_string())
                                    .data(serde_json::to_string(r).unwrap_or_default()))
                            })
                            .collect();
                        return Some((futures_util::stream::iter(events), last));
                    }
                    Ok(Err(e)) => tracing::debug!(error = %e, "memory feed read failed"),
                    _ => {}
                }
                tokio::select! {
                    () = shutdown.cancelled() => return None,
                    () = changed.notified() => {}
                    () = tokio::time::sleep(FEED_POLL) => {}
                }
            }
        }
    });
    use futures_util::StreamExt as _;
    Ok(Sse::new(stream.flatten()).keep_alive(KeepAlive::default()))
}

/// Wakes the feeds after a mutation through this server (others are found by polling).
pub(crate) async fn notify_changes(
    axum::extract::State(state): axum::extract::State<AppState>,
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
