//! Unit tests of the hub.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use super::*;
use mindgate_protocol::{ClientVersions, ExecPaused, ExecResumed, PausePoint, ResumeAction};

fn hello(token: Option<&str>) -> Hello {
    Hello {
        versions: ClientVersions {
            protocol: 1,
            client: "t".into(),
            extra: Default::default(),
        },
        capabilities: vec![],
        app: Some("app".into()),
        sdk: None,
        resume_token: token.map(str::to_owned),
        extra: Default::default(),
    }
}

fn paused(run: &str, pause: &str) -> Envelope {
    Envelope::new(
        run,
        1,
        Message::ExecPaused(ExecPaused {
            pause_id: pause.into(),
            node_id: "tool:a".into(),
            point: PausePoint::Before,
            reason: None,
            loop_info: None,
            smart: None,
            editable: None,
            extra: Default::default(),
        }),
    )
}

fn continue_req() -> ResumeRequest {
    ResumeRequest {
        action: ResumeAction::Continue,
        output: None,
        input: None,
        request_id: None,
    }
}

#[test]
fn ack_carries_default_error_breakpoint_and_token() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    let v: Value = serde_json::from_str(&a.ack).expect("json");
    assert_eq!(v["type"], "hello.ack");
    assert_eq!(v["payload"]["breakpoints"][0]["point"], "error");
    assert_eq!(v["payload"]["mode"], "run");
    assert_eq!(v["payload"]["sessionToken"], a.token.as_str());
}

#[test]
fn claims_isolate_runs_and_resume_token_restores_ownership() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    let b = hub.attach(&hello(None));
    assert_eq!(hub.check_claim(a.conn, "r"), ClaimVerdict::Unknown);
    assert_eq!(hub.settle_claim(a.conn, "r", None), ClaimVerdict::Allowed);
    assert_eq!(hub.check_claim(a.conn, "r"), ClaimVerdict::Allowed);
    assert_eq!(hub.check_claim(b.conn, "r"), ClaimVerdict::Refused);
    hub.detach(a.conn);
    let again = hub.attach(&hello(Some(&a.token)));
    assert_eq!(hub.check_claim(again.conn, "r"), ClaimVerdict::Allowed);
    // A run the database says belongs to someone else stays refused.
    assert_eq!(
        hub.settle_claim(b.conn, "old", Some(Some("other".into()))),
        ClaimVerdict::Refused
    );
}

#[test]
fn first_resume_wins_second_is_taken() {
    let hub = Hub::new();
    let mut a = hub.attach(&hello(None));
    hub.observe(a.conn, &paused("r", "p1")).expect("observed");
    assert_eq!(hub.pauses(Some("r")).len(), 1);
    assert_eq!(
        hub.resume("r", "p1", continue_req()).0,
        ResumeResult::Resumed
    );
    assert_eq!(hub.resume("r", "p1", continue_req()).0, ResumeResult::Taken);
    assert_eq!(
        hub.resume("r", "nope", continue_req()).0,
        ResumeResult::NoSuchPause
    );
    let frame = a
        .controls
        .try_recv()
        .expect("exec.resume routed to the owner");
    assert!(frame.contains(r#""type":"exec.resume""#));
    assert!(hub.pauses(None).is_empty());
}

#[test]
fn pause_vanishes_when_its_app_disconnects() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    hub.observe(a.conn, &paused("r", "p1")).expect("observed");
    hub.detach(a.conn);
    assert!(hub.pauses(None).is_empty());
    assert_eq!(
        hub.resume("r", "p1", continue_req()).0,
        ResumeResult::NoSuchPause
    );
}

#[test]
fn app_resumed_pause_is_taken_for_viewers() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    hub.observe(a.conn, &paused("r", "p1")).expect("observed");
    let resumed = Envelope::new(
        "r",
        2,
        Message::ExecResumed(ExecResumed {
            pause_id: "p1".into(),
            action: ResumeAction::Continue,
            edited: None,
            request_id: None,
            principal: None,
            extra: Default::default(),
        }),
    );
    hub.observe(a.conn, &resumed).expect("observed");
    assert_eq!(hub.resume("r", "p1", continue_req()).0, ResumeResult::Taken);
}

#[test]
fn breakpoints_and_mode_reach_every_app() {
    let hub = Hub::new();
    let mut a = hub.attach(&hello(None));
    let mut b = hub.attach(&hello(None));
    assert!(hub.set_breakpoint(BreakpointMatcher::default().name("x")));
    assert!(!hub.set_breakpoint(BreakpointMatcher::default().name("x")));
    hub.set_mode(RunMode::Step);
    for rx in [&mut a.controls, &mut b.controls] {
        assert!(rx.try_recv().expect("bp").contains("breakpoint.set"));
        assert!(rx.try_recv().expect("mode").contains("mode.set"));
    }
    let snap = hub.snapshot();
    assert_eq!(snap.breakpoints.len(), 2);
    assert_eq!(snap.mode, RunMode::Step);
}

fn event(run: &str, message: Message) -> Envelope {
    Envelope::new(run, 1, message)
}

fn finished(run: &str) -> Envelope {
    event(
        run,
        Message::RunFinished(mindgate_protocol::RunFinished {
            status: mindgate_protocol::RunStatus::Ok,
            error: None,
            extra: Default::default(),
        }),
    )
}

fn token_event(run: &str) -> Envelope {
    event(
        run,
        Message::NodeToken(mindgate_protocol::NodeToken {
            node_id: "llm:step".into(),
            instance_id: None,
            deltas: vec![],
            extra: Default::default(),
        }),
    )
}

#[test]
fn held_gates_are_bounded_per_connection() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    for i in 0..MAX_PAUSES_PER_CONNECTION {
        hub.observe(a.conn, &paused("r", &format!("p{i}")))
            .expect("within the limit");
    }
    assert_eq!(
        hub.observe(a.conn, &paused("r", "one-too-many")),
        Err(HubRefusal::PauseLimit)
    );
    // A repeated exec.paused of a held gate is not a new one.
    hub.observe(a.conn, &paused("r", "p0"))
        .expect("already held");
    assert_eq!(hub.pauses(None).len(), MAX_PAUSES_PER_CONNECTION);
    // Another connection has its own budget; a resolved gate frees a slot.
    let b = hub.attach(&hello(None));
    hub.observe(b.conn, &paused("s", "q")).expect("own budget");
    assert_eq!(
        hub.resume("r", "p1", continue_req()).0,
        ResumeResult::Resumed
    );
    hub.observe(a.conn, &paused("r", "one-more"))
        .expect("slot freed");
}

#[test]
fn unfinished_runs_are_bounded_per_connection_and_finishing_frees_them() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    for i in 0..MAX_UNFINISHED_RUNS_PER_CONNECTION {
        hub.observe(a.conn, &token_event(&format!("r{i}")))
            .expect("within the limit");
    }
    assert_eq!(
        hub.observe(a.conn, &token_event("extra")),
        Err(HubRefusal::RunLimit)
    );
    hub.observe(a.conn, &token_event("r7")).expect("known run");
    hub.observe(a.conn, &finished("r7")).expect("finish");
    hub.observe(a.conn, &token_event("extra"))
        .expect("a slot is free");
    let snap = hub.snapshot();
    assert_eq!(snap.apps[0].run_ids.len(), APP_RUN_IDS);
    assert_eq!(
        snap.apps[0].run_ids.last().map(String::as_str),
        Some("extra")
    );
}

#[test]
fn claims_are_bounded_and_the_oldest_are_forgotten_first() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    for i in 0..MAX_CLAIMS + 10 {
        assert_eq!(
            hub.settle_claim(a.conn, &format!("r{i}"), None),
            ClaimVerdict::Allowed
        );
    }
    assert_eq!(hub.claim_count(), MAX_CLAIMS);
    // Forgotten: the hub asks the database again.
    assert_eq!(hub.check_claim(a.conn, "r0"), ClaimVerdict::Unknown);
    assert_eq!(
        hub.check_claim(a.conn, &format!("r{}", MAX_CLAIMS + 9)),
        ClaimVerdict::Allowed
    );
}

#[test]
fn viewers_get_small_deltas_not_the_whole_state() {
    let hub = Hub::new();
    let mut deltas = hub.subscribe_deltas();
    let a = hub.attach(&hello(None));
    hub.observe(a.conn, &paused("r", "p1")).expect("observed");
    hub.set_mode(RunMode::Step);
    hub.detach(a.conn);
    let mut types = Vec::new();
    while let Ok(text) = deltas.try_recv() {
        let v: Value = serde_json::from_str(&text).expect("json");
        assert!(
            v.get("apps").is_none(),
            "no delta carries the app list: {v}"
        );
        types.push(v["type"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(
        types,
        [
            "app.attached",
            "app.run",
            "pause.held",
            "debug",
            "app.detached",
            "pause.released"
        ]
    );
}
