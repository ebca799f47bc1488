//! The JSON HTTP API. Handlers only translate: reads go to the store (on the
//! blocking pool), controls to the hub.

use std::time::Duration;

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mindgate_errors::ErrorCode;
use mindgate_protocol::{BreakpointMatcher, ResumeAction, RunMode};
use mindgate_store::{RunFilter, RunState, RunStore};
use serde::Deserialize;
use serde_json::{Value, json};

pub(crate) mod annotations;
pub(crate) mod datasets;
pub(crate) mod demo;
pub(crate) mod diff;
pub(crate) mod replay;
pub(crate) mod threads;

use crate::error::ApiError;
use crate::hub::{ResumeRequest, VIEWER_VERSION, resume_answer};
use crate::request::{body, query};
use crate::state::AppState;

/// Longest `wait` accepted by `GET /api/pauses`.
pub const MAX_PAUSE_WAIT: Duration = Duration::from_secs(60);

type ApiResult<T = Response> = Result<T, ApiError>;

pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&RunStore) -> mindgate_store::Result<T> + Send + 'static,
) -> ApiResult<T> {
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || f(&store)).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => Err(ApiError::internal(format!("read task failed: {e}"))),
    }
}

/// A read of one run, `f`, that answers `None` for a run the store does not hold yet.
/// A gate or a new run reaches viewers as soon as the app sends it, a moment before the
/// writer commits its events; a read of such a run (the hub knows it) waits for the writer
/// to commit what it has queued and reads again, so a viewer that opens a run it was just
/// told about never gets a 404. Other misses answer at once.
pub(crate) async fn read_run<T: Send + 'static>(
    state: &AppState,
    run_id: &str,
    f: impl Fn(&RunStore) -> mindgate_store::Result<Option<T>> + Send + Sync + 'static,
) -> ApiResult<Option<T>> {
    let f = std::sync::Arc::new(f);
    let first = f.clone();
    if let Some(found) = blocking(state, move |s| first(s)).await? {
        return Ok(Some(found));
    }
    if !settle_announced_run(state, run_id).await? {
        return Ok(None);
    }
    blocking(state, move |s| f(s)).await
}

/// When the hub knows `run_id` (an app sent it events), waits until the writer committed
/// everything queued so far and answers `true` (read again); `false` at once otherwise.
async fn settle_announced_run(state: &AppState, run_id: &str) -> ApiResult<bool> {
    if !state.hub.knows_run(run_id) {
        return Ok(false);
    }
    let writer = state.writer.clone();
    tokio::task::spawn_blocking(move || writer.flush_later()?.wait())
        .await
        .map_err(|e| ApiError::internal(format!("flush task failed: {e}")))??;
    Ok(true)
}

pub(crate) fn run_not_found(run_id: &str) -> ApiError {
    ApiError::not_found(format!("no run {run_id}"))
}

/// `GET /health`
pub async fn health(State(state): State<AppState>) -> Json<Value> {
    use std::sync::atomic::Ordering::Relaxed;
    let (apps, pauses) = state.hub.counts();
    let mut body = json!({
        "ok": true,
        "version": VIEWER_VERSION,
        "protocol": mindgate_protocol::PROTOCOL_VERSION,
        "apps": apps,
        "pauses": pauses,
        "watchers": state.hub.watchers(),
        "acceptedEvents": state.stats.accepted_events.load(Relaxed),
        "invalidFrames": state.stats.invalid_frames.load(Relaxed),
        "refusedEvents": state.stats.refused_events.load(Relaxed),
        "database": {"backend": database_backend(&state)},
    });
    if let (Some(body), Value::Object(more)) = (body.as_object_mut(), state.ingest_health()) {
        body.extend(more);
    }
    if let Some(cluster) = state.hub.cluster() {
        // This instance among those sharing the PostgreSQL database (`docs/team.md`).
        body["cluster"] = json!({"instance": cluster.instance_id()});
    }
    Json(body)
}

fn database_backend(state: &AppState) -> &'static str {
    if state.config.postgres.is_some() {
        "postgres"
    } else {
        "sqlite"
    }
}

/// Longest `GET /ready` waits for the database to answer.
pub const READY_TIMEOUT: Duration = Duration::from_secs(3);

/// `GET /ready`: 200 `{"ready": true, …}` when the database answers a query within
/// [`READY_TIMEOUT`] and the writer runs; 503 `{"ready": false, "error": …}` otherwise
/// (for load balancers and orchestrators: the server keeps serving what it can).
pub async fn ready(State(state): State<AppState>) -> Response {
    let backend = database_backend(&state);
    let store = state.store.clone();
    let ping = tokio::task::spawn_blocking(move || store.ping());
    let error = match tokio::time::timeout(READY_TIMEOUT, ping).await {
        Ok(Ok(Ok(()))) if !state.writer.is_stopped() => None,
        Ok(Ok(Ok(()))) => Some("the store writer has stopped".to_owned()),
        Ok(Ok(Err(e))) => Some(mindgate_errors::error_chain(&e)),
        Ok(Err(e)) => Some(format!("readiness check failed: {e}")),
        Err(_) => Some(format!(
            "the database did not answer within {} s",
            READY_TIMEOUT.as_secs()
        )),
    };
    let status = if error.is_none() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "ready": error.is_none(),
        "database": {"backend": backend, "ok": error.is_none(), "error": error},
    });
    (status, Json(body)).into_response()
}

/// Query of `GET /api/runs`.
#[derive(Debug, Deserialize)]
pub struct RunsQuery {
    limit: Option<u32>,
    before: Option<i64>,
    status: Option<String>,
    app: Option<String>,
    q: Option<String>,
    thread: Option<String>,
    user: Option<String>,
    tag: Option<String>,
    label: Option<String>,
    verdict: Option<String>,
    #[serde(rename = "minScore")]
    min_score: Option<f64>,
    #[serde(rename = "maxScore")]
    max_score: Option<f64>,
}

/// `GET /api/runs`
pub async fn list_runs(
    State(state): State<AppState>,
    q: Result<Query<RunsQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let status = match q.status.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => Some(RunState::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown status '{s}' (running, ok, error, aborted, abandoned)"
            ))
        })?),
        None => None,
    };
    let verdict =
        match q.verdict.as_deref().filter(|s| !s.is_empty()) {
            Some(v) => Some(mindgate_store::Verdict::parse(v).ok_or_else(|| {
                ApiError::bad_request(format!("unknown verdict '{v}' (up, down)"))
            })?),
            None => None,
        };
    let filter = RunFilter {
        limit: q.limit,
        before: q.before,
        status,
        app: q.app.filter(|a| !a.is_empty()),
        q: q.q,
        thread: q.thread.filter(|t| !t.is_empty()),
        user: q.user.filter(|u| !u.is_empty()),
        tag: q.tag.filter(|t| !t.is_empty()),
        label: q.label.filter(|t| !t.is_empty()),
        verdict,
        min_score: q.min_score,
        max_score: q.max_score,
    };
    let list = blocking(&state, move |s| s.list_runs(&filter)).await?;
    Ok(Json(list).into_response())
}

/// `GET /api/runs/{runId}`
pub async fn get_run(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
) -> ApiResult<Response> {
    let id = run_id.clone();
    let run = read_run(&state, &run_id, move |s| s.get_run_with_cost(&id)).await?;
    let run = run.ok_or_else(|| run_not_found(&run_id))?;
    let pauses = state.hub.pauses(Some(&run_id));
    let mut v = serde_json::to_value(&run).unwrap_or_default();
    v["pauses"] = json!(pauses);
    Ok(Json(v).into_response())
}

/// `DELETE /api/runs/{runId}`
pub async fn delete_run(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
) -> ApiResult<Response> {
    let writer = state.writer.clone();
    let id = run_id.clone();
    let deleted = tokio::task::spawn_blocking(move || writer.delete_run(&id))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??;
    if !deleted {
        return Err(run_not_found(&run_id));
    }
    Ok(Json(json!({"deleted": true, "runId": run_id})).into_response())
}

/// Query of `GET /api/runs/{runId}/events`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsQuery {
    after_seq: Option<u64>,
    limit: Option<u32>,
}

/// `GET /api/runs/{runId}/events`
pub async fn events(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
    q: Result<Query<EventsQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let id = run_id.clone();
    let page = blocking(&state, move |s| s.events(&id, q.after_seq, q.limit)).await?;
    let page = page.ok_or_else(|| run_not_found(&run_id))?;
    Ok(Json(page).into_response())
}

/// Query of `GET /api/runs/{runId}/graph`.
#[derive(Debug, Deserialize)]
pub struct GraphQuery {
    limit: Option<usize>,
    after: Option<usize>,
}

/// Seconds a reader told `503` should wait before asking for a graph again.
const GRAPH_RETRY_AFTER_SECS: &str = "2";

/// `GET /api/runs/{runId}/graph?limit&after` — the whole graph, or with
/// `limit` / `after` one page of nodes. Builds are shared and bounded
/// (see `graph_reads`).
pub async fn graph(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
    q: Result<Query<GraphQuery>, QueryRejection>,
) -> ApiResult<Response> {
    use crate::graph_reads::GraphReadError;
    let q = query(q)?;
    let mut read = state.graph_reads.read(&state.store, &run_id).await;
    if matches!(read, Err(GraphReadError::NotFound))
        && settle_announced_run(&state, &run_id).await?
    {
        read = state.graph_reads.read(&state.store, &run_id).await;
    }
    let built = match read {
        Ok(built) => built,
        Err(GraphReadError::NotFound) => return Err(run_not_found(&run_id)),
        Err(GraphReadError::Failed(e)) => return Err(e),
        Err(GraphReadError::Busy) => {
            tracing::warn!(run = %run_id, "graph builds saturated; answered 503");
            let body = ApiError::new(
                ErrorCode::Unavailable,
                "too many graph reads at once; retry shortly",
            );
            let mut response = body.into_response();
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static(GRAPH_RETRY_AFTER_SECS),
            );
            return Ok(response);
        }
    };
    if q.limit.is_none() && q.after.is_none() {
        return Ok((
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            axum::body::Body::from_stream(crate::graph_reads::json_chunks(built)),
        )
            .into_response());
    }
    let page = crate::graph_reads::page(
        &built.graph,
        q.after.unwrap_or(0),
        q.limit.unwrap_or(crate::graph_reads::MAX_GRAPH_PAGE),
    );
    Ok(Json(page).into_response())
}

/// `GET /api/runs/{runId}/report` — errors (recovered ones marked), slowest
/// executions, tokens by node and held nodes: the facts `get_run` shows.
pub async fn report(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
) -> ApiResult<Response> {
    let id = run_id.clone();
    let report = read_run(&state, &run_id, move |s| s.run_report(&id)).await?;
    Ok(Json(report.ok_or_else(|| run_not_found(&run_id))?).into_response())
}

/// `GET /api/apps` — what each app's runs cost (the newest runs, see
/// `mindgate_store::cost::MAX_APP_COST_RUNS`).
pub async fn apps(State(state): State<AppState>) -> ApiResult<Response> {
    let apps = blocking(&state, move |s| s.app_costs()).await?;
    Ok(Json(apps).into_response())
}

/// `GET /api/runs/{runId}/nodes/{nodeId}`
pub async fn node(
    State(state): State<AppState>,
    Path((run_id, node_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (r, n) = (run_id.clone(), node_id.clone());
    // A node the writer has not committed yet is read again after the flush, as a run is.
    let detail = read_run(&state, &run_id, move |s| s.node_detail(&r, &n)).await?;
    if let Some(d) = detail {
        return Ok(Json(d).into_response());
    }
    let id = run_id.clone();
    if blocking(&state, move |s| s.get_run(&id)).await?.is_none() {
        return Err(run_not_found(&run_id));
    }
    Err(ApiError::not_found(format!(
        "no node {node_id} in run {run_id}"
    )))
}

/// Query of `GET /api/pauses`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PausesQuery {
    run_id: Option<String>,
    wait: Option<f64>,
}

/// The long-poll time of `wait=SECONDS`: clamped to [`MAX_PAUSE_WAIT`] *before*
/// it becomes a `Duration` (huge values overflow `Duration`); negative, NaN
/// or infinite values mean no wait.
fn pause_wait(seconds: Option<f64>) -> Duration {
    seconds
        .filter(|w| w.is_finite() && *w > 0.0)
        .map_or(Duration::ZERO, |w| {
            Duration::from_secs_f64(w.min(MAX_PAUSE_WAIT.as_secs_f64()))
        })
}

/// `GET /api/pauses?runId&wait=SECONDS` — long-polls until a pause exists or `wait` passes.
pub async fn pauses(
    State(state): State<AppState>,
    q: Result<Query<PausesQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let wait = pause_wait(q.wait);
    let deadline = tokio::time::Instant::now() + wait;
    let mut changes = state.hub.watch();
    loop {
        changes.mark_unchanged();
        let list = state.hub.pauses(q.run_id.as_deref());
        if !list.is_empty() || tokio::time::Instant::now() >= deadline {
            return Ok(Json(json!({"pauses": list})).into_response());
        }
        tokio::select! {
            _ = changes.changed() => {}
            _ = tokio::time::sleep_until(deadline) => {}
            _ = state.shutdown.cancelled() => {
                return Ok(Json(json!({"pauses": list})).into_response());
            }
        }
    }
}

/// `GET /api/runs/{runId}/pauses/{pauseId}`
pub async fn get_pause(
    State(state): State<AppState>,
    Path((run_id, pause_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    state
        .hub
        .pause(&run_id, &pause_id)
        .map(|p| Json(p).into_response())
        .ok_or_else(|| ApiError::not_found(format!("no pause {pause_id} is held in run {run_id}")))
}

/// Body of a resume request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeBody {
    action: String,
    #[serde(default, deserialize_with = "present")]
    output: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    input: Option<Value>,
    request_id: Option<String>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `POST /api/runs/{runId}/pauses/{pauseId}/resume` with `{action, output?}`. Stamped
/// `http` with the control token, `mcp` with the agent token (`mindgate mcp
/// --allow-control` is what resumes with it).
pub async fn resume(
    State(state): State<AppState>,
    caller: Option<axum::Extension<crate::guard::principal::Principal>>,
    Path((run_id, pause_id)): Path<(String, String)>,
    b: Result<Json<ResumeBody>, JsonRejection>,
) -> ApiResult<Response> {
    let b = body(b)?;
    let action = ResumeAction::parse(&b.action).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown action '{}' (continue, retry, inject, abort)",
            b.action
        ))
    })?;
    let reply = state
        .hub
        .resume_and_wait(
            &run_id,
            &pause_id,
            ResumeRequest {
                action,
                output: b.output,
                input: b.input,
                principal: match caller {
                    Some(axum::Extension(crate::guard::principal::Principal::Agent)) => {
                        crate::hub::Principal::Mcp
                    }
                    _ => crate::hub::Principal::Http,
                },
                request_id: b.request_id,
            },
            state.config.resume_wait,
        )
        .await;
    Ok(Json(resume_answer(reply)).into_response())
}

/// `GET /api/debug`
pub async fn debug(State(state): State<AppState>) -> Json<Value> {
    let snap = state.hub.snapshot();
    Json(
        json!({"breakpoints": snap.breakpoints, "mode": snap.mode, "holdUnwatched": snap.hold_unwatched}),
    )
}

/// Body of `PUT /api/hold-unwatched`.
#[derive(Debug, Deserialize)]
pub struct HoldUnwatchedBody {
    hold: bool,
}

/// `PUT /api/hold-unwatched {hold}` — keep gates held only by pause on error while
/// nobody with control watches (the viewer's toggle; saved for the next start).
pub async fn put_hold_unwatched(
    State(state): State<AppState>,
    b: Result<Json<HoldUnwatchedBody>, JsonRejection>,
) -> ApiResult<Response> {
    let hold = body(b)?.hold;
    let s = state.clone();
    tokio::task::spawn_blocking(move || {
        crate::hub::viewer_settings::set_hold_unwatched(&s.hub, &s.config.home, hold);
    })
    .await
    .map_err(|_| ApiError::internal("saving the viewer settings stopped"))?;
    Ok(Json(json!({"holdUnwatched": state.hub.hold_unwatched()})).into_response())
}

fn matcher_of(v: Value) -> ApiResult<BreakpointMatcher> {
    let inner = match v {
        Value::Object(mut m) if m.contains_key("matcher") => {
            m.remove("matcher").unwrap_or_default()
        }
        other => other,
    };
    serde_json::from_value(inner)
        .map_err(|e| ApiError::bad_request(format!("bad breakpoint matcher: {e}")))
}

/// `POST /api/breakpoints` with a matcher (or `{matcher}`).
pub async fn add_breakpoint(
    State(state): State<AppState>,
    b: Result<Json<Value>, JsonRejection>,
) -> ApiResult<Response> {
    let matcher = matcher_of(body(b)?)?;
    let added = state.hub.set_breakpoint(matcher);
    let snap = state.hub.snapshot();
    Ok(
        Json(json!({"added": added, "breakpoints": snap.breakpoints, "mode": snap.mode}))
            .into_response(),
    )
}

/// `DELETE /api/breakpoints` with a matcher (or `{matcher}`).
pub async fn clear_breakpoint(
    State(state): State<AppState>,
    b: Result<Json<Value>, JsonRejection>,
) -> ApiResult<Response> {
    let matcher = matcher_of(body(b)?)?;
    let removed = state.hub.clear_breakpoint(matcher);
    let snap = state.hub.snapshot();
    Ok(
        Json(json!({"removed": removed, "breakpoints": snap.breakpoints, "mode": snap.mode}))
            .into_response(),
    )
}

/// Body of `PUT /api/mode`.
#[derive(Debug, Deserialize)]
pub struct ModeBody {
    mode: String,
}

/// `PUT /api/mode` with `{mode: "run"|"step"}`.
pub async fn put_mode(
    State(state): State<AppState>,
    b: Result<Json<ModeBody>, JsonRejection>,
) -> ApiResult<Response> {
    let b = body(b)?;
    let mode = RunMode::parse(&b.mode)
        .ok_or_else(|| ApiError::bad_request(format!("unknown mode '{}' (run, step)", b.mode)))?;
    state.hub.set_mode(mode);
    let snap = state.hub.snapshot();
    Ok(Json(json!({"breakpoints": snap.breakpoints, "mode": snap.mode})).into_response())
}

/// Query of `GET /api/search`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchQuery {
    q: String,
    run_id: Option<String>,
    limit: Option<u32>,
}

/// `GET /api/search?q&runId&limit` — events whose payload contains `q`.
pub async fn search(
    State(state): State<AppState>,
    q: Result<Query<SearchQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let hits = blocking(&state, move |s| {
        s.search_events(&q.q, q.run_id.as_deref(), q.limit.unwrap_or(50))
    })
    .await?;
    Ok(Json(json!({"hits": hits})).into_response())
}

/// Query of `GET /api/errors`.
#[derive(Debug, Deserialize)]
pub struct ErrorsQuery {
    limit: Option<u32>,
}

/// `GET /api/errors?limit` — recent `node.error`s across runs.
pub async fn errors(
    State(state): State<AppState>,
    q: Result<Query<ErrorsQuery>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let errors = blocking(&state, move |s| s.recent_errors(q.limit.unwrap_or(20))).await?;
    Ok(Json(json!({"errors": errors})).into_response())
}

/// 405 with a JSON body.
pub async fn method_not_allowed() -> Response {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "method not allowed on this route",
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_wait_is_clamped_before_it_becomes_a_duration() {
        assert_eq!(pause_wait(Some(1e20)), MAX_PAUSE_WAIT);
        assert_eq!(pause_wait(Some(f64::MAX)), MAX_PAUSE_WAIT);
        assert_eq!(pause_wait(Some(2.5)), Duration::from_millis(2_500));
        for no_wait in [
            None,
            Some(-1.0),
            Some(0.0),
            Some(f64::NAN),
            Some(f64::INFINITY),
        ] {
            assert_eq!(pause_wait(no_wait), Duration::ZERO);
        }
    }
}
