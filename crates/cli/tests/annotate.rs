//! Annotations through every write path, with the real binary: `mindgate annotate` writes
//! through the running server that holds the SQLite file (its token from the token file in
//! the home) and directly into a file nobody holds — one rule; `/api/annotations` lists by
//! run, node and label, edits and deletes with the history kept, records the agent token's
//! annotations as an agent's (which may not change a person's), refuses a write without a
//! token and bad input with a clear message; `GET /api/runs?label=` filters the run list;
//! `export --jsonl` carries the annotations and `import` brings them back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{bin, mindgate, text};

use mindgate_home::{Home, token_file};
use mindgate_testkit::{ServeProcess, frames};
use serde_json::{Value, json};

/// A request with the agent token.
fn as_agent(server: &ServeProcess, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let agent = token_file::read_agent(&Home::at(server.home().path()), server.port())
        .expect("agent token file");
    let agent_ua: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("{}{path}", server.base_url());
    let auth = format!("Bearer {}", agent.token);
    let mut resp = match body {
        Some(b) if method == "POST" => agent_ua
            .post(&url)
            .header("Authorization", &auth)
            .content_type("application/json")
            .send(b.to_string()),
        Some(b) => agent_ua
            .patch(&url)
            .header("Authorization", &auth)
            .content_type("application/json")
            .send(b.to_string()),
        None => agent_ua.delete(&url).header("Authorization", &auth).call(),
    }
    .unwrap();
    let status = resp.status().as_u16();
    let body = resp.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

#[test]
fn annotations_are_written_by_one_rule_listed_edited_and_carried() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_s = db.to_str().unwrap();
    let server = ServeProcess::start(bin(), &["--db", db_s]);
    server.ingest("r1", &frames::every_event("r1"));
    server.ingest("r2", &frames::every_event("r2"));
    let home = server.home().path().to_path_buf();

    // The CLI writes through the server holding the file.
    let out = mindgate(
        &[
            "annotate",
            "r1",
            "--node",
            "llm:m",
            "--instance",
            "m1",
            "--down",
            "--label",
            "hallucination",
            "--comment",
            "made up a city",
            "--json",
            "--db",
            db_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    let made: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(made["author"]["kind"], "person");
    let id = made["id"].as_str().unwrap().to_owned();
    let (status, listed) = server
        .get("/api/annotations?runId=r1&nodeId=llm:m")
        .unwrap();
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed["annotations"],
        json!([made]),
        "the server stored what the CLI printed"
    );

    // Bad input: a clear message, nothing stored.
    let out = mindgate(&["annotate", "r1", "--score", "3", "--db", db_s], &home);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("from 0 to 1"), "{}", text(&out));
    let (status, body) = server
        .request(
            "POST",
            "/api/annotations",
            Some(&json!({"runId": "r1", "verdit": "up"})),
            true,
        )
        .unwrap();
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("verdit"), "{body}");
    let (status, _) = server
        .request(
            "POST",
            "/api/annotations",
            Some(&json!({"runId": "r1", "verdict": "up"})),
            false,
        )
        .unwrap();
    assert_eq!(status, 401, "a write needs a token");
    let (status, body) = server
        .request(
            "POST",
            "/api/annotations",
            Some(&json!({"runId": "nope", "verdict": "up"})),
            true,
        )
        .unwrap();
    assert_eq!(status, 404, "{body}");

    // The agent token writes as an agent, and may not change a person's annotation.
    let (status, by_agent) = as_agent(
        &server,
        "POST",
        "/api/annotations",
        Some(&json!({"runId": "r2", "score": 0.3, "labels": ["slow"]})),
    );
    assert_eq!(status, 201, "{by_agent}");
    assert_eq!(by_agent["author"]["kind"], "agent");
    let (status, body) = as_agent(&server, "DELETE", &format!("/api/annotations/{id}"), None);
    assert_eq!(status, 403, "{body}");

    // A person edits, then deletes: the history keeps every version.
    let (status, edited) = server
        .request(
            "PATCH",
            &format!("/api/annotations/{id}"),
            Some(&json!({"verdict": "up", "labels": ["golden"]})),
            true,
        )
        .unwrap();
    assert_eq!(status, 200, "{edited}");
    assert_eq!(
        (edited["verdict"].as_str(), edited["version"].as_u64()),
        (Some("up"), Some(2))
    );
    let (_, runs) = server.get("/api/runs?label=golden").unwrap();
    let ids: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, vec!["r1"], "the run list filters by label");
    let (_, runs) = server.get("/api/runs?verdict=up").unwrap();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
    let (status, body) = server.get("/api/runs?verdict=maybe").unwrap();
    assert_eq!(status, 400, "{body}");

    // The export carries the live annotations.
    let export = dir.path().join("r1.jsonl");
    let out = mindgate(
        &[
            "export",
            "r1",
            "--jsonl",
            export.to_str().unwrap(),
            "--db",
            db_s,
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));

    let (status, _) = server
        .request("DELETE", &format!("/api/annotations/{id}"), None, true)
        .unwrap();
    assert_eq!(status, 200);
    let (_, one) = server.get(&format!("/api/annotations/{id}")).unwrap();
    assert!(one["deletedAt"].is_i64(), "{one}");
    let actions: Vec<&str> = one["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["action"].as_str())
        .collect();
    assert_eq!(actions, vec!["edit", "delete"]);
    assert_eq!(one["history"][0]["before"]["comment"], "made up a city");
    let (_, listed) = server.get("/api/annotations?runId=r1").unwrap();
    assert_eq!(listed["annotations"], json!([]));
    assert!(server.stop().success());

    // Nobody holds the file now: the CLI writes directly, by the same rule.
    let out = mindgate(
        &["annotate", "r2", "--up", "--label", "golden", "--db", db_s],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("thumbs up"), "{}", text(&out));
    let out = mindgate(
        &["runs", "--label", "golden", "--json", "--db", db_s],
        &home,
    );
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs[0]["id"], "r2");

    // The import brings the exported annotations back.
    let other = dir.path().join("other.db");
    let out = mindgate(
        &[
            "import",
            export.to_str().unwrap(),
            "--db",
            other.to_str().unwrap(),
        ],
        &home,
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = mindgate(
        &[
            "runs",
            "--label",
            "golden",
            "--json",
            "--db",
            other.to_str().unwrap(),
        ],
        &home,
    );
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs[0]["id"], "r1", "{runs}");
}
