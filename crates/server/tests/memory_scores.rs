//! Scores with a meaning over HTTP (issue 28, item 2), on both memory backends: an
//! unrelated query finds nothing, an exact phrase scores within 0–1 with `bm25Norm`
//! beside the raw `bm25`, a negative cosine never surfaces, a bad `vectorFloor` is a 400,
//! and with quarantined records shown the active "prefers window seats" ranks above the
//! quarantined "prefers aisle seats". The server embeds with the builtin embedder.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use reqwest::Method;
use serde_json::{Value, json};

async fn remember(t: &common::TestServer, body: Value) -> String {
    let (status, fact) = t.send_json(Method::POST, "/api/memory/facts", body).await;
    assert_eq!(status, 201, "{fact}");
    fact["id"].as_str().unwrap().to_owned()
}

async fn search(t: &common::TestServer, query: &str) -> Vec<Value> {
    let (status, body) = t.get(&format!("/api/memory/search?{query}")).await;
    assert_eq!(status, 200, "{query}: {body}");
    body["hits"].as_array().unwrap().clone()
}

async fn scores_mean_something(t: &common::TestServer) {
    remember(t, json!({"userId": "ada", "text": "Ada lives in Bergen"})).await;
    // `peanuts` shares no word with the fact and its builtin cosine is 0.
    for mode in ["hybrid", "vector", "lexical"] {
        let hits = search(t, &format!("userId=ada&query=peanuts&mode={mode}")).await;
        assert!(hits.is_empty(), "{mode}: {hits:?}");
    }
    let hits = search(t, "userId=ada&query=Ada%20lives%20in%20Bergen").await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let signals = &hits[0]["signals"];
    assert!(signals["bm25"].is_number(), "{signals}");
    assert_eq!(signals["bm25Norm"], 1.0, "{signals}");
    let fused = signals["fused"].as_f64().unwrap();
    assert!(fused > 0.0 && fused <= 1.0, "{signals}");
    assert!(hits[0]["score"].as_f64().unwrap() <= 1.0);

    // The builtin cosine of "latte" with this fact is negative (−0.07), with the Bergen
    // fact 0.02: no hit at the default floor (0.1); at floor 0 only the Bergen fact.
    remember(t, json!({"userId": "ada", "text": "Ada likes green tea"})).await;
    assert!(search(t, "userId=ada&query=latte").await.is_empty());
    for q in [
        "userId=ada&query=latte&mode=vector&vectorFloor=0",
        "userId=ada&query=latte&vectorFloor=0",
    ] {
        let hits = search(t, q).await;
        assert_eq!(hits.len(), 1, "{q}: {hits:?}");
        assert_eq!(hits[0]["text"], "Ada lives in Bergen", "{q}");
        assert!(hits[0]["signals"]["vector"].as_f64().unwrap() > 0.0);
    }
    let (status, body) = t
        .get("/api/memory/search?userId=ada&query=tea&vectorFloor=1.5")
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("vectorFloor"),
        "{body}"
    );
}

async fn trusted_before_quarantined(t: &common::TestServer) {
    let window = remember(
        t,
        json!({"userId": "ana", "text": "Ana prefers window seats"}),
    )
    .await;
    let aisle = remember(
        t,
        json!({"userId": "ana", "text": "Ana prefers aisle seats", "provenance": "extraction"}),
    )
    .await;
    let hits = search(
        t,
        "userId=ana&query=Ana%20prefers%20aisle%20seats&includeQuarantined=true",
    )
    .await;
    let order: Vec<&str> = hits.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(order, vec![window.as_str(), aisle.as_str()], "{hits:?}");
    assert_eq!(hits[1]["status"], "quarantined");
    let hits = search(t, "userId=ana&query=aisle%20seats").await;
    let order: Vec<&str> = hits.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(
        order,
        vec![window.as_str()],
        "quarantined stays out by default"
    );
}

#[tokio::test]
async fn scores_have_a_meaning_on_sqlite() {
    let t = common::start().await;
    scores_mean_something(&t).await;
    trusted_before_quarantined(&t).await;
}

#[tokio::test]
async fn scores_have_a_meaning_on_postgres() {
    let Some(schema) = mindgate_testkit::PgSchema::create("mg_scores") else {
        return;
    };
    let memory = schema.url().to_owned();
    let t = common::start_with(|c| {
        c.memory_db = mindgate_memory::MemoryDb::Postgres(Box::new(
            mindgate_store::PostgresUrl::parse(&memory).unwrap(),
        ));
    })
    .await;
    scores_mean_something(&t).await;
    trusted_before_quarantined(&t).await;
}
