//! Property tests: critical-path validity on arbitrary event streams, incremental == full
//! build, and readers never panic on arbitrary bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::check_critical_path;
use mindgate_taskgraph::parse::{self, claude, dsh};
use mindgate_taskgraph::{
    Agent, BuildOptions, Event, EventKind, Failure, IncrementalGraph, SubagentDescriptor, Todo,
    TurnEndKind, TurnReason, Usage, build_graph,
};
use proptest::prelude::*;
use serde_json::json;

/// One raw op: (kind, a, b, dt, flag).
type Op = (u8, u8, u8, u16, bool);

/// Turns raw ops into an event stream: mostly plausible, sometimes adversarial (wrong turn or
/// step numbers, results for unknown calls, repeated ids, events outside any turn).
fn events_from(ops: &[Op]) -> Vec<Event> {
    let mut t = 1_000i64;
    let mut out = vec![Event::new(
        0,
        t,
        EventKind::Session(Box::new(mindgate_taskgraph::SessionStart {
            id: "p".into(),
            cwd: Some("/x".into()),
            created_ms: Some(t),
            ..Default::default()
        })),
    )];
    for (seq, &(k, a, b, dt, flag)) in ops.iter().enumerate() {
        t += i64::from(dt);
        let seq = seq as u64 + 1;
        let turn = u32::from(a % 4);
        let step = u32::from(b % 4);
        let cid = format!("c{}", a % 7);
        let kind = match k % 14 {
            0 => EventKind::TurnStart { turn },
            1 => EventKind::TurnEnd {
                turn,
                reason: TurnReason::new(match b % 3 {
                    0 => TurnEndKind::Completed,
                    1 => TurnEndKind::Error,
                    _ => TurnEndKind::Aborted,
                }),
            },
            2 | 3 => EventKind::StepStart { turn, step },
            4 => EventKind::StepEnd { turn, step },
            5 | 6 => EventKind::ToolCall {
                turn,
                step,
                call_id: cid,
                name: ["bash", "edit", "skill", "subagent", "todo_write", "read"]
                    [usize::from(b % 6)]
                .into(),
                arguments: if flag {
                    json!({"command": "cargo test"}).into()
                } else {
                    json!({"path": "a.rs"}).into()
                },
            },
            7 | 8 => EventKind::ToolResult {
                call_id: cid,
                output: "out".into(),
                is_error: flag,
            },
            9 => EventKind::LlmRetry {
                retry: 1,
                max_retries: None,
                delay_ms: None,
                failure: Failure {
                    message: "x".into(),
                    code: None,
                },
            },
            10 => EventKind::Usage(Usage {
                input: u64::from(a),
                output: u64::from(b),
                cache_read: 1,
                cache_write: u64::from(a / 2),
            }),
            11 => EventKind::UserMessage {
                text: format!("msg {a}"),
            },
            12 => EventKind::Finish {
                reason: if flag { "error".into() } else { "stop".into() },
            },
            _ => {
                if flag {
                    EventKind::TodoWrite {
                        todos: vec![Todo {
                            content: "a".into(),
                            status: "pending".into(),
                        }],
                        call_id: None,
                    }
                } else {
                    EventKind::SubagentDescriptor(Box::new(SubagentDescriptor {
                        call_id: Some(cid),
                        ..Default::default()
                    }))
                }
            }
        };
        out.push(Event::new(seq, t, kind));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn critical_path_is_a_real_heaviest_path(ops in prop::collection::vec(any::<Op>(), 0..120), live in any::<bool>()) {
        let events = events_from(&ops);
        let g = build_graph(&events, &BuildOptions { live, ..BuildOptions::default() });
        prop_assert!(check_critical_path(&g).is_ok(), "{:?}", check_critical_path(&g));
        // Node ids are unique; edge ids are e1..en in order.
        let mut ids: Vec<&str> = g.nodes.iter().map(|n| n.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), g.nodes.len());
        for (i, e) in g.edges.iter().enumerate() {
            prop_assert_eq!(&e.id, &format!("e{}", i + 1));
        }
        // Archived graphs have no open node.
        if !live {
            prop_assert!(g.nodes.iter().all(|n| !n.status.is_open()));
        }
    }

    #[test]
    fn incremental_equals_full(ops in prop::collection::vec(any::<Op>(), 0..80), chunk in 1usize..9, live in any::<bool>()) {
        let events = events_from(&ops);
        let opts = BuildOptions { live, ..BuildOptions::default() };
        let full = build_graph(&events, &opts);
        let mut inc = IncrementalGraph::new(opts);
        for part in events.chunks(chunk) {
            inc.append(part);
            prop_assert!(check_critical_path(inc.graph()).is_ok());
        }
        prop_assert_eq!(inc.finish(), full);
    }

    #[test]
    fn changes_applied_to_the_previous_graph_give_the_new_one(ops in prop::collection::vec(any::<Op>(), 0..80), chunk in 1usize..9, live in any::<bool>()) {
        let events = events_from(&ops);
        check_changes(&events, chunk, live)?;
    }

    #[test]
    fn duplicates_and_shuffles_are_harmless(ops in prop::collection::vec(any::<Op>(), 0..60), seed in any::<u64>()) {
        let events = events_from(&ops);
        let full = build_graph(&events, &BuildOptions::default());
        // Duplicate every event and reverse the order: sorting + de-duplication restore it.
        let mut noisy: Vec<Event> = events.iter().chain(events.iter()).cloned().collect();
        noisy.reverse();
        let rotate = (seed as usize) % (noisy.len().max(1));
        noisy.rotate_left(rotate);
        let mut sorted = noisy.clone();
        mindgate_taskgraph::session::normalize_events(&mut sorted);
        prop_assert_eq!(&sorted, &events);
        prop_assert_eq!(build_graph(&sorted, &BuildOptions::default()), full);
        // Unsorted input to build_graph never panics and still gives a valid path.
        let g = build_graph(&noisy, &BuildOptions::default());
        prop_assert!(check_critical_path(&g).is_ok());
    }

    #[test]
    fn readers_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        for agent in [Agent::Dsh, Agent::Pi, Agent::ClaudeCode, Agent::Codex] {
            let s = parse::parse_bytes(agent, &bytes, "fuzz");
            let _ = build_graph(&s.events, &BuildOptions::default());
        }
        let _ = claude::parse_subagent(&bytes, "fuzz", "p");
        let _ = parse::sniff_agent(&bytes);
        let mut w = Vec::new();
        let _ = dsh::decode_zstd_frames(&bytes, "fuzz", &mut w);
        let mut framed = dsh::ZSTD_MAGIC.to_vec();
        framed.extend_from_slice(&bytes);
        let _ = dsh::decode_zstd_frames(&framed, "fuzz", &mut w);
    }

    #[test]
    fn readers_never_panic_on_jsonish_lines(lines in prop::collection::vec(jsonish_line(), 0..40)) {
        let text = lines.join("\n");
        for agent in [Agent::Dsh, Agent::Pi, Agent::ClaudeCode, Agent::Codex] {
            let s = parse::parse_bytes(agent, text.as_bytes(), "fuzz");
            let g = build_graph(&s.events, &BuildOptions::default());
            prop_assert!(check_critical_path(&g).is_ok());
        }
    }
}

/// Lines that look like the real formats, with random types, fields and values.
/// Appends `events` in chunks of `chunk`; after each, the previous graph with the reported
/// changes applied (nodes and edges replaced by index or appended) must have the new graph's
/// nodes and edges.
fn check_changes(events: &[Event], chunk: usize, live: bool) -> Result<(), TestCaseError> {
    let mut g = IncrementalGraph::new(BuildOptions {
        live,
        ..BuildOptions::default()
    });
    let mut shown = g.graph().clone();
    g.take_changes();
    let shown = &mut shown;
    for part in events.chunks(chunk.max(1)) {
        g.append(part);
        let ch = g.take_changes();
        let now = g.graph();
        for &i in &ch.nodes {
            prop_assert!(i <= shown.nodes.len(), "node {} past the end", i);
            if i == shown.nodes.len() {
                shown.nodes.push(now.nodes[i].clone());
            } else {
                shown.nodes[i] = now.nodes[i].clone();
            }
        }
        for &i in &ch.edges {
            prop_assert!(i <= shown.edges.len(), "edge {} past the end", i);
            if i == shown.edges.len() {
                shown.edges.push(now.edges[i].clone());
            } else {
                shown.edges[i] = now.edges[i].clone();
            }
        }
        // Every other field is sent whole.
        prop_assert_eq!(&shown.nodes, &now.nodes);
        prop_assert_eq!(&shown.edges, &now.edges);
    }
    Ok(())
}

#[test]
fn changes_over_the_synthetic_session_rebuild_the_graph() {
    let events = mindgate_taskgraph::synth::session_events(6_000);
    for chunk in [3, 250] {
        check_changes(&events, chunk, true).unwrap();
    }
}

fn jsonish_line() -> impl Strategy<Value = String> {
    let ty = prop::sample::select(vec![
        "session",
        "user/message",
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "tool/call",
        "tool/result",
        "assistant/chunk",
        "llm/retry",
        "assistant/message",
        "assistant/attempt",
        "message",
        "user",
        "assistant",
        "system",
        "response_item",
        "event_msg",
        "session_meta",
        "todo/write",
        "subagent/descriptor",
        "weird",
    ]);
    let inner = prop::sample::select(vec![
        "function_call",
        "function_call_output",
        "token_count",
        "task_started",
        "task_complete",
        "turn_aborted",
        "user_message",
        "stream_error",
        "message",
        "toolResult",
        "api_error",
    ]);
    (ty, inner, any::<u8>(), any::<u8>(), any::<bool>(), any::<i32>()).prop_map(|(ty, inner, a, b, f, t)| {
        let v = json!({
            "type": ty, "seq": a, "time": t, "id": format!("e{a}"), "parentId": format!("e{b}"),
            "uuid": format!("u{a}"), "timestamp": if f { json!("2026-08-24T19:33:20Z") } else { json!(t) },
            "subtype": inner,
            "data": {"turn": a % 3, "step": b % 3, "callId": format!("c{}", a % 4), "name": "bash",
                     "arguments": if f { json!("{\"command\":\"pytest\"}") } else { json!("{bad") },
                     "reason": {"kind": if f { "error" } else { "completed" }},
                     "chunk": {"type": "usage", "inputTokens": a},
                     "message": {"source": {"callId": format!("c{}", b % 4)}, "content": [{"type": "tool-result", "isError": f}]}},
            "payload": {"type": inner, "call_id": format!("c{}", a % 4), "name": "shell", "arguments": "{}",
                        "output": "x", "message": "m", "info": {"last_token_usage": {"input_tokens": a}}},
            "message": {"role": if f { "assistant" } else { "user" }, "id": format!("m{}", a % 3),
                        "content": [{"type": "tool_use", "id": format!("c{}", a % 4), "name": "Task", "input": {}},
                                    {"type": "tool_result", "tool_use_id": format!("c{}", b % 4), "content": "r"},
                                    {"type": "toolCall", "id": format!("c{}", b % 4), "name": "edit", "arguments": {}}],
                        "stopReason": if f { "error" } else { "toolUse" }, "toolCallId": format!("c{}", a % 4)},
        });
        let s = v.to_string();
        // Sometimes cut the line short.
        if a % 11 == 0 { s[..s.len() / 2].to_owned() } else { s }
    })
}
