//! Live run graphs for `/ws/ui` viewers that subscribe to a run (the default;
//! see `docs/ui-feed.md`): the server folds a run's events once
//! with `store::projection` and sends each viewer a snapshot of the graph, then
//! one delta of changed node summaries and instances per committed batch.
//!
//! One [`LiveGraph`] per run, shared by every viewer of it: it is built from the
//! stored history once (when its first viewer subscribes), fed each committed
//! batch once, serializes each delta once for all its viewers, and keeps the
//! serialized snapshot until the next change, so viewers arriving together share
//! one. When its last viewer leaves it stops following the commits but is kept
//! (idle), so reopening the run costs only the events since; idle graphs are
//! dropped least recently used first to keep the [`LiveGraphBounds`].
//!
//! Gap-free and duplicate-free: the builder subscribes to the commit feed before
//! it reads history and skips events at or below the last `seq` it applied; a
//! viewer takes its snapshot and subscribes to the deltas under the same lock
//! the builder holds while it applies a batch and sends its delta.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::extract::ws::Utf8Bytes;
use mindgate_store::{Committed, GraphDelta, RunProjection, RunStore, StoredEvent};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

/// Deltas a viewer may fall behind before it is sent a fresh snapshot.
const DELTA_CAPACITY: usize = 1_024;

/// How much the live graphs may hold (`docs/http-api.md#limits`): each keeps
/// its run's projection in memory, about 1.4 KB of RSS per node or instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveGraphBounds {
    /// Most runs with a live graph at once, followed or idle.
    pub max_runs: usize,
    /// Most nodes plus instances held by all live graphs. Idle graphs are
    /// dropped (least recently used first) to stay under it; a run not yet
    /// followed is refused while the followed ones hold this much.
    pub max_items: usize,
}

impl Default for LiveGraphBounds {
    fn default() -> Self {
        LiveGraphBounds {
            max_runs: 64,
            max_items: 200_000,
        }
    }
}

/// Why a viewer got no live graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscribeRefusal {
    /// [`LiveGraphBounds::max_runs`] other runs are followed.
    TooManyRuns,
    /// The followed runs' graphs hold [`LiveGraphBounds::max_items`].
    TooBig,
    /// The server is shutting down.
    ShuttingDown,
}

/// The live graphs of the runs viewers follow (and of some they followed).
#[derive(Debug, Default)]
pub struct LiveGraphs {
    runs: Mutex<HashMap<String, Arc<LiveGraph>>>,
    bounds: LiveGraphBounds,
    /// Ticks of use, for least-recently-used eviction.
    clock: AtomicU64,
}

/// One run's shared projection.
#[derive(Debug)]
pub struct LiveGraph {
    run_id: String,
    inner: Mutex<Inner>,
    deltas: broadcast::Sender<Arc<str>>,
    /// `true` once the stored history is applied.
    ready: watch::Receiver<bool>,
    /// Viewers holding a [`GraphSubscription`].
    viewers: Mutex<usize>,
    /// Stops the current builder (once the last viewer left); a new one per follow.
    stop: Mutex<CancellationToken>,
    /// Nodes plus instances held, as of the last applied batch.
    items: AtomicUsize,
    /// When the graph was last left by a viewer (a [`LiveGraphs`] clock tick).
    last_used: AtomicU64,
    /// What a builder reads from.
    source: Source,
}

/// Where a live graph's builder reads the run's events.
#[derive(Debug, Clone)]
struct Source {
    store: Arc<RunStore>,
    feed: broadcast::Sender<Arc<Committed>>,
    shutdown: CancellationToken,
}

#[derive(Debug)]
struct Inner {
    projection: RunProjection,
    last_seq: Option<u64>,
    /// The serialized `graph.snapshot` messages of the current state, once
    /// asked for (shared by its viewers' sockets without a copy).
    snapshot: Option<Snapshot>,
    /// Tells the first viewers the history is applied (set by the first builder that got through it).
    ready: watch::Sender<bool>,
}

/// A graph as `graph.snapshot` messages of [`SNAPSHOT_CHUNK_NODES`] nodes each.
pub type Snapshot = Arc<[Utf8Bytes]>;

/// Nodes per `graph.snapshot` message: a viewer's socket buffers one chunk at a
/// time, and the page parses one at a time between other work.
pub const SNAPSHOT_CHUNK_NODES: usize = 500;

/// A viewer's subscription: the snapshot it starts from and the deltas after it.
/// Dropping it leaves the run's live graph (the last viewer drops the graph).
#[derive(Debug)]
pub struct GraphSubscription {
    /// The run.
    pub run_id: String,
    /// The `graph.snapshot` message texts, in order.
    pub snapshot: Snapshot,
    /// The `graph.delta` message texts after the snapshot, in order.
    pub deltas: broadcast::Receiver<Arc<str>>,
    graphs: Arc<LiveGraphs>,
    graph: Arc<LiveGraph>,
}

impl Drop for GraphSubscription {
    fn drop(&mut self) {
        let mut runs = lock(&self.graphs.runs);
        let mut viewers = lock(&self.graph.viewers);
        *viewers = viewers.saturating_sub(1);
        if *viewers == 0 {
            // Idle: stop following the commits, keep the graph (not its
            // serialized snapshot) while the bounds allow.
            lock(&self.graph.stop).cancel();
            lock(&self.graph.inner).snapshot = None;
            self.graph
                .last_used
                .store(self.graphs.tick(), Ordering::Relaxed);
            drop(viewers);
            self.graphs.evict_idle(&mut runs, 0);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LiveGraphs {
    /// No live graph yet, within `bounds`.
    pub fn new(bounds: LiveGraphBounds) -> LiveGraphs {
        LiveGraphs {
            runs: Mutex::default(),
            bounds,
            clock: AtomicU64::new(0),
        }
    }

    /// The bounds kept.
    pub fn bounds(&self) -> LiveGraphBounds {
        self.bounds
    }

    /// Live graphs being kept (followed or idle).
    pub fn len(&self) -> usize {
        lock(&self.runs).len()
    }

    /// Nodes plus instances held by all live graphs.
    pub fn items(&self) -> usize {
        held(&lock(&self.runs))
    }

    /// Drops the idle graph of a run that was deleted (a followed one ends with its viewers).
    pub fn forget_idle(&self, run_id: &str) {
        let mut runs = lock(&self.runs);
        if runs.get(run_id).is_some_and(|g| *lock(&g.viewers) == 0) {
            runs.remove(run_id);
        }
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// Drops idle graphs, least recently used first, until `room` more runs
    /// fit under [`LiveGraphBounds::max_runs`] and the graphs hold less than
    /// [`LiveGraphBounds::max_items`] (none at all when `room` is 0 and they fit).
    fn evict_idle(&self, runs: &mut HashMap<String, Arc<LiveGraph>>, room: usize) {
        let mut idle: Vec<(u64, String)> = runs
            .iter()
            .filter(|(_, g)| *lock(&g.viewers) == 0)
            .map(|(id, g)| (g.last_used.load(Ordering::Relaxed), id.clone()))
            .collect();
        idle.sort_unstable();
        let mut items = held(runs);
        let over = |runs: usize, items: usize| {
            runs + room > self.bounds.max_runs
                || (room > 0 && items >= self.bounds.max_items)
                || items > self.bounds.max_items
        };
        for (_, id) in idle {
            if !over(runs.len(), items) {
                break;
            }
            if let Some(g) = runs.remove(&id) {
                items = items.saturating_sub(g.items.load(Ordering::Relaxed));
                tracing::debug!(run = %id, "dropped an idle live graph");
            }
        }
    }

    /// Whether no live graph is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Subscribes a viewer to `run_id`'s live graph (built from the store on
    /// first use, followed again if it was idle), unless a new graph does not
    /// fit the [`LiveGraphBounds`] or the server shut down before the history
    /// was read.
    pub async fn subscribe(
        self: &Arc<Self>,
        store: &Arc<RunStore>,
        feed: &broadcast::Sender<Arc<Committed>>,
        shutdown: &CancellationToken,
        run_id: &str,
    ) -> Result<GraphSubscription, SubscribeRefusal> {
        let graph = {
            let mut runs = lock(&self.runs);
            let graph = match runs.get(run_id) {
                Some(g) => Arc::clone(g),
                None => {
                    self.evict_idle(&mut runs, 1);
                    if runs.len() >= self.bounds.max_runs {
                        return Err(SubscribeRefusal::TooManyRuns);
                    }
                    if held(&runs) >= self.bounds.max_items {
                        return Err(SubscribeRefusal::TooBig);
                    }
                    let source = Source {
                        store: Arc::clone(store),
                        feed: feed.clone(),
                        shutdown: shutdown.clone(),
                    };
                    let g = LiveGraph::new(run_id, source);
                    runs.insert(run_id.to_owned(), Arc::clone(&g));
                    g
                }
            };
            let mut viewers = lock(&graph.viewers);
            if *viewers == 0 {
                graph.follow();
            }
            *viewers += 1;
            drop(viewers);
            graph
        };
        // From here on, dropping `sub` (on any early return) leaves the graph.
        let mut sub = GraphSubscription {
            run_id: run_id.to_owned(),
            snapshot: Arc::from(Vec::new()),
            deltas: graph.deltas.subscribe(),
            graphs: Arc::clone(self),
            graph: Arc::clone(&graph),
        };
        let mut ready = graph.ready.clone();
        tokio::select! {
            _ = shutdown.cancelled() => return Err(SubscribeRefusal::ShuttingDown),
            r = ready.wait_for(|r| *r) => r.map(|_| ()).map_err(|_| SubscribeRefusal::ShuttingDown)?,
        };
        let (snapshot, deltas) = tokio::task::spawn_blocking(move || graph.snapshot())
            .await
            .map_err(|_| SubscribeRefusal::ShuttingDown)?;
        sub.snapshot = snapshot;
        sub.deltas = deltas;
        Ok(sub)
    }
}

/// Nodes plus instances held by `runs`' graphs.
fn held(runs: &HashMap<String, Arc<LiveGraph>>) -> usize {
    runs.values().map(|g| g.items.load(Ordering::Relaxed)).sum()
}

impl LiveGraph {
    fn new(run_id: &str, source: Source) -> Arc<LiveGraph> {
        let (deltas, _) = broadcast::channel(DELTA_CAPACITY);
        let (ready_tx, ready) = watch::channel(false);
        Arc::new(LiveGraph {
            run_id: run_id.to_owned(),
            inner: Mutex::new(Inner {
                projection: RunProjection::for_graph(run_id),
                last_seq: None,
                snapshot: None,
                ready: ready_tx,
            }),
            deltas,
            ready,
            viewers: Mutex::new(0),
            stop: Mutex::new(CancellationToken::new()),
            items: AtomicUsize::new(0),
            last_used: AtomicU64::new(0),
            source,
        })
    }

    /// Starts a builder: it catches up from the store, then follows the commits
    /// until the graph is left (its viewers gone) or the server shuts down.
    fn follow(self: &Arc<Self>) {
        let stop = self.source.shutdown.child_token();
        *lock(&self.stop) = stop.clone();
        // Subscribe before reading history: every later commit reaches the builder.
        let live = self.source.feed.subscribe();
        tokio::spawn(Arc::clone(self).build(live, stop));
    }

    /// Applies the stored events after the last applied one, then every
    /// committed batch, until stopped.
    async fn build(
        self: Arc<Self>,
        mut live: broadcast::Receiver<Arc<Committed>>,
        stop: CancellationToken,
    ) {
        let me = Arc::clone(&self);
        let loaded = tokio::task::spawn_blocking(move || {
            me.catch_up(&me.source.store);
            let mut inner = lock(&me.inner);
            inner.projection.track_changes();
            inner.ready.send_replace(true);
        })
        .await;
        if loaded.is_err() {
            return;
        }
        let store = Arc::clone(&self.source.store);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                batch = live.recv() => match batch {
                    Ok(batch) if !batch.resync => self.apply_batch(&batch.events),
                    Err(RecvError::Closed) => return,
                    // A lag, or a resync marker (another instance's commits may have been
                    // missed): catch up from the store.
                    Ok(_) | Err(RecvError::Lagged(_)) => {
                        tracing::debug!(run = %self.run_id, "live graph may have missed commits; catching up from the store");
                        let me = Arc::clone(&self);
                        let store = Arc::clone(&store);
                        if tokio::task::spawn_blocking(move || me.catch_up(&store)).await.is_err() {
                            return;
                        }
                    }
                },
            }
        }
    }

    /// Applies the stored events after the last applied `seq` (one delta for all).
    fn catch_up(&self, store: &RunStore) {
        loop {
            let after = lock(&self.inner).last_seq;
            let page = match store.events(&self.run_id, after, Some(mindgate_store::MAX_EVENT_PAGE))
            {
                Ok(Some(page)) => page,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(run = %self.run_id, error = %mindgate_errors::error_chain(&e), "live graph could not read the run's events");
                    return;
                }
            };
            self.apply_batch(&page.events);
            if !page.has_more {
                return;
            }
        }
    }

    /// Applies this run's new events and sends their delta to every viewer.
    fn apply_batch(&self, events: &[StoredEvent]) {
        let mut inner = lock(&self.inner);
        let mut applied = false;
        for ev in events {
            if ev.run_id != self.run_id || inner.last_seq.is_some_and(|l| ev.seq <= l) {
                continue;
            }
            inner
                .projection
                .apply_event(&ev.type_name, ev.seq, ev.ts, ev.payload.get());
            inner.last_seq = Some(ev.seq);
            applied = true;
        }
        if !applied {
            return;
        }
        inner.snapshot = None;
        self.items.store(
            inner.projection.node_count() + inner.projection.instance_count(),
            Ordering::Relaxed,
        );
        // A batch whose events changed nothing (say, only `run.finished`) still
        // tells its viewers how far the graph is.
        let delta = inner.projection.take_delta().unwrap_or(GraphDelta {
            nodes: Vec::new(),
            instances: Vec::new(),
        });
        let msg = json!({
            "type": "graph.delta",
            "runId": self.run_id,
            "seq": inner.last_seq,
            "nodes": delta.nodes,
            "instances": delta.instances,
            "times": inner.projection.times(),
        });
        // No receiver (every viewer is between subscribing and its snapshot) is fine.
        let _ = self.deltas.send(Arc::from(msg.to_string()));
    }

    /// The current snapshot (serialized once per state) and a delta receiver
    /// that starts right after it.
    fn snapshot(&self) -> (Snapshot, broadcast::Receiver<Arc<str>>) {
        let mut inner = lock(&self.inner);
        let deltas = self.deltas.subscribe();
        if let Some(s) = &inner.snapshot {
            return (Arc::clone(s), deltas);
        }
        let seq = inner
            .last_seq
            .map_or_else(|| "null".to_owned(), |s| s.to_string());
        let run_id = serde_json::Value::from(self.run_id.as_str());
        let count = inner.projection.node_count();
        let mut parts = Vec::with_capacity(count.div_ceil(SNAPSHOT_CHUNK_NODES).max(1));
        let mut start = 0;
        loop {
            let end = (start + SNAPSHOT_CHUNK_NODES).min(count);
            let mut out =
                format!(r#"{{"type":"graph.snapshot","runId":{run_id},"seq":{seq},"nodes":"#)
                    .into_bytes();
            let written = inner.projection.write_nodes_json(start..end, &mut out);
            let times = serde_json::to_string(&inner.projection.times())
                .unwrap_or_else(|_| "null".to_owned());
            out.extend_from_slice(format!(r#","times":{times}"#).as_bytes());
            out.extend_from_slice(if end < count {
                br#","more":true}"#
            } else {
                br#","more":false}"#
            });
            match written
                .ok()
                .and_then(|()| Utf8Bytes::try_from(Bytes::from(out)).ok())
            {
                Some(text) => parts.push(text),
                None => {
                    tracing::warn!(run = %self.run_id, "the live graph snapshot did not serialize");
                    parts = vec![Utf8Bytes::from_static(
                        r#"{"type":"error","code":"internal","message":"the graph snapshot did not serialize"}"#,
                    )];
                    break;
                }
            }
            if end >= count {
                break;
            }
            start = end;
        }
        let snapshot: Snapshot = Arc::from(parts);
        inner.snapshot = Some(Arc::clone(&snapshot));
        (snapshot, deltas)
    }
}
