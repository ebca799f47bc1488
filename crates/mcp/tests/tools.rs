//! Every tool, called on a database filled through the store's write API, on
//! the task-graph crate's session fixtures, and (for the control tools) on a
//! stand-in server speaking the HTTP API.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mindgate_mcp::params::{
    AgentArg, DetailArg, DiffRunsArgs, FindErrorsArgs, GetNodeArgs, GetRunArgs, GetTaskGraphArgs,
    GetThreadArgs, ListPausesArgs, ListRunsArgs, ListTasksArgs, ListThreadsArgs, ResumeArgs,
    RunStatusArg, SearchEventsArgs, SinceArg,
};
use mindgate_mcp::{McpConfig, MindgateMcp, ServerEndpoint};
use mindgate_protocol::{ResumeAction, parse_envelope};
use mindgate_store::{NewEvent, RunStore, Writer, WriterConfig};
use mindgate_taskgraph::DiscoveryConfig;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

fn ev(run: &str, seq: u64, ts: i64, ty: &str, payload: Value) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
        .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid event")
}

const T0: i64 = 1_700_000_000_000;

/// Two runs: `r-ok` (agent → llm with usage, a tool that fails then recovers
/// on retry, a big output) and `r-fail` (a tool and the run fail with "card declined").
fn fill(path: &Path) {
    let (w, _) = Writer::open(path, WriterConfig::default(), None).expect("writer");
    let big = "x".repeat(5_000);
    let events = vec![
        ev(
            "r-ok",
            0,
            T0,
            "run.started",
            json!({"app": "shop", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "checkout"}}),
        ),
        ev(
            "r-ok",
            1,
            T0 + 1,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "i-a"}),
        ),
        ev(
            "r-ok",
            2,
            T0 + 2,
            "node.started",
            json!({"nodeId": "llm:plan", "kind": "llm", "name": "plan", "instanceId": "l1", "parentId": "agent:a", "input": {"model": "gpt-4o-mini", "prompt": "plan the trip"}}),
        ),
        ev(
            "r-ok",
            3,
            T0 + 3,
            "node.token",
            json!({"nodeId": "llm:plan", "instanceId": "l1", "deltas": [{"t": "text", "v": "Book "}, {"t": "text", "v": "flights"}]}),
        ),
        ev(
            "r-ok",
            4,
            T0 + 50,
            "node.finished",
            json!({"nodeId": "llm:plan", "instanceId": "l1", "durationMs": 48, "status": "ok", "output": "Book flights", "usage": {"inputTokens": 120, "outputTokens": 30}}),
        ),
        ev(
            "r-ok",
            5,
            T0 + 51,
            "node.started",
            json!({"nodeId": "tool:search", "kind": "tool", "name": "search", "instanceId": "c1", "parentId": "agent:a", "input": {"q": "flights to Lisbon"}}),
        ),
        ev(
            "r-ok",
            6,
            T0 + 52,
            "node.error",
            json!({"nodeId": "tool:search", "instanceId": "c1", "error": {"name": "TimeoutError", "message": "upstream timed out", "stack": "line 1\nline 2"}}),
        ),
        ev(
            "r-ok",
            7,
            T0 + 60,
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "c1", "durationMs": 9, "status": "ok", "output": {"results": big}}),
        ),
        ev(
            "r-ok",
            8,
            T0 + 61,
            "node.started",
            json!({"nodeId": "tool:search", "kind": "tool", "name": "search", "instanceId": "c2", "parentId": "agent:a", "input": {"q": "hotels"}}),
        ),
        ev(
            "r-ok",
            9,
            T0 + 64,
            "node.finished",
            json!({"nodeId": "tool:search", "instanceId": "c2", "durationMs": 3, "status": "ok", "output": ["h1"]}),
        ),
        ev(
            "r-ok",
            10,
            T0 + 70,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "i-a", "durationMs": 69, "status": "ok"}),
        ),
        ev("r-ok", 11, T0 + 71, "run.finished", json!({"status": "ok"})),
        ev(
            "r-fail",
            0,
            T0 + 1_000,
            "run.started",
            json!({"app": "billing", "sdk": {"name": "t", "version": "1"}, "meta": {"name": "charge"}}),
        ),
        ev(
            "r-fail",
            1,
            T0 + 1_001,
            "node.started",
            json!({"nodeId": "tool:charge_card", "kind": "tool", "name": "charge_card", "instanceId": "k1", "input": {"amount_usd": 99.0}}),
        ),
        ev(
            "r-fail",
            2,
            T0 + 1_002,
            "node.error",
            json!({"nodeId": "tool:charge_card", "instanceId": "k1", "error": {"name": "RuntimeError", "message": "card declined", "stack": "Traceback\n  charge()\nRuntimeError: card declined"}}),
        ),
        ev(
            "r-fail",
            3,
            T0 + 1_003,
            "node.finished",
            json!({"nodeId": "tool:charge_card", "instanceId": "k1", "durationMs": 2, "status": "error"}),
        ),
        ev(
            "r-fail",
            4,
            T0 + 1_004,
            "run.finished",
            json!({"status": "error", "error": {"name": "RuntimeError", "message": "card declined"}}),
        ),
    ];
    for e in events {
        w.append(e).expect("append");
    }
    w.flush().expect("flush");
    w.close().expect("close");
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures")
}

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    server: MindgateMcp,
}

fn config(home: &Path) -> McpConfig {
    let mut c = McpConfig::new(home);
    c.discovery = DiscoveryConfig {
        // The four agents' fixture homes (not the reader-fidelity fixtures beside them).
        extra_paths: ["dsh", "pi", "claude", "codex"]
            .iter()
            .map(|a| fixtures().join(a))
            .collect(),
        ..DiscoveryConfig::empty()
    };
    c.port = Some(4999);
    c
}

fn env() -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().to_path_buf();
    fill(&home.join("mindgate.db"));
    let server = MindgateMcp::new(config(&home));
    Env {
        _dir: dir,
        home,
        server,
    }
}

fn ok(r: &CallToolResult) -> (&str, &Value) {
    let text = r
        .content
        .first()
        .and_then(|c| c.as_text())
        .map_or("", |t| t.text.as_str());
    assert_eq!(r.is_error, Some(false), "unexpected tool error: {text}");
    (
        text,
        r.structured_content.as_ref().expect("structured content"),
    )
}

fn err(r: &CallToolResult) -> (String, String) {
    assert_eq!(r.is_error, Some(true), "expected a tool error: {r:?}");
    let text = r.content[0].as_text().expect("text").text.clone();
    let code = r.structured_content.as_ref().expect("structured")["error"]["code"]
        .as_str()
        .expect("code")
        .to_owned();
    (code, text)
}

#[tokio::test]
async fn diff_runs_names_the_divergence_and_links_the_diff_view() {
    let e = env();
    let args = |a: &str, b: &str| {
        Parameters(DiffRunsArgs {
            run_a: a.to_owned(),
            run_b: b.to_owned(),
        })
    };
    let r = e.server.diff_runs(args("r-ok", "r-ok")).await;
    let (text, v) = ok(&r);
    assert!(text.contains("No divergence"), "{text}");
    assert_eq!(v["firstDivergence"], Value::Null);
    assert_eq!(v["link"], "http://127.0.0.1:4999/#/diff/r-ok/r-ok");

    let r = e.server.diff_runs(args("r-ok", "r-fail")).await;
    let (text, v) = ok(&r);
    // r-fail has none of r-ok's nodes: the first of them (in r-ok's order) is where they part.
    assert_eq!(v["firstDivergence"]["nodeId"], "agent:a", "{v}");
    assert_eq!(v["firstDivergence"]["difference"], "onlyInA");
    assert!(
        text.contains("First divergence: agent:a (only in A"),
        "{text}"
    );
    assert!(
        v["onlyInB"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "tool:charge_card"),
        "{v}"
    );
    let charge = v["differingNodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nodeId"] == "tool:charge_card")
        .unwrap();
    assert_eq!(charge["linkA"], Value::Null);
    assert_eq!(
        charge["linkB"],
        "http://127.0.0.1:4999/#/run/r-fail/node/tool%3Acharge_card"
    );
    assert_eq!(v["link"], "http://127.0.0.1:4999/#/diff/r-ok/r-fail");

    let (code, text) = err(&e.server.diff_runs(args("r-ok", "nope")).await);
    assert_eq!(code, "not_found");
    assert!(text.contains("nope"), "{text}");
    let (code, _) = err(&e.server.diff_runs(args("", "r-ok")).await);
    assert_eq!(code, "bad_request");
}

#[tokio::test]
async fn list_runs_filters_and_links() {
    let e = env();
    let r = e
        .server
        .list_runs(Parameters(ListRunsArgs::default()))
        .await;
    let (text, v) = ok(&r);
    let ids: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r-fail", "r-ok"]);
    assert_eq!(v["runs"][0]["link"], "http://127.0.0.1:4999/#/run/r-fail");
    assert_eq!(v["runs"][1]["usage"]["inputTokens"], 120);
    assert_eq!(
        v["runs"][1]["cost"]["usd"],
        (120.0 * 0.15 + 30.0 * 0.60) / 1e6,
        "the run's cost, as the HTTP run list has it"
    );
    assert!(
        text.contains("tokens 120 in / 30 out, cost <$0.0001"),
        "{text}"
    );
    assert!(v["runs"][0].get("sdk").is_none());
    assert!(
        text.contains("r-fail \"charge\" (app billing) — error"),
        "{text}"
    );

    let r = e
        .server
        .list_runs(Parameters(ListRunsArgs {
            status: Some(RunStatusArg(mindgate_store::RunState::Ok)),
            ..Default::default()
        }))
        .await;
    assert_eq!(ok(&r).1["runs"].as_array().unwrap().len(), 1);
    let r = e
        .server
        .list_runs(Parameters(ListRunsArgs {
            query: Some("CHARG".into()),
            ..Default::default()
        }))
        .await;
    assert_eq!(ok(&r).1["runs"][0]["id"], "r-fail");
    let r = e
        .server
        .list_runs(Parameters(ListRunsArgs {
            app: Some("nope".into()),
            ..Default::default()
        }))
        .await;
    assert_eq!(ok(&r).0, "No runs match.");
    let r = e
        .server
        .list_runs(Parameters(ListRunsArgs {
            limit: Some(1),
            ..Default::default()
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["nextBefore"], T0 + 1_000);
    assert!(text.contains("before=1700000001000"), "{text}");
    for bad in [0, 101] {
        let r = e
            .server
            .list_runs(Parameters(ListRunsArgs {
                limit: Some(bad),
                ..Default::default()
            }))
            .await;
        assert_eq!(err(&r).0, "bad_request");
    }
}

#[tokio::test]
async fn get_run_shows_graph_errors_slowest_and_tokens() {
    let e = env();
    let r = e
        .server
        .get_run(Parameters(GetRunArgs {
            run_id: "r-ok".into(),
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["run"]["status"], "ok");
    assert_eq!(v["graph"]["nodeCount"], 3);
    assert_eq!(v["graph"]["edgeCount"], 2);
    let search = v["graph"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nodeId"] == "tool:search")
        .unwrap();
    assert_eq!(search["instances"], 2);
    assert_eq!(
        search["link"],
        "http://127.0.0.1:4999/#/run/r-ok/node/tool%3Asearch"
    );
    assert_eq!(v["errors"][0]["message"], "upstream timed out");
    assert_eq!(v["errors"][0]["recovered"], true);
    assert_eq!(v["slowest"][0]["nodeId"], "agent:a");
    // gpt-4o-mini: 0.15 in, 0.60 out per million tokens.
    let usd = (120.0 * 0.15 + 30.0 * 0.60) / 1e6;
    assert_eq!(
        v["tokens"]["byNode"][0],
        json!({"nodeId": "llm:plan", "inputTokens": 120, "outputTokens": 30,
               "cacheReadTokens": 0, "cacheWriteTokens": 0, "models": ["gpt-4o-mini"],
               "inclusive": false,
               "cost": {"usd": usd, "pricedUsd": usd, "unpricedModels": []}})
    );
    assert_eq!(v["tokens"]["cost"]["usd"], usd);
    assert_eq!(v["run"]["cost"]["usd"], usd);
    assert!(
        text.contains("- llm:plan 120 in / 30 out, cost <$0.0001 (gpt-4o-mini)"),
        "{text}"
    );
    assert!(text.contains("upstream timed out (recovered)"), "{text}");
    assert!(
        text.contains("\n  llm:plan (llm) ok"),
        "tree indentation: {text}"
    );

    let r = e
        .server
        .get_run(Parameters(GetRunArgs {
            run_id: "r-fail".into(),
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["runError"]["message"], "card declined");
    assert!(
        text.contains("Run error: RuntimeError: card declined"),
        "{text}"
    );

    let r = e
        .server
        .get_run(Parameters(GetRunArgs {
            run_id: "nope".into(),
        }))
        .await;
    let (code, text) = err(&r);
    assert_eq!(code, "not_found");
    assert!(text.contains("no run with id `nope`"), "{text}");
    let r = e
        .server
        .get_run(Parameters(GetRunArgs { run_id: " ".into() }))
        .await;
    assert_eq!(err(&r).0, "bad_request");
}

#[tokio::test]
async fn get_node_reads_a_model_call_as_a_conversation_and_names_its_model() {
    let e = env();
    let r = e
        .server
        .get_node(Parameters(GetNodeArgs {
            run_id: "r-ok".into(),
            node_id: "llm:plan".into(),
            instances: None,
            instance_id: None,
            max_chars: None,
        }))
        .await;
    let (text, v) = ok(&r);
    assert!(
        text.contains(
            "  conversation (2 messages, model gpt-4o-mini):\n    user: plan the trip\n    assistant (answer): Book flights\n"
        ),
        "{text}"
    );
    assert_eq!(v["label"], "gpt-4o-mini");
    let t = &v["instances"][0]["transcript"];
    assert_eq!(
        t["messages"],
        json!([
            {"role": "user", "parts": [{"type": "text", "content": "plan the trip"}]},
            {"role": "assistant", "parts": [{"type": "text", "content": "Book flights"}]}
        ])
    );
    assert_eq!(t["model"], "gpt-4o-mini");
    assert_eq!(t["usage"]["outputTokens"], 30);
}

#[tokio::test]
async fn get_node_previews_values_and_says_how_to_get_more() {
    let e = env();
    let args = |instances, instance_id: Option<&str>, max_chars| GetNodeArgs {
        run_id: "r-ok".into(),
        node_id: "tool:search".into(),
        instances,
        instance_id: instance_id.map(str::to_owned),
        max_chars,
    };
    let r = e.server.get_node(Parameters(args(None, None, None))).await;
    let (text, v) = ok(&r);
    assert_eq!(v["instanceCount"], 2);
    assert_eq!(v["instances"].as_array().unwrap().len(), 2);
    let first = &v["instances"][0];
    assert_eq!(first["input"], json!({"q": "flights to Lisbon"}));
    assert_eq!(first["errorDetail"]["stack"], "line 1\nline 2");
    let results = first["output"]["results"].as_str().unwrap();
    assert!(results.starts_with(&"x".repeat(2_000)) && results.ends_with("…[+3000 chars]"));
    assert_eq!(v["valuesTruncated"], true);
    assert!(text.contains("pass maxChars (up to 20000)"), "{text}");
    assert!(
        text.contains("/api/runs/r-ok/nodes/tool%3Asearch"),
        "{text}"
    );
    assert!(
        text.contains("error: TimeoutError: upstream timed out"),
        "{text}"
    );

    let r = e
        .server
        .get_node(Parameters(args(Some(1), None, Some(6_000))))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["instances"].as_array().unwrap().len(), 1);
    assert_eq!(v["instances"][0]["instanceId"], "c2");
    assert_eq!(v["valuesTruncated"], false);
    assert!(text.contains("Showing 1 of 2 instances"), "{text}");

    let r = e
        .server
        .get_node(Parameters(args(None, Some("c1"), Some(10_000))))
        .await;
    let v = ok(&r).1;
    assert_eq!(
        v["instances"][0]["output"]["results"]
            .as_str()
            .unwrap()
            .len(),
        5_000
    );

    let r = e
        .server
        .get_node(Parameters(args(None, Some("zz"), None)))
        .await;
    assert_eq!(err(&r).0, "not_found");
    let r = e
        .server
        .get_node(Parameters(args(Some(21), None, None)))
        .await;
    assert_eq!(err(&r).0, "bad_request");
    let r = e
        .server
        .get_node(Parameters(args(None, None, Some(20_001))))
        .await;
    assert_eq!(err(&r).0, "bad_request");
    let r = e
        .server
        .get_node(Parameters(GetNodeArgs {
            node_id: "tool:nope".into(),
            ..args(None, None, None)
        }))
        .await;
    let (code, text) = err(&r);
    assert_eq!(code, "not_found");
    assert!(text.contains("get_run"), "{text}");
    let r = e
        .server
        .get_node(Parameters(GetNodeArgs {
            run_id: "nope".into(),
            ..args(None, None, None)
        }))
        .await;
    assert_eq!(err(&r).0, "not_found");
}

#[tokio::test]
async fn find_errors_lists_failed_nodes_and_runs() {
    let e = env();
    let r = e
        .server
        .find_errors(Parameters(FindErrorsArgs::default()))
        .await;
    let (text, v) = ok(&r);
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0]["nodeId"], "tool:charge_card");
    assert_eq!(nodes[0]["message"], "card declined");
    assert_eq!(
        nodes[0]["link"],
        "http://127.0.0.1:4999/#/run/r-fail/node/tool%3Acharge_card"
    );
    assert_eq!(nodes[1]["message"], "upstream timed out");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    assert_eq!(v["runs"][0]["id"], "r-fail");
    assert_eq!(v["runs"][0]["error"]["message"], "card declined");
    assert!(text.contains("Failed runs (1)"), "{text}");

    let r = e
        .server
        .find_errors(Parameters(FindErrorsArgs {
            limit: None,
            since: Some(SinceArg::Millis(T0 + 500)),
        }))
        .await;
    let v = ok(&r).1;
    assert_eq!(v["nodes"].as_array().unwrap().len(), 1);
    let r = e
        .server
        .find_errors(Parameters(FindErrorsArgs {
            limit: None,
            since: Some(SinceArg::Text("1h".into())),
        }))
        .await;
    let (text, v) = ok(&r);
    assert!(v["nodes"].as_array().unwrap().is_empty() && v["runs"].as_array().unwrap().is_empty());
    assert!(text.starts_with("No errors found since"), "{text}");
    let r = e
        .server
        .find_errors(Parameters(FindErrorsArgs {
            limit: None,
            since: Some(SinceArg::Text("last tuesday".into())),
        }))
        .await;
    assert_eq!(err(&r).0, "bad_request");
}

#[tokio::test]
async fn search_events_finds_payload_text() {
    let e = env();
    let args = |q: &str, run: Option<&str>| SearchEventsArgs {
        query: q.into(),
        run_id: run.map(str::to_owned),
        limit: None,
    };
    let r = e
        .server
        .search_events(Parameters(args("lisbon", None)))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["hits"].as_array().unwrap().len(), 1);
    assert_eq!(v["hits"][0]["type"], "node.started");
    assert_eq!(
        v["hits"][0]["link"],
        "http://127.0.0.1:4999/#/run/r-ok/node/tool%3Asearch"
    );
    assert!(text.contains("flights to Lisbon"), "{text}");
    let r = e
        .server
        .search_events(Parameters(args("declined", Some("r-ok"))))
        .await;
    assert!(ok(&r).1["hits"].as_array().unwrap().is_empty());
    let r = e
        .server
        .search_events(Parameters(args("declined", Some("r-fail"))))
        .await;
    assert_eq!(ok(&r).1["hits"].as_array().unwrap().len(), 2); // node.error and run.finished
    let r = e.server.search_events(Parameters(args("", None))).await;
    assert_eq!(err(&r).0, "bad_request");
    let r = e
        .server
        .search_events(Parameters(args("x", Some("nope"))))
        .await;
    assert_eq!(err(&r).0, "not_found");
}

#[tokio::test]
async fn list_tasks_and_get_task_graph_read_sessions() {
    let e = env();
    let r = e
        .server
        .list_tasks(Parameters(ListTasksArgs::default()))
        .await;
    let (text, v) = ok(&r);
    let ids: Vec<&str> = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"dsh-fail") && ids.contains(&"c-main"),
        "{ids:?}"
    );
    assert!(
        text.contains("dsh-fail [dsh] \"Build the release\" — FAILED"),
        "{text}"
    );
    let r = e
        .server
        .list_tasks(Parameters(ListTasksArgs {
            limit: Some(50),
            agent: Some(AgentArg(mindgate_taskgraph::Agent::Codex)),
        }))
        .await;
    let v = ok(&r).1;
    assert!(
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["agent"] == "codex")
    );
    assert_eq!(v["tasks"].as_array().unwrap().len(), 2);
    let r = e
        .server
        .list_tasks(Parameters(ListTasksArgs {
            limit: Some(0),
            agent: None,
        }))
        .await;
    assert_eq!(err(&r).0, "bad_request");

    let r = e
        .server
        .get_task_graph(Parameters(GetTaskGraphArgs {
            id: "c-main".into(),
            detail: None,
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["status"], "FAILED");
    let path: Vec<&str> = v["criticalPath"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(path[..2], ["task", "phase-1"]);
    assert!(
        v["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["error"] == "Interrupted by user")
    );
    assert_eq!(
        v["filesChanged"],
        json!(["/work/napkin/src/upload.test.ts"])
    );
    assert!(v.get("nodes").is_none());
    assert!(text.contains("Critical path"), "{text}");
    assert!(
        text.contains("Files changed (1):\n- /work/napkin/src/upload.test.ts"),
        "{text}"
    );

    let r = e
        .server
        .get_task_graph(Parameters(GetTaskGraphArgs {
            id: "cx-ma".into(),
            detail: Some(DetailArg::Full),
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["taskId"], "cx-main");
    // Every step of this Codex session is gpt-5-codex: $1.25 in, $10 out, $0.125 cache read
    // per million tokens (built-in table: the test home has no prices.toml).
    let usd = (4_400.0 * 1.25 + 590.0 * 10.0 + 44_800.0 * 0.125) / 1e6;
    let got = v["cost"]["usd"].as_f64().unwrap_or(f64::NAN);
    assert!((got - usd).abs() < 1e-12, "{}", v["cost"]);
    assert!(text.contains("Cost: $0.0170"), "{text}");
    assert_eq!(
        v["nodes"].as_array().unwrap().len(),
        v["nodeCount"].as_u64().unwrap() as usize
    );

    // Overview mode: the turn-level overview the task page opens on (the crate's function).
    let r = e
        .server
        .get_task_graph(Parameters(GetTaskGraphArgs {
            id: "cx-ma".into(),
            detail: Some(DetailArg::Overview),
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["session_id"], "cx-main");
    let turns = v["turns"].as_array().unwrap();
    assert_eq!(turns.len() as u64, v["headline"]["turns"].as_u64().unwrap());
    let steps: u64 = turns
        .iter()
        .map(|t| t["counts"]["steps"].as_u64().unwrap())
        .sum();
    assert_eq!(steps, v["headline"]["steps"].as_u64().unwrap());
    assert!(v["critical_path"]["segments"].is_array());
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Turn ")).count(),
        turns.len(),
        "{text}"
    );

    let r = e
        .server
        .get_task_graph(Parameters(GetTaskGraphArgs {
            id: "no-such-session".into(),
            detail: None,
        }))
        .await;
    assert_eq!(err(&r).0, "not_found");
    let r = e
        .server
        .get_task_graph(Parameters(GetTaskGraphArgs {
            id: "dsh-".into(),
            detail: None,
        }))
        .await;
    assert_eq!(err(&r).0, "bad_request");
}

#[tokio::test]
async fn missing_database_is_a_tool_error_and_tasks_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let server = MindgateMcp::new(config(dir.path()));
    let r = server.list_runs(Parameters(ListRunsArgs::default())).await;
    let (code, text) = err(&r);
    assert_eq!(code, "unavailable");
    assert!(text.contains("mindgate.db"), "{text}");
    let r = server
        .list_tasks(Parameters(ListTasksArgs::default()))
        .await;
    ok(&r);
}

#[tokio::test]
async fn with_store_shares_an_open_store() {
    let e = env();
    let store = Arc::new(RunStore::open_read_only(&e.home.join("mindgate.db")).unwrap());
    let server = MindgateMcp::with_store(config(Path::new("/nonexistent-home")), store);
    let r = server
        .get_run(Parameters(GetRunArgs {
            run_id: "r-fail".into(),
        }))
        .await;
    assert_eq!(ok(&r).1["run"]["id"], "r-fail");
}

#[test]
fn control_tools_are_listed_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let read_only = MindgateMcp::new(config(dir.path()));
    assert_eq!(
        read_only.tool_names(),
        [
            "annotate",
            "block_append",
            "block_replace",
            "block_rethink",
            "conversation_search",
            "dataset_add",
            "dataset_list",
            "dataset_show",
            "diff_runs",
            "fact_forget",
            "fact_history",
            "fact_remember",
            "fact_search",
            "fact_supersede",
            "find_errors",
            "get_node",
            "get_run",
            "get_task_graph",
            "get_thread",
            "get_usage",
            "list_annotations",
            "list_runs",
            "list_tasks",
            "list_threads",
            "memory_status",
            "procedure_outcome",
            "procedure_search",
            "recall_episodes",
            "search_events",
            "search_tasks"
        ]
    );
    for name in mindgate_mcp::VALIDATE_TOOLS {
        assert!(!read_only.tool_names().contains(&name.to_owned()), "{name}");
    }
    let mut v = config(dir.path());
    v.allow_validate = true;
    let validating = MindgateMcp::new(v);
    for name in mindgate_mcp::VALIDATE_TOOLS {
        assert!(validating.tool_names().contains(&name.to_owned()), "{name}");
    }
    let mut c = config(dir.path());
    c.allow_control = true;
    let control = MindgateMcp::new(c);
    assert!(control.tool_names().contains(&"resume".to_owned()));
    assert!(control.tool_names().contains(&"list_pauses".to_owned()));
    // Input schemas come from the argument types.
    let tools = control.tools();
    let get_node = tools.iter().find(|t| t.name == "get_node").unwrap();
    let schema = serde_json::to_value(&*get_node.input_schema).unwrap();
    assert_eq!(schema["required"], json!(["runId", "nodeId"]));
    assert_eq!(
        schema["properties"]["maxChars"]["type"],
        json!(["integer", "null"])
    );
    let resume = tools.iter().find(|t| t.name == "resume").unwrap();
    assert_eq!(
        resume.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(false)
    );
}

/// A stand-in for `mindgate serve`'s control API: one held gate, bearer token required.
async fn fake_server(token: &'static str) -> (u16, Arc<Mutex<Vec<Value>>>) {
    use axum::Json;
    use axum::extract::{Path as AxPath, State};
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::{get, post};

    type Seen = Arc<Mutex<Vec<Value>>>;
    fn authorised(h: &HeaderMap, token: &str) -> bool {
        h.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {token}"))
    }
    let seen: Seen = Arc::default();
    let app = axum::Router::new()
        .route(
            "/api/pauses",
            get(move |h: HeaderMap| async move {
                if !authorised(&h, token) {
                    return (StatusCode::UNAUTHORIZED, Json(json!({"message": "bad token"})));
                }
                (StatusCode::OK, Json(json!({"pauses": [{"runId": "r-live", "pauseId": "p1", "nodeId": "tool:x", "point": "error", "reason": "error", "since": T0}]})))
            }),
        )
        .route(
            "/api/runs/{run}/pauses/{pause}/resume",
            post(
                move |State(seen): State<Seen>, AxPath((run, pause)): AxPath<(String, String)>, h: HeaderMap, Json(body): Json<Value>| async move {
                    if !authorised(&h, token) {
                        return (StatusCode::UNAUTHORIZED, Json(json!({"message": "bad token"})));
                    }
                    let mut seen = seen.lock().unwrap();
                    seen.push(json!({"run": run, "pause": pause, "body": body}));
                    let result = if pause == "p1" && seen.len() == 1 { "resumed" } else if pause == "p1" { "taken" } else { "no-such-pause" };
                    (StatusCode::OK, Json(json!({"result": result})))
                },
            ),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, seen)
}

#[tokio::test]
async fn control_tools_go_through_the_server_with_its_agent_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.port = None;
    c.allow_control = true;
    let server = MindgateMcp::new(c.clone());

    // No server yet: a clear tool error.
    let r = server
        .list_pauses(Parameters(ListPausesArgs::default()))
        .await;
    let (code, text) = err(&r);
    assert_eq!(code, "unavailable");
    assert!(text.contains("mindgate serve"), "{text}");

    let (port, seen) = fake_server("s3cret").await;
    let run_dir = dir.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    // The person's control token is beside it: never sent (the stand-in accepts only the
    // agent token).
    std::fs::write(
        run_dir.join(format!("serve-{port}.json")),
        json!({"port": port, "pid": std::process::id(), "token": "the-persons-token", "url": "x"})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        run_dir.join(format!("agent-{port}.json")),
        json!({"port": port, "pid": std::process::id(), "token": "s3cret", "url": "x"}).to_string(),
    )
    .unwrap();

    let r = server
        .list_pauses(Parameters(ListPausesArgs::default()))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["pauses"][0]["pauseId"], "p1");
    assert_eq!(
        v["pauses"][0]["link"],
        format!("http://127.0.0.1:{port}/#/run/r-live/node/tool%3Ax")
    );
    assert!(
        text.contains("pause p1 run r-live node tool:x at `error`"),
        "{text}"
    );

    let resume = |pause: &str, action, output| ResumeArgs {
        run_id: "r-live".into(),
        pause_id: pause.into(),
        action,
        output,
    };
    let r = server
        .resume(Parameters(resume(
            "p1",
            ResumeAction::Inject,
            Some(json!({"ok": true})),
        )))
        .await;
    assert_eq!(ok(&r).1["result"]["result"], "resumed");
    assert_eq!(
        seen.lock().unwrap()[0],
        json!({"run": "r-live", "pause": "p1", "body": {"action": "inject", "output": {"ok": true}}})
    );
    let r = server
        .resume(Parameters(resume("p1", ResumeAction::Continue, None)))
        .await;
    let (code, text) = err(&r);
    assert_eq!(code, "conflict");
    assert!(text.contains("taken"), "{text}");
    let r = server
        .resume(Parameters(resume("p1", ResumeAction::Inject, None)))
        .await;
    assert_eq!(err(&r).0, "bad_request");
    let r = server
        .resume(Parameters(resume(
            "p1",
            ResumeAction::Abort,
            Some(json!(1)),
        )))
        .await;
    assert_eq!(err(&r).0, "bad_request");

    // A wrong token is the server's refusal, reported as such.
    let mut wrong = c;
    wrong.control_endpoint = Some(ServerEndpoint {
        port,
        token: "nope".into(),
    });
    let r = MindgateMcp::new(wrong)
        .list_pauses(Parameters(ListPausesArgs::default()))
        .await;
    let (code, text) = err(&r);
    assert_eq!(code, "unauthorized");
    assert!(text.contains("401") && text.contains("bad token"), "{text}");
}

/// The same tools over streamable HTTP, mounted the way `mindgate serve` mounts them.
#[tokio::test]
async fn http_service_serves_the_tools_at_mcp() {
    let e = env();
    let store = Arc::new(RunStore::open_read_only(&e.home.join("mindgate.db")).unwrap());
    let app = axum::Router::new().nest_service(
        "/mcp",
        mindgate_mcp::http_service(config(&e.home), Some(store)),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let post = |body: Value, session: Option<String>| {
        let mut req = client
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(s) = session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-06-18");
        }
        req.send()
    };
    // Answers arrive as JSON or as one SSE `data:` line; take the JSON-RPC message.
    async fn message(resp: reqwest::Response) -> Value {
        let text = resp.text().await.unwrap();
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .or_else(|| serde_json::from_str(&text).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in {text:?}"))
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let resp = post(init, None).await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let v = message(resp).await;
    assert_eq!(v["result"]["serverInfo"]["name"], "mindgate");
    let resp = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        session.clone(),
    )
    .await
    .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_run", "arguments": {"runId": "r-fail"}}});
    let v = message(post(call, session).await.unwrap()).await;
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["runError"]["message"],
        "card declined"
    );
}

/// What a coding agent reads, pinned: the text and structured content of `get_run` on a
/// failed run and of a tool error (times redacted; links use the fixed port 4999).
#[tokio::test]
async fn tool_results_snapshot() {
    let e = env();
    let r = e
        .server
        .get_run(Parameters(GetRunArgs {
            run_id: "r-fail".into(),
        }))
        .await;
    let (text, v) = ok(&r);
    let mut v = v.clone();
    mindgate_testkit::redact::fields(&mut v, &["startedAt", "finishedAt", "lastEventAt"]);
    insta::assert_snapshot!("get_run_text", text);
    insta::assert_json_snapshot!("get_run_structured", v);
    let r = e
        .server
        .get_run(Parameters(GetRunArgs {
            run_id: "r-none".into(),
        }))
        .await;
    insta::assert_json_snapshot!(
        "unknown_run_error",
        json!({"isError": r.is_error, "content": err(&r).1, "structured": r.structured_content})
    );
}

/// The `resume` tool parses its action once, at the edge, into the protocol's own
/// [`ResumeAction`]: every action the protocol knows is accepted as itself, anything else is
/// refused before any control is called.
#[test]
fn resume_arguments_parse_into_the_protocols_action() {
    for action in ResumeAction::ALL {
        let args: ResumeArgs = serde_json::from_value(
            json!({"runId": "r", "pauseId": "p", "action": action.as_str()}),
        )
        .expect("a protocol action is accepted");
        assert_eq!(args.action, *action);
    }
    let refused = serde_json::from_value::<ResumeArgs>(
        json!({"runId": "r", "pauseId": "p", "action": "pause"}),
    );
    assert!(refused.is_err(), "an unknown action is refused at the edge");
}

/// Two runs of thread `chat-7` (by meta `threadId` and `conversationId`) and one of
/// another user: `list_threads` totals them, `get_thread` lists them in order, and
/// `list_runs` filters by thread, user and tag.
#[tokio::test]
async fn thread_tools_group_total_and_filter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().to_path_buf();
    {
        let (w, _) =
            Writer::open(&home.join("mindgate.db"), WriterConfig::default(), None).expect("writer");
        let runs = [
            (
                "t1",
                T0,
                json!({"threadId": "chat-7", "userId": "ada", "tags": ["beta"]}),
            ),
            (
                "t2",
                T0 + 5_000,
                json!({"conversationId": "chat-7", "userId": "ada"}),
            ),
            (
                "u1",
                T0 + 2_000,
                json!({"threadId": "chat-8", "userId": "bob"}),
            ),
        ];
        for (id, t, meta) in runs {
            w.append(ev(
                id,
                0,
                t,
                "run.started",
                json!({"app": "chat", "sdk": {"name": "t", "version": "1"}, "meta": meta}),
            ))
            .expect("append");
            w.append(ev(
                id,
                1,
                t + 1_000,
                "run.finished",
                json!({"status": "ok"}),
            ))
            .expect("append");
        }
        w.close().expect("close");
    }
    let server = MindgateMcp::new(config(&home));
    let r = server
        .list_threads(Parameters(ListThreadsArgs::default()))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["threads"][0]["id"], "chat-7", "{text}");
    assert_eq!(v["threads"][0]["runCount"], 2);
    assert_eq!(v["threads"][0]["durationMs"], 2_000);
    assert!(
        v["threads"][0]["link"]
            .as_str()
            .unwrap()
            .ends_with("/#/threads/chat-7")
    );
    assert!(text.contains("chat-7 — 2 run(s)"), "{text}");
    let r = server
        .list_threads(Parameters(ListThreadsArgs {
            user: Some("bob".into()),
            ..Default::default()
        }))
        .await;
    assert_eq!(ok(&r).1["threads"].as_array().unwrap().len(), 1);
    let r = server
        .get_thread(Parameters(GetThreadArgs {
            thread_id: "chat-7".into(),
        }))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["runs"][0]["id"], "t1");
    assert_eq!(v["runs"][1]["id"], "t2");
    assert!(text.contains("1. t1"), "{text}");
    let r = server
        .get_thread(Parameters(GetThreadArgs {
            thread_id: "nope".into(),
        }))
        .await;
    assert_eq!(err(&r).0, "not_found");
    let r = server
        .list_runs(Parameters(ListRunsArgs {
            tag: Some("beta".into()),
            ..Default::default()
        }))
        .await;
    let runs = ok(&r).1["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["threadId"], "chat-7");
}

/// `annotate` stores an agent's annotation (marked so) through the read-only tool store;
/// `list_annotations` lists it; `list_runs` filters by its label; a bad one is refused.
#[tokio::test]
async fn annotate_marks_an_agents_annotation_and_list_runs_filters_by_label() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().to_path_buf();
    {
        let (w, _) =
            Writer::open(&home.join("mindgate.db"), WriterConfig::default(), None).expect("writer");
        for id in ["a1", "a2"] {
            w.append(ev(
                id,
                0,
                T0,
                "run.started",
                json!({"app": "chat", "sdk": {"name": "t", "version": "1"}}),
            ))
            .expect("append");
            w.append(ev(
                id,
                1,
                T0 + 1_000,
                "run.finished",
                json!({"status": "ok"}),
            ))
            .expect("append");
        }
        w.close().expect("close");
    }
    let server = MindgateMcp::new(config(&home));
    let r = server
        .annotate(Parameters(mindgate_mcp::params::AnnotateArgs {
            run_id: "a2".into(),
            verdict: Some(mindgate_mcp::params::VerdictArg::Down),
            labels: Some(vec!["loops".into()]),
            comment: Some("called search three times".into()),
            ..Default::default()
        }))
        .await;
    let (text, v) = ok(&r);
    assert!(text.contains("by an agent"), "{text}");
    assert_eq!(v["annotation"]["author"]["kind"], "agent");
    let r = server
        .list_annotations(Parameters(mindgate_mcp::params::ListAnnotationsArgs {
            run_id: Some("a2".into()),
            ..Default::default()
        }))
        .await;
    assert_eq!(ok(&r).1["annotations"][0]["labels"], json!(["loops"]));
    let r = server
        .list_runs(Parameters(ListRunsArgs {
            label: Some("loops".into()),
            ..Default::default()
        }))
        .await;
    let runs = ok(&r).1["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["id"], "a2");
    let r = server
        .annotate(Parameters(mindgate_mcp::params::AnnotateArgs {
            run_id: "a1".into(),
            score: Some(4.0),
            ..Default::default()
        }))
        .await;
    let (code, message) = err(&r);
    assert_eq!(code, "bad_request");
    assert!(message.contains("from 0 to 1"), "{message}");
}

/// `dataset_add` takes an example from a node instance (its input and output) and from a
/// whole run, recorded as an agent's; `dataset_list` and `dataset_show` read it back; a bad
/// one is refused with the rule named.
#[tokio::test]
async fn dataset_add_takes_an_agents_example_from_a_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().to_path_buf();
    {
        let (w, _) =
            Writer::open(&home.join("mindgate.db"), WriterConfig::default(), None).expect("writer");
        let events = [
            (
                "run.started",
                json!({"app": "chat", "sdk": {"name": "t", "version": "1"}}),
            ),
            (
                "node.started",
                json!({"nodeId": "agent:a", "instanceId": "a1", "kind": "agent", "name": "a",
                       "input": "refund?"}),
            ),
            (
                "node.started",
                json!({"nodeId": "tool:s", "instanceId": "s1", "kind": "tool", "name": "s",
                       "parentId": "agent:a", "input": {"q": "policy"}}),
            ),
            (
                "node.finished",
                json!({"nodeId": "tool:s", "instanceId": "s1", "status": "ok", "durationMs": 1.0,
                       "output": {"hits": 2}}),
            ),
            (
                "node.finished",
                json!({"nodeId": "agent:a", "instanceId": "a1", "status": "ok", "durationMs": 3.0,
                       "output": "30 days"}),
            ),
            ("run.finished", json!({"status": "ok"})),
        ];
        for (i, (ty, payload)) in events.into_iter().enumerate() {
            w.append(ev("d1", i as u64, T0 + i as i64, ty, payload))
                .expect("append");
        }
        w.close().expect("close");
    }
    let server = MindgateMcp::new(config(&home));
    let add = |node: Option<&str>| mindgate_mcp::params::DatasetAddArgs {
        dataset: "support".into(),
        run_id: "d1".into(),
        node_id: node.map(str::to_owned),
        ..Default::default()
    };
    let r = server.dataset_add(Parameters(add(Some("tool:s")))).await;
    let (text, v) = ok(&r);
    assert!(text.contains("agent's example"), "{text}");
    assert_eq!(v["examples"][0]["input"], json!({"q": "policy"}));
    assert_eq!(v["examples"][0]["expected"], json!({"hits": 2}));
    assert_eq!(v["examples"][0]["addedBy"]["kind"], "agent");
    let r = server.dataset_add(Parameters(add(None))).await;
    let v = ok(&r).1;
    assert_eq!(
        (
            v["examples"][0]["input"].clone(),
            v["examples"][0]["expected"].clone()
        ),
        (json!("refund?"), json!("30 days")),
        "the run's agent input and final output"
    );
    assert_eq!(v["dataset"]["version"], 2);
    let r = server
        .dataset_list(Parameters(mindgate_mcp::params::DatasetListArgs {}))
        .await;
    assert_eq!(ok(&r).1["datasets"][0]["name"], "support");
    let r = server
        .dataset_show(Parameters(mindgate_mcp::params::DatasetShowArgs {
            dataset: "support".into(),
            version: Some(1),
        }))
        .await;
    let v = ok(&r).1;
    assert_eq!(
        v["examples"].as_array().map(Vec::len),
        Some(1),
        "version 1: {v}"
    );
    let r = server.dataset_add(Parameters(add(Some("tool:none")))).await;
    let (code, message) = err(&r);
    assert_eq!(code, "bad_request");
    assert!(message.contains("no node tool:none"), "{message}");
}

/// A run database from before datasets (schema 5) that no writer has migrated — the MCP
/// opens it read-only — holds no dataset: `dataset_list` answers none, `dataset_show` names
/// the dataset it does not hold, and `dataset_add` says how to bring the file up to date;
/// none answers SQLite's "no such table".
#[tokio::test]
async fn dataset_tools_on_a_file_from_before_datasets_answer_clearly() {
    let e = env();
    let db = e.home.join("mindgate.db");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch(
        "DROP TABLE dataset_examples; DROP TABLE dataset_versions; DROP TABLE datasets; \
         PRAGMA user_version = 5;",
    )
    .expect("back to schema 5");
    drop(conn);
    let server = MindgateMcp::new(config(&e.home));
    let r = server
        .dataset_list(Parameters(mindgate_mcp::params::DatasetListArgs {}))
        .await;
    let (text, v) = ok(&r);
    assert_eq!(v["datasets"], json!([]), "{text}");
    let r = server
        .dataset_show(Parameters(mindgate_mcp::params::DatasetShowArgs {
            dataset: "golden".into(),
            version: None,
        }))
        .await;
    let (code, message) = err(&r);
    assert_eq!(code, "not_found");
    assert!(message.contains("no dataset golden"), "{message}");
    let r = server
        .dataset_add(Parameters(mindgate_mcp::params::DatasetAddArgs {
            dataset: "golden".into(),
            run_id: "r-ok".into(),
            ..Default::default()
        }))
        .await;
    let (code, message) = err(&r);
    assert_eq!(code, "conflict");
    assert!(
        message.contains("schema version 5")
            && message.contains("mindgate migrate --db")
            && !message.contains("no such table"),
        "{message}"
    );
}
