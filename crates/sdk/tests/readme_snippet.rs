//! The README's Rust block is `examples/readme.rs`, and that example, run as a user runs it
//! (`MINDGATE_URL` pointing at a real server), streams its run into the server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use mindgate_sdk::LLM_STEP_NODE_ID;
use mindgate_testkit::{readme, wait};
use serde_json::Value;

const EXAMPLE: &str = include_str!("../examples/readme.rs");

#[test]
fn the_readme_rust_block_is_examples_readme_rs() {
    assert_eq!(
        readme::block("rust"),
        EXAMPLE,
        "README.md's `readme-snippet: rust` block and crates/sdk/examples/readme.rs differ: \
         change both"
    );
}

/// The example binary `cargo test` builds next to this test (`target/<profile>/examples`).
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let bin = profile_dir
        .join("examples")
        .join(format!("readme{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: `cargo test -p mindgate-sdk` builds it (with `--test readme_snippet` \
         alone, add `--example readme`)",
        bin.display()
    );
    bin
}

async fn get(http: &reqwest::Client, url: String, token: &str) -> Value {
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
async fn the_readme_rust_example_streams_its_run_into_a_real_server() {
    let bin = example_binary();
    let home = tempfile::tempdir().unwrap();
    let server = mindgate_server::start_for_tests(home.path()).await.unwrap();
    let ingest = server.ingest_url();
    let finished = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(&bin)
            .env("MINDGATE_URL", ingest)
            .env_remove("MINDGATE_DISABLED")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        wait::until("the example to exit", Duration::from_secs(30), || {
            child.try_wait().unwrap()
        });
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&finished.stdout);
    assert!(
        finished.status.success(),
        "the example failed: {stdout}{}",
        String::from_utf8_lossy(&finished.stderr)
    );
    assert_eq!(stdout.trim(), "Clear and 18 °C in Oslo.");

    let http = reqwest::Client::new();
    let base = server.base_url();
    let run = wait::until_async(
        "the example's run, finished",
        Duration::from_secs(10),
        || {
            let (http, base, token) = (&http, &base, &server.token);
            async move {
                let runs = get(http, format!("{base}/api/runs"), token).await;
                runs["runs"]
                    .as_array()
                    .and_then(|runs| runs.iter().find(|r| r["name"] == "weather-question"))
                    .filter(|run| run["status"] == "ok")
                    .cloned()
            }
        },
    )
    .await;
    assert_eq!(run["app"], "weather-bot");
    assert_eq!(run["usage"]["inputTokens"], 21);
    let id = run["id"].as_str().unwrap();
    let graph = get(&http, format!("{base}/api/runs/{id}/graph"), &server.token).await;
    let nodes: Vec<(&str, &str)> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["nodeId"].as_str().unwrap(), n["status"].as_str().unwrap()))
        .collect();
    assert!(nodes.contains(&("tool:get_weather", "ok")), "{nodes:?}");
    assert!(nodes.contains(&(LLM_STEP_NODE_ID, "ok")), "{nodes:?}");
}
