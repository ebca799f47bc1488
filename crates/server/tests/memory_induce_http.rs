//! `POST /api/memory/procedures/induce` and `POST /api/memory/procedures/{id}/outcome`
//! against a real server whose task-graph homes are the taskgraph fixture sessions: a
//! succeeded task becomes a quarantined induced procedure, again (or a near-identical one)
//! finds it, a failed task is refused naming why, verified reuses promote it at the
//! threshold; the token and the guard apply.
#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;

use mindgate_server::{RunningServer, ServeConfig};
use mindgate_taskgraph::DiscoveryConfig;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures")
}

struct Server {
    _dir: tempfile::TempDir,
    server: RunningServer,
    http: reqwest::Client,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let f = fixtures();
    let serve = ServeConfig {
        task_graph: DiscoveryConfig {
            dsh_sessions: Some(f.join("dsh")),
            pi_sessions: Some(f.join("pi")),
            claude_projects: Some(f.join("claude")),
            codex_sessions: Some(f.join("codex")),
            ..DiscoveryConfig::empty()
        },
        ..ServeConfig::for_tests(dir.path())
    };
    Server {
        server: mindgate_server::start(serve).await.expect("server starts"),
        _dir: dir,
        http: reqwest::Client::new(),
    }
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.server.base_url(), path)
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(self.url(path))
            .bearer_auth(&self.server.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn post_as(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn induce(&self, task: &str) -> (u16, Value) {
        self.post(
            "/api/memory/procedures/induce",
            json!({"taskId": task, "userId": "ana"}),
        )
        .await
    }

    async fn procedures(&self, include_quarantined: bool) -> Vec<Value> {
        let r = self
            .http
            .get(self.url(&format!(
                "/api/memory/procedures?userId=ana&includeQuarantined={include_quarantined}"
            )))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let v: Value = r.json().await.unwrap();
        v["records"].as_array().unwrap().clone()
    }
}

#[tokio::test]
async fn a_succeeded_task_is_induced_deduplicated_and_promoted_by_verified_reuses() {
    let t = start().await;
    let (status, out) = t.induce("dsh-main").await;
    assert_eq!(status, 201, "{out}");
    assert_eq!(out["created"], true);
    assert_eq!(out["taskId"], "dsh-main");
    let p = &out["procedure"];
    let id = p["id"].as_str().unwrap().to_owned();
    assert_eq!(out["link"], format!("#/memory/procedural/{id}"));
    assert_eq!(p["provenance"], "induction");
    assert_eq!(p["status"], "quarantined");
    assert_eq!(p["successCount"], 0);
    assert_eq!(p["steps"][2], "edit {file}");
    assert_eq!(p["variables"][0], "file");
    assert_eq!(p["variableValues"]["file"], json!(["src/draft.ts"]));
    assert_eq!(p["successCriteria"], json!(["`npm test -- draft` passes"]));

    // The same task again: the existing procedure, said so, nothing new stored.
    let (status, again) = t.induce("dsh-main").await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["created"], false);
    assert_eq!(again["matched"]["id"], id.as_str());
    assert_eq!(again["matched"]["sameSteps"], true);
    // Codex then pi by id prefix: the same steps in another order match the first of them.
    let (status, codex) = t.induce("cx-ma").await;
    assert_eq!(status, 201, "{codex}");
    let (status, pi) = t.induce("pi-main").await;
    assert_eq!(status, 200, "{pi}");
    assert_eq!(pi["matched"]["id"], codex["procedure"]["id"]);
    assert_eq!(pi["matched"]["sameSteps"], false);
    assert_eq!(pi["matched"]["similarity"], 1.0);
    assert_eq!(t.procedures(true).await.len(), 2);
    assert!(t.procedures(false).await.is_empty(), "quarantined");

    // Verified reuses: a failure does not count; the threshold promotes.
    let outcome = format!("/api/memory/procedures/{id}/outcome");
    let (status, v) = t.post(&outcome, json!({"success": false})).await;
    assert_eq!(
        (status, v["procedure"]["successCount"].clone()),
        (200, json!(0)),
        "{v}"
    );
    let threshold = v["promoteAfter"].as_u64().unwrap();
    assert_eq!(threshold, 3);
    for n in 1..=threshold {
        let (status, v) = t.post(&outcome, json!({"success": true})).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["procedure"]["successCount"], n);
        assert_eq!(v["promoted"], n == threshold, "{v}");
        let want = if n == threshold {
            "active"
        } else {
            "quarantined"
        };
        assert_eq!(v["procedure"]["status"], want);
    }
    let active = t.procedures(false).await;
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["id"], id.as_str());
    t.server.stop().await.unwrap();
}

/// Issue 23: outcomes reported with the agent token count, but never move a quarantined
/// procedure to active (an agent reporting its own reuses would validate what it induced);
/// the agent cannot validate it either; a person's outcome or validate can.
#[tokio::test]
async fn agent_token_outcomes_never_promote_a_quarantined_procedure() {
    let t = start().await;
    let (status, out) = t.induce("dsh-main").await;
    assert_eq!(status, 201, "{out}");
    let id = out["procedure"]["id"].as_str().unwrap().to_owned();
    let agent = t.server.agent_token.clone();
    let outcome = format!("/api/memory/procedures/{id}/outcome");
    for n in 1..=5 {
        let (status, v) = t.post_as(&agent, &outcome, json!({"success": true})).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["procedure"]["successCount"], n, "{v}");
        assert_eq!(v["promoted"], false, "{v}");
        assert_eq!(v["procedure"]["status"], "quarantined", "{v}");
    }
    assert!(t.procedures(false).await.is_empty(), "still quarantined");
    let validate = format!("/api/memory/records/{id}/validate");
    let (status, v) = t.post_as(&agent, &validate, json!({})).await;
    assert_eq!(status, 403, "{v}");
    assert!(t.procedures(false).await.is_empty(), "still quarantined");
    // A person's outcome past the threshold promotes it.
    let (status, v) = t.post(&outcome, json!({"success": true})).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["promoted"], true, "{v}");
    assert_eq!(v["procedure"]["status"], "active", "{v}");
    t.server.stop().await.unwrap();
}

#[tokio::test]
async fn failed_and_unknown_tasks_and_bad_bodies_are_refused() {
    let t = start().await;
    let (status, e) = t.induce("dsh-fail").await;
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["code"], "conflict");
    assert_eq!(e["reason"], "not_inducible");
    let msg = e["error"].as_str().unwrap();
    assert!(
        msg.contains("task dsh-fail induces no procedure: it failed at test `cargo test --workspace` (tool-f_test)"),
        "{msg}"
    );
    // Claude's fixture task failed in its last turn.
    assert_eq!(t.induce("c-main").await.0, 409);
    assert!(t.procedures(true).await.is_empty(), "nothing stored");

    let (status, e) = t.induce("no-such-task").await;
    assert_eq!(
        (status, e["code"].clone()),
        (404, json!("not_found")),
        "{e}"
    );
    let (status, e) = t.induce("  ").await;
    assert_eq!(status, 400, "{e}");
    // No userId and no --memory-user.
    let (status, e) = t
        .post(
            "/api/memory/procedures/induce",
            json!({"taskId": "dsh-main"}),
        )
        .await;
    assert_eq!(
        (status, e["reason"].clone()),
        (400, json!("bad_argument")),
        "{e}"
    );
    let (status, e) = t
        .post(
            "/api/memory/procedures/induce",
            json!({"taskId": "dsh-main", "userId": "ana", "steps": []}),
        )
        .await;
    assert_eq!(status, 400, "unknown fields are refused: {e}");
    let (status, e) = t
        .post(
            "/api/memory/procedures/nope/outcome",
            json!({"success": true}),
        )
        .await;
    assert_eq!(
        (status, e["code"].clone()),
        (404, json!("not_found")),
        "{e}"
    );
    let (status, e) = t
        .post(
            "/api/memory/procedures/nope/outcome",
            json!({"success": "yes"}),
        )
        .await;
    assert_eq!(status, 400, "{e}");
    t.server.stop().await.unwrap();
}

#[tokio::test]
async fn induce_and_outcome_need_the_token_and_pass_the_guard() {
    let t = start().await;
    for (path, body) in [
        (
            "/api/memory/procedures/induce",
            json!({"taskId": "dsh-main", "userId": "ana"}),
        ),
        ("/api/memory/procedures/x/outcome", json!({"success": true})),
    ] {
        let no_token = t.http.post(t.url(path)).json(&body).send().await.unwrap();
        assert_eq!(no_token.status().as_u16(), 401, "{path}");
        let wrong = t
            .http
            .post(t.url(path))
            .bearer_auth("nope")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status().as_u16(), 401, "{path}");
        let foreign = t
            .http
            .post(t.url(path))
            .bearer_auth(&t.server.token)
            .header("Origin", "http://evil.example")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status().as_u16(), 403, "{path}");
    }
    assert!(t.procedures(true).await.is_empty(), "nothing was written");
    t.server.stop().await.unwrap();
}
