//! The parser's check order, its four outcomes and its limits on hostile input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{parse_ok, sample};
use mindgate_protocol::{MAX_DEPTH, MAX_FRAME_BYTES, ParseResult, parse_envelope};
use serde_json::{Value, json};

fn reason_of(frame: &str) -> String {
    match parse_envelope(frame) {
        ParseResult::Invalid { reason, .. } => reason,
        other => panic!("expected invalid for {frame:.200}, got {other:?}"),
    }
}

fn mismatch_of(frame: &str) -> i64 {
    match parse_envelope(frame) {
        ParseResult::VersionMismatch { received } => received,
        other => panic!("expected version-mismatch for {frame:.200}, got {other:?}"),
    }
}

#[test]
fn not_json_is_invalid() {
    for frame in [
        "",
        " ",
        "{",
        "gm:1",
        "{\"gm\":1,}",
        "{} {}",
        "\u{feff}{}",
        "nul",
    ] {
        let reason = reason_of(frame);
        assert!(reason.starts_with("not JSON"), "{frame:?}: {reason}");
    }
}

#[test]
fn not_an_object_is_invalid() {
    for frame in ["[]", "[{\"gm\":1}]", "1", "\"gm\"", "null", "true"] {
        assert_eq!(reason_of(frame), "envelope is not an object", "{frame}");
    }
}

#[test]
fn bad_gm_is_invalid() {
    for gm in [
        "",
        r#""gm":"1","#,
        r#""gm":1.0,"#,
        r#""gm":1e0,"#,
        r#""gm":true,"#,
        r#""gm":null,"#,
        r#""gm":[1],"#,
    ] {
        let frame = format!(
            r#"{{{gm}"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{{"mode":"run"}}}}"#
        );
        assert_eq!(reason_of(&frame), "missing or non-integer 'gm'", "{frame}");
    }
}

#[test]
fn other_gm_is_version_mismatch_even_when_everything_else_is_broken() {
    assert_eq!(mismatch_of(r#"{"gm":2}"#), 2);
    assert_eq!(
        mismatch_of(r#"{"gm":0,"type":5,"payload":[],"seq":-1,"runId":7}"#),
        0
    );
    assert_eq!(mismatch_of(r#"{"payload":null,"gm":-3}"#), -3);
    assert_eq!(
        mismatch_of(
            r#"{"gm":2,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"}}"#
        ),
        2
    );
    // An integer beyond i64 is still "another version", not garbage.
    assert_eq!(
        mismatch_of(r#"{"gm":123456789012345678901234567890}"#),
        i64::MAX
    );
    assert_eq!(
        mismatch_of(r#"{"gm":-123456789012345678901234567890}"#),
        i64::MIN
    );
}

#[test]
fn broken_json_beats_version_mismatch() {
    assert!(reason_of(r#"{"gm":2,"#).starts_with("not JSON"));
}

#[test]
fn envelope_fields_are_checked_in_order_type_payload_run_id_seq() {
    // Every field broken; fix them one at a time and watch the reason move on.
    let mut v = json!({"gm": 1, "type": 5, "payload": [], "runId": 7, "seq": -1, "ts": 0});
    assert_eq!(reason_of(&v.to_string()), "missing or non-string 'type'");
    v["type"] = json!("no.such.type");
    assert_eq!(reason_of(&v.to_string()), "missing or non-object 'payload'");
    v["payload"] = json!({});
    assert_eq!(reason_of(&v.to_string()), "missing or non-string 'runId'");
    v["runId"] = json!("run_1");
    assert!(reason_of(&v.to_string()).starts_with("missing or invalid 'seq'"));
    v["seq"] = json!(0);
    assert!(matches!(
        parse_envelope(&v.to_string()),
        ParseResult::UnknownType(_)
    ));
}

#[test]
fn missing_envelope_fields_are_invalid() {
    let full = sample("mode.set");
    for (field, reason) in [
        ("type", "missing or non-string 'type'"),
        ("payload", "missing or non-object 'payload'"),
        ("runId", "missing or non-string 'runId'"),
        ("seq", "missing or invalid 'seq' (a non-negative integer)"),
        ("ts", "missing or non-numeric 'ts'"),
    ] {
        let mut v = full.clone();
        v.as_object_mut().unwrap().remove(field);
        assert_eq!(reason_of(&v.to_string()), reason, "without {field}");
    }
}

#[test]
fn bad_seq_is_invalid() {
    for seq in [
        json!(-1),
        json!(1.5),
        json!("1"),
        json!(null),
        json!(1e3),
        json!(u64::MAX as f64 * 4.0),
        json!(-9_223_372_036_854_775_807_i64),
    ] {
        let mut v = sample("mode.set");
        v["seq"] = seq.clone();
        assert!(reason_of(&v.to_string()).contains("'seq'"), "seq {seq}");
    }
    let mut v = sample("mode.set");
    v["seq"] = json!(u64::MAX);
    assert_eq!(parse_ok(&v).seq, u64::MAX);
}

#[test]
fn bad_run_id_and_ts_are_invalid() {
    for (field, value) in [
        ("runId", json!("")),
        ("runId", json!(null)),
        ("runId", json!(["r"])),
        ("ts", json!("1756200000000")),
        ("ts", json!(null)),
    ] {
        let mut v = sample("mode.set");
        v[field] = value.clone();
        assert!(
            matches!(parse_envelope(&v.to_string()), ParseResult::Invalid { .. }),
            "{field} = {value}"
        );
    }
}

#[test]
fn payload_null_or_array_is_invalid_even_for_unknown_types() {
    for payload in [json!(null), json!([]), json!("x"), json!(1)] {
        let mut v = sample("mode.set");
        v["type"] = json!("future.thing");
        v["payload"] = payload;
        assert_eq!(reason_of(&v.to_string()), "missing or non-object 'payload'");
    }
}

#[test]
fn array_payloads_are_invalid_even_when_they_would_fit_positionally() {
    for (type_name, payload) in [
        ("mode.set", json!(["run"])),
        ("exec.refused", json!(["p", "schema"])),
        ("breakpoint.set", json!([{}])),
    ] {
        let mut v = sample("mode.set");
        v["type"] = json!(type_name);
        v["payload"] = payload;
        assert_eq!(reason_of(&v.to_string()), "missing or non-object 'payload'");
    }
    // Nested objects too: a matcher is an object, not a tuple.
    let mut v = sample("breakpoint.set");
    v["payload"]["matcher"] = json!(["tool", "x", "before"]);
    assert!(matches!(
        parse_envelope(&v.to_string()),
        ParseResult::Invalid { .. }
    ));
}

#[test]
fn payload_before_type_and_gm_parses_the_same() {
    let canonical = r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.token","payload":{"nodeId":"n","deltas":[{"t":"text","v":"x"}]}}"#;
    let reordered = r#"{"payload":{"nodeId":"n","deltas":[{"t":"text","v":"x"}]},"runId":"r","ts":0,"type":"node.token","seq":1,"gm":1}"#;
    assert!(matches!(parse_envelope(canonical), ParseResult::Ok(_)));
    assert_eq!(parse_envelope(canonical), parse_envelope(reordered));
    // A second `type` after the payload wins, whatever the payload was typed as.
    let retyped = r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"},"type":"x.y"}"#;
    assert!(matches!(
        parse_envelope(retyped),
        ParseResult::UnknownType(_)
    ));
    let retyped = r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"},"type":"node.token"}"#;
    assert!(matches!(
        parse_envelope(retyped),
        ParseResult::Invalid { .. }
    ));
    // A second `gm` after the payload also wins.
    let regm =
        r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"},"gm":2}"#;
    assert_eq!(
        parse_envelope(regm),
        ParseResult::VersionMismatch { received: 2 }
    );
    // And a second payload.
    let repay = r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"},"payload":{"mode":"nope"}}"#;
    assert!(matches!(parse_envelope(repay), ParseResult::Invalid { .. }));
}

#[test]
fn nesting_limit_is_the_same_whatever_the_key_order() {
    // The payload nests as deep as it may on its own; typing it inside the
    // envelope (one level deeper) must not change the verdict.
    let limit_ok = (1..MAX_DEPTH)
        .rev()
        .find(|d| {
            let mut v = sample("node.started");
            v["payload"]["input"] = serde_json::from_str(&nested(*d)).unwrap_or(Value::Null);
            !v["payload"]["input"].is_null()
                && matches!(parse_envelope(&v.to_string()), ParseResult::Ok(_))
        })
        .unwrap();
    for depth in [limit_ok, limit_ok + 1] {
        let inner = nested(depth);
        let canonical = format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.started","payload":{{"nodeId":"n","kind":"tool","name":"n","instanceId":"i","input":{inner}}}}}"#
        );
        let reordered = format!(
            r#"{{"payload":{{"nodeId":"n","kind":"tool","name":"n","instanceId":"i","input":{inner}}},"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.started"}}"#
        );
        assert_eq!(
            parse_envelope(&canonical),
            parse_envelope(&reordered),
            "depth {depth}"
        );
    }
}

#[test]
fn unknown_type_is_an_opaque_valid_envelope() {
    let frame = r#"{"gm":1,"seq":9,"ts":5,"runId":"run_1","type":"node.teleported","payload":{"to":"mars","n":[1,2]},"hop":3}"#;
    let ParseResult::UnknownType(env) = parse_envelope(frame) else {
        panic!("expected unknown-type")
    };
    assert_eq!(env.type_name, "node.teleported");
    assert_eq!((env.seq, env.ts, env.run_id.as_str()), (9, 5, "run_1"));
    assert_eq!(
        Value::Object(env.payload.clone()),
        json!({"to": "mars", "n": [1, 2]})
    );
    assert_eq!(env.extra["hop"], json!(3));
    let back: Value = serde_json::from_str(&env.to_json()).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(frame).unwrap());
}

#[test]
fn type_names_are_case_sensitive() {
    let mut v = sample("mode.set");
    v["type"] = json!("Mode.Set");
    assert!(matches!(
        parse_envelope(&v.to_string()),
        ParseResult::UnknownType(_)
    ));
}

#[test]
fn payload_is_validated_after_the_envelope() {
    let mut v = sample("mode.set");
    v["payload"] = json!({"mode": "sprint"});
    match parse_envelope(&v.to_string()) {
        ParseResult::Invalid { reason, issues } => {
            assert!(
                reason.starts_with("invalid 'mode.set' payload:"),
                "{reason}"
            );
            assert_eq!(issues[0].path, "payload.mode");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn duplicate_keys_last_one_wins() {
    let frame = r#"{"gm":2,"seq":1,"ts":0,"runId":"a","runId":"b","type":"mode.set","payload":{"mode":"run"},"gm":1,"x":1,"x":2}"#;
    let env = match parse_envelope(frame) {
        ParseResult::Ok(env) => env,
        other => panic!("{other:?}"),
    };
    assert_eq!(env.run_id, "b");
    assert_eq!(env.extra.len(), 1);
    assert_eq!(env.extra["x"], json!(2));
}

#[test]
fn escaped_keys_and_strings_are_decoded() {
    let frame = r#"{"g\u006d":1,"seq":1,"ts":0,"runId":"r\u00fcn","typ\u0065":"mode.set","payload":{"mode":"step"}}"#;
    let env = match parse_envelope(frame) {
        ParseResult::Ok(env) => env,
        other => panic!("{other:?}"),
    };
    assert_eq!(env.run_id, "rün");
}

#[test]
fn whitespace_around_values_is_accepted() {
    let frame = "\n {\"gm\" : 1 ,\t\"seq\": 1, \"ts\": 0, \"runId\": \"r\", \"type\": \"mode.set\",\r\n \"payload\" : { \"mode\" : \"run\" } }\n";
    parse_ok(&serde_json::from_str(frame).unwrap());
    assert!(matches!(parse_envelope(frame), ParseResult::Ok(_)));
}

#[test]
fn fractional_ts_is_accepted_and_rounded() {
    let mut v = sample("mode.set");
    v["ts"] = json!(1756200000000.4);
    assert_eq!(parse_ok(&v).ts, 1_756_200_000_000);
}

#[test]
fn oversized_frame_is_invalid_with_a_clear_reason() {
    let head = sample("mode.set").to_string();
    let mut big = head.clone();
    big.push_str(&" ".repeat(MAX_FRAME_BYTES + 1 - head.len()));
    assert_eq!(big.len(), MAX_FRAME_BYTES + 1);
    let reason = reason_of(&big);
    assert!(
        reason.contains(&(MAX_FRAME_BYTES + 1).to_string())
            && reason.contains("limit")
            && reason.contains(&MAX_FRAME_BYTES.to_string()),
        "{reason}"
    );
    // Exactly at the limit is still parsed.
    big.pop();
    assert!(matches!(parse_envelope(&big), ParseResult::Ok(_)));
}

fn nested(depth: usize) -> String {
    let mut s = "[".repeat(depth);
    s.push_str(&"]".repeat(depth));
    s
}

#[test]
fn deep_nesting_in_the_payload_is_invalid_not_a_crash() {
    let frame = format!(
        r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.started","payload":{{"nodeId":"n","kind":"tool","name":"n","instanceId":"i","input":{}}}}}"#,
        nested(100_000)
    );
    match parse_envelope(&frame) {
        ParseResult::Invalid { reason, issues } => {
            assert!(reason.contains("nesting deeper than"), "{reason}");
            assert_eq!(
                issues[0].message,
                format!("nesting deeper than {MAX_DEPTH} levels")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn deep_nesting_elsewhere_is_invalid_not_a_crash() {
    let deep = nested(100_000);
    let frames = [
        // an unknown envelope field
        format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{{"mode":"run"}},"x":{deep}}}"#
        ),
        // an unknown payload field
        format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{{"mode":"run","x":{deep}}}}}"#
        ),
        // the payload of an unknown type
        format!(r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"x.y","payload":{{"x":{deep}}}}}"#),
        // the whole frame
        deep.clone(),
        "{\"a\":".repeat(100_000),
        // unterminated
        "[".repeat(100_000),
    ];
    for frame in &frames {
        assert!(
            matches!(parse_envelope(frame), ParseResult::Invalid { .. }),
            "{:.80}",
            frame
        );
    }
    // A version mismatch does not look at the rest.
    let frame = format!(r#"{{"gm":3,"x":{deep}}}"#);
    assert_eq!(mismatch_of(&frame), 3);
}

#[test]
fn moderate_nesting_is_fine() {
    let mut v = sample("node.started");
    v["payload"]["input"] = serde_json::from_str(&nested(100)).unwrap();
    parse_ok(&v);
}

#[test]
fn many_keys_parse_in_linear_time() {
    // Regression: duplicate detection used to scan every earlier key, so a
    // frame of a few hundred thousand keys took minutes.
    let mut frame = String::from(
        r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"}"#,
    );
    for i in 0..200_000 {
        frame.push_str(&format!(",\"k{i}\":{i}"));
    }
    frame.push('}');
    match parse_envelope(&frame) {
        ParseResult::Ok(env) => assert_eq!(env.extra.len(), 200_000),
        other => panic!("{other:?}"),
    }
}

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    // JavaScript accepts them and the Python client writes them on purpose
    // (`_dumps_like_js`); a Rust string cannot hold one, so they become U+FFFD
    // rather than costing the whole event.
    let frame = r#"{"gm":1,"seq":1,"ts":0,"runId":"r\ud800","type":"node.token","payload":{"nodeId":"n\udfff","deltas":[{"t":"text","v":"a\uD83D\uDE00b\uDBFFc\\ud800"}],"x\udc00":1}}"#;
    let env = match parse_envelope(frame) {
        ParseResult::Ok(env) => env,
        other => panic!("{other:?}"),
    };
    assert_eq!(env.run_id, "r\u{fffd}");
    let mindgate_protocol::Message::NodeToken(p) = &env.message else {
        panic!("wrong variant")
    };
    assert_eq!(p.node_id, "n\u{fffd}");
    // A proper pair is kept, an escaped backslash is not an escape.
    assert_eq!(p.deltas[0].v, "a\u{1F600}b\u{fffd}c\\ud800");
    assert_eq!(p.extra["x\u{fffd}"], json!(1));
}

#[test]
fn broken_unicode_escapes_are_invalid() {
    for bad in [r#"\u12"#, r#"\uzzzz"#, r#"\x41"#] {
        let frame = format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r{bad}","type":"mode.set","payload":{{"mode":"run"}}}}"#
        );
        assert!(
            matches!(parse_envelope(&frame), ParseResult::Invalid { .. }),
            "{frame}"
        );
    }
}

#[test]
fn verdicts_are_short_and_stable() {
    assert_eq!(
        parse_envelope(&sample("mode.set").to_string()).verdict(),
        "ok"
    );
    assert_eq!(
        parse_envelope(r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"x","payload":{}}"#).verdict(),
        "unknown-type"
    );
    assert_eq!(
        parse_envelope(r#"{"gm":7}"#).verdict(),
        "version-mismatch: 7"
    );
    assert_eq!(
        parse_envelope("[]").verdict(),
        "invalid: envelope is not an object"
    );
}

#[test]
fn long_float_literals_round_trip_exactly() {
    // Regression (fuzz): without exact float parsing, a literal like this came
    // back one ULP off after serialising and parsing again.
    let long = "1888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888.06";
    for frame in [
        format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"x.y","payload":{{"heldMs":{long}}}}}"#
        ),
        format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.finished","payload":{{"nodeId":"n","status":"ok","durationMs":{long},"x":{long}}}}}"#
        ),
    ] {
        let first = parse_envelope(&frame);
        let text = match &first {
            ParseResult::Ok(env) => env.to_json(),
            ParseResult::UnknownType(env) => env.to_json(),
            other => panic!("{other:?}"),
        };
        assert_eq!(parse_envelope(&text), first, "{text}");
    }
}

#[test]
fn token_payloads_are_objects_with_unique_fields() {
    for payload in [
        r#"["n",[{"t":"text","v":"x"}]]"#,
        r#"{"nodeId":"n","deltas":[["text","x"]]}"#,
        r#"{"nodeId":"n","deltas":[{"t":"text","v":"x","v":"y"}]}"#,
        r#"{"nodeId":"n","nodeId":"m","deltas":[]}"#,
        r#"{"nodeId":"n","deltas":[{"t":"text"}]}"#,
        r#"{"nodeId":null,"deltas":[]}"#,
    ] {
        let frame = format!(
            r#"{{"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.token","payload":{payload}}}"#
        );
        assert!(
            matches!(parse_envelope(&frame), ParseResult::Invalid { .. }),
            "{payload}"
        );
    }
    // null instanceId is accepted as absent; unknown fields at both levels are kept.
    let frame = r#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"node.token","payload":{"nodeId":"n","instanceId":null,"deltas":[{"t":"text","v":"x","i":0}],"k":1,"k":2}}"#;
    let ParseResult::Ok(env) = parse_envelope(frame) else {
        panic!("expected ok")
    };
    let mindgate_protocol::Message::NodeToken(p) = env.message else {
        panic!("wrong variant")
    };
    assert_eq!(p.instance_id, None);
    assert_eq!(p.extra["k"], json!(2));
    assert_eq!(p.deltas[0].extra["i"], json!(0));
}
