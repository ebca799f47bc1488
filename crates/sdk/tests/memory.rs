//! `mindgate_sdk::memory` against the real server (in-process, free loopback port): a Rust
//! agent run remembers a fact and searches it, and both calls are nodes of the run graph;
//! with the server down the calls return errors and the agent carries on.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use mindgate_home::Home;
use mindgate_sdk::memory::{BlockArgs, MemoryClient, MemoryError, RememberArgs, SearchOptions};
use mindgate_sdk::{Client, Config, current_run};
use serde_json::Value;

/// GETs `url` until `check` accepts the JSON answer (10 s at most).
async fn poll(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = http.get(url).bearer_auth(token).send().await.unwrap();
        if answer.status().is_success() {
            let body: Value = answer.json().await.unwrap();
            if check(&body) {
                return body;
            }
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_calls_of_a_run_are_retriever_and_custom_nodes_of_its_graph() {
    let home = tempfile::tempdir().unwrap();
    let server = mindgate_server::start_for_tests(home.path()).await.unwrap();
    let base = server.base_url();
    let client = Client::new(
        Config::default()
            .app("sdk-memory-test")
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    // No token given: calls find the agent token in the server's agent token file under
    // this home (never the person's control token: the fact is written as `agent`).
    let memory = MemoryClient::for_client(&client)
        .home(Home::at(home.path()))
        .user("alice");
    let (run_id, fact, hits) = client
        .run("memory-agent", (), async {
            let run_id = current_run().unwrap().id().to_owned();
            let fact = memory
                .remember(&RememberArgs::new(
                    "Alice prefers window seats on long flights",
                ))
                .await?;
            let hits = memory
                .search(&SearchOptions::new("window seats").top_k(5))
                .await?;
            // The vector floor travels: no cosine reaches 1.0, so vector search finds
            // nothing with it and the fact without it.
            let mut vector = SearchOptions::new("window seats");
            vector.mode = Some("vector".into());
            let unfloored = memory.search(&vector).await?;
            vector.vector_floor = Some(1.0);
            let floored = memory.search(&vector).await?;
            assert_eq!(unfloored.len(), 1, "{unfloored:?}");
            assert!(floored.is_empty(), "{floored:?}");
            Ok::<_, MemoryError>((run_id, fact, hits))
        })
        .await
        .unwrap();
    let fact_id = fact["id"].as_str().unwrap().to_owned();
    assert_eq!(fact["provenance"], "agent", "{fact}");
    let http = reqwest::Client::new();
    let history: serde_json::Value = http
        .get(format!("{base}/api/memory/records/{fact_id}/history"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(history["events"][0]["actor"], "agent", "{history}");
    let hit = hits
        .iter()
        .find(|h| h.id == fact_id)
        .expect("the fact is found");
    assert!(hit.score > 0.0);
    assert!(
        hit.signals.contains_key("bm25"),
        "signals: {:?}",
        hit.signals
    );
    assert!(client.flush(Duration::from_secs(5)).await);

    let http = reqwest::Client::new();
    let graph = poll(
        &http,
        &format!("{base}/api/runs/{run_id}/graph"),
        &server.token,
        "both memory nodes finished",
        |g| {
            let done = |kind: &str, name: &str| {
                g["nodes"].as_array().is_some_and(|nodes| {
                    nodes.iter().any(|n| {
                        n["kind"] == kind
                            && n["name"] == name
                            && n["instances"][0]["status"] == "ok"
                    })
                })
            };
            done("retriever", "memory:search") && done("custom", "memory:remember")
        },
    )
    .await;
    let node_id = |kind: &str| {
        graph["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["kind"] == kind)
            .map(|n| n["nodeId"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let detail = |node: String| {
        let http = http.clone();
        let url = format!("{base}/api/runs/{run_id}/nodes/{node}");
        let token = server.token.clone();
        async move { poll(&http, &url, &token, "node detail", |_| true).await }
    };
    // The search: input = the options, output = the hits with their signals.
    let search = detail(node_id("retriever")).await;
    let instance = &search["instances"][0];
    assert_eq!(instance["input"]["query"], "window seats");
    assert_eq!(instance["input"]["userId"], "alice");
    assert_eq!(instance["input"]["topK"], 5);
    let shown = instance["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == fact_id.as_str())
        .expect("the hit is the node's output");
    assert!(shown["signals"]["bm25"].as_f64().is_some(), "{shown}");
    assert_eq!(shown["text"], "Alice prefers window seats on long flights");
    // The write: input = the fact, output = the stored fact.
    let remember = detail(node_id("custom")).await;
    let instance = &remember["instances"][0];
    assert_eq!(
        instance["input"]["text"],
        "Alice prefers window seats on long flights"
    );
    assert_eq!(instance["output"]["id"], fact_id.as_str());

    // Supersede, history, status and forget go through too (in the client's implicit run).
    let newer = memory
        .supersede(
            &fact_id,
            "moved",
            &RememberArgs::new("Alice prefers aisle seats now"),
        )
        .await
        .unwrap();
    let newer_id = newer["id"].as_str().unwrap().to_owned();
    assert_ne!(newer_id, fact_id);
    let history = memory.history(&newer_id).await.unwrap();
    assert_eq!(history.chain.len(), 2, "{history:?}");
    assert!(!history.events.is_empty());
    let status = memory.status().await.unwrap();
    assert_eq!(status["userId"], "alice");
    memory.forget(&newer_id, "test done").await.unwrap();
    let after = memory.search(&SearchOptions::new("seats")).await.unwrap();
    assert!(
        after.iter().all(|h| h.id != fact_id && h.id != newer_id),
        "superseded or forgotten fact still found: {after:?}"
    );
    // An API refusal is an error value carrying the API's code (SDK off here: an error of
    // an attached node would hold at the server's default error breakpoint).
    let off = Client::new(
        Config::default()
            .enabled(false)
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    let refused = MemoryClient::for_client(&off)
        .user("alice")
        .search(&SearchOptions::new("   "))
        .await;
    match refused {
        Err(MemoryError::Api { status, code, .. }) => {
            assert_eq!((status, code.as_str()), (400, "bad_request"));
        }
        other => panic!("expected a 400, got {other:?}"),
    }
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_server_down_memory_calls_return_errors_and_the_agent_continues() {
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = Client::new(
        Config::default()
            .url(format!("ws://127.0.0.1:{port}/ingest"))
            .env(std::iter::empty::<(String, String)>()),
    );
    let memory = MemoryClient::for_client(&client).token("t").user("alice");
    let steps = client
        .run("memory-offline", (), async {
            let mut steps = Vec::new();
            let hits = memory
                .search(&SearchOptions::new("anything"))
                .await
                .unwrap_or_default();
            steps.push(format!("hits {}", hits.len()));
            match memory.remember(&RememberArgs::new("a fact")).await {
                Err(MemoryError::Unreachable { .. }) => {
                    steps.push("remember unreachable".to_owned())
                }
                other => steps.push(format!("unexpected {other:?}")),
            }
            assert!(memory.status().await.is_err());
            assert!(matches!(
                memory.append_block("persona", "x").await,
                Err(MemoryError::Unreachable { .. })
            ));
            assert!(
                memory
                    .push_message("s", &serde_json::json!({"role": "user", "content": "hi"}))
                    .await
                    .is_err()
            );
            assert!(
                memory
                    .search_episodes(&SearchOptions::new("x"))
                    .await
                    .unwrap_or_default()
                    .is_empty()
            );
            assert!(memory.procedures(false, None).await.is_err());
            steps.push("carried on".to_owned());
            Ok::<_, MemoryError>(steps)
        })
        .await
        .unwrap();
    assert_eq!(steps, ["hits 0", "remember unreachable", "carried on"]);
    // A write without any token is refused locally, with a message naming the fix; a bad
    // URL is an error value too (in a run of this client, so no global client is made).
    let empty_home = tempfile::tempdir().unwrap();
    let tokenless =
        MemoryClient::new(&format!("http://127.0.0.1:{port}")).home(Home::at(empty_home.path()));
    let bad = MemoryClient::new("not a url");
    let (no_token, bad_url) = client
        .run("memory-misconfigured", (), async {
            let no_token = tokenless.forget("fact_1", "x").await;
            let bad_url = bad.search(&SearchOptions::new("x")).await;
            Ok::<_, MemoryError>((no_token, bad_url))
        })
        .await
        .unwrap();
    let err = no_token.unwrap_err();
    assert!(matches!(err, MemoryError::NoToken { .. }), "{err}");
    assert!(err.to_string().contains("MINDGATE_HOME"), "{err}");
    assert!(matches!(bad_url, Err(MemoryError::BadUrl(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_messages_episodes_and_procedures_are_nodes_of_the_run_graph() {
    let home = tempfile::tempdir().unwrap();
    let server = mindgate_server::start_for_tests(home.path()).await.unwrap();
    let base = server.base_url();
    let http = reqwest::Client::new();
    // An episode and a procedure to find (written over HTTP, as another agent would).
    for (path, body) in [
        (
            "/api/memory/episodes",
            serde_json::json!({"userId": "alice", "summary": "Alice booked a flight to Lisbon", "startedAt": "2026-05-01T10:00:00Z", "endedAt": "2026-05-01T10:30:00Z"}),
        ),
        (
            "/api/memory/procedures",
            serde_json::json!({"userId": "alice", "text": "Always ask Alice about seat preference before booking", "priority": 1.0}),
        ),
    ] {
        let r = http
            .post(format!("{base}{path}"))
            .bearer_auth(&server.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 201, "{path}");
    }
    let client = Client::new(
        Config::default()
            .app("sdk-memory-tiers")
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    let memory = MemoryClient::for_client(&client)
        .home(Home::at(home.path()))
        .user("alice");
    let (run_id, block, receipt, messages, episodes, procedures, listed) = client
        .run("memory-tiers", (), async {
            let run_id = current_run().unwrap().id().to_owned();
            memory
                .put_block("persona", &BlockArgs::new("Alice likes trains."))
                .await?;
            memory.append_block("persona", " And boats.").await?;
            memory
                .replace_block("persona", "trains", "night trains")
                .await?;
            let block = memory.block("persona").await?;
            memory
                .push_message(
                    "trip",
                    &serde_json::json!({"role": "user", "content": "Book me a window seat"}),
                )
                .await?;
            let receipt = memory
                .push_message(
                    "trip",
                    &serde_json::json!({"role": "assistant", "content": "Done"}),
                )
                .await?;
            let messages = memory.messages("trip", Some(1), None).await?;
            let episodes = memory
                .search_episodes(&SearchOptions::new("flight Lisbon"))
                .await?;
            let procedures = memory
                .search_procedures(&SearchOptions::new("seat preference booking"))
                .await?;
            let listed = (
                memory.episodes(false, None).await?.len(),
                memory.procedures(false, Some(10)).await?.len(),
            );
            Ok::<_, MemoryError>((
                run_id, block, receipt, messages, episodes, procedures, listed,
            ))
        })
        .await
        .unwrap();
    assert_eq!(block["value"], "Alice likes night trains. And boats.");
    assert_eq!(receipt.sequence, 2);
    assert_eq!(messages.len(), 1, "after sequence 1: {messages:?}");
    assert_eq!(messages[0]["sequence"], 2);
    assert_eq!(episodes[0].text, "Alice booked a flight to Lisbon");
    assert_eq!(episodes[0].kind, "episodic");
    assert!(episodes.iter().all(|h| h.kind == "episodic"));
    assert_eq!(procedures[0].kind, "procedural");
    assert_eq!(listed, (1, 1));
    assert!(client.flush(Duration::from_secs(5)).await);

    let expected = [
        ("custom", "memory:block_put"),
        ("custom", "memory:block_append"),
        ("custom", "memory:block_replace"),
        ("custom", "memory:block_get"),
        ("custom", "memory:message_push"),
        ("custom", "memory:messages"),
        ("retriever", "memory:episode_search"),
        ("retriever", "memory:procedure_search"),
        ("custom", "memory:episodes"),
        ("custom", "memory:procedures"),
    ];
    let graph = poll(
        &http,
        &format!("{base}/api/runs/{run_id}/graph"),
        &server.token,
        "every memory node finished",
        |g| {
            expected.iter().all(|(kind, name)| {
                g["nodes"].as_array().is_some_and(|nodes| {
                    nodes.iter().any(|n| {
                        n["kind"] == *kind
                            && n["name"] == *name
                            && n["instances"]
                                .as_array()
                                .is_some_and(|i| i.iter().all(|i| i["status"] == "ok"))
                    })
                })
            })
        },
    )
    .await;
    // The episode search's node: input = the options (kinds fixed), output = the hits.
    let node = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "memory:episode_search")
        .map(|n| n["nodeId"].as_str().unwrap().to_owned())
        .unwrap();
    let detail = poll(
        &http,
        &format!("{base}/api/runs/{run_id}/nodes/{node}"),
        &server.token,
        "node detail",
        |_| true,
    )
    .await;
    let instance = &detail["instances"][0];
    assert_eq!(instance["input"]["kinds"], serde_json::json!(["episodic"]));
    assert_eq!(
        instance["output"][0]["text"],
        "Alice booked a flight to Lisbon"
    );

    // Fail-open: a refused write is an error value (SDK off, see above).
    let off = Client::new(
        Config::default()
            .enabled(false)
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    let refused = MemoryClient::for_client(&off)
        .home(Home::at(home.path()))
        .user("alice")
        .replace_block("persona", "no such text", "x")
        .await;
    assert!(
        matches!(refused, Err(MemoryError::Api { .. })),
        "{refused:?}"
    );
    server.stop().await.unwrap();
}
