//! The routes the viewer's memory inspector adds to `/api/memory/…`: a fact's versions at an
//! instant on both time axes (`/records/{id}/belief`), lists narrowed to an agent or a
//! session, insights written over HTTP, and the feed taking the token as `?token=`.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

async fn get(t: &common::TestServer, path: &str) -> Value {
    let (status, body) = t.get(path).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

async fn send(t: &common::TestServer, method: Method, path: &str, body: Value) -> Value {
    let (status, got) = t.send_json(method, path, body).await;
    assert!((200..300).contains(&status), "{path}: {status} {got}");
    got
}

/// Writes probe facts until the store's clock has moved past `after` (ISO-8601), so the next
/// write gets a later timestamp.
async fn tick_past(t: &common::TestServer, after: &str) {
    loop {
        let probe = send(
            t,
            Method::POST,
            "/api/memory/facts",
            json!({"userId": "probe", "text": "clock probe"}),
        )
        .await;
        if probe["createdAt"].as_str().unwrap() > after {
            return;
        }
    }
}

fn enc(iso: &str) -> String {
    iso.replace(':', "%3A")
}

#[tokio::test]
async fn belief_names_the_version_valid_and_believed_at_an_instant() {
    let t = common::start().await;
    let old = send(&t, Method::POST, "/api/memory/facts", json!({"userId": "ana", "text": "Ana lives in Lisbon", "validFrom": "2023-01-01T00:00:00Z"})).await;
    let old_id = old["id"].as_str().unwrap().to_owned();
    tick_past(&t, old["createdAt"].as_str().unwrap()).await;
    let new = send(&t, Method::POST, &format!("/api/memory/records/{old_id}/supersede"), json!({"reason": "moved", "text": "Ana lives in Porto", "validFrom": "2025-03-01T00:00:00Z"})).await;
    let new_id = new["id"].as_str().unwrap().to_owned();

    // Now: Porto is believed and valid.
    let now = get(&t, &format!("/api/memory/records/{new_id}/belief")).await;
    assert_eq!(now["believed"], json!([new_id]), "{now}");
    assert_eq!(now["valid"], json!(new_id));
    // Valid time before Porto's validFrom: Lisbon held then (as known now), from either id.
    let mid_2024 = get(
        &t,
        &format!(
            "/api/memory/records/{old_id}/belief?asOf={}",
            enc("2024-06-01T00:00:00Z")
        ),
    )
    .await;
    assert_eq!(mid_2024["valid"], json!(old_id), "{mid_2024}");
    assert_eq!(mid_2024["asOf"], "2024-06-01T00:00:00.000Z");
    // Before either version's validity: nothing held.
    let early = get(
        &t,
        &format!(
            "/api/memory/records/{new_id}/belief?asOf={}",
            enc("2022-01-01T00:00:00Z")
        ),
    )
    .await;
    assert!(early.get("valid").is_none(), "{early}");
    // Transaction time before the supersession: the store believed Lisbon, as search does.
    let known = old["createdAt"].as_str().unwrap();
    let then = get(
        &t,
        &format!("/api/memory/records/{new_id}/belief?knownAt={}", enc(known)),
    )
    .await;
    assert_eq!(then["believed"], json!([old_id]), "{then}");
    assert_eq!(then["valid"], json!(old_id));
    let search = get(
        &t,
        &format!(
            "/api/memory/search?userId=ana&query=Ana%20lives&knownAt={}",
            enc(known)
        ),
    )
    .await;
    let ids: Vec<&str> = search["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![old_id.as_str()], "{search}");

    // A quarantined version is never believed.
    let q = send(
        &t,
        Method::POST,
        "/api/memory/facts",
        json!({"userId": "ana", "text": "Ana likes figs", "provenance": "extraction"}),
    )
    .await;
    let q_id = q["id"].as_str().unwrap();
    let at = get(&t, &format!("/api/memory/records/{q_id}/belief")).await;
    assert_eq!(at["believed"], json!([]), "{at}");
    assert!(at.get("valid").is_none(), "{at}");

    // Bad input: a clear 400; an unknown id: 404.
    let (status, bad) = t
        .get(&format!(
            "/api/memory/records/{new_id}/belief?asOf=yesterday"
        ))
        .await;
    assert_eq!((status, bad["code"].clone()), (400, json!("bad_request")));
    let (status, _) = t.get("/api/memory/records/fact_nope/belief").await;
    assert_eq!(status, 404);
    let (status, _) = t
        .get(&format!("/api/memory/records/{new_id}/belief?when=now"))
        .await;
    assert_eq!(status, 400);
    t.server.stop().await.unwrap();
}

#[tokio::test]
async fn records_narrow_to_an_agent_or_a_session() {
    let t = common::start().await;
    for (text, agent, session) in [
        ("Ana plans a trip", Some("planner"), None),
        ("Ana booked a hotel", Some("booker"), Some("s1")),
        ("Ana likes trains", None, Some("s1")),
    ] {
        send(
            &t,
            Method::POST,
            "/api/memory/facts",
            json!({"userId": "ana", "text": text, "agentId": agent, "sessionId": session}),
        )
        .await;
    }
    let texts = |v: &Value| -> Vec<String> {
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let planner = get(&t, "/api/memory/records?userId=ana&agentId=planner").await;
    assert_eq!(texts(&planner), vec!["Ana plans a trip"]);
    let s1 = get(&t, "/api/memory/records?userId=ana&sessionId=s1").await;
    assert_eq!(texts(&s1), vec!["Ana booked a hotel", "Ana likes trains"]);
    let both = get(
        &t,
        "/api/memory/records?userId=ana&agentId=booker&sessionId=s1",
    )
    .await;
    assert_eq!(texts(&both), vec!["Ana booked a hotel"]);
    let all = get(&t, "/api/memory/records?userId=ana&agentId=&sessionId=").await;
    assert_eq!(texts(&all).len(), 3);
    t.server.stop().await.unwrap();
}

#[tokio::test]
async fn insights_are_written_over_http_quarantined_with_their_citations() {
    let t = common::start().await;
    let fact = send(
        &t,
        Method::POST,
        "/api/memory/facts",
        json!({"userId": "ana", "text": "Ana drinks tea"}),
    )
    .await;
    let fact_id = fact["id"].as_str().unwrap();
    let insight = send(
        &t,
        Method::POST,
        "/api/memory/insights",
        json!({"userId": "ana", "text": "Ana's mornings start with tea", "cites": [fact_id]}),
    )
    .await;
    assert_eq!(insight["kind"], "insight");
    assert_eq!(insight["status"], "quarantined");
    assert_eq!(insight["provenance"], "reflection");
    assert_eq!(insight["cites"], json!([fact_id]));
    let listed = get(
        &t,
        "/api/memory/insights?userId=ana&includeQuarantined=true",
    )
    .await;
    assert_eq!(listed["records"][0]["id"], insight["id"]);
    // Without a token: 401; citing nothing live: a clear 400.
    let resp = t
        .http
        .post(t.url("/api/memory/insights"))
        .json(&json!({"userId": "ana", "text": "x", "cites": [fact_id]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let (status, bad) = t
        .send_json(
            Method::POST,
            "/api/memory/insights",
            json!({"userId": "ana", "text": "x", "cites": []}),
        )
        .await;
    assert_eq!(
        (status, bad["code"].clone()),
        (400, json!("bad_request")),
        "{bad}"
    );
    t.server.stop().await.unwrap();
}

#[tokio::test]
async fn the_feed_takes_the_token_as_a_query_parameter() {
    let t = common::start().await;
    send(
        &t,
        Method::POST,
        "/api/memory/facts",
        json!({"userId": "ana", "text": "fed"}),
    )
    .await;
    let mut resp = t
        .http
        .get(t.url(&format!(
            "/api/memory/feed?after=0&token={}",
            t.server.token
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let chunk = tokio::time::timeout(Duration::from_secs(10), resp.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&chunk).contains("event: change"));
    t.server.stop().await.unwrap();
}
