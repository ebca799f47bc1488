//! A run a viewer was told about is readable: a gate reaches the viewers as soon as the app
//! sends it, a moment before the writer commits the run, and the viewer that opens the
//! held run reads `/api/runs/:id`, its report and the held node at once. Those reads wait
//! for the writer's commit instead of answering 404 (a CI run saw that 404 in the browser).
//!
//! The writer is held back deterministically: the test takes SQLite's write lock on the run
//! database (`BEGIN IMMEDIATE`), so nothing the app sends can be committed until it lets go.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{paused_app, start};

#[tokio::test]
async fn a_held_run_is_read_after_the_writer_commits_it_not_answered_404() {
    let t = start().await;
    let lock = rusqlite::Connection::open(&t.server.db_path).expect("open the run database");
    lock.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    lock.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");

    // The gate is held and listed (hub state) while the run is not in the database.
    let _app = paused_app(&t, "r-held").await;
    let (_, listed) = t.get("/api/runs").await;
    let listed = listed["runs"].as_array().cloned().unwrap_or_default();
    assert!(
        listed.iter().all(|r| r["id"] != "r-held"),
        "the run is not committed yet: {listed:?}"
    );

    let reads = [
        "/api/runs/r-held",
        "/api/runs/r-held/report",
        "/api/runs/r-held/nodes/tool:a",
        "/api/runs/r-held/graph",
    ];
    let mut pending = Vec::new();
    for path in reads {
        let (http, url) = (t.http.clone(), t.url(path));
        pending.push(tokio::spawn(async move {
            let r = http.get(url).send().await.expect("GET");
            (
                r.status().as_u16(),
                r.json::<serde_json::Value>().await.unwrap_or_default(),
            )
        }));
    }
    // While the writer cannot commit, the reads wait (before the fix: 404 at once).
    let first = pending.remove(0);
    let mut first = Box::pin(first);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut first)
            .await
            .is_err(),
        "a read of a held, uncommitted run answered before the writer committed it"
    );
    lock.execute_batch("ROLLBACK").expect("let the writer go");

    let (status, run) = first.await.expect("read task");
    assert_eq!(status, 200, "GET /api/runs/r-held: {run}");
    assert_eq!(run["id"], "r-held");
    assert_eq!(run["pauses"].as_array().map(Vec::len), Some(1), "{run}");
    for (path, task) in reads[1..].iter().zip(pending) {
        let (status, body) = task.await.expect("read task");
        assert_eq!(status, 200, "GET {path}: {body}");
    }
    let (_, node) = t.get("/api/runs/r-held/nodes/tool:a").await;
    assert_eq!(node["nodeId"], "tool:a", "{node}");

    // A run nobody sent is still a 404 at once (no wait for the writer).
    let (status, body) = t.get("/api/runs/r-never").await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = t.get("/api/runs/r-held/nodes/tool:none").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.to_string().contains("no node tool:none"), "{body}");
}
