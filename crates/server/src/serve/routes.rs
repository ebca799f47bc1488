//! The whole HTTP surface: every service's routes behind the guard, and the two
//! WebSocket upgrades (`/ingest`, `/ws/ui`).

use axum::Router;
use axum::extract::{Query, State, WebSocketUpgrade};
use axum::middleware;
use axum::response::Response;
use axum::routing::{get, post};
use mindgate_protocol::MAX_FRAME_BYTES;
use serde::Deserialize;

use crate::state::AppState;
use crate::{assets, feed, guard, ingest, runs_api};

async fn ingest_ws(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    let tasks = state.tasks.clone();
    ws.max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .read_buffer_size(ingest::READ_BUFFER_BYTES)
        .on_upgrade(move |socket| tasks.track_future(ingest::handle(socket, state)))
}

/// Query of `/ws/ui`.
#[derive(Debug, Deserialize)]
struct UiQuery {
    token: Option<String>,
}

async fn ui_ws(
    State(state): State<AppState>,
    Query(q): Query<UiQuery>,
    ws: WebSocketUpgrade,
) -> Response {
    let token = q.token.as_deref();
    let authorized = token.is_some_and(|t| guard::token_matches(t, &state.token));
    // An agent with control (`mindgate mcp --allow-control`, which holds the agent token) can
    // release gates over HTTP, so its connection counts as somebody watching; the feed itself
    // stays read-only for it.
    let watcher = authorized || token.is_some_and(|t| guard::token_matches(t, &state.agent_token));
    let tasks = state.tasks.clone();
    ws.max_message_size(MAX_FRAME_BYTES)
        .read_buffer_size(ingest::READ_BUFFER_BYTES)
        .on_upgrade(move |socket| {
            tasks.track_future(feed::handle(socket, state, authorized, watcher))
        })
}

/// The whole HTTP surface over `state`.
pub fn router(state: AppState) -> Router {
    let mut routes = Router::new()
        .route("/health", get(runs_api::health))
        .route("/ready", get(runs_api::ready))
        .route("/ingest", get(ingest_ws))
        .route("/ws/ui", get(ui_ws))
        .route("/api/runs", get(runs_api::list_runs))
        .route(
            "/api/runs/{run_id}",
            get(runs_api::get_run).delete(runs_api::delete_run),
        )
        .route("/api/runs/{run_id}/events", get(runs_api::events))
        .route("/api/runs/{run_id}/graph", get(runs_api::graph))
        .route("/api/runs/{run_id}/report", get(runs_api::report))
        .route("/api/apps", get(runs_api::apps))
        .route("/api/runs/{run_id}/nodes/{node_id}", get(runs_api::node))
        .route(
            "/api/runs/{run_id}/pauses/{pause_id}",
            get(runs_api::get_pause),
        )
        .route(
            "/api/runs/{run_id}/pauses/{pause_id}/resume",
            post(runs_api::resume),
        )
        .route(
            "/api/runs/{run_id}/replay",
            post(crate::runs_api::replay::replay),
        )
        .route("/api/pauses", get(runs_api::pauses))
        .route("/api/debug", get(runs_api::debug))
        .route(
            "/api/breakpoints",
            post(runs_api::add_breakpoint).delete(runs_api::clear_breakpoint),
        )
        .route("/api/mode", axum::routing::put(runs_api::put_mode))
        .route(
            "/api/hold-unwatched",
            axum::routing::put(runs_api::put_hold_unwatched),
        )
        .route("/api/search", get(runs_api::search))
        .route("/api/threads", get(runs_api::threads::list_threads))
        .route(
            "/api/threads/{thread_id}",
            get(runs_api::threads::get_thread),
        )
        .route("/api/errors", get(runs_api::errors))
        .route(
            "/api/annotations",
            get(runs_api::annotations::list).post(runs_api::annotations::create),
        )
        .route(
            "/api/annotations/{id}",
            get(runs_api::annotations::get)
                .patch(runs_api::annotations::update)
                .delete(runs_api::annotations::delete),
        )
        .route(
            "/api/datasets",
            get(runs_api::datasets::list)
                .post(runs_api::datasets::import)
                .layer(axum::extract::DefaultBodyLimit::max(
                    runs_api::datasets::MAX_IMPORT_BYTES,
                )),
        )
        .route(
            "/api/datasets/{name}",
            get(runs_api::datasets::get).delete(runs_api::datasets::delete),
        )
        .route(
            "/api/datasets/{name}/versions",
            get(runs_api::datasets::versions),
        )
        .route(
            "/api/datasets/{name}/export",
            get(runs_api::datasets::export),
        )
        .route(
            "/api/datasets/{name}/examples",
            post(runs_api::datasets::add).delete(runs_api::datasets::remove_many),
        )
        .route(
            "/api/datasets/{name}/examples/{id}",
            axum::routing::patch(runs_api::datasets::update).delete(runs_api::datasets::remove),
        )
        .route("/api/diff", get(crate::runs_api::diff::diff))
        .route("/api/demo", post(crate::runs_api::demo::start_demo))
        .merge(crate::otlp::routes())
        .merge(crate::task_graph::router(state.task_graphs.clone()))
        .merge(
            crate::memory_api::router(&state).layer(middleware::from_fn_with_state(
                state.clone(),
                crate::memory_api::notify_changes,
            )),
        );
    if let Some(mcp) = &state.config.mcp {
        let database = state.config.database();
        let parts = crate::extensions::MountContext {
            home: &state.config.home,
            database: &database,
            task_graph: &state.config.task_graph,
            memory_user: state.config.memory_user.as_deref(),
            resume_wait: state.config.resume_wait,
            port: state.port,
            hub: &state.hub,
            store: &state.store,
            memory: &state.memory,
            shutdown: &state.shutdown,
        };
        routes = routes.nest_service("/mcp", mcp.router(&parts));
    }
    routes
        .method_not_allowed_fallback(runs_api::method_not_allowed)
        .fallback(assets::fallback)
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(crate::panic_guard::layer())
        .with_state(state)
}
