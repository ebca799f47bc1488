//! Conflicts surfaced over HTTP (issue 28, item 3), on both memory backends: a fact with a
//! single-valued predicate answers `conflictsWith` naming the active fact of the same
//! subject with another object, when remembered and when a person validates it.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use reqwest::Method;
use serde_json::{Value, json};

fn seat(text: &str, object: &str) -> Value {
    json!({"userId": "ana", "text": text, "subject": "Ana", "predicate": "seat_preference", "object": object})
}

async fn conflicts_surface(t: &common::TestServer) {
    let (status, window) = t
        .send_json(
            Method::POST,
            "/api/memory/facts",
            seat("Ana prefers window seats", "window"),
        )
        .await;
    assert_eq!(status, 201, "{window}");
    assert!(window.get("conflictsWith").is_none(), "{window}");
    let mut aisle = seat("Ana prefers aisle seats", "aisle");
    aisle["provenance"] = json!("extraction");
    let (status, aisle) = t.send_json(Method::POST, "/api/memory/facts", aisle).await;
    assert_eq!(status, 201, "{aisle}");
    assert_eq!(aisle["status"], "quarantined");
    assert_eq!(aisle["conflictsWith"], json!([window["id"]]), "{aisle}");
    let id = aisle["id"].as_str().unwrap();
    let (status, validated) = t
        .send_json(
            Method::POST,
            &format!("/api/memory/records/{id}/validate"),
            json!({}),
        )
        .await;
    assert_eq!(status, 200, "{validated}");
    assert_eq!(validated["status"], "active");
    assert_eq!(
        validated["conflictsWith"],
        json!([window["id"]]),
        "{validated}"
    );
    // A multi-valued predicate never conflicts.
    let (_, jazz) = t
        .send_json(
            Method::POST,
            "/api/memory/facts",
            json!({"userId": "ana", "text": "Ana likes jazz", "subject": "Ana", "predicate": "likes", "object": "jazz"}),
        )
        .await;
    let (_, tea) = t
        .send_json(
            Method::POST,
            "/api/memory/facts",
            json!({"userId": "ana", "text": "Ana likes tea", "subject": "Ana", "predicate": "likes", "object": "tea"}),
        )
        .await;
    assert!(
        jazz.get("conflictsWith").is_none() && tea.get("conflictsWith").is_none(),
        "{tea}"
    );
}

#[tokio::test]
async fn conflicts_surface_on_sqlite() {
    let t = common::start().await;
    conflicts_surface(&t).await;
}

#[tokio::test]
async fn conflicts_surface_on_postgres() {
    let Some(schema) = mindgate_testkit::PgSchema::create("mg_conflicts") else {
        return;
    };
    let memory = schema.url().to_owned();
    let t = common::start_with(|c| {
        c.memory_db = mindgate_memory::MemoryDb::Postgres(Box::new(
            mindgate_store::PostgresUrl::parse(&memory).unwrap(),
        ));
    })
    .await;
    conflicts_surface(&t).await;
}
