//! The cluster on a real PostgreSQL (`MINDGATE_TEST_POSTGRES_URL`; `scripts/test.sh`
//! starts a throwaway one): every case gets a schema of its own (`mindgate_testkit::PgSchema`).
//! Without the variable the cases print `skipped: <why>` (and fail when
//! `MINDGATE_TEST_REQUIRE_SERVICES=1`).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use mindgate_cluster::{
    Cluster, ClusterConfig, ClusterEvent, DebugChange, DebugState, Joined, Referee,
};
use mindgate_pg::PostgresUrl;
use mindgate_protocol::{BreakpointMatcher, RunMode};
use mindgate_testkit::PgSchema;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

/// A schema of its own, dropped at the end.
struct Schema {
    _schema: PgSchema,
    url: PostgresUrl,
}

impl Schema {
    fn new() -> Option<Schema> {
        let schema = PgSchema::create("mg_cluster_test")?;
        let url = PostgresUrl::parse(schema.url()).expect("url");
        Some(Schema {
            _schema: schema,
            url,
        })
    }

    fn join(&self, addr: &str) -> Joined {
        Cluster::join(&self.url, addr, "test", fast(), default_debug()).expect("join")
    }
}

fn fast() -> ClusterConfig {
    ClusterConfig {
        heartbeat: Duration::from_millis(100),
        stale_after: Duration::from_millis(800),
        resync_every: Duration::from_secs(60),
    }
}

fn default_debug() -> DebugState {
    DebugState {
        breakpoints: vec![BreakpointMatcher::on_error()],
        mode: RunMode::Run,
    }
}

/// The next event `pick` accepts (others are skipped), within 10 s.
async fn next_async<T>(
    events: &mut UnboundedReceiver<ClusterEvent>,
    mut pick: impl FnMut(ClusterEvent) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let e = events.recv().await.expect("events open");
            if let Some(t) = pick(e) {
                return t;
            }
        }
    })
    .await
    .expect("the event came in time")
}

/// The next event `pick` accepts, within 10 s (blocking).
fn next<T>(
    events: &mut UnboundedReceiver<ClusterEvent>,
    pick: impl FnMut(ClusterEvent) -> Option<T>,
) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
        .block_on(next_async(events, pick))
}

#[test]
fn a_gate_held_on_a_is_seen_and_won_once_from_b_and_answered_back() {
    let Some(schema) = Schema::new() else { return };
    let Joined {
        cluster: a,
        events: mut a_events,
        ..
    } = schema.join("a:1");
    let Joined {
        cluster: b,
        events: mut b_events,
        ..
    } = schema.join("b:1");
    // Each starts with a resync: nothing held yet.
    let pauses = next(&mut b_events, |e| match e {
        ClusterEvent::Resync { pauses, .. } => Some(pauses),
        _ => None,
    });
    assert!(pauses.is_empty(), "{pauses:?}");

    a.announce_pause(
        "r1",
        "p1",
        json!({"runId": "r1", "pauseId": "p1", "nodeId": "n"}),
    );
    let held = next(&mut b_events, |e| match e {
        ClusterEvent::PauseHeld(p) => Some(p),
        _ => None,
    });
    assert_eq!((held.run_id.as_str(), held.pause_id.as_str()), ("r1", "p1"));
    assert_eq!(held.instance, a.instance_id());
    assert_eq!(held.view["nodeId"], "n");

    // B wins; a second resume (from A itself, or B again) is told it was taken.
    let request = json!({"action": "continue", "principal": {"kind": "http"}});
    let (b2, req) = (b.clone(), request.clone());
    let won = b2.referee("r1", "p1", Some(req)).unwrap();
    let Referee::Won { owner, ticket } = won else {
        panic!("{won:?}")
    };
    assert_eq!(owner, a.instance_id());
    let a2 = a.clone();
    assert_eq!(a2.referee("r1", "p1", None).unwrap(), Referee::Taken);
    let b2 = b.clone();
    assert_eq!(b2.referee("r1", "nope", None).unwrap(), Referee::Missing);

    // A hears the resume with the recorded request, and answers it.
    let (got_request, got_ticket, requester) = next(&mut a_events, |e| match e {
        ClusterEvent::Resume {
            request,
            ticket,
            requester,
            ..
        } => Some((request, ticket, requester)),
        _ => None,
    });
    assert_eq!(got_request, request);
    assert_eq!(got_ticket, ticket);
    assert_eq!(requester, b.instance_id());
    a.answer_resume(&requester, &got_ticket, json!({"result": "resumed"}));
    let reply = next(&mut b_events, |e| match e {
        ClusterEvent::ResumeAnswer { ticket: t, reply } if t == ticket => Some(reply),
        _ => None,
    });
    assert_eq!(reply["result"], "resumed");

    // The app's exec.resumed: A retracts the gate, B hears it.
    a.retract_pause("r1", "p1");
    let released = next(&mut b_events, |e| match e {
        ClusterEvent::PauseReleased { run_id, pause_id } => Some((run_id, pause_id)),
        _ => None,
    });
    assert_eq!(released, ("r1".to_owned(), "p1".to_owned()));
    a.leave();
    b.leave();
}

#[test]
fn a_refused_resume_holds_the_gate_again_for_everyone() {
    let Some(schema) = Schema::new() else { return };
    let Joined { cluster: a, .. } = schema.join("a:1");
    let Joined {
        cluster: b,
        events: mut b_events,
        ..
    } = schema.join("b:1");
    a.announce_pause("r", "p", json!({"pauseId": "p"}));
    next(&mut b_events, |e| {
        matches!(e, ClusterEvent::PauseHeld(_)).then_some(())
    });
    let b2 = b.clone();
    let won = b2.referee("r", "p", Some(json!({}))).unwrap();
    assert!(matches!(won, Referee::Won { .. }), "{won:?}");
    a.rehold_pause("r", "p");
    next(&mut b_events, |e| {
        matches!(e, ClusterEvent::PauseHeld(_)).then_some(())
    });
    let b2 = b.clone();
    let again = b2.referee("r", "p", Some(json!({}))).unwrap();
    assert!(matches!(again, Referee::Won { .. }), "{again:?}");
    a.leave();
    b.leave();
}

#[test]
fn debug_changes_from_two_instances_both_take_effect_everywhere() {
    let Some(schema) = Schema::new() else { return };
    let Joined {
        cluster: a,
        debug,
        events: mut a_events,
    } = schema.join("a:1");
    assert_eq!(debug, default_debug(), "a fresh database gets the default");
    let Joined {
        cluster: b,
        events: mut b_events,
        ..
    } = schema.join("b:1");
    let tool = BreakpointMatcher {
        kind: Some(mindgate_protocol::NodeKind::Tool),
        ..BreakpointMatcher::default()
    };
    a.change_debug(DebugChange::Add(tool.clone()));
    b.change_debug(DebugChange::Mode(RunMode::Step));
    b.change_debug(DebugChange::Remove(BreakpointMatcher::on_error()));
    let want = DebugState {
        breakpoints: vec![tool],
        mode: RunMode::Step,
    };
    for events in [&mut a_events, &mut b_events] {
        let w = want.clone();
        next(events, move |e| match e {
            ClusterEvent::Debug(d) if d == w => Some(()),
            _ => None,
        });
    }
    // A third instance starts from the shared state, not from the default.
    let Joined {
        cluster: c, debug, ..
    } = schema.join("c:1");
    assert_eq!(debug, want);
    a.leave();
    b.leave();
    c.leave();
}

#[test]
fn an_instance_that_stops_heartbeating_loses_its_gates_and_is_reported_gone() {
    let Some(schema) = Schema::new() else { return };
    let Joined { cluster: a, .. } = schema.join("a:1");
    let Joined {
        cluster: b,
        events: mut b_events,
        ..
    } = schema.join("b:1");
    a.announce_pause("r", "p", json!({"pauseId": "p"}));
    next(&mut b_events, |e| {
        matches!(e, ClusterEvent::PauseHeld(_)).then_some(())
    });
    let a_id = a.instance_id().to_owned();
    a.vanish();
    // Its gate is released for everyone, and the reaper says who is gone and who lives
    // (the two arrive in either order: one is a notification, the other the reaper's own).
    let b_id = b.instance_id().to_owned();
    let (mut released, mut reported) = (false, false);
    while !(released && reported) {
        next(&mut b_events, |e| match e {
            ClusterEvent::PauseReleased { pause_id, .. } if pause_id == "p" => {
                released = true;
                Some(())
            }
            ClusterEvent::InstancesGone { gone, live } => {
                assert_eq!(gone, vec![a_id.clone()]);
                assert_eq!(live, vec![b_id.clone()]);
                reported = true;
                Some(())
            }
            _ => None,
        });
    }
    let b2 = b.clone();
    assert_eq!(
        b2.referee("r", "p", Some(json!({}))).unwrap(),
        Referee::Missing
    );
    let b2 = b.clone();
    let live = b2.instances().unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].addr, "b:1");
    b.leave();
}
