//! Run options through the real server: three runs started with one thread, user and
//! tags form one thread (`GET /api/threads/:id`) in the order they ran, and the run
//! list filters by each key.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mindgate_sdk::{Aborted, Client, Config, RunOptions};
use serde_json::{Value, json};

async fn get(http: &reqwest::Client, url: &str, token: &str) -> Value {
    http.get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_with_one_thread_option_form_one_thread_on_the_real_server() {
    let home = tempfile::tempdir().unwrap();
    let server = mindgate_server::start(mindgate_server::ServeConfig::for_tests(home.path()))
        .await
        .unwrap();
    let base = server.base_url();
    let client = Client::new(
        Config::default()
            .app("sdk-run-options-test")
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    assert!(
        client.ready(Duration::from_secs(10)).await,
        "never attached"
    );
    for turn in 1..=3 {
        let options = RunOptions::new()
            .thread("chat-7")
            .user("ada")
            .tag("beta")
            .tag(format!("turn-{turn}"));
        let out = client
            .run_with(
                &format!("turn {turn}"),
                options,
                json!({"turn": turn}),
                async { Ok::<_, Aborted>(()) },
            )
            .await;
        assert!(out.is_ok());
    }
    // A run without options belongs to no thread.
    let _ = client
        .run("lonely", (), async { Ok::<_, Aborted>(()) })
        .await;
    assert!(client.flush(Duration::from_secs(5)).await);

    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let detail = loop {
        let d = get(&http, &format!("{base}/api/threads/chat-7"), &server.token).await;
        let done = d["runs"]
            .as_array()
            .is_some_and(|r| r.len() == 3 && r.iter().all(|run| run["status"] == "ok"));
        if done {
            break d;
        }
        assert!(
            Instant::now() < deadline,
            "the thread never held three ended runs: {d}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let names: Vec<&str> = detail["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["turn 1", "turn 2", "turn 3"]);
    assert_eq!(detail["thread"]["runCount"], 3);
    assert_eq!(detail["thread"]["userId"], "ada");
    assert_eq!(
        detail["thread"]["tags"],
        json!(["beta", "turn-1", "turn-2", "turn-3"])
    );

    let by_tag = get(&http, &format!("{base}/api/runs?tag=turn-2"), &server.token).await;
    let tagged: Vec<&str> = by_tag["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(tagged, ["turn 2"]);
    let by_user = get(&http, &format!("{base}/api/runs?user=ada"), &server.token).await;
    assert_eq!(by_user["runs"].as_array().unwrap().len(), 3);
    let threads = get(&http, &format!("{base}/api/threads"), &server.token).await;
    assert_eq!(threads["threads"].as_array().unwrap().len(), 1);
    client.shutdown(Duration::from_secs(2)).await;
}
