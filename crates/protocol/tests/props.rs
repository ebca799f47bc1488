//! Property tests: round trips of arbitrary valid envelopes (with arbitrary
//! unknown fields at every level), no panics on arbitrary input, forward
//! compatibility and version negotiation.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::json_eq;
use mindgate_protocol::{
    Message, NodeKind, NodeStatus, ParseResult, PausePoint, PauseReason, RefuseCode, ResumeAction,
    RunMode, RunStatus, TokenChannel, parse_envelope,
};
use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------- strategies

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..10).prop_map(String::from_iter)
}

fn nonempty_text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 1..10).prop_map(String::from_iter)
}

fn finite_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (0u32..100_000).prop_map(|n| f64::from(n) / 100.0),
        (0u32..1000).prop_map(f64::from),
    ]
}

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite_f64().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Unknown fields: keys that no v1 object uses (they start with `x_`).
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((text().prop_map(|k| format!("x_{k}")), any_json()), 0..3)
        .prop_map(|kv| kv.into_iter().collect())
}

fn pick(words: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::sample::select(words).prop_map(Value::from)
}

fn wire<T: Copy + std::fmt::Debug + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> BoxedStrategy<Value> {
    prop::sample::select(all)
        .prop_map(move |v| Value::from(name(v)))
        .boxed()
}

fn node_kind() -> BoxedStrategy<Value> {
    wire(NodeKind::ALL, NodeKind::as_str)
}

/// A loose object: `required` fields, each `optional` field maybe, plus extras.
fn object(
    required: Vec<(&'static str, BoxedStrategy<Value>)>,
    optional: Vec<(&'static str, BoxedStrategy<Value>)>,
) -> BoxedStrategy<Value> {
    let (req_names, req_values): (Vec<_>, Vec<_>) = required.into_iter().unzip();
    let (opt_names, opt_values): (Vec<_>, Vec<_>) = optional.into_iter().unzip();
    let opt_values: Vec<_> = opt_values.into_iter().map(prop::option::of).collect();
    (req_values, opt_values, extras())
        .prop_map(move |(req, opt, extra)| {
            let mut map = Map::new();
            for (name, value) in req_names.iter().zip(req) {
                map.insert((*name).to_owned(), value);
            }
            for (name, value) in opt_names.iter().zip(opt) {
                if let Some(value) = value {
                    map.insert((*name).to_owned(), value);
                }
            }
            map.extend(extra);
            Value::Object(map)
        })
        .boxed()
}

fn s() -> BoxedStrategy<Value> {
    text().prop_map(Value::String).boxed()
}

fn u() -> BoxedStrategy<Value> {
    any::<u64>().prop_map(Value::from).boxed()
}

fn f() -> BoxedStrategy<Value> {
    finite_f64().prop_map(Value::from).boxed()
}

fn b() -> BoxedStrategy<Value> {
    any::<bool>().prop_map(Value::Bool).boxed()
}

fn j() -> BoxedStrategy<Value> {
    any_json().boxed()
}

fn list(item: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    prop::collection::vec(item, 0..4)
        .prop_map(Value::Array)
        .boxed()
}

fn sdk() -> BoxedStrategy<Value> {
    object(vec![("name", s()), ("version", s())], vec![])
}

fn error_info() -> BoxedStrategy<Value> {
    object(vec![("name", s()), ("message", s())], vec![("stack", s())])
}

fn matcher() -> BoxedStrategy<Value> {
    object(
        vec![],
        vec![
            ("kind", node_kind()),
            ("name", s()),
            ("point", wire(PausePoint::ALL, PausePoint::as_str)),
        ],
    )
}

/// A payload of every v1 type, with its `type` string.
fn payload() -> impl Strategy<Value = (&'static str, Value)> {
    let by_type: Vec<(&'static str, BoxedStrategy<Value>)> = vec![
        (
            "run.started",
            object(
                vec![("app", s()), ("sdk", sdk())],
                vec![("meta", object(vec![], vec![("name", s())]))],
            ),
        ),
        (
            "run.finished",
            object(
                vec![("status", wire(RunStatus::ALL, RunStatus::as_str))],
                vec![("error", error_info())],
            ),
        ),
        (
            "graph.hint",
            object(
                vec![(
                    "nodes",
                    list(object(
                        vec![("nodeId", s()), ("kind", node_kind()), ("name", s())],
                        vec![("parentId", s())],
                    )),
                )],
                vec![(
                    "gap",
                    object(
                        vec![("droppedCount", u()), ("fromSeq", u()), ("toSeq", u())],
                        vec![("reason", s())],
                    ),
                )],
            ),
        ),
        (
            "node.started",
            object(
                vec![
                    ("nodeId", s()),
                    ("kind", node_kind()),
                    ("name", s()),
                    ("instanceId", s()),
                ],
                vec![
                    ("parentId", s()),
                    ("input", j()),
                    ("collapsed", b()),
                    (
                        "redaction",
                        object(vec![("count", u())], vec![("keys", list(s()))]),
                    ),
                ],
            ),
        ),
        (
            "node.token",
            object(
                vec![
                    ("nodeId", s()),
                    (
                        "deltas",
                        list(object(
                            vec![
                                ("t", wire(TokenChannel::ALL, TokenChannel::as_str)),
                                ("v", s()),
                            ],
                            vec![],
                        )),
                    ),
                ],
                vec![("instanceId", s())],
            ),
        ),
        (
            "node.finished",
            object(
                vec![
                    ("nodeId", s()),
                    ("durationMs", f()),
                    ("status", wire(NodeStatus::ALL, NodeStatus::as_str)),
                ],
                vec![
                    ("instanceId", s()),
                    ("output", j()),
                    ("heldMs", f()),
                    (
                        "usage",
                        object(
                            vec![("inputTokens", u()), ("outputTokens", u())],
                            vec![
                                ("inclusive", b()),
                                ("cacheReadTokens", u()),
                                ("cacheWriteTokens", u()),
                                ("reasoningTokens", u()),
                            ],
                        ),
                    ),
                ],
            ),
        ),
        (
            "node.error",
            object(
                vec![("nodeId", s()), ("error", error_info())],
                vec![("instanceId", s()), ("heldMs", f())],
            ),
        ),
        (
            "exec.paused",
            object(
                vec![
                    ("pauseId", s()),
                    ("nodeId", s()),
                    ("point", wire(PausePoint::ALL, PausePoint::as_str)),
                ],
                vec![
                    ("reason", wire(PauseReason::ALL, PauseReason::as_str)),
                    (
                        "loop",
                        object(
                            vec![
                                ("repeats", u()),
                                ("firstSeq", u()),
                                ("lastSeq", u()),
                                ("fingerprint", s()),
                            ],
                            vec![
                                ("kind", pick(&["repeat", "cycle", "error-repeat"]).boxed()),
                                ("period", u()),
                                ("laps", u()),
                            ],
                        ),
                    ),
                    ("smart", object(vec![("rule", s())], vec![("detail", j())])),
                    ("editable", b()),
                ],
            ),
        ),
        (
            "exec.resumed",
            object(
                vec![
                    ("pauseId", s()),
                    ("action", wire(ResumeAction::ALL, ResumeAction::as_str)),
                ],
                vec![
                    ("edited", object(vec![("after", j())], vec![])),
                    ("requestId", s()),
                    ("principal", j()),
                ],
            ),
        ),
        (
            "exec.refused",
            object(
                vec![
                    ("pauseId", s()),
                    ("code", wire(RefuseCode::ALL, RefuseCode::as_str)),
                ],
                vec![("message", s()), ("requestId", s())],
            ),
        ),
        (
            "exec.resume",
            object(
                vec![
                    ("pauseId", s()),
                    ("action", wire(ResumeAction::ALL, ResumeAction::as_str)),
                ],
                vec![("output", j()), ("input", j()), ("requestId", s())],
            ),
        ),
        (
            "breakpoint.set",
            object(vec![("matcher", matcher())], vec![]),
        ),
        (
            "breakpoint.clear",
            object(vec![("matcher", matcher())], vec![]),
        ),
        (
            "mode.set",
            object(vec![("mode", wire(RunMode::ALL, RunMode::as_str))], vec![]),
        ),
        (
            "hello",
            object(
                vec![
                    (
                        "versions",
                        object(
                            vec![
                                ("protocol", (0u32..4).prop_map(Value::from).boxed()),
                                ("client", s()),
                            ],
                            vec![],
                        ),
                    ),
                    ("capabilities", list(s())),
                ],
                vec![("app", s()), ("sdk", sdk()), ("resumeToken", s())],
            ),
        ),
        (
            "hello.ack",
            object(
                vec![
                    (
                        "versions",
                        object(
                            vec![
                                ("protocol", (0u32..4).prop_map(Value::from).boxed()),
                                ("viewer", s()),
                            ],
                            vec![],
                        ),
                    ),
                    ("capabilities", list(s())),
                    ("breakpoints", list(matcher())),
                    ("mode", wire(RunMode::ALL, RunMode::as_str)),
                ],
                vec![("sessionToken", s())],
            ),
        ),
    ];
    assert_eq!(by_type.len(), Message::TYPES.len());
    Union::new(
        by_type
            .into_iter()
            .map(|(name, strategy)| strategy.prop_map(move |p| (name, p)).boxed()),
    )
}

/// A whole valid frame of a known type, with unknown envelope fields.
fn valid_frame() -> impl Strategy<Value = Value> {
    (
        payload(),
        any::<u64>(),
        any::<i64>(),
        nonempty_text(),
        extras(),
    )
        .prop_map(|((type_name, payload), seq, ts, run_id, extra)| {
            let mut map = Map::new();
            map.insert("gm".into(), json!(1));
            map.insert("seq".into(), json!(seq));
            map.insert("ts".into(), json!(ts));
            map.insert("runId".into(), json!(run_id));
            map.insert("type".into(), json!(type_name));
            map.insert("payload".into(), payload);
            map.extend(extra);
            Value::Object(map)
        })
}

fn schema_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| {
        jsonschema::draft202012::new(&mindgate_protocol::json_schema()).expect("schema compiles")
    })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(config(384))]

    /// parse(text) is Ok, its serialisation has the same JSON value (every key
    /// and value kept), and parsing that serialisation gives the same envelope.
    #[test]
    fn valid_envelopes_round_trip(frame in valid_frame()) {
        let text = frame.to_string();
        let env = match parse_envelope(&text) {
            ParseResult::Ok(env) => env,
            other => panic!("expected ok for {text}, got {other:?}"),
        };
        prop_assert_eq!(env.type_name(), frame["type"].as_str().unwrap());
        let out = env.to_json();
        let back: Value = serde_json::from_str(&out).unwrap();
        prop_assert!(json_eq(&back, &frame), "{} != {}", back, frame);
        prop_assert_eq!(parse_envelope(&out), ParseResult::Ok(env));
    }

    /// The exported JSON Schema accepts every frame the parser accepts, and
    /// rejects known types whose payload the parser rejects for its shape.
    #[test]
    fn schema_agrees_with_the_parser(
        frame in valid_frame(),
        other_payload in prop::option::of(any_json().prop_filter("object", Value::is_object)),
    ) {
        let mut frame = frame;
        if let Some(p) = other_payload {
            frame["payload"] = p;
        }
        let verdict = parse_envelope(&frame.to_string());
        let valid = schema_validator().is_valid(&frame);
        match verdict {
            ParseResult::Ok(_) => prop_assert!(valid, "schema rejects a frame the parser accepts: {}", frame),
            ParseResult::Invalid { .. } => prop_assert!(!valid, "schema accepts a frame the parser rejects: {}", frame),
            other => panic!("{other:?}"),
        }
    }

    /// Pretty-printed frames parse the same as compact ones.
    #[test]
    fn formatting_does_not_matter(frame in valid_frame()) {
        let compact = parse_envelope(&frame.to_string());
        let pretty = parse_envelope(&serde_json::to_string_pretty(&frame).unwrap());
        prop_assert_eq!(compact, pretty);
    }

    /// Key order does not change the outcome (the parser types the payload in
    /// passing only when `gm` and `type` come first), for valid frames and for
    /// frames whose payload is arbitrary.
    #[test]
    fn key_order_does_not_matter(
        frame in valid_frame(),
        other_payload in prop::option::of(any_json()),
        order in any::<prop::sample::Index>(),
        shift in 1usize..8,
    ) {
        let mut frame = frame;
        if let Some(p) = other_payload {
            frame["payload"] = p;
        }
        let map = frame.as_object().unwrap();
        let mut keys: Vec<&String> = map.keys().collect();
        let n = keys.len();
        keys.swap(0, order.index(n));
        keys.rotate_left(shift % n);
        let shuffled: Map<String, Value> =
            keys.into_iter().map(|k| (k.clone(), map[k].clone())).collect();
        let shuffled_text = Value::Object(shuffled).to_string();
        prop_assert_eq!(parse_envelope(&frame.to_string()), parse_envelope(&shuffled_text));
    }

    /// Unknown types are valid, opaque envelopes that keep payload and extras.
    #[test]
    fn unknown_types_are_kept_opaque(
        type_name in "[a-z]{1,8}(\\.[a-z-]{1,8}){0,2}",
        payload in extras(),
        extra in extras(),
        seq in any::<u64>(),
        ts in any::<i64>(),
        run_id in nonempty_text(),
    ) {
        prop_assume!(Message::direction_of(&type_name).is_none());
        let mut map = Map::new();
        map.insert("gm".into(), json!(1));
        map.insert("seq".into(), json!(seq));
        map.insert("ts".into(), json!(ts));
        map.insert("runId".into(), json!(run_id));
        map.insert("type".into(), json!(type_name));
        map.insert("payload".into(), Value::Object(payload.clone()));
        map.extend(extra.clone());
        let frame = Value::Object(map);
        let ParseResult::UnknownType(env) = parse_envelope(&frame.to_string()) else {
            panic!("expected unknown-type for {frame}");
        };
        prop_assert_eq!(&env.type_name, &type_name);
        prop_assert_eq!((env.seq, env.ts), (seq, ts));
        prop_assert_eq!(&env.run_id, &run_id);
        prop_assert!(json_eq(&Value::Object(env.payload.clone()), &Value::Object(payload)));
        prop_assert!(json_eq(&Value::Object(env.extra.clone()), &Value::Object(extra)));
        let back: Value = serde_json::from_str(&env.to_json()).unwrap();
        prop_assert!(json_eq(&back, &frame), "{} != {}", back, frame);
    }

    /// Any integer `gm` other than 1 is a version mismatch, whatever else is
    /// in the frame (as long as it is a JSON object).
    #[test]
    fn other_versions_are_refused(
        gm in any::<i64>().prop_filter("not 1", |g| *g != 1),
        rest in extras(),
        type_value in any_json(),
        payload in any_json(),
    ) {
        let mut map = rest;
        map.insert("type".into(), type_value);
        map.insert("payload".into(), payload);
        map.insert("gm".into(), json!(gm));
        let frame = Value::Object(map).to_string();
        prop_assert_eq!(parse_envelope(&frame), ParseResult::VersionMismatch { received: gm });
    }

    /// A valid frame moved to another version is refused with that version.
    #[test]
    fn valid_frames_of_another_version_are_refused(mut frame in valid_frame(), gm in 2i64..1000) {
        frame["gm"] = json!(gm);
        prop_assert_eq!(
            parse_envelope(&frame.to_string()),
            ParseResult::VersionMismatch { received: gm }
        );
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Arbitrary bytes (as text) never panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_envelope(&text).verdict();
    }

    /// Arbitrary strings never panic.
    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        let _ = parse_envelope(&text).verdict();
    }

    /// Arbitrary JSON values never panic, and only objects can be anything but invalid.
    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        let result = parse_envelope(&value.to_string());
        if !value.is_object() {
            let is_invalid = matches!(result, ParseResult::Invalid { .. });
            prop_assert!(is_invalid);
        }
    }

    /// Valid frames with random byte edits (flip, insert, delete, truncate)
    /// never panic; whatever still parses Ok still round trips.
    #[test]
    fn mutated_frames_never_panic(
        frame in valid_frame(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..4),
    ) {
        let mut bytes = frame.to_string().into_bytes();
        for (at, op, byte) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => { bytes.remove(i); }
                _ => bytes.truncate(i),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if let ParseResult::Ok(env) = parse_envelope(&text) {
            prop_assert_eq!(parse_envelope(&env.to_json()), ParseResult::Ok(env));
        }
    }

    /// Envelope fields of the wrong JSON type are invalid, never a panic or ok.
    #[test]
    fn wrong_envelope_field_types_are_invalid(
        frame in valid_frame(),
        field in prop::sample::select(&["seq", "ts", "runId", "type", "payload"][..]),
        value in any_json(),
    ) {
        let fits = match field {
            "seq" => value.as_u64().is_some(),
            "ts" => value.is_number(),
            "runId" => value.as_str().is_some_and(|s| !s.is_empty()),
            "type" => value.is_string(),
            _ => value.is_object(),
        };
        prop_assume!(!fits);
        let mut frame = frame;
        frame[field] = value;
        let result = parse_envelope(&frame.to_string());
        let is_invalid = matches!(result, ParseResult::Invalid { .. });
        prop_assert!(is_invalid, "{:?}", result);
    }
}
