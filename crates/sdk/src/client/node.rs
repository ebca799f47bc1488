//! Nodes and instances: the builder that wraps one execution of a place in the
//! code with `node.started` / `node.finished` / `node.error`, gates at
//! `before` / `after` / `error`, the four release actions, and token streaming.

use std::fmt::{Debug, Display};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mindgate_protocol::{
    HintNode, Message, NodeKind, NodeStatus, PausePoint, TokenChannel, TokenDelta, Usage,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::Shared;
use super::scope::Scope;
use crate::clock::{ms, ms_if_any};
use crate::error::Aborted;
use crate::gate::{Decision, EditGate, GateNode, InjectCheck, inject_check};
use crate::ids;
use crate::run::{RunRef, error_info};

/// A node about to execute. Build with [`crate::node`], [`crate::tool`],
/// [`crate::llm`], [`crate::step`] (or [`crate::Client::node`]), then [`Node::call`].
///
/// ```no_run
/// # async fn demo() -> Result<(), mindgate_sdk::Aborted> {
/// use mindgate_sdk::tool;
/// let args = serde_json::json!({"city": "Oslo"});
/// let forecast: String = tool("weather")
///     .input(&args)
///     .call(|_ctx| async { Ok::<_, mindgate_sdk::Aborted>("sunny".to_owned()) })
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a node does nothing until `.call(...)` is awaited"]
pub struct Node {
    kind: NodeKind,
    name: String,
    node_id: Option<String>,
    parent: Option<Option<String>>,
    input: Option<Value>,
    instance_id: Option<String>,
    collapsed: Option<bool>,
    /// `None` when the SDK is off: the body just runs.
    scope: Option<Scope>,
}

impl Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("node_id", &self.node_id)
            .finish_non_exhaustive()
    }
}

/// A node of `kind` named `name`, in the current run (or the global client's implicit run).
pub fn node(kind: NodeKind, name: impl Into<String>) -> Node {
    let scope = match Scope::current() {
        Some(scope) => Some(scope),
        None => {
            let client = crate::global();
            client.is_enabled().then(|| client.scope_here())
        }
    };
    Node::with_scope(kind, name.into(), scope)
}

/// A tool call: `tool:<name>`.
pub fn tool(name: impl Into<String>) -> Node {
    node(NodeKind::Tool, name)
}

/// A model call: `llm:<name>`; its instance id is `<runId>:s<N>`.
pub fn llm(name: impl Into<String>) -> Node {
    node(NodeKind::Llm, name)
}

/// The model step of an agent loop: `llm:step`, the id every GraphMind client uses.
pub fn step() -> Node {
    node(NodeKind::Llm, "step")
}

/// A chain of steps: `chain:<name>`.
pub fn chain(name: impl Into<String>) -> Node {
    node(NodeKind::Chain, name)
}

/// A retriever: `retriever:<name>`.
pub fn retriever(name: impl Into<String>) -> Node {
    node(NodeKind::Retriever, name)
}

/// Anything else: `custom:<name>`.
pub fn custom(name: impl Into<String>) -> Node {
    node(NodeKind::Custom, name)
}

/// A `graph.hint` entry for a node that will run later (`<kind>:<name>`).
pub fn hint(kind: NodeKind, name: impl Into<String>) -> HintNode {
    let name = name.into();
    HintNode {
        node_id: ids::node_id(kind, &name),
        kind,
        name,
        parent_id: Scope::current().and_then(|s| s.parent.map(|p| p.to_string())),
        extra: Map::new(),
    }
}

impl Node {
    pub(crate) fn with_scope(kind: NodeKind, name: String, scope: Option<Scope>) -> Node {
        Node {
            kind,
            name,
            node_id: None,
            parent: None,
            input: None,
            instance_id: None,
            collapsed: None,
            scope: scope.filter(|s| s.client.is_enabled()),
        }
    }

    /// Overrides the logical node id (default `<kind>:<name>`).
    pub fn id(mut self, node_id: impl Into<String>) -> Self {
        self.node_id = Some(node_id.into());
        self
    }

    /// Sets the parent node id (default: the enclosing node, or the run's agent node).
    pub fn parent(mut self, parent_id: impl Into<String>) -> Self {
        self.parent = Some(Some(parent_id.into()));
        self
    }

    /// Draws this node at the top level (no parent).
    pub fn root(mut self) -> Self {
        self.parent = Some(None);
        self
    }

    /// Sets this execution's instance id (e.g. a tool-call id). Default: unique.
    pub fn instance(mut self, instance_id: impl Into<String>) -> Self {
        self.instance_id = Some(instance_id.into());
        self
    }

    /// Records the input shown in the viewer (and fingerprinted by the loop guard).
    /// Serialised only when the SDK is on.
    pub fn input<I: Serialize + ?Sized>(mut self, input: &I) -> Self {
        if self.scope.is_some() {
            self.input = serde_json::to_value(input).ok();
        }
        self
    }

    /// Records an input that is already JSON.
    pub fn input_value(mut self, input: Value) -> Self {
        if self.scope.is_some() {
            self.input = Some(input);
        }
        self
    }

    /// Asks the viewer to draw this node's children folded.
    pub fn collapsed(mut self, collapsed: bool) -> Self {
        self.collapsed = Some(collapsed);
        self
    }

    /// Runs `body` as one instance of this node, with gates around it.
    ///
    /// * `before` gate: **inject** skips the body and returns the injected value;
    ///   **abort** returns [`Aborted`] without running it.
    /// * The body runs with a [`NodeCtx`] (tokens, usage) and stops early if the run
    ///   is aborted meanwhile.
    /// * `after` gate (step mode or an `after` breakpoint): **retry** runs the body
    ///   again, **inject** replaces the output.
    /// * `error` gate (when the body returns `Err`): **continue** returns the original
    ///   error untouched, **retry** runs the body again, **inject** swallows the error.
    ///
    /// An injected value that does not deserialise into `T` is refused with
    /// `exec.refused` (code `schema`, naming the type) and the gate keeps holding.
    /// With the SDK off, or detached with nothing armed, this is just `body(ctx).await`
    /// plus (when on) the events.
    pub async fn call<T, E, F, Fut>(self, body: F) -> Result<T, E>
    where
        F: FnMut(NodeCtx) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        T: Serialize + DeserializeOwned,
        E: From<Aborted> + Display + Debug,
    {
        self.call_gated(None, |_| {}, body).await
    }

    /// [`Node::call`] with the node's input handed to the body, so that a person
    /// can fix it while the call is held: on a tool node, the `before` gate is
    /// `editable`, and `exec.resume {action: "continue", input}` runs the body
    /// with the edited input (`exec.resumed.edited.after` records it). An edit
    /// of another JSON type than `input`'s is refused with `exec.refused`
    /// code `shape`, one that does not deserialise into `I` with `schema`
    /// (naming the type), `input` with another action with `unsupported`; the
    /// gate keeps holding. Records `input` as the node's input.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), mindgate_sdk::Aborted> {
    /// use mindgate_sdk::tool;
    /// #[derive(serde::Serialize, serde::Deserialize, Clone)]
    /// struct Query { city: String }
    /// let forecast: String = tool("weather")
    ///     .call_with_input(Query { city: "Oslo".into() }, |q, _ctx| async move {
    ///         Ok::<_, mindgate_sdk::Aborted>(format!("sunny in {}", q.city))
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_with_input<I, T, E, F, Fut>(self, input: I, mut body: F) -> Result<T, E>
    where
        I: Serialize + DeserializeOwned + Clone,
        F: FnMut(I, NodeCtx) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        T: Serialize + DeserializeOwned,
        E: From<Aborted> + Display + Debug,
    {
        if self.scope.is_none() {
            return body(input, NodeCtx { inner: None }).await;
        }
        let original = serde_json::to_value(&input).ok();
        let edit = match (&original, self.kind) {
            (Some(v), NodeKind::Tool) => Some(EditGate::of::<I>(v)),
            _ => None,
        };
        let mut node = self;
        node.input = original;
        let current = Mutex::new(input);
        let on_edit = |edited: Value| {
            // The gate checked that it deserialises before releasing.
            if let Ok(value) = I::deserialize(&edited) {
                *current.lock().unwrap_or_else(|p| p.into_inner()) = value;
            }
        };
        node.call_gated(edit, on_edit, |ctx| {
            let input = current.lock().unwrap_or_else(|p| p.into_inner()).clone();
            body(input, ctx)
        })
        .await
    }

    async fn call_gated<T, E, F, Fut>(
        self,
        edit: Option<EditGate>,
        mut on_edit: impl FnMut(Value),
        mut body: F,
    ) -> Result<T, E>
    where
        F: FnMut(NodeCtx) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        T: Serialize + DeserializeOwned,
        E: From<Aborted> + Display + Debug,
    {
        let Some(scope) = self.scope.clone() else {
            return body(NodeCtx { inner: None }).await;
        };
        if scope.run.cancel_token().is_cancelled() {
            return Err(Aborted.into());
        }
        let kind = self.kind;
        let (inst, name) = self.start(&scope);
        let ctx = NodeCtx {
            inner: Some(inst.clone()),
        };
        let child = Scope {
            client: scope.client.clone(),
            run: scope.run.clone(),
            parent: Some(Arc::from(inst.node_id.as_str())),
        };
        let mut execution = Execution {
            shared: inst.shared.clone(),
            run: scope.run.clone(),
            gate_node: GateNode {
                node_id: &inst.node_id,
                kind,
                name: &name,
            },
            inst: &inst,
            held: Duration::ZERO,
            edit,
            edited: None,
        };
        loop {
            if let Next::Return(result) = execution.before::<T, E>().await {
                return result;
            }
            if let Some(edited) = execution.edited.take() {
                on_edit(edited);
            }
            inst.attempts.fetch_add(1, Ordering::Relaxed);
            let attempt = child.clone().enter(body(ctx.clone()));
            let cancel = scope.run.cancel_token().clone();
            let result = tokio::select! {
                biased;
                r = attempt => Some(r),
                _ = cancel.cancelled() => None,
            };
            let next = match result {
                None => Next::Return(execution.aborted()),
                Some(Ok(out)) => execution.after(out).await,
                Some(Err(error)) => execution.on_error(error).await,
            };
            if let Next::Return(result) = next {
                return result;
            }
        }
    }

    /// Emits `node.started` for a new instance (feeding the loop guard) and
    /// returns the instance with the node's name.
    fn start(self, scope: &Scope) -> (Arc<Instance>, String) {
        let run = &scope.run;
        let shared = scope.client.shared().clone();
        let kind = self.kind;
        let node_id = self
            .node_id
            .unwrap_or_else(|| ids::node_id(kind, &self.name));
        let instance_id = self.instance_id.unwrap_or_else(|| match kind {
            NodeKind::Llm => format!("{}:s{}", run.id(), run.next_step()),
            _ => ids::next_id("call"),
        });
        let parent_id = match self.parent {
            Some(explicit) => explicit,
            None => scope
                .parent
                .as_deref()
                .filter(|p| *p != node_id)
                .map(str::to_owned),
        };
        let watched = shared.loop_guard.applies_to(kind, &node_id, &self.name);
        let fingerprint =
            watched.then(|| shared.loop_guard.fingerprint(&node_id, self.input.as_ref()));
        let seq = shared.emit(
            run,
            Message::NodeStarted(mindgate_protocol::NodeStarted {
                node_id: node_id.clone(),
                parent_id,
                kind,
                name: self.name.clone(),
                instance_id: instance_id.clone(),
                input: self.input,
                collapsed: self.collapsed,
                redaction: None,
                extra: Map::new(),
            }),
        );
        if let (Some(fp), Some(seq)) = (fingerprint, seq)
            && let Some(rec) = shared.loop_guard.record(run.id(), kind, &node_id, fp, seq)
            && rec.at_threshold
        {
            shared.loop_warning(run, kind, &node_id, rec.repeats);
        }
        let inst = Arc::new(Instance {
            shared,
            run: run.clone(),
            node_id,
            instance_id,
            pending: Mutex::new(Vec::new()),
            scheduled: AtomicBool::new(false),
            usage: Mutex::new(None),
            finish_reason: Mutex::new(None),
            attempts: AtomicU32::new(0),
            started: Instant::now(),
        });
        (inst, self.name)
    }
}

/// What a gate decided for a [`Node::call`]: return this result, or run the body (again).
enum Next<T, E> {
    Return(Result<T, E>),
    RunBody,
}

/// One [`Node::call`] across its attempts: its instance, gates and time held.
struct Execution<'a> {
    shared: Arc<Shared>,
    run: RunRef,
    inst: &'a Arc<Instance>,
    gate_node: GateNode<'a>,
    held: Duration,
    /// The `before` gate takes an edited input.
    edit: Option<EditGate>,
    /// An edited input the `before` gate released with.
    edited: Option<Value>,
}

impl Execution<'_> {
    /// Holds at `point` if a breakpoint or step mode says so; adds the time held.
    async fn gate<T: DeserializeOwned>(&mut self, point: PausePoint) -> Decision {
        let check: Option<InjectCheck> = Some(inject_check::<T>);
        let edit = self.edit.filter(|_| point == PausePoint::Before);
        let gated = self
            .shared
            .gate(&self.run, point, self.gate_node, check, edit)
            .await;
        self.held += gated.held;
        if gated.input.is_some() {
            self.edited = gated.input;
        }
        gated.decision
    }

    /// Emits `node.finished` with `status`.
    fn finish(&self, output: Option<Value>, status: NodeStatus, flags: &[&str]) {
        self.inst.finish(output, status, self.held, flags);
    }

    /// Finishes as aborted.
    fn aborted<T, E: From<Aborted>>(&self) -> Result<T, E> {
        self.finish(None, NodeStatus::Aborted, &[]);
        Err(Aborted.into())
    }

    /// The `before` gate: abort, inject (skipping the body) or run it.
    async fn before<T: Serialize + DeserializeOwned, E: From<Aborted>>(&mut self) -> Next<T, E> {
        match self.gate::<T>(PausePoint::Before).await {
            Decision::Abort => Next::Return(self.aborted()),
            Decision::Inject(value) => match T::deserialize(&value) {
                Ok(out) => {
                    self.finish(Some(value), NodeStatus::Ok, &["injected"]);
                    Next::Return(Ok(out))
                }
                Err(e) => {
                    self.inst.inject_failed(&e);
                    Next::RunBody
                }
            },
            Decision::Continue | Decision::Retry => Next::RunBody,
        }
    }

    /// The `after` gate of a body that returned `out`: keep, retry, inject or abort.
    async fn after<T: Serialize + DeserializeOwned, E: From<Aborted>>(
        &mut self,
        out: T,
    ) -> Next<T, E> {
        match self.gate::<T>(PausePoint::After).await {
            Decision::Continue => {
                self.finish(output_value(&out), NodeStatus::Ok, &[]);
                Next::Return(Ok(out))
            }
            Decision::Retry => Next::RunBody,
            Decision::Inject(value) => match T::deserialize(&value) {
                Ok(injected) => {
                    self.finish(Some(value), NodeStatus::Ok, &["injected"]);
                    Next::Return(Ok(injected))
                }
                Err(e) => {
                    self.inst.inject_failed(&e);
                    self.finish(output_value(&out), NodeStatus::Ok, &[]);
                    Next::Return(Ok(out))
                }
            },
            Decision::Abort => {
                self.finish(output_value(&out), NodeStatus::Aborted, &[]);
                Next::Return(Err(Aborted.into()))
            }
        }
    }

    /// A body that returned `error`: emits `node.error`, then the `error` gate:
    /// continue (the error stands), retry, inject (swallowing it) or abort.
    async fn on_error<T: Serialize + DeserializeOwned, E: From<Aborted> + Display + Debug>(
        &mut self,
        error: E,
    ) -> Next<T, E> {
        if self.run.cancel_token().is_cancelled() {
            // An abort surfacing from inside: terminal, never gated or retried.
            self.finish(None, NodeStatus::Aborted, &[]);
            return Next::Return(Err(error));
        }
        self.inst.flush_tokens();
        self.shared.emit(
            &self.run,
            Message::NodeError(mindgate_protocol::NodeError {
                node_id: self.inst.node_id.clone(),
                instance_id: Some(self.inst.instance_id.clone()),
                error: error_info(&error),
                held_ms: ms_if_any(self.held),
                extra: Map::new(),
            }),
        );
        match self.gate::<T>(PausePoint::Error).await {
            Decision::Continue => {
                self.finish(None, NodeStatus::Error, &[]);
                Next::Return(Err(error))
            }
            Decision::Retry => Next::RunBody,
            Decision::Inject(value) => match T::deserialize(&value) {
                Ok(out) => {
                    self.finish(
                        Some(value),
                        NodeStatus::Ok,
                        &["injected", "recoveredFromError"],
                    );
                    Next::Return(Ok(out))
                }
                Err(e) => {
                    self.inst.inject_failed(&e);
                    self.finish(None, NodeStatus::Error, &[]);
                    Next::Return(Err(error))
                }
            },
            Decision::Abort => Next::Return(self.aborted()),
        }
    }
}

fn output_value<T: Serialize>(out: &T) -> Option<Value> {
    serde_json::to_value(out).ok().filter(|v| !v.is_null())
}

/// One execution of a node, shared with its [`NodeCtx`] and the token flusher.
struct Instance {
    shared: Arc<Shared>,
    run: RunRef,
    node_id: String,
    instance_id: String,
    pending: Mutex<Vec<TokenDelta>>,
    scheduled: AtomicBool,
    usage: Mutex<Option<Usage>>,
    finish_reason: Mutex<Option<String>>,
    attempts: AtomicU32,
    started: Instant,
}

impl Instance {
    fn push(self: &Arc<Self>, channel: TokenChannel, text: &str) {
        if text.is_empty() {
            return;
        }
        {
            let Ok(mut pending) = self.pending.lock() else {
                return;
            };
            // Consecutive deltas of one channel travel as one.
            match pending.last_mut() {
                Some(last) if last.t == channel => last.v.push_str(text),
                _ => pending.push(TokenDelta {
                    t: channel,
                    v: text.to_owned(),
                    extra: Map::new(),
                }),
            }
        }
        if self.scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        match self.shared.runtime.get() {
            Some(rt) => {
                let me = self.clone();
                let every = self.shared.config.token_interval;
                rt.spawn(async move {
                    tokio::time::sleep(every).await;
                    me.scheduled.store(false, Ordering::Release);
                    me.flush_tokens();
                });
            }
            None => {
                self.scheduled.store(false, Ordering::Release);
                self.flush_tokens();
            }
        }
    }

    fn flush_tokens(&self) {
        let deltas = match self.pending.lock() {
            Ok(mut p) if !p.is_empty() => std::mem::take(&mut *p),
            _ => return,
        };
        self.shared.emit(
            &self.run,
            Message::NodeToken(mindgate_protocol::NodeToken {
                node_id: self.node_id.clone(),
                instance_id: Some(self.instance_id.clone()),
                deltas,
                extra: Map::new(),
            }),
        );
    }

    fn finish(&self, output: Option<Value>, status: NodeStatus, held: Duration, flags: &[&str]) {
        self.flush_tokens();
        let usage = self.usage.lock().ok().and_then(|mut u| u.take());
        let finish_reason = self.finish_reason.lock().ok().and_then(|mut r| r.take());
        let mut extra = Map::new();
        for flag in flags {
            extra.insert((*flag).to_owned(), Value::Bool(true));
        }
        self.shared.emit(
            &self.run,
            Message::NodeFinished(mindgate_protocol::NodeFinished {
                node_id: self.node_id.clone(),
                instance_id: Some(self.instance_id.clone()),
                output,
                usage,
                duration_ms: ms(self.started.elapsed()),
                status,
                held_ms: ms_if_any(held),
                finish_reason,
                extra,
            }),
        );
    }

    fn inject_failed(&self, e: &serde_json::Error) {
        self.shared.warner.warn(
            "inject",
            &format!(
                "an injected value for {} could not be used ({e}); continuing normally",
                self.node_id
            ),
        );
    }
}

/// What a node's body gets: token streaming, usage, and its identity.
/// Cheap to clone; every method is a no-op when the SDK is off.
#[derive(Clone, Default)]
pub struct NodeCtx {
    inner: Option<Arc<Instance>>,
}

impl Debug for NodeCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeCtx")
            .field("node_id", &self.node_id())
            .field("instance_id", &self.instance_id())
            .finish()
    }
}

impl NodeCtx {
    /// Streams model text (batched into `node.token` about every 34 ms).
    pub fn token(&self, text: &str) {
        self.delta(TokenChannel::Text, text);
    }

    /// Streams reasoning text.
    pub fn reasoning(&self, text: &str) {
        self.delta(TokenChannel::Reasoning, text);
    }

    /// Streams tool-call arguments.
    pub fn tool_args(&self, text: &str) {
        self.delta(TokenChannel::ToolArgs, text);
    }

    /// Streams a delta on any channel.
    pub fn delta(&self, channel: TokenChannel, text: &str) {
        if let Some(inst) = &self.inner {
            inst.push(channel, text);
        }
    }

    /// Records token usage, reported on `node.finished`.
    pub fn set_usage(&self, usage: Usage) {
        if let Some(inst) = &self.inner
            && let Ok(mut u) = inst.usage.lock()
        {
            *u = Some(usage);
        }
    }

    /// Records input/output token counts.
    pub fn usage(&self, input_tokens: u64, output_tokens: u64) {
        self.set_usage(Usage {
            input_tokens,
            output_tokens,
            ..Default::default()
        });
    }

    /// Records why a model call stopped (`stop`, `length`, `tool-calls`, …),
    /// reported as `finishReason` on `node.finished`.
    pub fn finish_reason(&self, reason: impl Into<String>) {
        if let Some(inst) = &self.inner
            && let Ok(mut r) = inst.finish_reason.lock()
        {
            *r = Some(reason.into());
        }
    }

    /// The logical node id (`None` when the SDK is off).
    pub fn node_id(&self) -> Option<&str> {
        self.inner.as_deref().map(|i| i.node_id.as_str())
    }

    /// This execution's instance id (`None` when the SDK is off).
    pub fn instance_id(&self) -> Option<&str> {
        self.inner.as_deref().map(|i| i.instance_id.as_str())
    }

    /// Which attempt of the body this is (1 first, 2 after one retry…; 1 when off).
    pub fn attempt(&self) -> u32 {
        self.inner
            .as_deref()
            .map(|i| i.attempts.load(Ordering::Relaxed).max(1))
            .unwrap_or(1)
    }
}
