//! Lifecycle hardening (issue #10): start-up order, one server per database,
//! the shutdown deadline, token-file ownership, and the remote-access guard.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use mindgate_home::{Home, token_file};
use mindgate_server::{ServeConfig, ServerError, start};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

use common::{TestServer, frame};

async fn server_with(dir: tempfile::TempDir, edit: impl FnOnce(&mut ServeConfig)) -> TestServer {
    let mut config = ServeConfig::for_tests(dir.path());
    edit(&mut config);
    let server = start(config).await.expect("server starts");
    TestServer {
        dir,
        server,
        http: reqwest::Client::new(),
    }
}

/// A connected app with one run that stays `running`.
async fn live_run(t: &TestServer, run: &str) -> common::Ws {
    let (mut ws, _) = t.app(None).await;
    let started = frame(
        run,
        1,
        "run.started",
        json!({"app": "test-app", "sdk": {"name": "t", "version": "1"}}),
    );
    ws.send(Message::text(started)).await.expect("send");
    t.wait_events(run, 1).await;
    ws
}

async fn run_status(t: &TestServer, run: &str) -> String {
    let (code, body) = t.get(&format!("/api/runs/{run}")).await;
    assert_eq!(code, 200, "{body}");
    body["status"].as_str().unwrap_or_default().to_owned()
}

/// Opens a connection that sends half a request and then goes quiet, and makes
/// sure the server has accepted it (a later connection got its answer).
async fn half_sent_request(t: &TestServer) -> tokio::net::TcpStream {
    let mut stalled = tokio::net::TcpStream::connect(t.server.addr)
        .await
        .expect("connect");
    let head = format!(
        "GET /api/runs HTTP/1.1\r\nHost: {}\r\nX-Half",
        t.server.addr
    );
    stalled.write_all(head.as_bytes()).await.expect("write");
    // Connections are accepted in order: once this one is answered, the stalled one is in.
    let (code, _) = t.get("/health").await;
    assert_eq!(code, 200);
    stalled
}

#[tokio::test]
async fn stop_ends_within_the_deadline_with_a_half_sent_request_and_keeps_the_events() {
    let t = server_with(tempfile::tempdir().expect("tmp"), |c| {
        c.shutdown_deadline = Duration::from_millis(500);
    })
    .await;
    let mut app = live_run(&t, "kept").await;
    app.send(Message::text(frame(
        "kept",
        2,
        "node.started",
        json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a1"}),
    )))
    .await
    .expect("send");
    t.wait_events("kept", 2).await;
    let _stalled = half_sent_request(&t).await;
    let db = t.server.db_path.clone();
    let began = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), t.server.stop())
        .await
        .expect("stop finished (it used to wait for the half-sent request forever)")
        .expect("clean stop");
    let took = began.elapsed();
    assert!(took < Duration::from_secs(5), "stop took {took:?}");
    let store = mindgate_store::RunStore::open_read_only(&db).expect("store");
    let run = store.get_run("kept").expect("read").expect("run kept");
    assert_eq!(run.counts.events, 2);
}

#[tokio::test]
async fn a_start_on_a_busy_port_fails_before_touching_the_running_servers_database() {
    let first = common::start().await;
    let _app = live_run(&first, "live").await;
    let mut second = ServeConfig::for_tests(first.dir.path());
    second.port = first.server.addr.port();
    let err = start(second).await.expect_err("the port is taken");
    match &err {
        ServerError::AddrInUse { holder, .. } => {
            let holder = holder
                .as_ref()
                .expect("the first server's token file is named");
            assert_eq!(holder.pid, std::process::id());
            assert_eq!(holder.port, first.server.addr.port());
        }
        other => panic!("expected AddrInUse, got {other:?}"),
    }
    assert!(err.to_string().contains("already in use"), "{err}");
    assert_eq!(run_status(&first, "live").await, "running");
}

#[tokio::test]
async fn a_second_server_on_the_same_database_is_refused_and_names_the_first() {
    let first = common::start().await;
    let _app = live_run(&first, "live").await;
    // Another port, same home and database.
    let err = start(ServeConfig::for_tests(first.dir.path()))
        .await
        .expect_err("the database is taken");
    match &err {
        ServerError::DatabaseInUse { holder, .. } => {
            let holder = holder.expect("the lock file names its holder");
            assert_eq!(holder.pid, std::process::id());
            assert_eq!(holder.port, first.server.addr.port());
        }
        other => panic!("expected DatabaseInUse, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(&format!("port {}", first.server.addr.port())),
        "{text}"
    );
    assert_eq!(run_status(&first, "live").await, "running");
    // Once the first one has stopped, the database is free again.
    let home = first.dir;
    first.server.stop().await.expect("stop");
    let again = start(ServeConfig::for_tests(home.path()))
        .await
        .expect("starts after the first stopped");
    assert!(again.reconciled.contains(&"live".to_owned()));
    again.stop().await.expect("stop");
}

#[tokio::test]
async fn a_stopping_server_leaves_the_token_file_another_server_wrote() {
    let t = common::start().await;
    let path = t.server.token_file.clone().expect("token file");
    let ours = token_file::read(&Home::at(t.dir.path()), t.server.addr.port()).expect("ours");
    assert_eq!(ours.pid, std::process::id());
    // A newer server on the same home and port replaced the file meanwhile.
    let newcomer = token_file::TokenFile {
        pid: ours.pid + 1,
        token: "newcomer-token".to_owned(),
        ..ours.clone()
    };
    std::fs::write(&path, serde_json::to_string(&newcomer).unwrap()).expect("overwrite");
    let home = t.dir;
    t.server.stop().await.expect("stop");
    assert_eq!(
        token_file::read(&Home::at(home.path()), ours.port),
        Some(newcomer),
        "the newcomer's token file survived"
    );
}

#[tokio::test]
async fn a_clean_stop_removes_its_own_token_file() {
    let t = common::start().await;
    let path = t.server.token_file.clone().expect("token file");
    assert!(path.exists());
    let _home = t.dir;
    t.server.stop().await.expect("stop");
    assert!(!path.exists());
}

// -- remote access ---------------------------------------------------------

async fn remote_server() -> TestServer {
    server_with(tempfile::tempdir().expect("tmp"), |c| {
        c.allow_remote = true;
        c.allowed_hosts = vec!["mindgate.test".to_owned()];
    })
    .await
}

async fn status_of(req: reqwest::RequestBuilder) -> u16 {
    req.send().await.expect("request").status().as_u16()
}

#[tokio::test]
async fn remote_access_needs_the_token_on_every_request_even_on_loopback() {
    let t = remote_server().await;
    let token = t.server.token.clone();
    let runs = t.url("/api/runs");
    assert_eq!(status_of(t.http.get(&runs)).await, 401, "reads need it");
    assert_eq!(status_of(t.http.get(t.url("/health"))).await, 401);
    assert_eq!(
        status_of(t.http.get(t.url("/task-graph/api/tasks"))).await,
        401
    );
    assert_eq!(status_of(t.http.get(&runs).bearer_auth(&token)).await, 200);
    assert_eq!(
        status_of(t.http.get(format!("{runs}?token={token}"))).await,
        200
    );
    assert_eq!(
        status_of(t.http.get(format!("{runs}?token=wrong"))).await,
        401
    );
    // The viewer page and its files carry no data and load without it, and so does
    // `/ready`, which a load balancer's health check asks without a token.
    assert_eq!(status_of(t.http.get(t.url("/"))).await, 200);
    assert_eq!(status_of(t.http.get(t.url("/ready"))).await, 200);
    assert_eq!(status_of(t.http.post(t.url("/ready"))).await, 401);
    // Feeds and ingest: refused at the upgrade without the token.
    let ui = format!("ws://{}/ws/ui", t.server.addr);
    assert!(connect_async(ui.as_str()).await.is_err(), "/ws/ui refused");
    assert!(
        connect_async(t.server.ingest_url()).await.is_err(),
        "/ingest refused"
    );
    let (mut ws, _) = connect_async(t.server.ingest_url_with_token())
        .await
        .expect("ingest with ?token=");
    ws.send(Message::text(common::hello(None)))
        .await
        .expect("hello");
    let ack = common::next_json(&mut ws).await.expect("ack");
    assert_eq!(ack["type"], "hello.ack");
    let (_ui, _) = connect_async(format!("{ui}?token={token}"))
        .await
        .expect("/ws/ui with the token");
}

#[tokio::test]
async fn remote_access_refuses_rebound_host_names_and_accepts_allowed_ones() {
    let t = remote_server().await;
    let port = t.server.addr.port();
    let token = t.server.token.clone();
    let runs = t.url("/api/runs");
    let rebound = format!("attacker.example:{port}");
    // DNS rebinding: the attacker's name in Host and a matching Origin, token or not.
    for with_token in [false, true] {
        let mut req = t
            .http
            .get(&runs)
            .header("host", &rebound)
            .header("origin", format!("http://{rebound}"));
        if with_token {
            req = req.bearer_auth(&token);
        }
        assert_eq!(status_of(req).await, 403, "token: {with_token}");
    }
    let allowed = format!("mindgate.test:{port}");
    assert_eq!(
        status_of(
            t.http
                .get(&runs)
                .header("host", &allowed)
                .header("origin", format!("http://{allowed}"))
                .bearer_auth(&token)
        )
        .await,
        200
    );
    assert_eq!(
        status_of(
            t.http
                .get(&runs)
                .header("host", &allowed)
                .header("origin", format!("http://{rebound}"))
                .bearer_auth(&token)
        )
        .await,
        403,
        "a foreign Origin on an allowed Host"
    );
}

#[tokio::test]
async fn without_remote_access_reads_stay_open_to_loopback() {
    let t = common::start().await;
    let (code, _) = t.get("/api/runs").await;
    assert_eq!(code, 200);
    let port = t.server.addr.port();
    let r = t
        .http
        .get(t.url("/api/runs"))
        .header("host", format!("mindgate.test:{port}"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 403, "no --allowed-host without remote");
}

#[tokio::test]
async fn remote_access_on_every_interface_needs_an_allowed_host() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut config = ServeConfig::for_tests(dir.path());
    config.allow_remote = true;
    config.host = std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
    let err = start(config).await.expect_err("refused");
    assert!(matches!(err, ServerError::NoAllowedHosts(_)), "{err:?}");
    assert!(err.to_string().contains("--allowed-host"), "{err}");
}
