//! Unit tests of the hub.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use super::*;
use mindgate_protocol::{ClientVersions, ExecPaused, ExecResumed, PausePoint, ResumeAction};
use std::time::Duration;

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
        principal: Principal::Http,
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
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
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
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
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
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
    let mut resumed = Envelope::new(
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
    hub.observe(a.conn, &mut resumed).expect("observed");
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
        hub.observe(a.conn, &mut paused("r", &format!("p{i}")))
            .expect("within the limit");
    }
    assert_eq!(
        hub.observe(a.conn, &mut paused("r", "one-too-many")),
        Err(HubRefusal::PauseLimit)
    );
    // A repeated exec.paused of a held gate is not a new one.
    hub.observe(a.conn, &mut paused("r", "p0"))
        .expect("already held");
    assert_eq!(hub.pauses(None).len(), MAX_PAUSES_PER_CONNECTION);
    // Another connection has its own budget; a resolved gate frees a slot.
    let b = hub.attach(&hello(None));
    hub.observe(b.conn, &mut paused("s", "q"))
        .expect("own budget");
    assert_eq!(
        hub.resume("r", "p1", continue_req()).0,
        ResumeResult::Resumed
    );
    hub.observe(a.conn, &mut paused("r", "one-more"))
        .expect("slot freed");
}

#[test]
fn unfinished_runs_are_bounded_per_connection_and_finishing_frees_them() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    for i in 0..MAX_UNFINISHED_RUNS_PER_CONNECTION {
        hub.observe(a.conn, &mut token_event(&format!("r{i}")))
            .expect("within the limit");
    }
    assert_eq!(
        hub.observe(a.conn, &mut token_event("extra")),
        Err(HubRefusal::RunLimit)
    );
    hub.observe(a.conn, &mut token_event("r7"))
        .expect("known run");
    hub.observe(a.conn, &mut finished("r7")).expect("finish");
    hub.observe(a.conn, &mut token_event("extra"))
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
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
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

fn resumed_env(run: &str, pause: &str) -> Envelope {
    Envelope::new(
        run,
        2,
        Message::ExecResumed(ExecResumed {
            pause_id: pause.into(),
            action: ResumeAction::Continue,
            edited: None,
            request_id: None,
            principal: None,
            extra: Default::default(),
        }),
    )
}

fn principal_of(env: &Envelope) -> Option<Value> {
    match &env.message {
        Message::ExecResumed(r) => r.principal.clone(),
        _ => None,
    }
}

#[test]
fn a_resume_whose_run_finished_before_the_apps_answer_keeps_the_person_who_pressed_it() {
    // The demo aborted from the page: the app sends `run.finished` (aborted) before its
    // `exec.resumed`. The release is the viewer's, not `fail-open`.
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
    let mut req = continue_req();
    req.principal = Principal::Viewer;
    assert_eq!(hub.resume("r", "p1", req).0, ResumeResult::Resumed);
    hub.observe(a.conn, &mut finished("r")).expect("observed");
    let mut resumed = resumed_env("r", "p1");
    hub.observe(a.conn, &mut resumed).expect("observed");
    assert_eq!(
        principal_of(&resumed),
        Some(serde_json::json!({"kind": "viewer"}))
    );
}

#[test]
fn ack_announces_the_hub_capabilities() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    let v: Value = serde_json::from_str(&a.ack).expect("json");
    assert_eq!(
        v["payload"]["hubCapabilities"],
        serde_json::json!(["edit-input", "replay", "principal"])
    );
}

#[test]
fn exec_resumed_is_stamped_with_the_surface_that_released_it() {
    let hub = Hub::new();
    let a = hub.attach(&hello(None));
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
    let mut req = continue_req();
    req.principal = Principal::Viewer;
    assert_eq!(hub.resume("r", "p1", req).0, ResumeResult::Resumed);
    let mut resumed = resumed_env("r", "p1");
    assert!(hub.observe(a.conn, &mut resumed).expect("observed"));
    assert_eq!(
        principal_of(&resumed),
        Some(serde_json::json!({"kind": "viewer"}))
    );

    // Released by the app itself (no resume of the hub waited): fail-open.
    hub.observe(a.conn, &mut paused("r", "p2"))
        .expect("observed");
    let mut resumed = resumed_env("r", "p2");
    assert!(hub.observe(a.conn, &mut resumed).expect("observed"));
    assert_eq!(
        principal_of(&resumed),
        Some(serde_json::json!({"kind": "fail-open"}))
    );

    // A principal the app sent is kept as it is.
    hub.observe(a.conn, &mut paused("r", "p3"))
        .expect("observed");
    let mut resumed = resumed_env("r", "p3");
    if let Message::ExecResumed(r) = &mut resumed.message {
        r.principal = Some(serde_json::json!({"kind": "app", "user": "ada"}));
    }
    assert!(!hub.observe(a.conn, &mut resumed).expect("observed"));
    assert_eq!(
        principal_of(&resumed),
        Some(serde_json::json!({"kind": "app", "user": "ada"}))
    );
}

#[test]
fn an_edited_input_is_refused_for_a_gate_not_marked_editable() {
    let hub = Hub::new();
    let mut a = hub.attach(&hello(None));
    hub.observe(a.conn, &mut paused("r", "p1"))
        .expect("observed");
    let mut req = continue_req();
    req.input = Some(serde_json::json!({"q": "edited"}));
    let (result, message) = hub.resume("r", "p1", req.clone());
    assert_eq!(result, ResumeResult::Refused);
    assert!(message.unwrap_or_default().contains("editable"));
    assert!(
        a.controls.try_recv().is_err(),
        "nothing was sent to the app"
    );

    let mut editable = paused("r", "p2");
    if let Message::ExecPaused(p) = &mut editable.message {
        p.editable = Some(true);
    }
    hub.observe(a.conn, &mut editable).expect("observed");
    assert_eq!(hub.resume("r", "p2", req).0, ResumeResult::Resumed);
    let sent: Value = serde_json::from_str(&a.controls.try_recv().expect("sent")).expect("json");
    assert_eq!(sent["payload"]["input"], serde_json::json!({"q": "edited"}));
}

fn recorded_run() -> Vec<(u64, &'static str, Value)> {
    use serde_json::json;
    vec![
        (
            1,
            "node.started",
            json!({"nodeId": "agent:a", "instanceId": "i0", "input": null}),
        ),
        (
            2,
            "node.started",
            json!({"nodeId": "tool:f", "instanceId": "i1", "input": {"x": 1}}),
        ),
        (
            3,
            "node.finished",
            json!({"nodeId": "tool:f", "instanceId": "i1", "status": "ok", "output": 10}),
        ),
        (
            4,
            "node.started",
            json!({"nodeId": "tool:f", "instanceId": "i2", "input": {"x": 2}}),
        ),
        (
            5,
            "node.finished",
            json!({"nodeId": "tool:f", "instanceId": "i2", "status": "ok", "output": 20}),
        ),
        (
            6,
            "node.started",
            json!({"nodeId": "tool:g", "instanceId": "i3", "input": {}}),
        ),
        (
            7,
            "node.finished",
            json!({"nodeId": "tool:g", "instanceId": "i3", "status": "ok", "output": 30}),
        ),
        (
            8,
            "node.finished",
            json!({"nodeId": "agent:a", "instanceId": "i0", "status": "ok"}),
        ),
    ]
}

fn plan_to(node: &str, instance: Option<&str>) -> Result<ReplayPlan, PlanError> {
    ReplayPlan::from_events(
        "src",
        "app",
        Some("trip"),
        recorded_run(),
        node,
        instance,
        ReplayMatch::Name,
    )
}

#[test]
fn a_plan_injects_what_finished_before_the_chosen_step() {
    let plan = plan_to("tool:g", None).expect("plan");
    assert_eq!(plan.summary()["injectedSteps"], 2);
    assert_eq!(plan.summary()["instanceId"], "i3");
    let plan = plan_to("tool:f", Some("i2")).expect("plan");
    assert_eq!(plan.summary()["injectedSteps"], 1);
    assert_eq!(
        plan_to("tool:nope", None).err(),
        Some(PlanError::NoSuchNode {
            run: "src".into(),
            node: "tool:nope".into()
        })
    );
    assert!(matches!(
        plan_to("tool:f", Some("i3")),
        Err(PlanError::NoSuchInstance { .. })
    ));
}

fn started(run: &str, node: &str, input: Value) -> Envelope {
    Envelope::new(
        run,
        1,
        Message::NodeStarted(mindgate_protocol::NodeStarted {
            node_id: node.into(),
            parent_id: None,
            kind: mindgate_protocol::NodeKind::Tool,
            name: node.into(),
            instance_id: "x".into(),
            input: Some(input),
            collapsed: None,
            redaction: None,
            extra: Default::default(),
        }),
    )
}

fn paused_at(run: &str, pause: &str, node: &str) -> Envelope {
    let mut env = paused(run, pause);
    if let Message::ExecPaused(p) = &mut env.message {
        p.node_id = node.into();
    }
    env
}

#[test]
fn the_hub_answers_a_replay_in_recorded_order_and_holds_at_the_chosen_step() {
    use serde_json::json;
    let hub = Hub::new();
    let mut a = hub.attach(&hello(None));
    hub.arm_replay(plan_to("tool:f", Some("i2")).expect("plan"));
    let set: Value = serde_json::from_str(&a.controls.try_recv().expect("armed")).expect("json");
    assert_eq!(set["type"], "breakpoint.set");
    assert_eq!(set["payload"]["matcher"], json!({"point": "before"}));
    assert!(hub.replay_watching());

    let mut run_started = Envelope::new(
        "new",
        0,
        Message::RunStarted(mindgate_protocol::RunStarted {
            app: "app".into(),
            sdk: mindgate_protocol::SdkInfo {
                name: "t".into(),
                version: "0".into(),
                extra: Default::default(),
            },
            meta: Some(serde_json::from_value(json!({"name": "trip"})).expect("meta")),
            extra: Default::default(),
        }),
    );
    assert!(hub.observe(a.conn, &mut run_started).expect("observed"));
    let Message::RunStarted(rs) = &run_started.message else {
        unreachable!()
    };
    let meta = rs.meta.clone().expect("meta");
    assert_eq!(meta["replayOf"], "src");
    assert_eq!(
        meta["replayAt"],
        json!({"nodeId": "tool:f", "instanceId": "i2"})
    );

    // The agent runs live; the first tool:f is injected with its recorded output.
    hub.observe(a.conn, &mut started("new", "agent:a", Value::Null))
        .expect("ok");
    hub.observe(a.conn, &mut paused_at("new", "p0", "agent:a"))
        .expect("ok");
    let sent: Value = serde_json::from_str(&a.controls.try_recv().expect("sent")).expect("json");
    assert_eq!(sent["payload"]["action"], "continue");
    hub.observe(a.conn, &mut started("new", "tool:f", json!({"x": 1})))
        .expect("ok");
    hub.observe(a.conn, &mut paused_at("new", "p1", "tool:f"))
        .expect("ok");
    let sent: Value = serde_json::from_str(&a.controls.try_recv().expect("sent")).expect("json");
    assert_eq!(sent["payload"]["action"], "inject");
    assert_eq!(sent["payload"]["output"], 10);
    let mut resumed = resumed_env("new", "p1");
    hub.observe(a.conn, &mut resumed).expect("ok");
    assert_eq!(
        principal_of(&resumed),
        Some(json!({"kind": "replay", "replayOf": "src"}))
    );
    // The second tool:f is the chosen step: held, and the matcher is cleared.
    hub.observe(a.conn, &mut started("new", "tool:f", json!({"x": 2})))
        .expect("ok");
    hub.observe(a.conn, &mut paused_at("new", "p2", "tool:f"))
        .expect("ok");
    let clear: Value = serde_json::from_str(&a.controls.try_recv().expect("sent")).expect("json");
    assert_eq!(clear["type"], "breakpoint.clear");
    let held = hub.pause("new", "p2").expect("held");
    assert_eq!(held.replay.expect("note")["role"], "target");
    assert!(!hub.replay_watching());
}

fn paused_point(run: &str, pause: &str, point: PausePoint) -> Envelope {
    let mut env = paused(run, pause);
    if let Message::ExecPaused(p) = &mut env.message {
        p.point = point;
    }
    env
}

#[test]
fn only_default_error_gates_are_due_when_nobody_watches() {
    let hub = Arc::new(Hub::new());
    let a = hub.attach(&hello(None));
    hub.observe(a.conn, &mut paused_point("r", "err", PausePoint::Error))
        .unwrap();
    hub.observe(a.conn, &mut paused_point("r", "bp", PausePoint::Before))
        .unwrap();
    let grace = Duration::from_secs(3);
    let now = std::time::Instant::now();
    // Within the grace: nothing is due yet, the error gate will be.
    let (due, next) = hub.due_unwatched(now, grace);
    assert!(due.is_empty());
    assert!(next.is_some());
    let later = now + grace + Duration::from_millis(10);
    let (due, _) = hub.due_unwatched(later, grace);
    assert_eq!(due, vec![("r".to_owned(), "err".to_owned())]);
    // A watcher keeps it; its leaving starts the grace again.
    let watcher = hub.watch_control();
    assert!(hub.due_unwatched(later, grace).0.is_empty());
    drop(watcher);
    let left = std::time::Instant::now();
    assert!(
        hub.due_unwatched(left + grace - Duration::from_millis(10), grace)
            .0
            .is_empty()
    );
    let (due, _) = hub.due_unwatched(later + grace * 2, grace);
    assert_eq!(due.len(), 1);
    // --hold-unwatched keeps it.
    hub.set_hold_unwatched(true);
    assert!(hub.due_unwatched(later + grace * 2, grace).0.is_empty());
    hub.set_hold_unwatched(false);
    let released = hub.release_unwatched(&due);
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].node_id, "tool:a");
    assert_eq!(
        hub.pauses(Some("r")).len(),
        1,
        "the breakpoint's gate holds"
    );
}

#[test]
fn an_error_breakpoint_or_step_mode_makes_error_gates_a_persons() {
    let hub = Arc::new(Hub::new());
    let a = hub.attach(&hello(None));
    hub.set_breakpoint(BreakpointMatcher::on_error().name("charge"));
    hub.observe(a.conn, &mut paused_point("r", "p1", PausePoint::Error))
        .unwrap();
    hub.clear_breakpoint(BreakpointMatcher::on_error().name("charge"));
    hub.set_mode(RunMode::Step);
    hub.observe(a.conn, &mut paused_point("r", "p2", PausePoint::Error))
        .unwrap();
    let far = std::time::Instant::now() + Duration::from_secs(60);
    assert!(hub.due_unwatched(far, Duration::from_secs(3)).0.is_empty());
}
