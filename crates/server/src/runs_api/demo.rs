//! `POST /api/demo`: the scripted demo agent, started from the viewer ("Run the demo" on
//! an empty run list or graph) against this very server.
//!
//! The server does not know the demo: the binary hands it a [`DemoLauncher`](crate::DemoLauncher) (it runs the
//! SDK's demo agent on a thread of its own, as `serve --demo` does). One demo at a time: a
//! second request while one runs answers `409 conflict`; a server without a launcher
//! answers `503 unavailable`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mindgate_errors::ErrorCode;
use serde_json::json;

use crate::error::ApiError;
use crate::extensions::demo::StartRefused;
use crate::state::AppState;

/// The ingest URL the demo dials: this server on loopback (or on its own address when it
/// is bound to one), with the token when every request needs it.
fn ingest_url(state: &AppState) -> String {
    let host = state.config.host;
    let host = if host.is_unspecified() {
        std::net::IpAddr::from([127, 0, 0, 1])
    } else {
        host
    };
    let addr = std::net::SocketAddr::new(host, state.port);
    if state.config.allow_remote {
        format!("ws://{addr}/ingest?token={}", state.token)
    } else {
        format!("ws://{addr}/ingest")
    }
}

/// `POST /api/demo` — starts the demo agent against this server: `202 {"started": true}`;
/// `409` while one runs; `503` when this server has no demo (a library embedding).
pub async fn start_demo(State(state): State<AppState>) -> Result<Response, ApiError> {
    let Some(demo) = state.config.demo.clone() else {
        return Err(ApiError::new(
            ErrorCode::Unavailable,
            "this server has no demo agent (run `mindgate serve` or `mindgate demo --url …`)",
        ));
    };
    let url = ingest_url(&state);
    match demo.start(url) {
        Ok(()) => {
            tracing::info!("demo agent started from the viewer");
            Ok((StatusCode::ACCEPTED, Json(json!({"started": true}))).into_response())
        }
        Err(StartRefused::AlreadyRunning) => Err(ApiError::new(
            ErrorCode::Conflict,
            "the demo is already running: its runs are in the run list",
        )),
        Err(StartRefused::Spawn(err)) => Err(ApiError::new(
            ErrorCode::Internal,
            format!("cannot start the demo agent: {err}"),
        )),
    }
}
