//! Unit tests per message type: realistic frames parse into the right typed
//! fields; a missing required field is `Invalid` with the path of the problem.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{frame, json_eq, parse_ok, sample, samples, wildcard};
use mindgate_protocol::{
    BreakpointMatcher, Envelope, Message, NodeKind, NodeStatus, ParseResult, PausePoint,
    PauseReason, RefuseCode, ResumeAction, RunMode, RunStatus, TokenChannel, WILDCARD_RUN_ID,
    parse_envelope,
};
use serde_json::{Value, json};

fn message(label: &str) -> Message {
    parse_ok(&sample(label)).message
}

#[test]
fn every_sample_round_trips_to_the_same_json() {
    for (label, value) in samples() {
        let env = parse_ok(&value);
        let back: Value = serde_json::from_str(&env.to_json()).unwrap();
        assert!(json_eq(&back, &value), "{label}: {back} != {value}");
        assert_eq!(
            env.to_value(),
            back,
            "{label}: to_value and to_json disagree"
        );
    }
}

#[test]
fn samples_cover_all_sixteen_types() {
    let mut seen: Vec<&str> = samples()
        .iter()
        .map(|(_, v)| parse_ok(v).type_name())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let mut all: Vec<&str> = Message::TYPES.iter().map(|(t, _)| *t).collect();
    all.sort_unstable();
    assert_eq!(seen, all);
}

#[test]
fn envelope_fields_are_typed() {
    let env = parse_ok(&sample("node.token"));
    assert_eq!(env.gm, 1);
    assert_eq!(env.seq, 42);
    assert_eq!(env.ts, 1_756_200_000_000);
    assert_eq!(env.run_id, "run_ab12cd34ef56");
    assert!(env.extra.is_empty());
    assert_eq!(parse_ok(&sample("mode.set")).run_id, WILDCARD_RUN_ID);
}

#[test]
fn run_started() {
    let Message::RunStarted(p) = message("run.started") else {
        panic!("wrong variant")
    };
    assert_eq!(p.app, "support-agent");
    assert_eq!(p.sdk.name, "python");
    assert_eq!(p.sdk.version, "0.5.1");
    let meta = p.meta.unwrap();
    assert_eq!(meta["name"], "handle-ticket");
    assert_eq!(meta["tags"], json!(["beta"]));
}

#[test]
fn run_finished() {
    let Message::RunFinished(p) = message("run.finished") else {
        panic!("wrong variant")
    };
    assert_eq!(p.status, RunStatus::Error);
    let err = p.error.unwrap();
    assert_eq!(err.name, "ValueError");
    assert_eq!(err.message, "boom");
    assert!(err.stack.unwrap().starts_with("Traceback"));
}

#[test]
fn graph_hint() {
    let Message::GraphHint(p) = message("graph.hint") else {
        panic!("wrong variant")
    };
    assert_eq!(p.nodes.len(), 3);
    assert_eq!(p.nodes[0].kind, NodeKind::Agent);
    assert_eq!(p.nodes[0].parent_id, None);
    assert_eq!(p.nodes[2].node_id, "tool:search_flights");
    assert_eq!(p.nodes[2].kind, NodeKind::Tool);
    assert_eq!(p.nodes[2].parent_id.as_deref(), Some("llm:step"));
    assert!(p.gap.is_none());
}

#[test]
fn graph_hint_gap_marker() {
    let Message::GraphHint(p) = message("graph.hint/gap") else {
        panic!("wrong variant")
    };
    assert!(p.nodes.is_empty());
    let gap = p.gap.unwrap();
    assert_eq!((gap.dropped_count, gap.from_seq, gap.to_seq), (12, 3, 14));
    assert_eq!(gap.reason.as_deref(), Some("buffer-full"));
}

#[test]
fn node_started() {
    let Message::NodeStarted(p) = message("node.started") else {
        panic!("wrong variant")
    };
    assert_eq!(p.node_id, "tool:search_flights");
    assert_eq!(p.parent_id.as_deref(), Some("llm:step"));
    assert_eq!(p.kind, NodeKind::Tool);
    assert_eq!(p.name, "search_flights");
    assert_eq!(p.instance_id, "call_1a2b3c_4");
    assert_eq!(
        p.input,
        Some(json!({"origin": "SFO", "destination": "JFK"}))
    );
    assert_eq!(p.collapsed, Some(false));
    let redaction = p.redaction.unwrap();
    assert_eq!(redaction.count, 1);
    assert_eq!(redaction.keys, Some(vec!["input".to_owned()]));
}

#[test]
fn node_started_null_input_is_kept_and_absent_input_stays_absent() {
    let mut v = sample("node.started");
    v["payload"]["input"] = Value::Null;
    let env = parse_ok(&v);
    let Message::NodeStarted(p) = &env.message else {
        panic!("wrong variant")
    };
    assert_eq!(p.input, Some(Value::Null));
    assert!(env.to_json().contains(r#""input":null"#));

    v["payload"].as_object_mut().unwrap().remove("input");
    let env = parse_ok(&v);
    let Message::NodeStarted(p) = &env.message else {
        panic!("wrong variant")
    };
    assert_eq!(p.input, None);
    let back: Value = serde_json::from_str(&env.to_json()).unwrap();
    assert!(back["payload"].get("input").is_none(), "{back}");
}

#[test]
fn node_token() {
    let Message::NodeToken(p) = message("node.token") else {
        panic!("wrong variant")
    };
    assert_eq!(p.node_id, "llm:step");
    assert_eq!(p.instance_id, None);
    let channels: Vec<TokenChannel> = p.deltas.iter().map(|d| d.t).collect();
    assert_eq!(
        channels,
        [
            TokenChannel::Text,
            TokenChannel::Reasoning,
            TokenChannel::ToolArgs
        ]
    );
    assert_eq!(p.deltas[0].v, "Hel");
    assert_eq!(p.deltas[2].v, "{\"origin\":");
}

#[test]
fn node_finished() {
    let Message::NodeFinished(p) = message("node.finished") else {
        panic!("wrong variant")
    };
    assert_eq!(p.node_id, "llm:step");
    assert_eq!(p.instance_id.as_deref(), Some("step_1a2b3c_2"));
    assert_eq!(p.output, Some(json!({"text": "Hello"})));
    assert_eq!(p.duration_ms, 812.37);
    assert_eq!(p.held_ms, Some(500.25));
    assert_eq!(p.status, NodeStatus::Ok);
    let usage = p.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (120, 42));
    assert_eq!(usage.inclusive, Some(false));
    assert_eq!(usage.cache_read_tokens, Some(100));
    assert_eq!(usage.cache_write_tokens, Some(0));
    assert_eq!(usage.reasoning_tokens, Some(7));
}

#[test]
fn node_finished_finish_reason_is_optional() {
    let Message::NodeFinished(p) = message("node.finished") else {
        panic!("wrong variant")
    };
    assert_eq!(p.finish_reason.as_deref(), Some("tool-calls"));
    let v = frame(
        "node.finished",
        json!({"nodeId": "n", "durationMs": 1, "status": "ok"}),
    );
    let Message::NodeFinished(p) = parse_ok(&v).message else {
        panic!("wrong variant")
    };
    assert_eq!(p.finish_reason, None);
    // A 0.5.1 frame re-serialises without the field.
    assert!(
        !serde_json::to_string(&Message::NodeFinished(p))
            .unwrap()
            .contains("finishReason")
    );
}

#[test]
fn node_error() {
    let Message::NodeError(p) = message("node.error") else {
        panic!("wrong variant")
    };
    assert_eq!(p.node_id, "tool:flaky");
    assert_eq!(p.instance_id.as_deref(), Some("call_1a2b3c_5"));
    assert_eq!(p.error.name, "RuntimeError");
    assert_eq!(p.error.message, "upstream 503");
    assert_eq!(p.error.stack, None);
    assert_eq!(p.held_ms, Some(0.0));
}

#[test]
fn exec_paused() {
    let Message::ExecPaused(p) = message("exec.paused") else {
        panic!("wrong variant")
    };
    assert_eq!(p.pause_id, "pause_1a2b3c_1");
    assert_eq!(p.node_id, "tool:search_flights");
    assert_eq!(p.point, PausePoint::Before);
    assert_eq!(p.reason, Some(PauseReason::Loop));
    let lp = p.loop_info.unwrap();
    assert_eq!((lp.repeats, lp.first_seq, lp.last_seq), (3, 10, 14));
    assert_eq!(lp.fingerprint, "fp:9f2c");
    assert_eq!(lp.kind.as_deref(), Some("cycle"));
    assert_eq!((lp.period, lp.laps), (Some(2), Some(3)));
    let smart = p.smart.unwrap();
    assert_eq!(smart.rule, "cost-cap");
    assert_eq!(smart.detail, Some(json!({"usd": 1.5})));
    assert_eq!(p.editable, Some(true));
}

#[test]
fn exec_resumed() {
    let Message::ExecResumed(p) = message("exec.resumed") else {
        panic!("wrong variant")
    };
    assert_eq!(p.pause_id, "pause_1a2b3c_1");
    assert_eq!(p.action, ResumeAction::Inject);
    assert_eq!(p.edited.unwrap().after, json!({"origin": "SFO"}));
    assert_eq!(p.request_id.as_deref(), Some("req-1"));
    assert_eq!(p.principal, Some(json!({"kind": "ui", "pid": 4242})));
}

#[test]
fn exec_refused() {
    let Message::ExecRefused(p) = message("exec.refused") else {
        panic!("wrong variant")
    };
    assert_eq!(p.pause_id, "pause_1a2b3c_1");
    assert_eq!(p.code, RefuseCode::Schema);
    assert_eq!(p.message.as_deref(), Some("output does not match"));
    assert_eq!(p.request_id.as_deref(), Some("req-2"));
}

#[test]
fn exec_refused_codes() {
    for code in RefuseCode::ALL {
        let v = frame(
            "exec.refused",
            json!({"pauseId": "p", "code": code.as_str()}),
        );
        let Message::ExecRefused(p) = parse_ok(&v).message else {
            panic!("wrong variant")
        };
        assert_eq!(p.code, *code);
    }
}

#[test]
fn exec_resume() {
    let Message::ExecResume(p) = message("exec.resume") else {
        panic!("wrong variant")
    };
    assert_eq!(p.pause_id, "pause_1a2b3c_1");
    assert_eq!(p.action, ResumeAction::Inject);
    assert_eq!(p.output, Some(json!({"flights": []})));
    assert_eq!(p.input, Some(json!({"origin": "OAK"})));
    assert_eq!(p.request_id.as_deref(), Some("req-3"));
}

#[test]
fn exec_resume_inject_null_output_is_kept() {
    let v = frame(
        "exec.resume",
        json!({"pauseId": "p", "action": "inject", "output": null}),
    );
    let env = parse_ok(&v);
    let Message::ExecResume(p) = &env.message else {
        panic!("wrong variant")
    };
    assert_eq!(p.output, Some(Value::Null));
    assert!(env.to_json().contains(r#""output":null"#));
}

#[test]
fn breakpoint_set() {
    let env = parse_ok(&sample("breakpoint.set"));
    assert_eq!(env.run_id, WILDCARD_RUN_ID);
    let Message::BreakpointSet(p) = env.message else {
        panic!("wrong variant")
    };
    assert_eq!(
        p.matcher,
        BreakpointMatcher::at(PausePoint::After)
            .kind(NodeKind::Tool)
            .name("search_flights")
    );
}

#[test]
fn breakpoint_clear() {
    let Message::BreakpointClear(p) = message("breakpoint.clear") else {
        panic!("wrong variant")
    };
    assert_eq!(p.matcher, BreakpointMatcher::default());
    assert_eq!(p.matcher.effective_point(), PausePoint::Before);
}

#[test]
fn mode_set() {
    let Message::ModeSet(p) = message("mode.set") else {
        panic!("wrong variant")
    };
    assert_eq!(p.mode, RunMode::Step);
}

#[test]
fn hello() {
    let Message::Hello(p) = message("hello") else {
        panic!("wrong variant")
    };
    assert_eq!(p.versions.protocol, 1);
    assert_eq!(p.versions.client, "0.5.1");
    assert_eq!(p.capabilities.len(), 6);
    assert!(p.capabilities.iter().any(|c| c == "run-claim"));
    assert_eq!(p.app.as_deref(), Some("support-agent"));
    assert_eq!(p.sdk.unwrap().name, "python");
    assert_eq!(p.resume_token.as_deref(), Some("tok_5f1e"));
}

#[test]
fn hello_ignores_unknown_capabilities() {
    let mut v = sample("hello");
    v["payload"]["capabilities"] = json!(["pause", "teleport-v9"]);
    let Message::Hello(p) = parse_ok(&v).message else {
        panic!("wrong variant")
    };
    assert_eq!(p.capabilities, ["pause", "teleport-v9"]);
}

#[test]
fn hello_ack() {
    let Message::HelloAck(p) = message("hello.ack") else {
        panic!("wrong variant")
    };
    assert_eq!(p.versions.protocol, 1);
    assert_eq!(p.versions.viewer, "0.1.0");
    assert_eq!(p.capabilities.len(), 5);
    assert_eq!(
        p.breakpoints,
        [
            BreakpointMatcher::on_error(),
            BreakpointMatcher::default()
                .kind(NodeKind::Tool)
                .name("search_flights")
        ]
    );
    assert_eq!(p.mode, RunMode::Run);
    assert_eq!(p.session_token.as_deref(), Some("tok_5f1e"));
    assert_eq!(
        p.hub_capabilities.as_deref(),
        Some(
            &[
                mindgate_protocol::hub_capability::EDIT_INPUT.to_owned(),
                mindgate_protocol::hub_capability::REPLAY.to_owned(),
                mindgate_protocol::hub_capability::PRINCIPAL.to_owned(),
            ][..]
        )
    );
}

#[test]
fn hello_ack_without_hub_capabilities_is_valid() {
    let v = wildcard(
        "hello.ack",
        json!({"versions": {"protocol": 1, "viewer": "0.5.1"}, "capabilities": [],
               "breakpoints": [], "mode": "run"}),
    );
    let Message::HelloAck(p) = parse_ok(&v).message else {
        panic!("wrong variant")
    };
    assert_eq!(p.hub_capabilities, None);
}

#[test]
fn exec_paused_reason_and_editable_are_optional() {
    let v = frame(
        "exec.paused",
        json!({"pauseId": "p", "nodeId": "tool:t", "point": "before"}),
    );
    let Message::ExecPaused(p) = parse_ok(&v).message else {
        panic!("wrong variant")
    };
    assert_eq!((p.reason, p.editable), (None, None));
}

/// (sample, pointer to the object holding the field, field, expected issue path)
const REQUIRED: &[(&str, &str, &str, &str)] = &[
    ("run.started", "/payload", "app", "payload"),
    ("run.started", "/payload", "sdk", "payload"),
    ("run.started", "/payload/sdk", "name", "payload.sdk"),
    ("run.started", "/payload/sdk", "version", "payload.sdk"),
    ("run.finished", "/payload", "status", "payload"),
    ("run.finished", "/payload/error", "message", "payload.error"),
    ("run.finished", "/payload/error", "name", "payload.error"),
    ("graph.hint", "/payload", "nodes", "payload"),
    (
        "graph.hint",
        "/payload/nodes/1",
        "nodeId",
        "payload.nodes[1]",
    ),
    ("graph.hint", "/payload/nodes/1", "kind", "payload.nodes[1]"),
    ("graph.hint", "/payload/nodes/1", "name", "payload.nodes[1]"),
    (
        "graph.hint/gap",
        "/payload/gap",
        "droppedCount",
        "payload.gap",
    ),
    ("graph.hint/gap", "/payload/gap", "fromSeq", "payload.gap"),
    ("graph.hint/gap", "/payload/gap", "toSeq", "payload.gap"),
    ("node.started", "/payload", "nodeId", "payload"),
    ("node.started", "/payload", "kind", "payload"),
    ("node.started", "/payload", "name", "payload"),
    ("node.started", "/payload", "instanceId", "payload"),
    (
        "node.started",
        "/payload/redaction",
        "count",
        "payload.redaction",
    ),
    ("node.token", "/payload", "nodeId", "payload"),
    ("node.token", "/payload", "deltas", "payload"),
    ("node.token", "/payload/deltas/1", "t", "payload.deltas[1]"),
    ("node.token", "/payload/deltas/1", "v", "payload.deltas[1]"),
    ("node.finished", "/payload", "nodeId", "payload"),
    ("node.finished", "/payload", "durationMs", "payload"),
    ("node.finished", "/payload", "status", "payload"),
    (
        "node.finished",
        "/payload/usage",
        "inputTokens",
        "payload.usage",
    ),
    (
        "node.finished",
        "/payload/usage",
        "outputTokens",
        "payload.usage",
    ),
    ("node.error", "/payload", "nodeId", "payload"),
    ("node.error", "/payload", "error", "payload"),
    ("node.error", "/payload/error", "name", "payload.error"),
    ("exec.paused", "/payload", "pauseId", "payload"),
    ("exec.paused", "/payload", "nodeId", "payload"),
    ("exec.paused", "/payload", "point", "payload"),
    ("exec.paused", "/payload/loop", "repeats", "payload.loop"),
    ("exec.paused", "/payload/loop", "firstSeq", "payload.loop"),
    ("exec.paused", "/payload/loop", "lastSeq", "payload.loop"),
    (
        "exec.paused",
        "/payload/loop",
        "fingerprint",
        "payload.loop",
    ),
    ("exec.paused", "/payload/smart", "rule", "payload.smart"),
    ("exec.resumed", "/payload", "pauseId", "payload"),
    ("exec.resumed", "/payload", "action", "payload"),
    ("exec.resumed", "/payload/edited", "after", "payload.edited"),
    ("exec.refused", "/payload", "pauseId", "payload"),
    ("exec.refused", "/payload", "code", "payload"),
    ("exec.resume", "/payload", "pauseId", "payload"),
    ("exec.resume", "/payload", "action", "payload"),
    ("breakpoint.set", "/payload", "matcher", "payload"),
    ("breakpoint.clear", "/payload", "matcher", "payload"),
    ("mode.set", "/payload", "mode", "payload"),
    ("hello", "/payload", "versions", "payload"),
    ("hello", "/payload", "capabilities", "payload"),
    ("hello", "/payload/versions", "protocol", "payload.versions"),
    ("hello", "/payload/versions", "client", "payload.versions"),
    ("hello", "/payload/sdk", "version", "payload.sdk"),
    ("hello.ack", "/payload", "versions", "payload"),
    ("hello.ack", "/payload", "capabilities", "payload"),
    ("hello.ack", "/payload", "breakpoints", "payload"),
    ("hello.ack", "/payload", "mode", "payload"),
    (
        "hello.ack",
        "/payload/versions",
        "viewer",
        "payload.versions",
    ),
];

#[test]
fn missing_required_field_is_invalid_with_a_path() {
    for (label, pointer, field, path) in REQUIRED {
        let mut v = sample(label);
        let holder = v
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("{label}: no object at {pointer}"));
        assert!(
            holder.remove(*field).is_some(),
            "{label}: no field {field} at {pointer}"
        );
        match parse_envelope(&v.to_string()) {
            ParseResult::Invalid { reason, issues } => {
                let type_name = v["type"].as_str().unwrap();
                assert!(
                    reason.contains(type_name) && reason.contains(field),
                    "{label}/{field}: reason {reason:?}"
                );
                assert_eq!(issues.len(), 1, "{label}/{field}");
                assert_eq!(issues[0].path, *path, "{label}/{field}");
                assert!(
                    issues[0]
                        .message
                        .contains(&format!("missing field `{field}`")),
                    "{label}/{field}: {:?}",
                    issues[0].message
                );
            }
            other => panic!("{label} without {field}: expected invalid, got {other:?}"),
        }
    }
}

/// (sample, pointer, bad value, expected issue path)
fn wrong_values() -> Vec<(&'static str, &'static str, Value, &'static str)> {
    vec![
        (
            "node.token",
            "/payload/deltas/1/t",
            json!("audio"),
            "payload.deltas[1].t",
        ),
        (
            "node.token",
            "/payload/deltas/0/v",
            json!(7),
            "payload.deltas[0].v",
        ),
        (
            "node.started",
            "/payload/kind",
            json!("robot"),
            "payload.kind",
        ),
        (
            "node.finished",
            "/payload/durationMs",
            json!("12"),
            "payload.durationMs",
        ),
        (
            "node.finished",
            "/payload/usage/inputTokens",
            json!(-1),
            "payload.usage.inputTokens",
        ),
        (
            "node.finished",
            "/payload/status",
            json!("done"),
            "payload.status",
        ),
        (
            "exec.paused",
            "/payload/point",
            json!("during"),
            "payload.point",
        ),
        (
            "exec.paused",
            "/payload/reason",
            json!("boredom"),
            "payload.reason",
        ),
        (
            "exec.resume",
            "/payload/action",
            json!("skip"),
            "payload.action",
        ),
        (
            "exec.refused",
            "/payload/code",
            json!("nope"),
            "payload.code",
        ),
        ("mode.set", "/payload/mode", json!("walk"), "payload.mode"),
        (
            "run.finished",
            "/payload/status",
            json!("fine"),
            "payload.status",
        ),
        (
            "breakpoint.set",
            "/payload/matcher/point",
            json!("later"),
            "payload.matcher.point",
        ),
        (
            "hello.ack",
            "/payload/breakpoints/1/kind",
            json!("robot"),
            "payload.breakpoints[1].kind",
        ),
        (
            "hello",
            "/payload/capabilities",
            json!("pause"),
            "payload.capabilities",
        ),
        ("graph.hint", "/payload/nodes", json!({}), "payload.nodes"),
        ("run.started", "/payload/meta", json!([1]), "payload.meta"),
    ]
}

#[test]
fn wrong_field_value_is_invalid_with_its_path() {
    for (label, pointer, bad, path) in wrong_values() {
        let mut v = sample(label);
        *v.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{label}: nothing at {pointer}")) = bad.clone();
        match parse_envelope(&v.to_string()) {
            ParseResult::Invalid { issues, .. } => {
                assert_eq!(issues.len(), 1, "{label} {pointer}");
                assert_eq!(issues[0].path, path, "{label} {pointer} = {bad}");
            }
            other => panic!("{label} {pointer} = {bad}: expected invalid, got {other:?}"),
        }
    }
}

#[test]
fn unknown_payload_and_envelope_fields_are_kept_at_every_level() {
    let mut v = sample("node.finished");
    v["trace"] = json!({"id": "abc", "sampled": true});
    v["payload"]["costUsd"] = json!(0.0031);
    v["payload"]["usage"]["audioTokens"] = json!(5);
    let env = parse_ok(&v);
    assert_eq!(env.extra["trace"], json!({"id": "abc", "sampled": true}));
    let Message::NodeFinished(p) = &env.message else {
        panic!("wrong variant")
    };
    assert_eq!(p.extra["costUsd"], json!(0.0031));
    assert_eq!(p.usage.as_ref().unwrap().extra["audioTokens"], json!(5));
    let back: Value = serde_json::from_str(&env.to_json()).unwrap();
    assert!(json_eq(&back, &v), "{back} != {v}");
}

#[test]
fn builder_frames_parse_back_identically() {
    for (label, value) in samples() {
        let parsed = parse_ok(&value);
        let built = Envelope::new(parsed.run_id.clone(), parsed.seq, parsed.message.clone())
            .with_ts(parsed.ts);
        assert_eq!(built.gm, 1);
        assert_eq!(built, parsed, "{label}");
        assert_eq!(
            mindgate_protocol::parse_envelope(&built.to_json()),
            ParseResult::Ok(parsed),
            "{label}"
        );
    }
}

#[test]
fn integral_duration_survives_as_the_same_number() {
    let mut v = sample("node.finished");
    v["payload"]["durationMs"] = json!(12);
    let env = parse_ok(&v);
    let back: Value = serde_json::from_str(&env.to_json()).unwrap();
    assert_eq!(back["payload"]["durationMs"].as_f64(), Some(12.0));
}
