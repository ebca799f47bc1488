//! `POST /api/demo`: the scripted demo agent, started from the viewer ("Run the demo" on
//! an empty run list or graph) against this very server.
//!
//! The server does not know the demo: the binary hands it a [`DemoLauncher`] (it runs the
//! SDK's demo agent on a thread of its own, as `serve --demo` does). One demo at a time: a
//! second request while one runs answers `409 conflict`; a server without a launcher
//! answers `503 unavailable`.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mindgate_errors::ErrorCode;
use serde_json::json;

use crate::error::ApiError;
use crate::state::AppState;

type Launch = dyn Fn(String) -> std::io::Result<JoinHandle<()>> + Send + Sync;

/// How the binary starts its demo agent: given this server's ingest URL (`ws://…/ingest`,
/// with `?token=` under `--allow-remote`), it starts the demo and returns the thread that
/// runs it; the demo counts as running until that thread ends.
#[derive(Clone)]
pub struct DemoLauncher {
    launch: Arc<Launch>,
    running: Arc<Mutex<Option<JoinHandle<()>>>>,
}

/// Why [`DemoLauncher::start`] started nothing.
#[derive(Debug)]
enum StartRefused {
    /// A demo started earlier has not finished.
    AlreadyRunning,
    /// The thread could not be started.
    Spawn(std::io::Error),
}

impl DemoLauncher {
    /// A launcher that starts the demo with `launch`.
    pub fn new(
        launch: impl Fn(String) -> std::io::Result<JoinHandle<()>> + Send + Sync + 'static,
    ) -> DemoLauncher {
        DemoLauncher {
            launch: Arc::new(launch),
            running: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether a demo started here is still running.
    pub fn is_running(&self) -> bool {
        self.slot()
            .as_ref()
            .is_some_and(|handle| !handle.is_finished())
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<()>>> {
        // A panic while the lock was held leaves only a handle behind: keep using it.
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts the demo against `ingest_url` unless one is running.
    fn start(&self, ingest_url: String) -> Result<(), StartRefused> {
        let mut slot = self.slot();
        if slot.as_ref().is_some_and(|handle| !handle.is_finished()) {
            return Err(StartRefused::AlreadyRunning);
        }
        let handle = (self.launch)(ingest_url).map_err(StartRefused::Spawn)?;
        *slot = Some(handle);
        Ok(())
    }
}

impl std::fmt::Debug for DemoLauncher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoLauncher")
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_demo_is_refused_while_the_first_runs_and_allowed_after() {
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let launcher = DemoLauncher::new(move |_url| {
            let rx = Arc::clone(&release_rx);
            std::thread::Builder::new().spawn(move || {
                let _ = rx.lock().map(|rx| rx.recv());
            })
        });
        assert!(launcher.start("ws://x/ingest".into()).is_ok());
        assert!(matches!(
            launcher.start("ws://x/ingest".into()),
            Err(StartRefused::AlreadyRunning)
        ));
        release_tx.send(()).ok();
        let mut finished = false;
        for _ in 0..500 {
            if !launcher.is_running() {
                finished = true;
                break;
            }
            std::thread::yield_now();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(finished, "the first demo thread ended");
        release_tx.send(()).ok();
        assert!(launcher.start("ws://x/ingest".into()).is_ok());
    }
}
