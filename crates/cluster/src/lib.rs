//! The shared hub state of several `mindgate serve` instances on one PostgreSQL database.
//!
//! Each instance [joins](Cluster::join) the cluster: it registers itself in
//! `mindgate_instances` and heartbeats there; the held gates of the apps attached to it
//! are rows of `mindgate_pauses`; breakpoints and the mode are one row of
//! `mindgate_debug`. Every change is announced on the `mindgate_hub` channel
//! (`NOTIFY`, sent in the transaction that made the change, so a listener that hears it
//! reads the committed rows), and each instance's listener turns the announcements of
//! the others into [`ClusterEvent`]s for its hub.
//!
//! * **The referee.** A resume is won by one conditional `UPDATE … SET state = 'resuming'
//!   WHERE state = 'held'` ([`Cluster::referee`]): the first resume wins across every
//!   instance; later ones are told the pause was taken. A resume won on another instance
//!   than the gate's is handed to the owner ([`ClusterEvent::Resume`]), which delivers it
//!   to its app and sends the app's answer back ([`ClusterEvent::ResumeAnswer`]).
//! * **Ordered writes.** Announcing a gate, retracting it and refereeing it go through one
//!   worker thread in the order they were asked, so a gate is never refereed before the
//!   row that announces it exists.
//! * **Dead instances.** Every instance reaps the instances whose heartbeat is older than
//!   [`ClusterConfig::stale_after`]: their gates are deleted (their apps lost the socket,
//!   so the SDK released them: fail-open), and [`ClusterEvent::InstancesGone`] lets the
//!   server abandon the runs nobody receives any more.
//!
//! The crate is synchronous (the `postgres` client, threads of its own): the server calls
//! the blocking calls from `spawn_blocking`, and reads events off a tokio channel.

mod heartbeat;
mod listener;
mod notice;
mod schema;
mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use mindgate_pg::PostgresUrl;
use mindgate_protocol::{BreakpointMatcher, RunMode};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc as tokio_mpsc;

pub use notice::{CHANNEL, channel_for};

/// Timings of the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterConfig {
    /// How often an instance writes its heartbeat (and reaps the dead).
    pub heartbeat: Duration,
    /// An instance whose heartbeat is older than this is dead.
    pub stale_after: Duration,
    /// How often the listener re-reads the whole shared state (a safety net for a
    /// missed notification).
    pub resync_every: Duration,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            heartbeat: Duration::from_secs(1),
            stale_after: Duration::from_secs(5),
            resync_every: Duration::from_secs(15),
        }
    }
}

/// What an instance tells the others about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceInfo {
    /// The instance id (random per start).
    pub id: String,
    /// Where it listens (`host:port`, as it bound it).
    pub addr: String,
    /// Its Mindgate version.
    pub version: String,
    /// Epoch ms of its start.
    pub started_at: i64,
    /// Epoch ms of its last heartbeat.
    pub heartbeat_at: i64,
}

/// Breakpoints and mode, shared by every instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebugState {
    /// Armed breakpoints, in the order they were added.
    pub breakpoints: Vec<BreakpointMatcher>,
    /// The run mode.
    pub mode: RunMode,
}

/// One change of the shared debug state, applied in the database to whatever the state
/// is then (so concurrent changes from two instances both take effect).
#[derive(Debug, Clone, PartialEq)]
pub enum DebugChange {
    /// Arm a breakpoint.
    Add(BreakpointMatcher),
    /// Disarm a breakpoint.
    Remove(BreakpointMatcher),
    /// Set the mode.
    Mode(RunMode),
}

/// A gate held by an app attached to another instance.
#[derive(Debug, Clone, PartialEq)]
pub struct RemotePause {
    /// The run.
    pub run_id: String,
    /// The pause id.
    pub pause_id: String,
    /// The instance the app is attached to.
    pub instance: String,
    /// The hub's view of the gate, as that instance announced it.
    pub view: Value,
}

/// The referee's answer to [`Cluster::referee`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Referee {
    /// This resume won. `ticket` names it in the owner's [`ClusterEvent::ResumeAnswer`].
    Won {
        /// The instance whose app holds the gate.
        owner: String,
        /// The resume's ticket.
        ticket: String,
    },
    /// Another resume already won.
    Taken,
    /// No such gate is recorded (released, or never announced).
    Missing,
    /// The instance holding the gate stopped heartbeating.
    OwnerGone,
}

/// What the listener tells this instance's hub.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterEvent {
    /// The whole shared state, read afresh: at start, after the listener reconnected
    /// (it may have missed notifications), and every [`ClusterConfig::resync_every`].
    /// `pauses` are the other instances' gates (held, owner alive).
    Resync {
        /// Breakpoints and mode.
        debug: DebugState,
        /// Other instances' held gates.
        pauses: Vec<RemotePause>,
    },
    /// Breakpoints or the mode changed (on any instance, this one included).
    Debug(DebugState),
    /// Another instance's app holds a gate.
    PauseHeld(RemotePause),
    /// Another instance's gate is no longer held (released, resumed, or its instance died).
    PauseReleased {
        /// The run.
        run_id: String,
        /// The pause id.
        pause_id: String,
    },
    /// A resume won on another instance, for a gate of this instance's apps.
    Resume {
        /// The run.
        run_id: String,
        /// The pause id.
        pause_id: String,
        /// The request, as [`Cluster::referee`] recorded it.
        request: Value,
        /// The ticket to answer with.
        ticket: String,
        /// The instance waiting for the answer.
        requester: String,
    },
    /// The owner's answer to a resume this instance won.
    ResumeAnswer {
        /// The resume's ticket.
        ticket: String,
        /// `{"result": …, "message"?: …}`.
        reply: Value,
    },
    /// These instances stopped heartbeating and were removed; `live` are the instances
    /// alive now (this one included).
    InstancesGone {
        /// The dead instances.
        gone: Vec<String>,
        /// The live ones.
        live: Vec<String>,
    },
    /// This instance had been taken for dead (its heartbeat was late) and joined again:
    /// its hub should announce its held gates again.
    Rejoined,
}

/// Why a cluster call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The database did not answer.
    #[error(transparent)]
    Unreachable(#[from] mindgate_pg::ConnectError),
    /// A statement failed.
    #[error("a cluster statement failed")]
    Sql(#[from] postgres::Error),
    /// The database holds a newer cluster schema than this build knows.
    #[error(
        "the cluster tables were migrated by a newer Mindgate (schema {found}, this build knows {supported})"
    )]
    SchemaTooNew {
        /// Found version.
        found: i64,
        /// Newest this build applies.
        supported: i64,
    },
    /// A stored value did not decode.
    #[error("a stored cluster value is malformed: {0}")]
    Malformed(String),
    /// The cluster's threads stopped.
    #[error("the cluster has stopped")]
    Stopped,
    /// A thread could not be started.
    #[error("cannot start a cluster thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// Result of cluster calls.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

/// A random 128-bit hex id.
pub(crate) fn random_id() -> String {
    use rand::Rng;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct Shared {
    id: String,
    /// The `LISTEN` / `NOTIFY` channel of this schema's cluster.
    channel: String,
    url: PostgresUrl,
    config: ClusterConfig,
    stop: AtomicBool,
    /// Somebody with control watches through this instance (written with each heartbeat).
    watched: AtomicBool,
}

/// This instance's membership of the cluster. Cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    shared: Arc<Shared>,
    ops: mpsc::Sender<worker::Op>,
    threads: Arc<std::sync::Mutex<Vec<JoinHandle<()>>>>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("instance", &self.shared.id)
            .field("database", &self.shared.url.to_string())
            .finish_non_exhaustive()
    }
}

/// What [`Cluster::join`] gives: the membership, the shared debug state as it is now,
/// and the hub's events.
#[derive(Debug)]
pub struct Joined {
    /// The membership.
    pub cluster: Cluster,
    /// Breakpoints and mode now (a fresh database gets the default: break on errors,
    /// mode `run`).
    pub debug: DebugState,
    /// Events for the hub, in the order the listener heard them. The first is a
    /// [`ClusterEvent::Resync`].
    pub events: tokio_mpsc::UnboundedReceiver<ClusterEvent>,
}

impl Cluster {
    /// Joins the cluster of `url`: migrates the cluster tables, reaps dead instances,
    /// registers this one (`addr`, `version`), and starts the worker, listener and
    /// heartbeat threads. Blocking; call it off the async runtime.
    pub fn join(
        url: &PostgresUrl,
        addr: &str,
        version: &str,
        config: ClusterConfig,
        default_debug: DebugState,
    ) -> Result<Joined> {
        let id = random_id();
        let mut client = schema::connect(url)?;
        schema::migrate(&mut client)?;
        let schema: Option<String> = client.query_one("SELECT current_schema()", &[])?.get(0);
        let channel = notice::channel_for(schema.as_deref().unwrap_or("public"));
        heartbeat::reap(&mut client, &channel, &id, config.stale_after)?;
        heartbeat::register(&mut client, &id, addr, version)?;
        let debug = schema::debug_state_or_default(&mut client, &default_debug)?;
        let shared = Arc::new(Shared {
            id,
            channel,
            url: url.clone(),
            config,
            stop: AtomicBool::new(false),
            watched: AtomicBool::new(false),
        });
        let (events_tx, events) = tokio_mpsc::unbounded_channel();
        let (ops, ops_rx) = mpsc::channel();
        let threads = vec![
            worker::spawn(Arc::clone(&shared), client, ops_rx)?,
            listener::spawn(Arc::clone(&shared), events_tx.clone())?,
            heartbeat::spawn(
                Arc::clone(&shared),
                events_tx,
                addr.to_owned(),
                version.to_owned(),
            )?,
        ];
        Ok(Joined {
            cluster: Cluster {
                shared,
                ops,
                threads: Arc::new(std::sync::Mutex::new(threads)),
            },
            debug,
            events,
        })
    }

    /// This instance's id.
    pub fn instance_id(&self) -> &str {
        &self.shared.id
    }

    /// The `LISTEN` / `NOTIFY` channel this cluster announces on.
    pub fn channel(&self) -> &str {
        &self.shared.channel
    }

    /// The cluster's timings.
    pub fn config(&self) -> ClusterConfig {
        self.shared.config
    }

    fn send(&self, op: worker::Op) {
        if self.ops.send(op).is_err() {
            tracing::debug!("cluster worker gone; a shared-state change was dropped");
        }
    }

    fn ask<T>(&self, make: impl FnOnce(mpsc::SyncSender<Result<T>>) -> worker::Op) -> Result<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.ops.send(make(tx)).map_err(|_| ClusterError::Stopped)?;
        rx.recv().map_err(|_| ClusterError::Stopped)?
    }

    /// Announces a gate held by an app of this instance (`view`: the hub's view of it).
    pub fn announce_pause(&self, run_id: &str, pause_id: &str, view: Value) {
        self.send(worker::Op::Announce {
            run_id: run_id.to_owned(),
            pause_id: pause_id.to_owned(),
            view,
        });
    }

    /// Retracts a gate of this instance (released, resumed, its app gone).
    pub fn retract_pause(&self, run_id: &str, pause_id: &str) {
        self.send(worker::Op::Retract {
            run_id: run_id.to_owned(),
            pause_id: pause_id.to_owned(),
        });
    }

    /// A gate of this instance is held again (its app refused a resume).
    pub fn rehold_pause(&self, run_id: &str, pause_id: &str) {
        self.send(worker::Op::Rehold {
            run_id: run_id.to_owned(),
            pause_id: pause_id.to_owned(),
        });
    }

    /// Sends the owner's answer of a resume back to the instance that won it.
    pub fn answer_resume(&self, requester: &str, ticket: &str, reply: Value) {
        self.send(worker::Op::Answer {
            requester: requester.to_owned(),
            ticket: ticket.to_owned(),
            reply,
        });
    }

    /// Applies a change to the shared breakpoints and mode and announces it.
    pub fn change_debug(&self, change: DebugChange) {
        self.send(worker::Op::Debug(change));
    }

    /// The referee: tries to win the resume of a gate. `request` is recorded for the
    /// owner when the gate is another instance's; `None` for this instance's own gates.
    /// Blocking, and ordered after every announce / retract asked before it.
    pub fn referee(&self, run_id: &str, pause_id: &str, request: Option<Value>) -> Result<Referee> {
        let (run_id, pause_id) = (run_id.to_owned(), pause_id.to_owned());
        self.ask(|reply| worker::Op::Referee {
            run_id,
            pause_id,
            request,
            reply,
        })
    }

    /// The live instances (heartbeat younger than [`ClusterConfig::stale_after`]).
    /// Blocking.
    pub fn instances(&self) -> Result<Vec<InstanceInfo>> {
        self.ask(|reply| worker::Op::Instances { reply })
    }

    /// Tells the other instances (with the next heartbeats) whether somebody with control
    /// watches through this instance: a viewer page with the token, an MCP client with
    /// control.
    pub fn set_watched(&self, watched: bool) {
        self.shared.watched.store(watched, Ordering::SeqCst);
    }

    /// Whether somebody with control watched through another live instance within
    /// `within` (its heartbeat said so). Blocking.
    pub fn others_watching(&self, within: Duration) -> Result<bool> {
        self.ask(|reply| worker::Op::OthersWatching { within, reply })
    }

    /// Leaves the cluster: retracts this instance's gates, removes its row and stops
    /// the threads. Blocking; idempotent.
    pub fn leave(&self) {
        if !self.shared.stop.swap(true, Ordering::SeqCst) {
            let _ = self.ask(|reply| worker::Op::Leave { reply });
        }
        let threads: Vec<JoinHandle<()>> = self
            .threads
            .lock()
            .map(|mut t| t.drain(..).collect())
            .unwrap_or_default();
        for t in threads {
            let _ = t.join();
        }
    }

    /// Stops the threads without leaving, as if the process had died (tests of
    /// fail-open use it: the others reap this instance after its heartbeat goes stale).
    pub fn vanish(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = self.ask(|reply| worker::Op::Vanish { reply });
        let threads: Vec<JoinHandle<()>> = self
            .threads
            .lock()
            .map(|mut t| t.drain(..).collect())
            .unwrap_or_default();
        for t in threads {
            let _ = t.join();
        }
    }
}
