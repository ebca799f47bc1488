//! `POST /api/demo` on the real `mindgate serve`: the viewer's "Run the demo" starts the SDK
//! demo agent against this very server, one at a time, and only with the control token.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use mindgate_testkit::{ServeProcess, wait};
use serde_json::{Value, json};

/// The held gates the server lists now.
fn pauses(server: &ServeProcess) -> Vec<Value> {
    let (status, body) = server.get("/api/pauses").unwrap();
    assert_eq!(status, 200, "{body}");
    body["pauses"].as_array().cloned().unwrap_or_default()
}

#[test]
fn the_demo_starts_from_the_viewer_route_once_at_a_time() {
    let server = ServeProcess::start(Path::new(env!("CARGO_BIN_EXE_mindgate")), &[]);
    // Without the token: refused, nothing starts.
    let (status, _) = server.request("POST", "/api/demo", None, false).unwrap();
    assert_eq!(status, 401);

    let (status, body) = server.request("POST", "/api/demo", None, true).unwrap();
    assert_eq!(status, 202, "{body}");
    assert_eq!(body, json!({"started": true}));
    // Its run arrives: the demo dialled this server's own ingest URL.
    let run_id = wait::until("the demo's run", Duration::from_secs(30), || {
        let (_, body) = server.get("/api/runs").ok()?;
        let run = body["runs"].as_array()?.first()?.clone();
        (run["app"] == "mindgate-demo").then(|| run["id"].as_str().map(str::to_owned))?
    });
    // While it runs, a second one is refused with a clear error.
    let (status, body) = server.request("POST", "/api/demo", None, true).unwrap();
    if status == 409 {
        assert!(
            body["error"]
                .as_str()
                .unwrap_or_default()
                .contains("already running"),
            "{body}"
        );
    } else {
        // The first demo already ended (its gate released unwatched): a new one may start.
        assert_eq!(status, 202, "{body}");
    }
    // Abort whatever holds until no run is left running (the demo threads then finish).
    wait::until("every demo run ended", Duration::from_secs(30), || {
        for p in pauses(&server) {
            let path = format!(
                "/api/runs/{}/pauses/{}/resume",
                p["runId"].as_str().unwrap_or_default(),
                p["pauseId"].as_str().unwrap_or_default()
            );
            let _ = server.request("POST", &path, Some(&json!({"action": "abort"})), true);
        }
        let (_, runs) = server.get("/api/runs").ok()?;
        let running = runs["runs"]
            .as_array()?
            .iter()
            .any(|r| r["status"] == "running");
        (!running).then_some(())
    });
    let (_, run) = server
        .get(&format!("/api/runs/{run_id}"))
        .expect("the demo run");
    assert_ne!(run["status"], "running", "{run}");
}
