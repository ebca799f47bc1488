//! Editing a held tool call's input through the SDK, against the real server
//! in-process: the body runs with the edited input; an edit of the wrong
//! shape or type is refused (`exec.refused`) and the gate keeps holding.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mindgate_sdk::{Aborted, Client, Config};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Query {
    city: String,
    days: u32,
}

struct Api {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send().await.unwrap().json().await.unwrap()
    }

    async fn wait_pause(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let pauses = self
                .call(reqwest::Method::GET, "/api/pauses?wait=2", None)
                .await;
            if let Some(p) = pauses["pauses"].as_array().and_then(|a| a.first()) {
                return p.clone();
            }
            assert!(Instant::now() < deadline, "no pause appeared");
        }
    }

    async fn resume(&self, pause: &Value, body: Value) -> Value {
        let path = format!(
            "/api/runs/{}/pauses/{}/resume",
            pause["runId"].as_str().unwrap(),
            pause["pauseId"].as_str().unwrap()
        );
        self.call(reqwest::Method::POST, &path, Some(body)).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_tool_call_runs_with_the_edited_input_and_bad_edits_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let server = mindgate_server::start_for_tests(home.path()).await.unwrap();
    let api = Api {
        http: reqwest::Client::new(),
        base: server.base_url(),
        token: server.token.clone(),
    };
    let added = api
        .call(
            reqwest::Method::POST,
            "/api/breakpoints",
            Some(json!({"kind": "tool", "name": "weather"})),
        )
        .await;
    assert_eq!(added["added"], true);
    let client = Client::new(
        Config::default()
            .app("sdk-edit-input-test")
            .url(server.ingest_url())
            .env(std::iter::empty::<(String, String)>()),
    );
    assert!(client.ready(Duration::from_secs(5)).await);
    let seen: Arc<Mutex<Vec<Query>>> = Arc::default();
    let app = {
        let (client, seen) = (client.clone(), seen.clone());
        tokio::spawn(async move {
            client
                .run("edit", json!({}), async {
                    client
                        .node(mindgate_sdk::NodeKind::Tool, "weather")
                        .call_with_input(
                            Query {
                                city: "Osloo".into(),
                                days: 3,
                            },
                            |q, _ctx| {
                                let seen = seen.clone();
                                async move {
                                    seen.lock().unwrap().push(q.clone());
                                    Ok::<_, Aborted>(format!("{} days in {}", q.days, q.city))
                                }
                            },
                        )
                        .await
                })
                .await
        })
    };

    let pause = api.wait_pause().await;
    assert_eq!(pause["nodeId"], "tool:weather");
    assert_eq!(pause["editable"], true);

    // Wrong JSON type: `shape`; right type, wrong fields: `schema`. Nothing ran.
    let shape = api
        .resume(&pause, json!({"action": "continue", "input": ["Oslo"]}))
        .await;
    assert_eq!(shape["result"], "refused", "{shape}");
    assert!(
        shape["message"].as_str().unwrap().contains("an array"),
        "{shape}"
    );
    let schema = api
        .resume(
            &pause,
            json!({"action": "continue", "input": {"city": "Oslo", "days": "three"}}),
        )
        .await;
    assert_eq!(schema["result"], "refused", "{schema}");
    assert!(
        schema["message"].as_str().unwrap().contains("Query"),
        "{schema}"
    );
    let inject_with_input = api
        .resume(
            &pause,
            json!({"action": "retry", "input": {"city": "Oslo", "days": 3}}),
        )
        .await;
    assert_eq!(inject_with_input["result"], "refused");
    assert!(seen.lock().unwrap().is_empty(), "the body ran while held");
    assert_eq!(api.wait_pause().await["pauseId"], pause["pauseId"]);

    let ok = api
        .resume(
            &pause,
            json!({"action": "continue", "input": {"city": "Oslo", "days": 2}}),
        )
        .await;
    assert_eq!(ok["result"], "resumed", "{ok}");
    let out = tokio::time::timeout(Duration::from_secs(10), app)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(out, "2 days in Oslo");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Query {
            city: "Oslo".into(),
            days: 2
        }]
    );
    assert!(client.flush(Duration::from_secs(5)).await);

    // The stored events: three refusals with their codes, then the edit.
    let run_id = pause["runId"].as_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let events = loop {
        let page = api
            .call(
                reqwest::Method::GET,
                &format!("/api/runs/{run_id}/events?limit=5000"),
                None,
            )
            .await;
        let events = page["events"].as_array().cloned().unwrap_or_default();
        if events.iter().any(|e| e["type"] == "run.finished") {
            break events;
        }
        assert!(Instant::now() < deadline, "run never finished");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let codes: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "exec.refused")
        .map(|e| e["payload"]["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["shape", "schema", "unsupported"]);
    let resumed = events
        .iter()
        .find(|e| e["type"] == "exec.resumed")
        .expect("resumed");
    assert_eq!(
        resumed["payload"]["edited"]["after"],
        json!({"city": "Oslo", "days": 2})
    );
    assert_eq!(
        resumed["payload"]["principal"],
        json!({"kind": "http"}),
        "{events:#?}"
    );
    // The release is on the wire before anything the released body does.
    let position = |t: &str| events.iter().position(|e| e["type"] == t).unwrap();
    assert!(
        position("exec.resumed") < position("node.finished"),
        "{events:#?}"
    );
    let paused = events
        .iter()
        .find(|e| e["type"] == "exec.paused")
        .expect("paused");
    assert_eq!(paused["payload"]["editable"], true);
    client.shutdown(Duration::from_secs(2)).await;
    server.stop().await.unwrap();
}
