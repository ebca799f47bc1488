//! `POST /api/memory/sessions/{sessionId}/consolidate` against a real server and a
//! stand-in chat endpoint on 127.0.0.1: 503 `unavailable` without a chat model, the
//! control token required, quarantined records with their provenance and citations, and a
//! malformed completion refused with nothing written.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use mindgate_memory::consolidate::ChatConfig;
use mindgate_testkit::chat_stand_in::{Answer, ChatStandIn};
use reqwest::Method;
use serde_json::{Value, json};

const PATH: &str = "/api/memory/sessions/trip/consolidate";

async fn seed(t: &common::TestServer) {
    for text in [
        "I moved to Tbilisi last spring.",
        "I cycle to work every day.",
    ] {
        let (status, body) = t
            .send_json(
                Method::POST,
                "/api/memory/sessions/trip/messages",
                json!({"userId": "ana", "message": {"role": "user", "content": text}}),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
}

async fn quarantine(t: &common::TestServer) -> Vec<Value> {
    let (status, body) = t.get("/api/memory/quarantine?userId=ana").await;
    assert_eq!(status, 200, "{body}");
    body["records"].as_array().unwrap().clone()
}

#[tokio::test]
async fn without_a_chat_model_the_route_is_unavailable_with_a_clear_message() {
    let t = common::start().await;
    seed(&t).await;
    let (status, body) = t.send_json(Method::POST, PATH, json!({})).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "unavailable");
    assert_eq!(body["reason"], "not_configured");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("MINDGATE_CHAT_URL"),
        "{body}"
    );
}

#[tokio::test]
async fn consolidation_lands_quarantined_with_citations_and_needs_the_token() {
    let stand_in = ChatStandIn::start(vec![
        Answer::Completion(
            r#"{"summary": "Ana describes her life in Tbilisi.",
                "facts": [
                  {"text": "Ana lives in Tbilisi", "subject": "Ana", "predicate": "lives_in", "object": "Tbilisi"},
                  {"text": "Ana cycles to work", "subject": "Ana", "predicate": "commutes_by", "object": "bicycle"}
                ]}"#
            .to_owned(),
        ),
        Answer::Completion(
            r#"{"insights": [{"text": "Ana has an active city life in Tbilisi", "cites": ["f1", "f2", "m2"]}]}"#
                .to_owned(),
        ),
    ])
    .unwrap();
    let url = stand_in.url().to_owned();
    let t = common::start_with(|c| c.memory_chat = Some(ChatConfig::new(url, "stand-in"))).await;
    seed(&t).await;

    let no_token = t
        .http
        .post(t.url(PATH))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_token.status().as_u16(), 401);
    assert!(stand_in.requests().is_empty(), "no call without the token");

    // An empty body is `{}`.
    let r = t
        .http
        .post(t.url(PATH))
        .bearer_auth(&t.server.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["messages"], 2);
    assert_eq!(report["calls"], 2);
    let facts = report["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 2);
    for f in facts {
        assert_eq!(
            (f["provenance"].as_str(), f["status"].as_str()),
            (Some("extraction"), Some("quarantined"))
        );
    }
    let insight = &report["insights"][0];
    assert_eq!(insight["provenance"], "reflection");
    assert_eq!(insight["status"], "quarantined");
    assert_eq!(insight["cites"].as_array().unwrap().len(), 3);
    assert_eq!(insight["cites"][0], facts[0]["id"]);
    assert_eq!(
        quarantine(&t).await.len(),
        4,
        "episode, two facts, the insight"
    );
    assert!(
        stand_in
            .requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );

    // Another user's name finds no such session.
    let (status, body) = t
        .send_json(Method::POST, PATH, json!({"userId": "bob"}))
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = t
        .send_json(Method::POST, PATH, json!({"user": "ana"}))
        .await;
    assert_eq!(status, 400, "unknown fields are refused: {body}");
}

#[tokio::test]
async fn a_malformed_completion_is_refused_and_nothing_is_written() {
    let stand_in = ChatStandIn::start(vec![Answer::Completion(
        "I could not find any facts, sorry.".to_owned(),
    )])
    .unwrap();
    let url = stand_in.url().to_owned();
    let t = common::start_with(|c| {
        let mut chat = ChatConfig::new(url, "stand-in");
        chat.api_key = Some("sk-server".to_owned());
        c.memory_chat = Some(chat);
    })
    .await;
    seed(&t).await;
    let (status, body) = t.send_json(Method::POST, PATH, json!({})).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "malformed_completion");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("nothing was written"),
        "{body}"
    );
    assert!(quarantine(&t).await.is_empty());
    let requests = stand_in.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-server")
    );
}

/// Runs `f` with a connection to `url` on a thread of its own (the sync client must not
/// run on the test's async runtime).
fn with_pg<T: Send + 'static>(
    url: &str,
    f: impl FnOnce(&mut postgres::Client) -> T + Send + 'static,
) -> T {
    let url = url.to_owned();
    std::thread::spawn(move || {
        let mut c = mindgate_testkit::pg_client(&url);
        f(&mut c)
    })
    .join()
    .expect("the admin thread")
}

#[tokio::test]
async fn consolidation_answers_on_a_postgres_memory_too() {
    let Some(schema) = mindgate_testkit::PgSchema::create("mg_consolidate") else {
        return;
    };
    let memory = schema.url().to_owned();
    let stand_in = ChatStandIn::start(vec![
        Answer::Completion(
            r#"{"summary": "Ana describes her life in Tbilisi.",
                "facts": [{"text": "Ana lives in Tbilisi", "subject": "Ana", "predicate": "lives_in", "object": "Tbilisi"}]}"#
                .to_owned(),
        ),
        Answer::Completion(r#"{"insights": []}"#.to_owned()),
    ])
    .unwrap();
    let url = stand_in.url().to_owned();
    let t = common::start_with(|c| {
        c.memory_chat = Some(ChatConfig::new(url, "stand-in"));
        c.memory_db = mindgate_memory::MemoryDb::Postgres(Box::new(
            mindgate_store::PostgresUrl::parse(&memory).unwrap(),
        ));
    })
    .await;
    seed(&t).await;
    let (status, report) = t.send_json(Method::POST, PATH, json!({})).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["messages"], 2);
    assert_eq!(report["facts"][0]["text"], "Ana lives in Tbilisi");
    assert_eq!(report["facts"][0]["status"], "quarantined");
    assert_eq!(quarantine(&t).await.len(), 2, "the episode and the fact");
    // Stored in PostgreSQL: the schema's table holds them.
    let count = format!(
        "SELECT COUNT(*) FROM {}.memory_items WHERE kind <> 'session'",
        schema.name()
    );
    let rows: i64 = with_pg(schema.admin_url(), move |c| {
        c.query_one(&count, &[]).expect("count").get(0)
    });
    assert_eq!(rows, 2);
}
