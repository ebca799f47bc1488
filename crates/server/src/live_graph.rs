//! Live run graphs for `/ws/ui` viewers that subscribe with `projection: true`
//! (experimental, see `docs/ui-feed.md`): the server folds a run's events once
//! with `store::projection` and sends each viewer a snapshot of the graph, then
//! one delta of changed node summaries and instances per committed batch.
//!
//! One [`LiveGraph`] per run, shared by every viewer of it: it is built from the
//! stored history once (when its first viewer subscribes), fed each committed
//! batch once, serializes each delta once for all its viewers, and keeps the
//! serialized snapshot until the next change, so viewers arriving together share
//! one. It is dropped with its last viewer.
//!
//! Gap-free and duplicate-free: the builder subscribes to the commit feed before
//! it reads history and skips events at or below the last `seq` it applied; a
//! viewer takes its snapshot and subscribes to the deltas under the same lock
//! the builder holds while it applies a batch and sends its delta.

use std::collections::HashMap;
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

/// Most runs with a live graph at once (each holds its run's projection in memory).
pub const MAX_LIVE_GRAPHS: usize = 4;

/// Why a viewer got no live graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscribeRefusal {
    /// [`MAX_LIVE_GRAPHS`] other runs have one.
    TooManyRuns,
    /// The server is shutting down.
    ShuttingDown,
}

/// The live graphs of the runs viewers watch in projection mode.
#[derive(Debug, Default)]
pub struct LiveGraphs {
    runs: Mutex<HashMap<String, Arc<LiveGraph>>>,
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
    /// Stops the builder once the last viewer left.
    stop: CancellationToken,
}

#[derive(Debug)]
struct Inner {
    projection: RunProjection,
    last_seq: Option<u64>,
    /// The serialized `graph.snapshot` messages of the current state, once
    /// asked for (shared by its viewers' sockets without a copy).
    snapshot: Option<Snapshot>,
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
            self.graph.stop.cancel();
            if runs
                .get(&self.run_id)
                .is_some_and(|g| Arc::ptr_eq(g, &self.graph))
            {
                runs.remove(&self.run_id);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LiveGraphs {
    /// Live graphs being kept (one per run with viewers).
    pub fn len(&self) -> usize {
        lock(&self.runs).len()
    }

    /// Whether no live graph is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Subscribes a viewer to `run_id`'s live graph (built from the store on
    /// first use), unless [`MAX_LIVE_GRAPHS`] other runs have one or the server
    /// shut down before the history was read.
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
                None if runs.len() >= MAX_LIVE_GRAPHS => return Err(SubscribeRefusal::TooManyRuns),
                None => {
                    let g = LiveGraph::start(run_id, Arc::clone(store), feed, shutdown);
                    runs.insert(run_id.to_owned(), Arc::clone(&g));
                    g
                }
            };
            *lock(&graph.viewers) += 1;
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

impl LiveGraph {
    fn start(
        run_id: &str,
        store: Arc<RunStore>,
        feed: &broadcast::Sender<Arc<Committed>>,
        shutdown: &CancellationToken,
    ) -> Arc<LiveGraph> {
        let (deltas, _) = broadcast::channel(DELTA_CAPACITY);
        let (ready_tx, ready) = watch::channel(false);
        let graph = Arc::new(LiveGraph {
            run_id: run_id.to_owned(),
            inner: Mutex::new(Inner {
                projection: RunProjection::for_graph(run_id),
                last_seq: None,
                snapshot: None,
            }),
            deltas,
            ready,
            viewers: Mutex::new(0),
            stop: shutdown.child_token(),
        });
        // Subscribe before reading history: every later commit reaches the builder.
        let live = feed.subscribe();
        tokio::spawn(Arc::clone(&graph).build(store, live, ready_tx));
        graph
    }

    /// Applies the stored history, then every committed batch, until stopped.
    async fn build(
        self: Arc<Self>,
        store: Arc<RunStore>,
        mut live: broadcast::Receiver<Arc<Committed>>,
        ready: watch::Sender<bool>,
    ) {
        let me = Arc::clone(&self);
        let history = Arc::clone(&store);
        let loaded = tokio::task::spawn_blocking(move || {
            me.catch_up(&history);
            lock(&me.inner).projection.track_changes();
        })
        .await;
        if loaded.is_err() {
            return;
        }
        let _ = ready.send(true);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                batch = live.recv() => match batch {
                    Ok(batch) => self.apply_batch(&batch.events),
                    Err(RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, run = %self.run_id, "live graph fell behind; catching up from the store");
                        let me = Arc::clone(&self);
                        let store = Arc::clone(&store);
                        if tokio::task::spawn_blocking(move || me.catch_up(&store)).await.is_err() {
                            return;
                        }
                    }
                    Err(RecvError::Closed) => return,
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
