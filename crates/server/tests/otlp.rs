//! `POST /v1/traces` over real sockets: encodings, compression, limits, partial success,
//! the guard, the OTLP port and the quiet timeout.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::time::Duration;

use common::*;
use mindgate_testkit::wait;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;
use serde_json::{Value, json};

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.to_owned())),
        }),
        ..KeyValue::default()
    }
}

fn span(trace: u8, id: u8, parent: Option<u8>, name: &str, attrs: &[(&str, &str)]) -> Span {
    Span {
        trace_id: vec![trace; 16],
        span_id: vec![id; 8],
        parent_span_id: parent.map(|p| vec![p; 8]).unwrap_or_default(),
        name: name.to_owned(),
        // Now: a run of 2023 would be pruned (30 days) by the start-up pruning.
        start_time_unix_nano: now_ns(),
        end_time_unix_nano: now_ns() + 500_000_000,
        attributes: attrs.iter().map(|(k, v)| kv(k, v)).collect(),
        ..Span::default()
    }
}

fn now_ns() -> u64 {
    u64::try_from(mindgate_store::now_ms()).unwrap() * 1_000_000
}

fn request(spans: Vec<Span>) -> Vec<u8> {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv("service.name", "otlp-test")],
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: None,
                spans,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
    .encode_to_vec()
}

fn agent_trace(trace: u8) -> Vec<u8> {
    request(vec![
        span(
            trace,
            2,
            Some(1),
            "chat gpt-4o",
            &[
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.request.model", "gpt-4o"),
            ],
        ),
        span(
            trace,
            1,
            None,
            "invoke_agent planner",
            &[
                ("gen_ai.operation.name", "invoke_agent"),
                ("gen_ai.agent.name", "planner"),
            ],
        ),
    ])
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn run_id(trace: u8) -> String {
    format!("otlp-{}", format!("{trace:02x}").repeat(16))
}

async fn post(
    t: &TestServer,
    base: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
) -> (u16, Vec<u8>) {
    let mut req = t.http.post(format!("{base}/v1/traces")).body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("POST");
    let status = r.status().as_u16();
    (status, r.bytes().await.unwrap().to_vec())
}

const PROTOBUF: (&str, &str) = ("content-type", "application/x-protobuf");
const JSON: (&str, &str) = ("content-type", "application/json");

async fn graph_nodes(t: &TestServer, run: &str) -> Vec<String> {
    let (s, g) = t.get(&format!("/api/runs/{run}/graph")).await;
    assert_eq!(s, 200, "{g}");
    g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["nodeId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn gzip_protobuf_becomes_a_run_without_a_token() {
    let t = start().await;
    let base = t.server.base_url();
    let (s, body) = post(
        &t,
        &base,
        gzip(&agent_trace(1)),
        &[PROTOBUF, ("content-encoding", "gzip")],
    )
    .await;
    assert_eq!(s, 200);
    let response = ExportTraceServiceResponse::decode(body.as_slice()).unwrap();
    assert_eq!(response.partial_success, None);
    let (_, run) = t.get(&format!("/api/runs/{}", run_id(1))).await;
    assert_eq!(
        (run["source"].as_str(), run["status"].as_str()),
        (Some("otlp"), Some("ok"))
    );
    assert_eq!(run["app"], "otlp-test");
    assert_eq!(
        graph_nodes(&t, &run_id(1)).await,
        ["agent:planner", "llm:gpt-4o"]
    );
    // zstd too.
    let zstd = zstd::encode_all(agent_trace(2).as_slice(), 1).unwrap();
    let (s, _) = post(&t, &base, zstd, &[PROTOBUF, ("content-encoding", "zstd")]).await;
    assert_eq!(s, 200);
    assert_eq!(graph_nodes(&t, &run_id(2)).await.len(), 2);
}

#[tokio::test]
async fn lenient_json_with_a_partial_success() {
    let t = start().await;
    let body = json!({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "js"}}]},
    "scopeSpans": [{"spans": [
        {"traceId": "AwMDAwMDAwMDAwMDAwMDAw==", "spanId": "BQUFBQUFBQU=", "name": "execute_tool search",
         "kind": "SPAN_KIND_INTERNAL", "startTimeUnixNano": now_ns().to_string(), "endTimeUnixNano": now_ns() + 100_000_000,
         "status": {"code": "STATUS_CODE_ERROR", "message": "no results"},
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}]},
        {"traceId": "zz", "spanId": "0505050505050505", "name": "bad ids"}
    ]}]}]});
    let (s, answer) = post(
        &t,
        &t.server.base_url(),
        body.to_string().into_bytes(),
        &[JSON],
    )
    .await;
    assert_eq!(s, 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    let partial = &answer["partialSuccess"];
    assert_eq!(
        partial["rejectedSpans"].to_string().trim_matches('"'),
        "1",
        "{answer}"
    );
    assert!(
        partial["errorMessage"]
            .as_str()
            .unwrap()
            .contains("bad ids"),
        "{answer}"
    );
    let (_, g) = t.get(&format!("/api/runs/{}/graph", run_id(3))).await;
    assert_eq!(g["nodes"][0]["nodeId"], "tool:search");
    assert_eq!(g["nodes"][0]["status"], "error");
}

#[tokio::test]
async fn malformed_bodies_get_a_clear_4xx_and_lose_nothing_else() {
    let t = start().await;
    let base = t.server.base_url();
    type Case<'a> = (Vec<u8>, Vec<(&'a str, &'a str)>, u16, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (vec![0xff, 0xff, 0xff], vec![PROTOBUF], 400, "protobuf"),
        (b"{not json".to_vec(), vec![JSON], 400, "not JSON"),
        (b"[1]".to_vec(), vec![JSON], 400, "resourceSpans"),
        (
            b"garbage".to_vec(),
            vec![PROTOBUF, ("content-encoding", "gzip")],
            400,
            "decompressed: ",
        ),
        (
            agent_trace(4),
            vec![("content-type", "text/plain")],
            400,
            "Content-Type",
        ),
        (
            agent_trace(4),
            vec![PROTOBUF, ("content-encoding", "br")],
            415,
            "",
        ),
    ];
    for (body, headers, status, needle) in cases {
        let (s, answer) = post(&t, &base, body, &headers).await;
        let text = String::from_utf8_lossy(&answer);
        assert_eq!(s, status, "{headers:?}: {text}");
        assert!(text.contains(needle), "{headers:?}: {text}");
    }
    // The same server still takes a good export.
    let (s, _) = post(&t, &base, agent_trace(5), &[PROTOBUF]).await;
    assert_eq!(s, 200);
    assert_eq!(graph_nodes(&t, &run_id(5)).await.len(), 2);
    let (_, runs) = t.get("/api/runs").await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
}

#[tokio::test]
async fn a_gzip_bomb_gets_413_after_decompression() {
    let t = start().await;
    // 64 MiB of zeros: about 64 KiB compressed.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1 << 20);
    let (s, answer) = post(
        &t,
        &t.server.base_url(),
        bomb,
        &[PROTOBUF, ("content-encoding", "gzip")],
    )
    .await;
    assert_eq!(s, 413, "{}", String::from_utf8_lossy(&answer));
    assert!(String::from_utf8_lossy(&answer).contains("decompressed"));
}

#[tokio::test]
async fn the_guard_applies_and_the_otlp_port_serves_traces_only() {
    let t = start_with(|c| c.otlp_port = Some(0)).await;
    let otlp = t.server.otlp_addr.expect("the OTLP port listens");
    let base = format!("http://{otlp}");
    let (s, _) = post(&t, &base, agent_trace(6), &[PROTOBUF]).await;
    assert_eq!(s, 200);
    assert_eq!(graph_nodes(&t, &run_id(6)).await.len(), 2);
    // A foreign Host (DNS rebinding) and a cross-site Origin are refused on both ports.
    for base in [base.clone(), t.server.base_url()] {
        let (s, _) = post(
            &t,
            &base,
            agent_trace(7),
            &[PROTOBUF, ("host", "evil.example:4318")],
        )
        .await;
        assert_eq!(s, 403);
        let (s, _) = post(
            &t,
            &base,
            agent_trace(7),
            &[PROTOBUF, ("origin", "http://evil.example")],
        )
        .await;
        assert_eq!(s, 403);
    }
    let (s, _) = t.get(&format!("/api/runs/{}", run_id(7))).await;
    assert_eq!(s, 404);
    // Nothing but /v1/traces on the OTLP port.
    let r = t.http.get(format!("{base}/api/runs")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
}

#[tokio::test]
async fn a_run_whose_root_never_comes_is_finished_when_quiet() {
    let t = start_with(|c| c.otlp.quiet_ms = 300).await;
    let only_child = request(vec![span(
        8,
        2,
        Some(1),
        "chat gpt-4o",
        &[
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.request.model", "gpt-4o"),
        ],
    )]);
    let (s, _) = post(&t, &t.server.base_url(), only_child, &[PROTOBUF]).await;
    assert_eq!(s, 200);
    let (_, run) = t.get(&format!("/api/runs/{}", run_id(8))).await;
    assert_eq!(run["status"], "running");
    wait::until_async(
        "the quiet run finishes",
        Duration::from_secs(10),
        || async {
            let (_, run) = t.get(&format!("/api/runs/{}", run_id(8))).await;
            (run["status"] == "ok").then_some(())
        },
    )
    .await;
}
