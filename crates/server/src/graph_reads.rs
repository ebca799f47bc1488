//! Bounded `GET /api/runs/{id}/graph`: the heavy read of the API.
//!
//! Building a run's graph reads every event of the run, so unauthenticated
//! readers could take the server down by asking for a big run many times at
//! once. Here:
//!
//! * concurrent readers of the same run state share one build: the result is
//!   cached per run, keyed by its event count and last `seq`, and a reader that
//!   arrives while it is being built waits for that build;
//! * at most [`MAX_GRAPH_BUILDS`] builds run at once; a reader that cannot get
//!   a build slot within [`GRAPH_BUILD_WAIT`] is answered `503` with
//!   `Retry-After`;
//! * at most [`GRAPH_CACHE_RUNS`] runs' graphs are kept, each for at most
//!   [`GRAPH_CACHE_TTL`] after it was built;
//! * the answer is streamed: nodes are serialized [`STREAM_CHUNK_NODES`] at a
//!   time from the shared graph, so a reader costs one chunk, not a copy of
//!   the JSON; `?limit&after` pages the nodes.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use mindgate_store::projection::{GraphEdge, GraphNode};
use mindgate_store::{RunGraph, RunStore};
use serde::Serialize;
use tokio::sync::{OnceCell, Semaphore};

/// Most graph builds running at once.
pub const MAX_GRAPH_BUILDS: usize = 2;
/// How long a reader waits for a build slot before it is answered `503`.
pub const GRAPH_BUILD_WAIT: Duration = Duration::from_secs(10);
/// Runs whose built graph is kept.
pub const GRAPH_CACHE_RUNS: usize = 2;
/// How long a built graph is kept.
pub const GRAPH_CACHE_TTL: Duration = Duration::from_secs(30);
/// Largest page of nodes (`?limit`).
pub const MAX_GRAPH_PAGE: usize = 10_000;
/// Nodes (or edges) serialized per chunk of a streamed answer.
pub const STREAM_CHUNK_NODES: usize = 1_000;

/// A built graph, shared by its readers.
#[derive(Debug)]
pub struct BuiltGraph {
    /// The graph.
    pub graph: RunGraph,
}

/// Why a graph could not be read.
#[derive(Debug)]
pub enum GraphReadError {
    /// No such run.
    NotFound,
    /// Every build slot stayed busy for [`GRAPH_BUILD_WAIT`].
    Busy,
    /// The store failed (or the build task did).
    Failed(crate::error::ApiError),
}

/// What identifies one state of a run's graph.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StateKey {
    run_id: String,
    events: u64,
    last_seq: Option<u64>,
}

#[derive(Debug)]
struct Entry {
    key: StateKey,
    created: Instant,
    cell: Arc<OnceCell<Arc<BuiltGraph>>>,
}

/// The shared build slots and cache.
#[derive(Debug)]
pub struct GraphReads {
    builds: Arc<Semaphore>,
    build_wait: Duration,
    /// How long a built graph is kept ([`GRAPH_CACHE_TTL`]).
    ttl: Duration,
    cache: Mutex<Vec<Entry>>,
    /// Graphs built so far (each build reads every event of its run).
    built: std::sync::atomic::AtomicU64,
}

impl Default for GraphReads {
    fn default() -> Self {
        GraphReads::new(MAX_GRAPH_BUILDS, GRAPH_BUILD_WAIT)
    }
}

impl GraphReads {
    /// `builds` concurrent builds; readers wait at most `build_wait` for one.
    pub fn new(builds: usize, build_wait: Duration) -> GraphReads {
        GraphReads {
            builds: Arc::new(Semaphore::new(builds.max(1))),
            build_wait,
            ttl: GRAPH_CACHE_TTL,
            cache: Mutex::new(Vec::new()),
            built: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The cache cell of this run state (created, and older states of the
    /// run dropped, if it is new).
    /// Returns the cell and whether it is new.
    fn cell(&self, key: &StateKey) -> (Arc<OnceCell<Arc<BuiltGraph>>>, bool) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        cache.retain(|e| {
            now.duration_since(e.created) < self.ttl
                && (e.key.run_id != key.run_id || e.key == *key)
        });
        if let Some(e) = cache.iter().find(|e| e.key == *key) {
            return (Arc::clone(&e.cell), false);
        }
        while cache.len() >= GRAPH_CACHE_RUNS {
            cache.remove(0);
        }
        let cell = Arc::new(OnceCell::new());
        cache.push(Entry {
            key: key.clone(),
            created: now,
            cell: Arc::clone(&cell),
        });
        (cell, true)
    }

    /// Drops the graphs older than the time they are kept.
    fn expire(&self) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        cache.retain(|e| now.duration_since(e.created) < self.ttl);
    }

    /// Graphs kept right now.
    #[cfg(test)]
    fn cached(&self) -> usize {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// The graph of `run_id`, built once per run state and shared.
    pub async fn read(
        self: &Arc<Self>,
        store: &Arc<RunStore>,
        run_id: &str,
    ) -> Result<Arc<BuiltGraph>, GraphReadError> {
        let summary = {
            let store = Arc::clone(store);
            let id = run_id.to_owned();
            tokio::task::spawn_blocking(move || store.get_run(&id))
                .await
                .map_err(|e| {
                    GraphReadError::Failed(crate::error::ApiError::internal(e.to_string()))
                })?
                .map_err(|e| GraphReadError::Failed(e.into()))?
        };
        let Some(summary) = summary else {
            return Err(GraphReadError::NotFound);
        };
        let key = StateKey {
            run_id: run_id.to_owned(),
            events: summary.counts.events,
            last_seq: summary.last_seq,
        };
        let (cell, fresh) = self.cell(&key);
        if fresh {
            // Free the graph when its time is up, even if nobody reads again.
            let reads = Arc::downgrade(self);
            let ttl = self.ttl;
            tokio::spawn(async move {
                tokio::time::sleep(ttl).await;
                if let Some(reads) = reads.upgrade() {
                    reads.expire();
                }
            });
        }
        let built = cell.get_or_try_init(|| self.build(store, run_id)).await?;
        Ok(Arc::clone(built))
    }

    async fn build(
        &self,
        store: &Arc<RunStore>,
        run_id: &str,
    ) -> Result<Arc<BuiltGraph>, GraphReadError> {
        let permit =
            tokio::time::timeout(self.build_wait, Arc::clone(&self.builds).acquire_owned())
                .await
                .map_err(|_| GraphReadError::Busy)?
                .map_err(|_| GraphReadError::Busy)?;
        let store = Arc::clone(store);
        let id = run_id.to_owned();
        let started = Instant::now();
        let built = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            Ok::<_, mindgate_store::StoreError>(store.graph(&id)?.map(|graph| BuiltGraph { graph }))
        })
        .await
        .map_err(|e| GraphReadError::Failed(crate::error::ApiError::internal(e.to_string())))?
        .map_err(|e| GraphReadError::Failed(e.into()))?;
        let built = built.ok_or(GraphReadError::NotFound)?;
        self.built
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(
            run = run_id,
            nodes = built.graph.nodes.len(),
            edges = built.graph.edges.len(),
            ms = started.elapsed().as_millis() as u64,
            "graph built"
        );
        Ok(Arc::new(built))
    }
}

/// Where a streamed answer is.
#[derive(Debug, Clone, Copy)]
enum Part {
    Head,
    Nodes(usize),
    Edges(usize),
    Done,
}

/// The whole graph as JSON, byte for byte `serde_json::to_vec(&graph)`,
/// produced in chunks of [`STREAM_CHUNK_NODES`] nodes or edges.
pub fn json_chunks(
    built: Arc<BuiltGraph>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures_util::stream::unfold((built, Part::Head), |(built, part)| async move {
        let g = &built.graph;
        let mut out = Vec::new();
        let next = match part {
            Part::Done => return None,
            Part::Head => {
                out.extend_from_slice(b"{\"runId\":");
                if let Err(e) = serde_json::to_writer(&mut out, &g.run_id) {
                    return Some((Err(std::io::Error::other(e)), (built, Part::Done)));
                }
                out.extend_from_slice(b",\"nodes\":[");
                Part::Nodes(0)
            }
            Part::Nodes(at) => {
                let end = (at + STREAM_CHUNK_NODES).min(g.nodes.len());
                if let Err(e) = join_into(&mut out, at, &g.nodes[at..end]) {
                    return Some((Err(e), (built, Part::Done)));
                }
                if end < g.nodes.len() {
                    Part::Nodes(end)
                } else {
                    out.extend_from_slice(b"],\"edges\":[");
                    Part::Edges(0)
                }
            }
            Part::Edges(at) => {
                let end = (at + STREAM_CHUNK_NODES).min(g.edges.len());
                if let Err(e) = join_into(&mut out, at, &g.edges[at..end]) {
                    return Some((Err(e), (built, Part::Done)));
                }
                if end < g.edges.len() {
                    Part::Edges(end)
                } else {
                    // The run's held and work time (`heldMs`, `workMs`), then the end.
                    out.extend_from_slice(b"]");
                    if let Ok(serde_json::Value::Object(times)) = serde_json::to_value(g.times) {
                        for (key, value) in times {
                            let key = serde_json::Value::String(key);
                            out.extend_from_slice(format!(",{key}:{value}").as_bytes());
                        }
                    }
                    out.push(b'}');
                    Part::Done
                }
            }
        };
        Some((Ok(Bytes::from(out)), (built, next)))
    })
}

/// Appends `items` as comma-separated JSON (a leading comma unless `at` is 0).
fn join_into<T: Serialize>(
    out: &mut Vec<u8>,
    at: usize,
    items: &[T],
) -> Result<(), std::io::Error> {
    for (i, item) in items.iter().enumerate() {
        if at + i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, item).map_err(std::io::Error::other)?;
    }
    Ok(())
}

/// One page of nodes: `{runId, nodes, edges, totalNodes, nextAfter, hasMore}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphPage<'a> {
    run_id: &'a str,
    /// The run's held and work time.
    #[serde(flatten)]
    times: mindgate_store::RunTimes,
    nodes: &'a [GraphNode],
    /// The parent edges of this page's nodes.
    edges: Vec<&'a GraphEdge>,
    total_nodes: usize,
    next_after: usize,
    has_more: bool,
}

/// Nodes `after..after + limit` (in order of first appearance) and their parent edges.
pub fn page(graph: &RunGraph, after: usize, limit: usize) -> GraphPage<'_> {
    let limit = limit.clamp(1, MAX_GRAPH_PAGE);
    let start = after.min(graph.nodes.len());
    let end = start.saturating_add(limit).min(graph.nodes.len());
    let nodes = &graph.nodes[start..end];
    let ids: std::collections::HashSet<&str> = nodes.iter().map(|n| n.node_id.as_str()).collect();
    let edges = graph
        .edges
        .iter()
        .filter(|e| ids.contains(e.target.as_str()))
        .collect();
    GraphPage {
        run_id: &graph.run_id,
        times: graph.times,
        nodes,
        edges,
        total_nodes: graph.nodes.len(),
        next_after: end,
        has_more: end < graph.nodes.len(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::unwrap_used)]

    use std::sync::atomic::Ordering;

    use mindgate_protocol::parse_envelope;
    use mindgate_store::{NewEvent, Writer, WriterConfig};
    use serde_json::json;

    use super::*;

    fn event(run: &str, seq: u64, ty: &str, payload: serde_json::Value) -> NewEvent {
        let f = json!({"gm": 1, "seq": seq, "ts": 1_000 + seq, "runId": run, "type": ty, "payload": payload})
            .to_string();
        NewEvent::from_frame(&f, &parse_envelope(&f)).expect("valid")
    }

    /// A run of `nodes` tool nodes under one agent.
    fn store_with_run(dir: &std::path::Path, run: &str, nodes: u64) -> (Writer, Arc<RunStore>) {
        let path = dir.join("m.db");
        let (w, _) = Writer::open(&path, WriterConfig::default(), None).expect("writer");
        w.append(event(
            run,
            0,
            "run.started",
            json!({"app": "a", "sdk": {"name": "t", "version": "1"}}),
        ))
        .expect("append");
        w.append(event(
            run,
            1,
            "node.started",
            json!({"nodeId": "agent:a", "kind": "agent", "name": "a", "instanceId": "a"}),
        ))
        .expect("append");
        for i in 0..nodes {
            let id = format!("tool:t{i}");
            w.append(event(run, 2 + i, "node.started", json!({"nodeId": id, "kind": "tool", "name": "t", "instanceId": id, "parentId": "agent:a", "input": {"big": "x".repeat(100)}})))
                .expect("append");
        }
        w.flush().expect("flush");
        let store = Arc::new(RunStore::open(&path).expect("reader"));
        (w, store)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_readers_of_one_run_state_share_one_build() {
        let dir = tempfile::tempdir().expect("tmp");
        let (w, store) = store_with_run(dir.path(), "r", 200);
        let reads = Arc::new(GraphReads::default());
        let mut readers = Vec::new();
        for _ in 0..16 {
            let (reads, store) = (Arc::clone(&reads), Arc::clone(&store));
            readers.push(tokio::spawn(async move { reads.read(&store, "r").await }));
        }
        let mut graphs = Vec::new();
        for r in readers {
            graphs.push(r.await.expect("joined").expect("read"));
        }
        assert_eq!(reads.built.load(Ordering::Relaxed), 1);
        assert!(graphs.iter().all(|g| Arc::ptr_eq(g, &graphs[0])));
        assert_eq!(graphs[0].graph.nodes.len(), 201);
        let mut streamed = Vec::new();
        let mut chunks = std::pin::pin!(json_chunks(Arc::clone(&graphs[0])));
        while let Some(chunk) = futures_util::StreamExt::next(&mut chunks).await {
            streamed.extend_from_slice(&chunk.expect("chunk"));
        }
        assert_eq!(
            streamed,
            serde_json::to_vec(&graphs[0].graph).expect("json")
        );
        // A new event is a new state: built again.
        w.append(event(
            "r",
            500,
            "node.finished",
            json!({"nodeId": "tool:t0", "instanceId": "tool:t0", "status": "ok", "durationMs": 1}),
        ))
        .expect("append");
        w.flush().expect("flush");
        let again = reads.read(&store, "r").await.expect("read");
        assert_eq!(reads.built.load(Ordering::Relaxed), 2);
        assert!(!Arc::ptr_eq(&again, &graphs[0]));
        assert!(matches!(
            reads.read(&store, "nope").await,
            Err(GraphReadError::NotFound)
        ));
        w.close().expect("close");
    }

    #[tokio::test]
    async fn a_reader_without_a_build_slot_is_told_busy() {
        let dir = tempfile::tempdir().expect("tmp");
        let (w, store) = store_with_run(dir.path(), "r", 3);
        let reads = Arc::new(GraphReads::new(1, Duration::from_millis(50)));
        let held = Arc::clone(&reads.builds)
            .acquire_owned()
            .await
            .expect("permit");
        assert!(matches!(
            reads.read(&store, "r").await,
            Err(GraphReadError::Busy)
        ));
        drop(held);
        assert!(reads.read(&store, "r").await.is_ok());
        w.close().expect("close");
    }

    #[tokio::test]
    async fn a_built_graph_is_freed_when_its_time_is_up_without_another_read() {
        let dir = tempfile::tempdir().expect("tmp");
        let (w, store) = store_with_run(dir.path(), "r", 3);
        let mut reads = GraphReads::new(1, Duration::from_secs(1));
        reads.ttl = Duration::from_millis(50);
        let reads = Arc::new(reads);
        reads.read(&store, "r").await.expect("read");
        for _ in 0..200 {
            if reads.cached() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(reads.cached(), 0);
        w.close().expect("close");
    }

    #[test]
    fn pages_cover_the_graph_exactly_once() {
        let dir = tempfile::tempdir().expect("tmp");
        let (w, store) = store_with_run(dir.path(), "r", 9);
        let graph = store.graph("r").expect("read").expect("run");
        let (mut nodes, mut edges, mut after) = (Vec::new(), Vec::new(), 0);
        loop {
            let p = page(&graph, after, 4);
            assert!(p.nodes.len() <= 4);
            nodes.extend(p.nodes.iter().cloned());
            edges.extend(p.edges.iter().map(|e| (*e).clone()));
            after = p.next_after;
            if !p.has_more {
                break;
            }
        }
        assert_eq!(nodes, graph.nodes);
        assert_eq!(edges, graph.edges);
        let past = page(&graph, 1_000, 4);
        assert!(past.nodes.is_empty() && !past.has_more);
        w.close().expect("close");
    }
}
