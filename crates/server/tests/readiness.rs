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

/// A role of the test's own owning a schema of its own, so the test can shut it out.
struct PgRole {
    admin: String,
    name: String,
}

impl PgRole {
    fn create(admin: &str) -> PgRole {
        let name = format!(
            "mg_ready_{}_{}",
            std::process::id(),
            mindgate_store_suffix()
        );
        let mut c = postgres::Client::connect(admin, postgres::NoTls).expect("admin");
        c.batch_execute(&format!(
            "CREATE ROLE {name} LOGIN; CREATE SCHEMA {name} AUTHORIZATION {name};"
        ))
        .expect("role");
        PgRole {
            admin: admin.to_owned(),
            name,
        }
    }

    /// The admin URL with this role as user and its schema first on the search path.
    fn url(&self) -> String {
        let rest = self
            .admin
            .split_once("://")
            .map(|(_, r)| r)
            .expect("url")
            .split_once('@')
            .map_or_else(|| self.admin.split_once("://").unwrap().1, |(_, host)| host);
        format!(
            "postgres://{}@{rest}?options=-csearch_path%3D{}",
            self.name, self.name
        )
    }

    fn admin(&self, sql: &str) {
        let mut c = postgres::Client::connect(&self.admin, postgres::NoTls).expect("admin");
        c.batch_execute(sql).expect("admin sql");
    }

    fn shut_out(&self) {
        self.admin(&format!(
            "ALTER ROLE {0} NOLOGIN; SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE usename = '{0}'",
            self.name
        ));
    }

    fn let_in(&self) {
        self.admin(&format!("ALTER ROLE {} LOGIN", self.name));
    }
}

impl Drop for PgRole {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{0}';
                 DROP SCHEMA IF EXISTS {0} CASCADE; DROP ROLE IF EXISTS {0};",
                self.name
            ));
        }
    }
}

fn mindgate_store_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() % 1_000_000_000)
        .unwrap_or(0)
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
    let Some(admin) = common::postgres_admin_url() else {
        return;
    };
    let role = tokio::task::spawn_blocking(move || PgRole::create(&admin))
        .await
        .expect("role");
    let url = mindgate_store::PostgresUrl::parse(&role.url()).expect("url");
    let t = start_with(|c| c.postgres = Some(url)).await;
    let (status, ready) = t.get("/ready").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["database"]["backend"], "postgres");

    let (mut app, _) = t.app(None).await;
    let started = json!({"app": "pg-ready", "sdk": {"name": "t", "version": "1"}});
    send_all(&mut app, &[frame("r1", 0, "run.started", started)]).await;
    t.wait_events("r1", 1).await;

    let role = tokio::task::spawn_blocking(move || {
        role.shut_out();
        role
    })
    .await
    .expect("shut out");
    let down = wait_ready(&t, 503).await;
    assert_eq!(down["ready"], false, "{down}");
    assert!(down["database"]["error"].is_string(), "{down}");
    let (status, _) = t.get("/health").await;
    assert_eq!(status, 200, "the server keeps serving");

    let role = tokio::task::spawn_blocking(move || {
        role.let_in();
        role
    })
    .await
    .expect("let in");
    wait_ready(&t, 200).await;
    // The writer reconnects too: a new event is stored.
    let node = json!({"nodeId": "tool:x", "kind": "tool", "name": "x", "instanceId": "i1"});
    send_all(&mut app, &[frame("r1", 1, "node.started", node)]).await;
    t.wait_events("r1", 2).await;
    drop(app);
    let TestServer { server, dir, .. } = t;
    server.stop().await.expect("stop");
    drop(dir);
    tokio::task::spawn_blocking(move || drop(role))
        .await
        .expect("drop role");
}
