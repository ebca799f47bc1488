//! The hub: attached apps, run claims, viewer debug state and the pause referee.
//!
//! Everything here is synchronous and socket-free (a `Mutex` around plain maps),
//! so it is unit-tested directly; the WebSocket tasks only translate frames.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;

use mindgate_protocol::{
    BreakpointMatcher, BreakpointSet, Envelope, Hello, HelloAck, Message, RunMode, ViewerVersions,
    WILDCARD_RUN_ID, capability,
};
use serde_json::Value;
use std::sync::Arc;

use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// Identifies one ingest connection.
pub type ConnId = u64;

/// The server version announced to apps and viewers.
pub const VIEWER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How many resolved pause ids are remembered to answer "taken".
pub const TAKEN_MEMORY: usize = 4_096;

/// Most resumes waiting for the app's answer; beyond, the oldest waits are
/// answered `resumed` (as if the app did not answer in time).
pub const MAX_IN_FLIGHT: usize = 4_096;

/// Most gates one connection may hold at once; further `exec.paused` are refused.
pub const MAX_PAUSES_PER_CONNECTION: usize = 256;

/// Most gates held across all connections; further `exec.paused` are refused.
pub const MAX_PAUSES: usize = 4_096;

/// Most unfinished runs one connection may write at once; events that would
/// open another are refused until some finish.
pub const MAX_UNFINISHED_RUNS_PER_CONNECTION: usize = 4_096;

/// Run ids listed per attached app (the most recent ones).
pub const APP_RUN_IDS: usize = 100;

/// Run claims the hub remembers; beyond, the oldest are forgotten (the
/// database keeps every claim, and forgotten ones are read back from it).
pub const MAX_CLAIMS: usize = 65_536;

/// Viewer deltas buffered per feed subscriber before it lags and gets a full `state`.
pub const DELTA_CAPACITY: usize = 1_024;

mod claims;
mod cluster;
mod debug_state;
mod observe;
mod pauses;
mod replay;
pub(crate) mod sweeper;
mod unwatched;
pub(crate) mod viewer_settings;
mod views;

pub use replay::{MAX_SHOWN_INPUT_BYTES, PlanError, ReplayMatch, ReplayPlan};
pub use unwatched::{UNWATCHED_GRACE, UNWATCHED_WHY, UnwatchedRelease, Watcher};
pub use views::{
    AppView, ClaimVerdict, HubRefusal, HubSnapshot, PauseView, Principal, ResumeRequest,
    ResumeResult,
};

struct AppConn {
    app: Option<String>,
    sdk: Option<Value>,
    token: String,
    tx: mpsc::UnboundedSender<String>,
    /// The most recent [`APP_RUN_IDS`] runs, oldest first.
    runs: VecDeque<String>,
    unfinished: HashSet<String>,
    /// Gates this connection holds.
    held: usize,
}

struct Pause {
    view: PauseView,
    conn: ConnId,
    /// When this instance saw the gate hold (or hold again after a refused resume).
    held_at: std::time::Instant,
    /// Held only by a default (pause on error): released when nobody watches
    /// (see [`unwatched`]).
    by_default: bool,
}

impl AppConn {
    fn view(&self, conn: ConnId) -> AppView {
        AppView {
            conn_id: conn,
            app: self.app.clone(),
            sdk: self.sdk.clone(),
            run_ids: self.runs.iter().cloned().collect(),
        }
    }
}

/// What a resume request finally got: the referee's verdict and a message.
pub type ResumeReply = (ResumeResult, Option<String>);

/// The answer every view gives to a resume: `{result, message?}` (the body of
/// `POST /api/runs/:runId/pauses/:pauseId/resume`, the MCP `resume` tool's answer and the
/// fields of the feed's `resume.result`).
pub fn resume_answer((result, message): ResumeReply) -> Value {
    let mut answer = serde_json::json!({ "result": result });
    if let Some(m) = message {
        answer["message"] = Value::String(m);
    }
    answer
}

/// Who waits for the app's answer to a resume.
enum Waiter {
    /// Nobody (a replay's own release).
    Nobody,
    /// A caller on this instance.
    Local(oneshot::Sender<ResumeReply>),
    /// The instance that won the resume (it is answered through the cluster).
    Remote {
        /// The resume's ticket.
        ticket: String,
        /// The instance waiting.
        requester: String,
    },
}

impl Waiter {
    /// Whether an answer still has somewhere to go.
    fn listening(&self) -> bool {
        match self {
            Waiter::Nobody => false,
            Waiter::Local(tx) => !tx.is_closed(),
            Waiter::Remote { .. } => true,
        }
    }
}

/// A gate held by an app attached to another instance of the cluster.
struct RemotePause {
    view: PauseView,
    instance: String,
}

/// A resume sent to the app, waiting for its `exec.resumed` / `exec.refused`.
struct InFlight {
    pause: Pause,
    waiter: Waiter,
    /// Stamped on the app's `exec.resumed`.
    principal: Principal,
}

struct Inner {
    next_conn: ConnId,
    next_seq: u64,
    apps: BTreeMap<ConnId, AppConn>,
    claims: HashMap<String, Arc<str>>,
    /// Claim insertion order, for forgetting the oldest beyond [`MAX_CLAIMS`].
    claim_order: VecDeque<String>,
    breakpoints: BreakpointSet,
    mode: RunMode,
    pauses: BTreeMap<(String, String), Pause>,
    in_flight: HashMap<(String, String), InFlight>,
    taken: HashSet<(String, String)>,
    taken_order: VecDeque<(String, String)>,
    /// Who released the gates whose resume was in flight when their run finished: an app
    /// may send `run.finished` before its `exec.resumed`, which is stamped with this
    /// principal (not `fail-open`). Forgotten with [`Inner::taken`].
    released_by: HashMap<(String, String), Principal>,
    replay: replay::ReplayState,
    /// Gates of the other instances of the cluster (empty without one).
    remote: BTreeMap<(String, String), RemotePause>,
    /// Resumes this instance won for other instances' gates, by ticket.
    remote_waits: HashMap<String, oneshot::Sender<ResumeReply>>,
    /// Viewer pages with the control token and MCP clients with control, here.
    watchers: usize,
    /// Since when nobody with control watches here (`None` while somebody does).
    unwatched_since: Option<std::time::Instant>,
    /// Default gates hold with nobody watching too (`serve --hold-unwatched`).
    hold_unwatched: bool,
}

/// Shared live state of the server.
pub struct Hub {
    inner: Mutex<Inner>,
    version: watch::Sender<u64>,
    deltas: broadcast::Sender<Arc<str>>,
    /// A replay is armed or running (ingest then shows the hub every `node.started`).
    replay_watch: std::sync::atomic::AtomicBool,
    /// The cluster this hub shares its gates, breakpoints and mode with (PostgreSQL).
    cluster: std::sync::OnceLock<mindgate_cluster::Cluster>,
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
pub const VIEWER_CAPABILITIES: &[&str] = &capability::VIEWER;

/// What the hub itself does, announced in `hello.ack.hubCapabilities`.
pub const HUB_CAPABILITIES: &[&str] = &[
    mindgate_protocol::hub_capability::EDIT_INPUT,
    mindgate_protocol::hub_capability::REPLAY,
    mindgate_protocol::hub_capability::PRINCIPAL,
];

/// The debug state of a fresh hub (and of a fresh cluster): `{point: "error"}` armed,
/// mode `run`.
pub fn default_debug_state() -> mindgate_cluster::DebugState {
    mindgate_cluster::DebugState {
        breakpoints: vec![BreakpointMatcher::on_error()],
        mode: RunMode::Run,
    }
}

impl Hub {
    /// A hub with the default debug state ([`default_debug_state`]).
    pub fn new() -> Hub {
        let defaults = default_debug_state();
        let mut breakpoints = BreakpointSet::new();
        breakpoints.replace(defaults.breakpoints);
        Hub {
            inner: Mutex::new(Inner {
                next_conn: 1,
                next_seq: 0,
                apps: BTreeMap::new(),
                claims: HashMap::new(),
                claim_order: VecDeque::new(),
                breakpoints,
                mode: defaults.mode,
                pauses: BTreeMap::new(),
                in_flight: HashMap::new(),
                taken: HashSet::new(),
                taken_order: VecDeque::new(),
                released_by: HashMap::new(),
                replay: Default::default(),
                remote: BTreeMap::new(),
                remote_waits: HashMap::new(),
                watchers: 0,
                unwatched_since: Some(std::time::Instant::now()),
                hold_unwatched: false,
            }),
            version: watch::channel(0).0,
            deltas: broadcast::channel(DELTA_CAPACITY).0,
            replay_watch: Default::default(),
            cluster: std::sync::OnceLock::new(),
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

    /// The viewer deltas (`app.attached`, `app.detached`, `app.run`,
    /// `pause.held`, `pause.released`, `debug`; see `docs/ui-feed.md`), each a
    /// ready JSON text, in the order the changes happened. Subscribe *before*
    /// taking a [`Hub::snapshot`]: every delta is idempotent, so one that is
    /// already in the snapshot does no harm.
    pub fn subscribe_deltas(&self) -> broadcast::Receiver<Arc<str>> {
        self.deltas.subscribe()
    }

    fn delta(&self, value: Value) {
        if self.deltas.receiver_count() > 0 {
            let _ = self.deltas.send(Arc::from(value.to_string()));
        }
    }

    fn pause_held(&self, view: &PauseView) {
        if self.deltas.receiver_count() > 0 {
            self.delta(serde_json::json!({"type": "pause.held", "pause": view}));
        }
    }

    fn pause_released(&self, run_id: &str, pause_id: &str) {
        if self.deltas.receiver_count() > 0 {
            self.delta(
                serde_json::json!({"type": "pause.released", "runId": run_id, "pauseId": pause_id}),
            );
        }
    }

    /// How many apps are attached and gates held (cheap, for `/health`).
    pub fn counts(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.apps.len(), inner.pauses.len())
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
                runs: VecDeque::new(),
                unfinished: HashSet::new(),
                held: 0,
            },
        );
        if let Some(app) = inner.apps.get(&conn) {
            self.delta(serde_json::json!({"type": "app.attached", "app": app.view(conn)}));
        }
        let mut breakpoints = inner.breakpoints.as_slice().to_vec();
        if let Some(m) = Self::replay_on_attach(&mut inner, conn, hello.app.as_deref())
            && !breakpoints.contains(&m)
        {
            breakpoints.push(m);
        }
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
            breakpoints,
            mode: inner.mode,
            session_token: Some(token.clone()),
            hub_capabilities: Some(HUB_CAPABILITIES.iter().map(|c| (*c).to_owned()).collect()),
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
        self.delta(serde_json::json!({"type": "app.detached", "connId": conn}));
        let mut released = Vec::new();
        inner.pauses.retain(|key, p| {
            let keep = p.conn != conn;
            if !keep {
                released.push(key.clone());
            }
            keep
        });
        for (run, pause) in &released {
            self.pause_released(run, pause);
            self.retract_shared(run, pause);
        }
        // Its gates auto-continued: waiting resumes were delivered, so "resumed".
        let answered: Vec<_> = inner
            .in_flight
            .extract_if(|_, f| f.pause.conn == conn)
            .collect();
        for ((run, pause), flight) in answered {
            self.retract_shared(&run, &pause);
            self.answer(flight.waiter, (ResumeResult::Resumed, None));
        }
        let mut runs: Vec<String> = app.unfinished.into_iter().collect();
        runs.sort();
        self.replay_on_detach(&mut inner, conn, &runs);
        drop(inner);
        self.bump();
        Some((app.token, runs))
    }

    /// Whether a connected app has sent events of `run_id` (one of its recent runs, or a
    /// gate it holds): such a run may have been announced to viewers before the writer
    /// committed it.
    pub fn knows_run(&self, run_id: &str) -> bool {
        let inner = self.lock();
        inner
            .apps
            .values()
            .any(|a| a.runs.iter().any(|r| r == run_id))
            || inner.pauses.keys().any(|(run, _)| run == run_id)
    }

    /// The viewer-visible state.
    pub fn snapshot(&self) -> HubSnapshot {
        let inner = self.lock();
        let mut pauses: Vec<PauseView> = inner
            .pauses
            .values()
            .map(|p| p.view.clone())
            .chain(inner.remote.values().map(|p| p.view.clone()))
            .collect();
        pauses.sort_by_key(|p| p.since);
        HubSnapshot {
            breakpoints: inner.breakpoints.as_slice().to_vec(),
            mode: inner.mode,
            pauses,
            apps: inner.apps.iter().map(|(id, a)| a.view(*id)).collect(),
            hold_unwatched: inner.hold_unwatched,
        }
    }
}

#[cfg(test)]
mod tests;
