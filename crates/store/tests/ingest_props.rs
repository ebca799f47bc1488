//! Property tests at the ingest boundary: any seq, any id length, any payload
//! → no panic, the limits hold, and no neighbour row is lost.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_protocol::parse_envelope;
use mindgate_store::{
    MAX_ID_BYTES, MAX_RUN_ID_BYTES, MAX_STORED_SEQ, NewEvent, WriterConfig, check_limits,
};
use proptest::prelude::*;
use serde_json::{Value, json};

mod common;
use common::{Backend, TestDb};

fn any_seq() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..1_000,
        Just(MAX_STORED_SEQ),
        Just(MAX_STORED_SEQ + 1),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

fn any_id() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z:_0-9]{1,16}",
        (0usize..2_000).prop_map(|n| "x".repeat(n)),
        (MAX_RUN_ID_BYTES - 2..MAX_RUN_ID_BYTES + 2).prop_map(|n| "r".repeat(n)),
        (MAX_ID_BYTES - 2..MAX_ID_BYTES + 2).prop_map(|n| "é".repeat(n / 2)),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,24}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A frame of any event type with hostile fields in the usual places.
fn any_frame() -> impl Strategy<Value = String> {
    let ty = prop_oneof![
        Just("node.started"),
        Just("node.token"),
        Just("node.finished"),
        Just("node.error"),
        Just("run.started"),
        Just("run.finished"),
        Just("exec.paused"),
        Just("graph.hint"),
        Just("future.kind"),
    ];
    (any_seq(), any_id(), any_id(), ty, any_json(), any::<i64>()).prop_map(
        |(seq, run, node, ty, extra, ts)| {
            let payload = match ty {
                "node.started" => json!({"nodeId": node, "kind": "tool", "name": node,
                    "instanceId": node, "input": extra}),
                "node.token" => json!({"nodeId": node, "deltas": [{"t": "text", "v": "x"}]}),
                "node.finished" => json!({"nodeId": node, "durationMs": 1, "status": "ok",
                    "output": extra, "usage": {"inputTokens": u64::MAX, "outputTokens": 1}}),
                "node.error" => json!({"nodeId": node, "error": {"name": "E", "message": "m"}}),
                "run.started" => json!({"app": node, "sdk": {"name": "t", "version": "1"},
                    "meta": {"name": node}}),
                "run.finished" => json!({"status": "error"}),
                "exec.paused" => json!({"pauseId": node, "nodeId": "n", "point": "before"}),
                "graph.hint" => json!({"nodes": [{"nodeId": node, "kind": "tool", "name": "n"}]}),
                _ => json!({"nodeId": node, "x": extra}),
            };
            json!({"gm": 1, "seq": seq, "ts": ts, "runId": run, "type": ty, "payload": payload})
                .to_string()
        },
    )
}

fn neighbour(seq: u64) -> NewEvent {
    let f = json!({"gm": 1, "seq": seq, "ts": 5, "runId": "neighbour", "type": "node.token",
        "payload": {"nodeId": "llm:step", "deltas": [{"t": "text", "v": "ok"}]}})
    .to_string();
    NewEvent::from_frame(&f, &parse_envelope(&f)).expect("neighbour")
}

/// Hostile frames interleaved with a neighbour run's rows, each stored twice (the
/// replay every client sends after a reconnect): the neighbour loses nothing.
fn hostile_frames(backend: Backend, frames: &[String]) -> Result<(), TestCaseError> {
    let Some(db) = TestDb::new(backend) else {
        return Ok(());
    };
    let (writer, _) = db.writer(WriterConfig::default(), None);
    let mut next = 0u64;
    for frame in frames {
        writer.append(neighbour(next)).expect("append");
        next += 1;
        let parsed = parse_envelope(frame);
        if check_limits(&parsed).is_err() {
            continue;
        }
        if let Some(ev) = NewEvent::from_parsed(frame, parsed) {
            prop_assert!(ev.seq <= MAX_STORED_SEQ);
            prop_assert!(ev.run_id.len() <= MAX_RUN_ID_BYTES);
            prop_assert!(ev.node_id.as_ref().is_none_or(|n| n.len() <= MAX_ID_BYTES));
            writer.append(ev.clone()).expect("append");
            writer.append(ev).expect("append");
        }
        writer.append(neighbour(next)).expect("append");
        next += 1;
    }
    writer.flush().expect("flush");
    let store = db.reader();
    let page = store
        .events("neighbour", None, Some(5_000))
        .expect("read")
        .expect("run");
    let seqs: Vec<u64> = page.events.iter().map(|e| e.seq).collect();
    prop_assert_eq!(seqs, (0..next).collect::<Vec<_>>());
    prop_assert_eq!(writer.stats().failed_rows, 0);
    writer.close().expect("close");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn hostile_frames_never_panic_and_never_cost_a_neighbour_row_on_sqlite(
        frames in prop::collection::vec(any_frame(), 1..12)
    ) {
        hostile_frames(Backend::Sqlite, &frames)?;
    }

    #[test]
    fn hostile_frames_never_panic_and_never_cost_a_neighbour_row_on_postgres(
        frames in prop::collection::vec(any_frame(), 1..12)
    ) {
        hostile_frames(Backend::Postgres, &frames)?;
    }
}

/// A payload `jsonb` refuses (`\u0000`) is stored and read back as sent.
#[test]
fn a_nul_escape_in_a_payload_is_kept() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = TestDb::new(backend) else {
            continue;
        };
        let (writer, _) = db.writer(WriterConfig::default(), None);
        let f = json!({"gm": 1, "seq": 1, "ts": 5, "runId": "nul", "type": "node.error",
            "payload": {"nodeId": "tool:x", "error": {"name": "E\u{0}", "message": "a\u{0}b"}}})
        .to_string();
        assert!(f.contains("\\u0000"), "{f}");
        let ev = NewEvent::from_frame(&f, &parse_envelope(&f)).expect("event");
        writer.append(ev).expect("append");
        writer.flush().expect("flush");
        let store = db.reader();
        let page = store.events("nul", None, None).expect("read").expect("run");
        assert_eq!(page.events.len(), 1, "{backend:?}");
        assert_eq!(
            page.events[0].payload_value()["error"]["message"],
            "a\u{0}b",
            "{backend:?}"
        );
        let errors = store.recent_errors(10).expect("errors");
        assert_eq!(errors.len(), 1, "{backend:?}");
        assert_eq!(errors[0].message, "a\u{0}b", "{backend:?}");
        assert_eq!(
            store
                .search_events("a", Some("nul"), 5)
                .expect("search")
                .len(),
            1
        );
        writer.close().expect("close");
    }
}
