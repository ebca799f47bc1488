//! The client session: runs, nodes and the handle the transport thread works
//! through. Emitting events is in [`emit`], holding at gates in [`hold`].

mod emit;
mod hold;
pub(crate) mod node;
pub(crate) mod scope;

use emit::run_started;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mindgate_protocol::{
    HintNode, LoopInfo, Message, NodeKind, PausePoint, PauseReason, RunFinished, RunStatus,
};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::buffer::Ring;
use crate::clock::{ms, ms_if_any};
use crate::config::Config;
use crate::gate::{Decision, GateNode, Gates};
use crate::ids;
use crate::loop_guard::LoopGuard;
use crate::run::{Outcome, RunRef};
use crate::run_options::RunOptions;
pub(crate) use crate::session::{Core, Shared};
pub use crate::session::{SDK_NAME, SDK_VERSION};
use crate::warn::Warner;
use node::Node;
use scope::Scope;

/// A connection to the Mindgate viewer. Cheap to clone; clones share one session.
///
/// Most code uses the process-wide client through the free functions
/// ([`crate::run`], [`crate::tool`], …); create one explicitly for tests or to
/// talk to a second viewer.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Fail open: nothing may stay held once the last handle is gone.
        self.shared.release_all();
        self.shared.shutdown.cancel();
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("enabled", &self.inner.shared.enabled)
            .field("url", &self.inner.shared.url)
            .field("attached", &self.is_attached())
            .finish()
    }
}

/// A snapshot of the client's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// The SDK is on.
    pub enabled: bool,
    /// The background transport was started (a socket may have been opened).
    pub started: bool,
    /// A viewer is attached.
    pub attached: bool,
    /// Events in the replay buffer.
    pub buffered: usize,
    /// Events dropped from the buffer since start.
    pub dropped: u64,
    /// Gates currently held.
    pub held_gates: usize,
    /// Breakpoints the viewer has armed (from `hello.ack` and later `breakpoint.set` /
    /// `breakpoint.clear`).
    pub breakpoints: usize,
    /// The next `seq`.
    pub seq: u64,
}

/// What [`Shared::decide`] concluded.
pub(crate) enum Verdict {
    /// Do not hold.
    Open,
    /// The run is already aborted.
    Abort,
    /// Hold, in this run, for this reason.
    Hold(RunRef, PauseReason, Option<LoopInfo>),
}

/// The future returned by [`Client::gate`]: ready at once unless the gate holds.
#[must_use = "a gate decides nothing until awaited"]
pub struct Gate<'a> {
    state: GateState<'a>,
}

enum GateState<'a> {
    Ready(Option<Decision>),
    Held(Pin<Box<dyn Future<Output = Decision> + Send + 'a>>),
}

impl Gate<'_> {
    fn ready(decision: Decision) -> Self {
        Gate {
            state: GateState::Ready(Some(decision)),
        }
    }
}

impl std::fmt::Debug for Gate<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.state {
            GateState::Ready(d) => f.debug_tuple("Gate::Ready").field(d).finish(),
            GateState::Held(_) => f.write_str("Gate::Held"),
        }
    }
}

impl Future for Gate<'_> {
    type Output = Decision;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Decision> {
        match &mut self.get_mut().state {
            GateState::Ready(d) => Poll::Ready(d.take().unwrap_or(Decision::Continue)),
            GateState::Held(fut) => fut.as_mut().poll(cx),
        }
    }
}

/// What a gate did: the decision and how long it held.
#[derive(Debug)]
pub(crate) struct Gated {
    pub(crate) decision: Decision,
    pub(crate) held: Duration,
    /// The edited input a `continue` carried (editable gates only).
    pub(crate) input: Option<serde_json::Value>,
}

impl Gated {
    const OPEN: Gated = Gated {
        decision: Decision::Continue,
        held: Duration::ZERO,
        input: None,
    };
}

impl Client {
    /// Creates a client. Nothing connects until the first event or gate.
    pub fn new(config: Config) -> Self {
        let enabled = config.resolve_enabled();
        let url = config.resolve_url();
        let guard = config.resolve_loop_guard();
        let (attached_tx, _) = watch::channel(false);
        let shared = Shared {
            enabled,
            url,
            attached: AtomicBool::new(false),
            started: AtomicBool::new(false),
            core: Mutex::new(Core {
                seq: 0,
                ring: Ring::new(if enabled { config.buffer_size } else { 1 }),
                session_token: None,
            }),
            wake: Notify::new(),
            kick: Notify::new(),
            attached_tx,
            sent: AtomicU64::new(0),
            gates: Gates::default(),
            loop_guard: LoopGuard::new(guard),
            warner: Warner::new(config.warn_interval),
            runtime: OnceLock::new(),
            shutdown: CancellationToken::new(),
            implicit: OnceLock::new(),
            implicit_finished: AtomicBool::new(false),
            config,
        };
        Client {
            inner: Arc::new(Inner {
                shared: Arc::new(shared),
            }),
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    /// Whether the SDK is on (see [`Config::resolve_enabled`]).
    pub fn is_enabled(&self) -> bool {
        self.inner.shared.enabled
    }

    /// Whether a viewer is attached right now.
    pub fn is_attached(&self) -> bool {
        self.inner.shared.attached.load(Ordering::Acquire)
    }

    /// The viewer URL this client connects to.
    pub fn url(&self) -> &str {
        &self.inner.shared.url
    }

    /// A snapshot of the client's state.
    pub fn stats(&self) -> Stats {
        let s = &self.inner.shared;
        let (buffered, dropped, seq) = s
            .core
            .lock()
            .map(|c| (c.ring.len(), c.ring.dropped(), c.seq))
            .unwrap_or_default();
        Stats {
            enabled: s.enabled,
            started: s.started.load(Ordering::Acquire),
            attached: self.is_attached(),
            buffered,
            dropped,
            held_gates: s.gates.held_count(),
            breakpoints: s.gates.armed_count(),
            seq,
        }
    }

    /// Connects now (if not yet) and waits until attached, up to `timeout`.
    /// `false` means "carry on detached", never an error.
    pub async fn ready(&self, timeout: Duration) -> bool {
        let s = self.inner.shared.clone();
        if !s.enabled {
            return false;
        }
        s.ensure_started();
        s.kick.notify_one();
        if s.attached.load(Ordering::Acquire) {
            return true;
        }
        let mut rx = s.attached_tx.subscribe();
        let Some(rt) = s.runtime.get() else {
            return false;
        };
        // The wait runs on the SDK's own runtime, so it needs no timer from the host's.
        let task = rt.spawn(async move {
            tokio::time::timeout(timeout, rx.wait_for(|a| *a))
                .await
                .is_ok_and(|r| r.is_ok())
        });
        task.await.unwrap_or(false)
    }

    /// Waits (up to `timeout`) until every event emitted so far was written to the
    /// viewer. Returns `false` when detached or on timeout.
    pub async fn flush(&self, timeout: Duration) -> bool {
        let s = self.inner.shared.clone();
        if !s.enabled || !s.attached.load(Ordering::Acquire) {
            return false;
        }
        let target = s
            .core
            .lock()
            .map(|c| c.ring.pushed_total())
            .unwrap_or_default();
        let Some(rt) = s.runtime.get().cloned() else {
            return false;
        };
        s.wake.notify_one();
        let task = rt.spawn(async move {
            let deadline = Instant::now() + timeout;
            loop {
                if s.sent.load(Ordering::Acquire) >= target {
                    return true;
                }
                if Instant::now() >= deadline || !s.attached.load(Ordering::Acquire) {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
        task.await.unwrap_or(false)
    }

    /// Releases every held gate, finishes the implicit run, flushes (up to
    /// `timeout`) and closes the connection. The client stays usable detached.
    pub async fn shutdown(&self, timeout: Duration) {
        let s = self.inner.shared.clone();
        if !s.enabled {
            return;
        }
        s.release_all();
        let implicit = s
            .implicit
            .get()
            .filter(|_| !s.implicit_finished.swap(true, Ordering::AcqRel));
        if let Some(run) = implicit {
            s.emit(
                run,
                Message::RunFinished(RunFinished {
                    status: RunStatus::Ok,
                    error: None,
                    extra: Map::new(),
                }),
            );
        }
        self.flush(timeout).await;
        s.shutdown.cancel();
    }

    /// Runs `fut` as a named run: `run.started`, an `agent:<name>` node, and
    /// `run.finished` with `ok`, `error` (with the error) or `aborted`.
    /// The future's output is returned untouched.
    pub async fn run<F>(&self, name: &str, meta: impl Serialize, fut: F) -> F::Output
    where
        F: Future,
        F::Output: Outcome,
    {
        let s = &self.inner.shared;
        let run = RunRef::new(ids::new_run_id(), name);
        if !s.enabled {
            let scope = Scope {
                client: self.clone(),
                run,
                parent: None,
            };
            return scope.enter(fut).await;
        }
        let agent_id: Arc<str> = Arc::from(ids::node_id(NodeKind::Agent, name));
        let mut meta_map = s.config.meta.clone().unwrap_or_default();
        meta_map.insert("name".to_owned(), Value::String(name.to_owned()));
        match serde_json::to_value(meta) {
            Ok(Value::Object(m)) => meta_map.extend(m),
            Ok(Value::Null) | Err(_) => {}
            Ok(other) => {
                meta_map.insert("value".to_owned(), other);
            }
        }
        s.emit(&run, run_started(&s.config.app_name, meta_map));
        s.emit(
            &run,
            Message::NodeStarted(mindgate_protocol::NodeStarted {
                node_id: agent_id.to_string(),
                parent_id: None,
                kind: NodeKind::Agent,
                name: name.to_owned(),
                instance_id: run.id().to_string(),
                input: None,
                collapsed: None,
                redaction: None,
                extra: Map::new(),
            }),
        );
        let started = Instant::now();
        let scope = Scope {
            client: self.clone(),
            run: run.clone(),
            parent: Some(agent_id.clone()),
        };
        let out = scope.enter(fut).await;
        let failure = out.failure();
        let aborted = run.cancel_token().is_cancelled();
        let status = if aborted {
            RunStatus::Aborted
        } else if failure.is_some() {
            RunStatus::Error
        } else {
            RunStatus::Ok
        };
        let held = run.held();
        if let (Some(err), false) = (&failure, aborted) {
            s.emit(
                &run,
                Message::NodeError(mindgate_protocol::NodeError {
                    node_id: agent_id.to_string(),
                    instance_id: Some(run.id().to_string()),
                    error: err.clone(),
                    held_ms: ms_if_any(held),
                    extra: Map::new(),
                }),
            );
        }
        s.emit(
            &run,
            Message::NodeFinished(mindgate_protocol::NodeFinished {
                node_id: agent_id.to_string(),
                instance_id: Some(run.id().to_string()),
                output: None,
                usage: None,
                duration_ms: ms(started.elapsed()),
                status: match status {
                    RunStatus::Ok => mindgate_protocol::NodeStatus::Ok,
                    RunStatus::Error => mindgate_protocol::NodeStatus::Error,
                    RunStatus::Aborted => mindgate_protocol::NodeStatus::Aborted,
                },
                held_ms: ms_if_any(held),
                finish_reason: None,
                extra: Map::new(),
            }),
        );
        s.emit(
            &run,
            Message::RunFinished(RunFinished {
                status,
                error: if aborted {
                    Some(mindgate_protocol::ErrorInfo {
                        name: crate::Aborted::NAME.to_owned(),
                        message: crate::Aborted.to_string(),
                        stack: None,
                        extra: Map::new(),
                    })
                } else {
                    failure
                },
                extra: Map::new(),
            }),
        );
        s.loop_guard.forget(run.id());
        out
    }

    /// [`Client::run`] with the run's thread, user and tags ([`RunOptions`]) written
    /// into its meta as `threadId`, `userId` and `tags` (over the same keys in `meta`).
    pub async fn run_with<F>(
        &self,
        name: &str,
        options: RunOptions,
        meta: impl Serialize,
        fut: F,
    ) -> F::Output
    where
        F: Future,
        F::Output: Outcome,
    {
        self.run(name, crate::run_options::meta_with(&options, meta), fut)
            .await
    }

    /// A node builder bound to this client (outside a run: its implicit run).
    pub fn node(&self, kind: NodeKind, name: impl Into<String>) -> Node {
        Node::with_scope(kind, name.into(), Some(self.scope_here()))
    }

    /// Pre-announces nodes so the viewer draws them greyed before they run.
    pub fn graph_hint(&self, nodes: impl IntoIterator<Item = HintNode>) {
        let s = &self.inner.shared;
        if !s.enabled {
            return;
        }
        let nodes: Vec<HintNode> = nodes.into_iter().collect();
        if nodes.is_empty() {
            return;
        }
        let scope = self.scope_here();
        s.emit(
            &scope.run,
            Message::GraphHint(mindgate_protocol::GraphHint {
                nodes,
                gap: None,
                extra: Map::new(),
            }),
        );
    }

    /// Emits one event in the current run (or the implicit run). Returns its `seq`,
    /// or `None` when the SDK is off.
    pub fn emit(&self, message: Message) -> Option<u64> {
        let s = &self.inner.shared;
        if !s.enabled {
            return None;
        }
        let run = Scope::run_of(self).unwrap_or_else(|| s.implicit_run());
        s.emit(&run, message)
    }

    /// A gate for hand-written integrations: ready at once unless the viewer
    /// wants this node to hold at `point`, then waits for its decision. Abort
    /// cancels the current run's token before returning.
    ///
    /// Detached, this is a load and a branch: no allocation, no lock. Attached
    /// with nothing to hold, it allocates nothing either.
    pub fn gate<'a>(&'a self, point: PausePoint, node: GateNode<'a>) -> Gate<'a> {
        let shared = &self.inner.shared;
        if !shared.attached.load(Ordering::Acquire) {
            return Gate::ready(Decision::Continue);
        }
        let verdict = shared.decide(point, node, || {
            Scope::run_of(self).unwrap_or_else(|| shared.implicit_run())
        });
        match verdict {
            Verdict::Open => Gate::ready(Decision::Continue),
            Verdict::Abort => Gate::ready(Decision::Abort),
            Verdict::Hold(run, reason, loop_info) => Gate {
                state: GateState::Held(Box::pin(async move {
                    shared
                        .hold(&run, point, node, reason, loop_info, None, None)
                        .await
                        .decision
                })),
            },
        }
    }

    /// Whether `other` is a handle on the same session.
    pub(crate) fn same_as(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The scope a node created here runs in.
    pub(crate) fn scope_here(&self) -> Scope {
        match Scope::current() {
            Some(scope) if Arc::ptr_eq(&scope.client.inner, &self.inner) => scope,
            _ => Scope {
                client: self.clone(),
                run: self.inner.shared.implicit_run(),
                parent: None,
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn client_is_send_and_sync() {
        fn is<T: Send + Sync>() {}
        is::<Client>();
    }
}
