//! `/ready` says whether the run database answers; `/health` names the backend. On
//! PostgreSQL, a database that stops answering turns `/ready` to 503 while the server
//! keeps serving, and both the readers and the writer come back when it returns.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn a_sqlite_server_is_ready_and_names_its_backend() {
    let t = start().await;
    let (status, ready) = t.get("/ready").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(
        ready,
        json!({"ready": true, "database": {"backend": "sqlite", "ok": true, "error": null}})
    );
    let (_, health) = t.get("/health").await;
    assert_eq!(health["database"], json!({"backend": "sqlite"}));
}

async fn wait_ready(t: &TestServer, want: u16) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = t.get("/ready").await;
        if status == want {
            return body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "/ready stayed {status}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_that_stops_answering_is_not_ready_and_comes_back() {
    // A role of the test's own owns the schema, so the test can shut it out.
    let Some(role) = mindgate_testkit::PgSchema::create_with_role("mg_ready") else {
        return;
    };
    let url = mindgate_store::PostgresUrl::parse(role.url()).expect("url");
    let t = start_with(|c| c.postgres = Some(url)).await;
    let (status, ready) = t.get("/ready").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["database"]["backend"], "postgres");

    let (mut app, _) = t.app(None).await;
    let started = json!({"app": "pg-ready", "sdk": {"name": "t", "version": "1"}});
    send_all(&mut app, &[frame("r1", 0, "run.started", started)]).await;
    t.wait_events("r1", 1).await;

    role.shut_out();
    let down = wait_ready(&t, 503).await;
    assert_eq!(down["ready"], false, "{down}");
    assert!(down["database"]["error"].is_string(), "{down}");
    let (status, _) = t.get("/health").await;
    assert_eq!(status, 200, "the server keeps serving");

    role.let_in();
    wait_ready(&t, 200).await;
    // The writer reconnects too: a new event is stored.
    let node = json!({"nodeId": "tool:x", "kind": "tool", "name": "x", "instanceId": "i1"});
    send_all(&mut app, &[frame("r1", 1, "node.started", node)]).await;
    t.wait_events("r1", 2).await;
    drop(app);
    let TestServer { server, dir, .. } = t;
    server.stop().await.expect("stop");
    drop(dir);
    drop(role);
}
