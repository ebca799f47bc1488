//! The error vocabulary end to end: `docs/http-api.md` lists exactly the codes of
//! `mindgate_errors::ErrorCode` with their statuses, and the real server answers each kind of
//! failure with its code, over HTTP and on the viewer feed.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use futures_util::SinkExt;
use mindgate_errors::ErrorCode;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

#[test]
fn http_api_doc_lists_every_code_with_its_status() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/http-api.md"),
    )
    .unwrap();
    let table = doc
        .split("<!-- error codes: checked by crates/server/tests/error_codes.rs -->")
        .nth(1)
        .expect("the error-code table marker");
    let rows: Vec<(String, u16)> = table
        .lines()
        .skip_while(|l| !l.starts_with("| `"))
        .take_while(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[1].trim_matches('`').to_owned(),
                cells[2].parse().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u16)> = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str().to_owned(), c.http_status()))
        .collect();
    assert_eq!(rows, expected);
}

#[tokio::test]
async fn http_failures_carry_their_code() {
    let t = common::start().await;
    let (status, body) = t.get("/api/runs/nope").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );
    let (status, body) = t.get("/api/runs?limit=many").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("bad_request")),
        "{body}"
    );
    // A mutation without the token.
    let r = t.http.delete(t.url("/api/runs/nope")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "unauthorized", "{body}");
    // A page of another site.
    let r = t
        .http
        .get(t.url("/api/runs"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "forbidden_host", "{body}");
    let (status, body) = t
        .send_json(reqwest::Method::PATCH, "/api/runs", json!({}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (405, Some("method_not_allowed")),
        "{body}"
    );
    let (status, body) = t
        .send_json(
            reqwest::Method::PUT,
            "/api/mode",
            json!({"mode": "sideways"}),
        )
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("bad_request")),
        "{body}"
    );
    t.server.stop().await.unwrap();
}

#[tokio::test]
async fn feed_errors_carry_their_code() {
    let t = common::start().await;
    let mut reader = t.ui(false).await;
    common::next_of(&mut reader, "welcome").await;
    reader.send(Message::text("not json")).await.unwrap();
    let e = common::next_of(&mut reader, "error").await;
    assert_eq!(e["code"], ErrorCode::BadRequest.as_str(), "{e}");
    reader
        .send(Message::text(
            json!({"type": "control", "requestId": "r1", "envelope": {}}).to_string(),
        ))
        .await
        .unwrap();
    let e = common::next_of(&mut reader, "error").await;
    assert_eq!(e["code"], ErrorCode::Unauthorized.as_str(), "{e}");
    assert_eq!(e["requestId"], "r1", "{e}");
    t.server.stop().await.unwrap();
}
