//! Deterministic synthetic sessions, for benchmarks, examples and tests.
//!
//! The generator writes plausible DSH-shaped trajectories: turns of ~40 steps, one to three
//! parallel tool calls per step (bash, read, grep, edit, test runs, skills, plans), a failing
//! call re-sent with the same arguments every 17th call, and an LLM retry every 50th step.

use serde_json::json;

use crate::event::{Event, EventKind, Failure, SessionStart, TurnEndKind, TurnReason, Usage};

/// Exactly `n` events of one synthetic session (cut wherever `n` falls, so the session may
/// end mid-step, like a live one).
pub fn session_events(n: usize) -> Vec<Event> {
    let mut out = Vec::with_capacity(n + 16);
    let mut t = 1_787_600_000_000i64;
    let mut seq = 0u64;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m.max(1)
    };
    let mut push = |out: &mut Vec<Event>, t: i64, kind| {
        out.push(Event::new(seq, t, kind));
        seq += 1;
    };
    push(
        &mut out,
        t,
        EventKind::Session(SessionStart {
            id: "synthetic".into(),
            version: Some("1".into()),
            cwd: Some("/work/synthetic".into()),
            created_ms: Some(t),
            ..SessionStart::default()
        }),
    );
    let mut call_no = 0u64;
    let mut turn = 0u32;
    while out.len() < n {
        turn += 1;
        push(
            &mut out,
            t,
            EventKind::UserMessage {
                text: format!("request {turn}"),
            },
        );
        push(&mut out, t, EventKind::TurnStart { turn });
        let mut retry_args: Vec<(String, serde_json::Value)> = Vec::new();
        for step in 1..=40u32 {
            t += 50;
            push(&mut out, t, EventKind::StepStart { turn, step });
            push(
                &mut out,
                t,
                EventKind::RequestHeader {
                    provider: Some("deepseek".into()),
                    model: Some("deepseek-chat".into()),
                },
            );
            if (u64::from(turn) * 40 + u64::from(step)) % 50 == 0 {
                t += 500;
                push(
                    &mut out,
                    t,
                    EventKind::LlmRetry {
                        retry: 1,
                        max_retries: Some(3),
                        delay_ms: Some(500),
                        failure: Failure {
                            message: "overloaded".into(),
                            code: Some("529".into()),
                        },
                    },
                );
            }
            t += 300 + next(3000) as i64;
            push(
                &mut out,
                t,
                EventKind::Usage(Usage {
                    input: 1000 + next(5000),
                    output: 50 + next(500),
                    cache_read: next(4000),
                }),
            );
            let last = step == 40;
            push(
                &mut out,
                t,
                EventKind::Finish {
                    reason: if last {
                        "stop".into()
                    } else {
                        "tool-calls".into()
                    },
                },
            );
            let mut calls = Vec::new();
            if !last {
                // Re-send last step's failed calls first, then new ones.
                let mut batch = std::mem::take(&mut retry_args);
                for _ in 0..=next(3) {
                    call_no += 1;
                    let (name, args) = match call_no % 9 {
                        0 => ("bash", json!({"command": "cargo test -p app"})),
                        1 | 2 => ("read", json!({"path": format!("src/m{}.rs", next(200))})),
                        3 => ("grep", json!({"pattern": format!("fn f{}", next(1000))})),
                        4 => (
                            "edit",
                            json!({"path": format!("src/m{}.rs", next(50)), "old": "a", "new": "b"}),
                        ),
                        5 => ("skill", json!({"name": "lint"})),
                        6 => (
                            "todo_write",
                            json!({"todos": [{"content": "x", "status": "pending"}]}),
                        ),
                        _ => ("bash", json!({"command": format!("ls dir{}", next(100))})),
                    };
                    batch.push((name.to_owned(), args));
                }
                for (name, args) in batch {
                    call_no += 1;
                    let id = format!("call_{call_no}");
                    push(
                        &mut out,
                        t,
                        EventKind::ToolCall {
                            turn,
                            step,
                            call_id: id.clone(),
                            name: name.clone(),
                            arguments: args.clone(),
                        },
                    );
                    calls.push((id, name, args));
                }
            }
            push(&mut out, t, EventKind::StepEnd { turn, step });
            for (id, name, args) in calls {
                t += 20 + next(1500) as i64;
                let fail = next(17) == 0;
                if fail {
                    retry_args.push((name, args));
                }
                push(
                    &mut out,
                    t,
                    EventKind::ToolResult {
                        call_id: id,
                        output: format!("output of {call_no}"),
                        is_error: fail,
                    },
                );
            }
            if out.len() >= n {
                break;
            }
        }
        t += 100;
        push(
            &mut out,
            t,
            EventKind::TurnEnd {
                turn,
                reason: TurnReason::new(TurnEndKind::Completed),
            },
        );
        t += 5_000;
    }
    out.truncate(n);
    out
}
