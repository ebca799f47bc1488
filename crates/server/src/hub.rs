//! The hub: attached apps, run claims, viewer debug state and the pause referee.
//!
//! Everything here is synchronous and socket-free (a `Mutex` around plain maps),
//! so it is unit-tested directly; the WebSocket tasks only translate frames.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use mindgate_protocol::{
    BreakpointChange, BreakpointMatcher, BreakpointSet, Envelope, ExecResume, Hello, HelloAck,
    Message, ModeSet, ResumeAction, RunMode, ViewerVersions, WILDCARD_RUN_ID, capability,
};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

/// Identifies one ingest connection.
pub type ConnId = u64;

/// The server version announced to apps and viewers.
pub const VIEWER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How many resolved pause ids are remembered to answer "taken".
const TAKEN_MEMORY: usize = 4_096;

/// A held gate, as `GET /api/pauses` and the UI feed show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseView {
    /// Run.
    pub run_id: String,
    /// Pause id.
    pub pause_id: String,
    /// Held node.
    pub node_id: String,
    /// Gate point.
    pub point: String,
    /// Why (`breakpoint`, `error`, `step`, `loop`).
    pub reason: Option<String>,
    /// Epoch ms when it started holding.
    pub since: i64,
    /// Instance, when the app said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// Loop-guard details.
    #[serde(rename = "loop", skip_serializing_if = "Option::is_none")]
    pub loop_info: Option<Value>,
    /// The input may be edited on resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editable: Option<bool>,
}

/// An attached app, as the UI feed shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppView {
    /// Connection id.
    pub conn_id: ConnId,
    /// App name from `hello`.
    pub app: Option<String>,
    /// SDK from `hello`.
    pub sdk: Option<Value>,
    /// Runs this connection wrote.
    pub run_ids: Vec<String>,
}

/// The viewer-visible debug state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HubSnapshot {
    /// Armed breakpoints.
    pub breakpoints: Vec<BreakpointMatcher>,
    /// Mode.
    pub mode: RunMode,
    /// Held gates.
    pub pauses: Vec<PauseView>,
    /// Attached apps.
    pub apps: Vec<AppView>,
}

/// The referee's verdict on a resume request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResumeResult {
    /// Sent to the app; this request won.
    Resumed,
    /// Somebody else already resolved this pause.
    Taken,
    /// No such pause is held (never was, or its app went away).
    NoSuchPause,
    /// The request cannot be delivered or is not acceptable.
    Refused,
}

/// A resume request from the HTTP API or the UI feed.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeRequest {
    /// How to release.
    pub action: ResumeAction,
    /// Value for `inject`.
    pub output: Option<Value>,
    /// Edited input.
    pub input: Option<Value>,
    /// Correlation id.
    pub request_id: Option<String>,
}

/// Whether a connection may write a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimVerdict {
    /// Yes.
    Allowed,
    /// No: another app owns it.
    Refused,
    /// The hub does not know the run: check the database, then call [`Hub::settle_claim`].
    Unknown,
}

struct AppConn {
    app: Option<String>,
    sdk: Option<Value>,
    token: String,
    tx: mpsc::UnboundedSender<String>,
    runs: Vec<String>,
    unfinished: HashSet<String>,
}

struct Pause {
    view: PauseView,
    conn: ConnId,
}

/// What a resume request finally got: the referee's verdict and a message.
pub type ResumeReply = (ResumeResult, Option<String>);

/// A resume sent to the app, waiting for its `exec.resumed` / `exec.refused`.
struct InFlight {
    pause: Pause,
    waiter: Option<oneshot::Sender<ResumeReply>>,
}

struct Inner {
    next_conn: ConnId,
    next_seq: u64,
    apps: BTreeMap<ConnId, AppConn>,
    claims: HashMap<String, String>,
    breakpoints: BreakpointSet,
    mode: RunMode,
    pauses: BTreeMap<(String, String), Pause>,
    in_flight: HashMap<(String, String), InFlight>,
    taken: HashSet<(String, String)>,
    taken_order: VecDeque<(String, String)>,
}

/// Shared live state of the server.
pub struct Hub {
    inner: Mutex<Inner>,
    version: watch::Sender<u64>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").finish_non_exhaustive()
    }
}

impl Default for Hub {
    fn default() -> Self {
        Self::new()
    }
}

/// A freshly attached app.
#[derive(Debug)]
pub struct Attached {
    /// Its connection id.
    pub conn: ConnId,
    /// Its session (claim) token.
    pub token: String,
    /// The `hello.ack` frame to send.
    pub ack: String,
    /// Control frames for this connection.
    pub controls: mpsc::UnboundedReceiver<String>,
}

/// A random 128-bit hex token.
pub fn new_token() -> String {
    use rand::Rng;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Capabilities the viewer announces in `hello.ack`.
pub const VIEWER_CAPABILITIES: &[&str] = &[
    capability::PAUSE,
    capability::STEP,
    capability::INJECT,
    capability::RETRY,
    capability::ABORT,
    capability::RUN_CLAIM,
    capability::EDIT_INPUT,
];

impl Hub {
    /// A hub with the default debug state: `{point: "error"}` armed, mode `run`.
    pub fn new() -> Hub {
        let mut breakpoints = BreakpointSet::new();
        breakpoints.add(BreakpointMatcher::on_error());
        Hub {
            inner: Mutex::new(Inner {
                next_conn: 1,
                next_seq: 0,
                apps: BTreeMap::new(),
                claims: HashMap::new(),
                breakpoints,
                mode: RunMode::Run,
                pauses: BTreeMap::new(),
                in_flight: HashMap::new(),
                taken: HashSet::new(),
                taken_order: VecDeque::new(),
            }),
            version: watch::channel(0).0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bump(&self) {
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// A receiver that changes whenever breakpoints, mode, pauses or apps change.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// Registers an app after its `hello`. A `resumeToken` becomes its identity
    /// again (so it keeps writing its runs); otherwise it gets a new token.
    pub fn attach(&self, hello: &Hello) -> Attached {
        let token = hello
            .resume_token
            .as_deref()
            .filter(|t| !t.is_empty() && t.len() <= 256)
            .map_or_else(new_token, str::to_owned);
        let (tx, controls) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        let conn = inner.next_conn;
        inner.next_conn += 1;
        inner.apps.insert(
            conn,
            AppConn {
                app: hello.app.clone(),
                sdk: hello
                    .sdk
                    .as_ref()
                    .and_then(|s| serde_json::to_value(s).ok()),
                token: token.clone(),
                tx,
                runs: Vec::new(),
                unfinished: HashSet::new(),
            },
        );
        let ack = HelloAck {
            versions: ViewerVersions {
                protocol: mindgate_protocol::PROTOCOL_VERSION,
                viewer: VIEWER_VERSION.to_owned(),
                extra: Default::default(),
            },
            capabilities: VIEWER_CAPABILITIES
                .iter()
                .map(|c| (*c).to_owned())
                .collect(),
            breakpoints: inner.breakpoints.as_slice().to_vec(),
            mode: inner.mode,
            session_token: Some(token.clone()),
            extra: Default::default(),
        };
        let seq = inner.next_seq;
        inner.next_seq += 1;
        drop(inner);
        self.bump();
        Attached {
            conn,
            token,
            ack: Envelope::new(WILDCARD_RUN_ID, seq, Message::HelloAck(ack)).to_json(),
            controls,
        }
    }

    /// Forgets a connection. Its pauses vanish (the app auto-continued them).
    /// Returns its claim token and the runs it wrote but did not finish.
    pub fn detach(&self, conn: ConnId) -> Option<(String, Vec<String>)> {
        let mut inner = self.lock();
        let app = inner.apps.remove(&conn)?;
        inner.pauses.retain(|_, p| p.conn != conn);
        // Its gates auto-continued: waiting resumes were delivered, so "resumed".
        inner.in_flight.retain(|_, f| f.pause.conn != conn);
        drop(inner);
        self.bump();
        let mut runs: Vec<String> = app.unfinished.into_iter().collect();
        runs.sort();
        Some((app.token, runs))
    }

    /// Whether some attached connection carries `token`.
    pub fn token_attached(&self, token: &str) -> bool {
        self.lock().apps.values().any(|a| a.token == token)
    }

    /// Checks the claim of `run_id` for `conn`.
    pub fn check_claim(&self, conn: ConnId, run_id: &str) -> ClaimVerdict {
        let inner = self.lock();
        let Some(app) = inner.apps.get(&conn) else {
            return ClaimVerdict::Refused;
        };
        match inner.claims.get(run_id) {
            Some(owner) if *owner == app.token => ClaimVerdict::Allowed,
            Some(_) => ClaimVerdict::Refused,
            None => ClaimVerdict::Unknown,
        }
    }

    /// Settles an unknown claim with what the database says: `stored` is
    /// `None` when the run does not exist, `Some(claim)` when it does.
    pub fn settle_claim(
        &self,
        conn: ConnId,
        run_id: &str,
        stored: Option<Option<String>>,
    ) -> ClaimVerdict {
        let mut inner = self.lock();
        let Some(token) = inner.apps.get(&conn).map(|a| a.token.clone()) else {
            return ClaimVerdict::Refused;
        };
        if let Some(owner) = inner.claims.get(run_id) {
            return if *owner == token {
                ClaimVerdict::Allowed
            } else {
                ClaimVerdict::Refused
            };
        }
        match stored {
            Some(Some(owner)) if owner != token => ClaimVerdict::Refused,
            _ => {
                inner.claims.insert(run_id.to_owned(), token);
                ClaimVerdict::Allowed
            }
        }
    }

    /// Bookkeeping for an accepted event from `conn`: run lists and pauses.
    pub fn observe(&self, conn: ConnId, env: &Envelope) {
        let mut inner = self.lock();
        let mut changed = false;
        if let Some(app) = inner.apps.get_mut(&conn) {
            if !app.runs.iter().any(|r| r == &env.run_id) {
                app.runs.push(env.run_id.clone());
                if app.runs.len() > 100 {
                    app.runs.remove(0);
                }
                changed = true;
            }
            if matches!(env.message, Message::RunFinished(_)) {
                app.unfinished.remove(&env.run_id);
            } else if !app.unfinished.contains(&env.run_id) {
                app.unfinished.insert(env.run_id.clone());
            }
        }
        match &env.message {
            Message::ExecPaused(p) => {
                let key = (env.run_id.clone(), p.pause_id.clone());
                if !inner.taken.contains(&key) {
                    inner.pauses.insert(
                        key,
                        Pause {
                            view: PauseView {
                                run_id: env.run_id.clone(),
                                pause_id: p.pause_id.clone(),
                                node_id: p.node_id.clone(),
                                point: p.point.as_str().to_owned(),
                                reason: p.reason.map(|r| r.as_str().to_owned()),
                                since: env.ts,
                                instance_id: p
                                    .extra
                                    .get("instanceId")
                                    .and_then(Value::as_str)
                                    .map(str::to_owned),
                                loop_info: p
                                    .loop_info
                                    .as_ref()
                                    .and_then(|l| serde_json::to_value(l).ok()),
                                editable: p.editable,
                            },
                            conn,
                        },
                    );
                    changed = true;
                }
            }
            Message::ExecResumed(p) => {
                let key = (env.run_id.clone(), p.pause_id.clone());
                if inner.pauses.remove(&key).is_some() {
                    changed = true;
                }
                if let Some(waiter) = inner.in_flight.remove(&key).and_then(|f| f.waiter) {
                    let _ = waiter.send((ResumeResult::Resumed, None));
                }
                remember_taken(&mut inner, key);
            }
            Message::ExecRefused(p) => {
                // The app kept holding the gate: it is a pause again.
                let key = (env.run_id.clone(), p.pause_id.clone());
                if let Some(flight) = inner.in_flight.remove(&key) {
                    let message = p.message.clone().unwrap_or_else(|| {
                        format!("the app refused the resume ({})", p.code.as_str())
                    });
                    if let Some(waiter) = flight.waiter {
                        let _ = waiter.send((ResumeResult::Refused, Some(message)));
                    }
                    inner.taken.remove(&key);
                    inner.taken_order.retain(|k| *k != key);
                    inner.pauses.insert(key, flight.pause);
                    changed = true;
                }
            }
            Message::RunFinished(_) => {
                let before = inner.pauses.len();
                let run = env.run_id.clone();
                inner.pauses.retain(|(r, _), _| *r != run);
                inner.in_flight.retain(|(r, _), _| *r != run);
                changed |= before != inner.pauses.len();
            }
            _ => {}
        }
        drop(inner);
        if changed {
            self.bump();
        }
    }

    /// Current held gates, optionally of one run, oldest first.
    pub fn pauses(&self, run_id: Option<&str>) -> Vec<PauseView> {
        let inner = self.lock();
        let mut out: Vec<PauseView> = inner
            .pauses
            .values()
            .filter(|p| run_id.is_none_or(|r| p.view.run_id == r))
            .map(|p| p.view.clone())
            .collect();
        out.sort_by_key(|p| p.since);
        out
    }

    /// One held gate.
    pub fn pause(&self, run_id: &str, pause_id: &str) -> Option<PauseView> {
        self.lock()
            .pauses
            .get(&(run_id.to_owned(), pause_id.to_owned()))
            .map(|p| p.view.clone())
    }

    /// The referee: the first resume of a pause wins and is sent to the app that
    /// owns the run; later ones get [`ResumeResult::Taken`]. Answers as soon as
    /// the control is delivered (see [`Hub::resume_and_wait`] for the app's reply).
    pub fn resume(&self, run_id: &str, pause_id: &str, req: ResumeRequest) -> ResumeReply {
        self.resume_inner(run_id, pause_id, req, None)
    }

    /// [`Hub::resume`], then waits up to `wait` for the app's answer: its
    /// `exec.resumed` → `resumed`, its `exec.refused` → `refused` with the
    /// app's message (the gate is held again, so the pause reappears). A
    /// delivered resume the app does not answer in time counts as `resumed`.
    pub async fn resume_and_wait(
        &self,
        run_id: &str,
        pause_id: &str,
        req: ResumeRequest,
        wait: Duration,
    ) -> ResumeReply {
        let (tx, rx) = oneshot::channel();
        let reply = self.resume_inner(run_id, pause_id, req, Some(tx));
        if reply.0 != ResumeResult::Resumed {
            return reply;
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(answer)) => answer,
            // Timed out, or the app went away (its gates auto-continue).
            _ => reply,
        }
    }

    fn resume_inner(
        &self,
        run_id: &str,
        pause_id: &str,
        req: ResumeRequest,
        waiter: Option<oneshot::Sender<ResumeReply>>,
    ) -> ResumeReply {
        let key = (run_id.to_owned(), pause_id.to_owned());
        let mut inner = self.lock();
        let Some(pause) = inner.pauses.get(&key) else {
            let result = if inner.taken.contains(&key) {
                (
                    ResumeResult::Taken,
                    Some("this pause was already resolved".to_owned()),
                )
            } else {
                (
                    ResumeResult::NoSuchPause,
                    Some(format!("no pause {pause_id} is held in run {run_id}")),
                )
            };
            return result;
        };
        if req.action == ResumeAction::Inject && req.output.is_none() {
            return (
                ResumeResult::Refused,
                Some("inject needs an `output` value".to_owned()),
            );
        }
        let conn = pause.conn;
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let frame = Envelope::new(
            run_id,
            seq,
            Message::ExecResume(ExecResume {
                pause_id: pause_id.to_owned(),
                action: req.action,
                output: req.output,
                input: req.input,
                request_id: req.request_id,
                extra: Default::default(),
            }),
        )
        .to_json();
        let delivered = inner
            .apps
            .get(&conn)
            .is_some_and(|app| app.tx.send(frame).is_ok());
        if !delivered {
            return (
                ResumeResult::Refused,
                Some("the app holding this pause is not connected".to_owned()),
            );
        }
        if let Some(pause) = inner.pauses.remove(&key) {
            if inner.in_flight.len() >= TAKEN_MEMORY {
                // Apps that never answer: forget the oldest waits' pauses.
                inner
                    .in_flight
                    .retain(|_, f| f.waiter.as_ref().is_some_and(|w| !w.is_closed()));
            }
            inner
                .in_flight
                .insert(key.clone(), InFlight { pause, waiter });
        }
        remember_taken(&mut inner, key);
        drop(inner);
        self.bump();
        (ResumeResult::Resumed, None)
    }

    /// Adds a breakpoint and tells every app. Returns whether it was new.
    pub fn set_breakpoint(&self, matcher: BreakpointMatcher) -> bool {
        let mut inner = self.lock();
        if !inner.breakpoints.add(matcher.clone()) {
            return false;
        }
        let msg = Message::BreakpointSet(BreakpointChange {
            matcher,
            extra: Default::default(),
        });
        broadcast(&mut inner, msg);
        drop(inner);
        self.bump();
        true
    }

    /// Removes a breakpoint and tells every app. Returns whether it existed.
    pub fn clear_breakpoint(&self, matcher: BreakpointMatcher) -> bool {
        let mut inner = self.lock();
        if !inner.breakpoints.remove(&matcher) {
            return false;
        }
        let msg = Message::BreakpointClear(BreakpointChange {
            matcher,
            extra: Default::default(),
        });
        broadcast(&mut inner, msg);
        drop(inner);
        self.bump();
        true
    }

    /// Sets the mode and tells every app.
    pub fn set_mode(&self, mode: RunMode) {
        let mut inner = self.lock();
        inner.mode = mode;
        broadcast(
            &mut inner,
            Message::ModeSet(ModeSet {
                mode,
                extra: Default::default(),
            }),
        );
        drop(inner);
        self.bump();
    }

    /// The viewer-visible state.
    pub fn snapshot(&self) -> HubSnapshot {
        let inner = self.lock();
        let mut pauses: Vec<PauseView> = inner.pauses.values().map(|p| p.view.clone()).collect();
        pauses.sort_by_key(|p| p.since);
        HubSnapshot {
            breakpoints: inner.breakpoints.as_slice().to_vec(),
            mode: inner.mode,
            pauses,
            apps: inner
                .apps
                .iter()
                .map(|(id, a)| AppView {
                    conn_id: *id,
                    app: a.app.clone(),
                    sdk: a.sdk.clone(),
                    run_ids: a.runs.clone(),
                })
                .collect(),
        }
    }
}

fn remember_taken(inner: &mut Inner, key: (String, String)) {
    if inner.taken.insert(key.clone()) {
        inner.taken_order.push_back(key);
        while inner.taken_order.len() > TAKEN_MEMORY {
            if let Some(old) = inner.taken_order.pop_front() {
                inner.taken.remove(&old);
            }
        }
    }
}

fn broadcast(inner: &mut Inner, msg: Message) {
    let seq = inner.next_seq;
    inner.next_seq += 1;
    let frame = Envelope::new(WILDCARD_RUN_ID, seq, msg).to_json();
    for app in inner.apps.values() {
        let _ = app.tx.send(frame.clone());
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use mindgate_protocol::{ClientVersions, ExecPaused, ExecResumed, PausePoint};

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
        hub.observe(a.conn, &paused("r", "p1"));
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
        hub.observe(a.conn, &paused("r", "p1"));
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
        hub.observe(a.conn, &paused("r", "p1"));
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
        hub.observe(a.conn, &resumed);
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
}
