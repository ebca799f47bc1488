//! Live task graphs: one watched session per path, shared by every `/live` subscriber.
//!
//! A session's file is watched with `notify` (its folder, non-recursively, so replaced files
//! are seen too); each change wakes a task that applies what was appended through the task
//! graph crate's [`Follower`] (DSH tailing, resumable pi / Claude Code / Codex readers, or a
//! re-parse; see [`mindgate_taskgraph::follow`]).
//!
//! After each change the graph's changes ([`IncrementalGraph::take_changes`]: the nodes and
//! edges added or changed, plus the other top-level fields that changed — of `summary` only
//! its changed keys, so a long `retried_steps` list is not re-sent per append) are serialised
//! once as a `delta`
//! and kept in a short ring; a version number is published on a `watch` channel, so bursts
//! coalesce. A subscriber gets the whole graph once (serialised on demand and cached per
//! version), then the deltas after the version it has; one that fell behind the ring, or a
//! rebuild (new generation), gets the whole graph again.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use futures_util::{Stream, StreamExt, stream};
use mindgate_taskgraph::follow::Follower;
use mindgate_taskgraph::graph::overview::{PathSegment, TaskOverview, TurnOverview};
use mindgate_taskgraph::{
    Agent, DiscoveryConfig, Event, GraphChanges, IncrementalGraph, TaskGraph, TaskSummary,
};
use notify::Watcher;
use serde::Serialize;
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::event_ids::PublishedEventIds;
use super::{TaskGraphs, blocking, lock};
use crate::error::ApiError;

/// Changes arriving within this window after the first are applied together.
const COALESCE: Duration = Duration::from_millis(5);
/// How often the files of a followed session's children are checked (the watcher sees only
/// the session's own folder).
const CHILD_CHECK: Duration = Duration::from_secs(1);
/// Most deltas kept for subscribers that are behind.
const DELTA_RING: usize = 64;
/// Most bytes of deltas kept (older ones are dropped first; a client behind them gets the
/// whole graph).
const DELTA_RING_BYTES: usize = 16 << 20;

/// One published state of a live graph.
#[derive(Debug)]
pub(super) struct Snapshot {
    /// Bumped when the event list was rebuilt rather than appended to.
    generation: u64,
    /// Why the last update failed, if it did.
    error: Option<String>,
}

/// The whole graph as served, at one version.
#[derive(Debug, Clone)]
pub(super) struct FullGraph {
    version: u64,
    /// Highest event `seq` the graph includes.
    last_seq: Option<u64>,
    json: Arc<str>,
}

/// The `delta` SSE payload: what changed from version `base` to `version`.
#[derive(Serialize)]
struct Delta<'a> {
    version: u64,
    base: u64,
    /// Node count after the change (nodes are only ever added or changed in place).
    node_count: usize,
    edge_count: usize,
    /// Indices of the nodes in `nodes` (an index equal to the old count appends).
    node_index: &'a [usize],
    /// The changed nodes; one with `event_ids_keep: n` keeps its first `n` event ids and
    /// appends the ones given ([`PublishedEventIds`]).
    nodes: Vec<serde_json::Value>,
    edge_index: &'a [usize],
    edges: Vec<&'a mindgate_taskgraph::Edge>,
    /// The top-level fields (not `nodes` / `edges` / `critical_path`) that changed;
    /// `summary` holds only its changed keys (merge them into the summary).
    fields: serde_json::Map<String, serde_json::Value>,
    /// The critical path, when it changed, as a splice of its lists (it mostly grows at its
    /// end, and a 100,000-event session's path has ~20,000 nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    critical_path: Option<PathSplice<'a>>,
}

/// How many first items `a` and `b` share (what a splice keeps).
fn common_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A changed critical path: keep the first `keep.<list>` items of each list, then append
/// the ones given; `duration_ms` and `total_ms` as they are now.
#[derive(Serialize)]
struct PathSplice<'a> {
    keep: PathKeep,
    node_ids: &'a [mindgate_taskgraph::graph::SharedStr],
    hot_node_ids: &'a [mindgate_taskgraph::graph::SharedStr],
    edge_ids: &'a [mindgate_taskgraph::graph::SharedStr],
    duration_ms: i64,
    total_ms: i64,
    /// The path's waiting segments, whole (a few per turn at most).
    waiting: &'a [mindgate_taskgraph::WaitSegment],
    waiting_ms: i64,
}

#[derive(Serialize)]
struct PathKeep {
    node_ids: usize,
    hot_node_ids: usize,
    edge_ids: usize,
}

impl<'a> PathSplice<'a> {
    /// `now` as a splice of `before`; `None` when they are equal.
    fn between(
        before: &mindgate_taskgraph::CriticalPath,
        now: &'a mindgate_taskgraph::CriticalPath,
    ) -> Option<Self> {
        if before == now {
            return None;
        }
        // Exhaustive on purpose: a new `CriticalPath` field must travel too.
        let mindgate_taskgraph::CriticalPath {
            node_ids,
            hot_node_ids,
            edge_ids,
            duration_ms,
            total_ms,
            waiting,
            waiting_ms,
        } = now;
        let keep = PathKeep {
            node_ids: common_prefix(&before.node_ids, node_ids),
            hot_node_ids: common_prefix(&before.hot_node_ids, hot_node_ids),
            edge_ids: common_prefix(&before.edge_ids, edge_ids),
        };
        Some(PathSplice {
            node_ids: &node_ids[keep.node_ids..],
            hot_node_ids: &hot_node_ids[keep.hot_node_ids..],
            edge_ids: &edge_ids[keep.edge_ids..],
            keep,
            duration_ms: *duration_ms,
            total_ms: *total_ms,
            waiting,
            waiting_ms: *waiting_ms,
        })
    }
}

/// The top-level fields of a [`TaskGraph`] but its node and edge lists, as last published:
/// a delta carries the ones that differ.
#[derive(Clone, PartialEq)]
pub(super) struct Fields {
    task_id: String,
    session_id: String,
    workspace: String,
    title: String,
    cwd: Option<String>,
    status: mindgate_taskgraph::Status,
    start_time: Option<i64>,
    end_time: Option<i64>,
    duration_ms: i64,
    summary: mindgate_taskgraph::Summary,
    critical_path: mindgate_taskgraph::CriticalPath,
    meta: mindgate_taskgraph::graph::GraphMeta,
}

impl Fields {
    fn of(g: &TaskGraph) -> Self {
        // Exhaustive on purpose: a new `TaskGraph` field must be added here too.
        let TaskGraph {
            task_id,
            session_id,
            workspace,
            title,
            cwd,
            status,
            start_time,
            end_time,
            duration_ms,
            nodes: _,
            edges: _,
            summary,
            critical_path,
            meta,
        } = g;
        Fields {
            task_id: task_id.clone(),
            session_id: session_id.clone(),
            workspace: workspace.clone(),
            title: title.clone(),
            cwd: cwd.clone(),
            status: *status,
            start_time: *start_time,
            end_time: *end_time,
            duration_ms: *duration_ms,
            summary: summary.clone(),
            critical_path: critical_path.clone(),
            meta: meta.clone(),
        }
    }

    /// The fields of `self` that differ from `before` (`summary`: its changed keys only).
    fn changed_since(&self, before: &Fields) -> serde_json::Map<String, serde_json::Value> {
        let mut out = serde_json::Map::new();
        let put = |out: &mut serde_json::Map<_, _>,
                   key: &str,
                   value: serde_json::Result<serde_json::Value>| {
            out.insert(
                key.to_owned(),
                value.unwrap_or_else(|e| json!({ "error": e.to_string() })),
            );
        };
        macro_rules! diff {
            ($out:expr, $new:expr, $old:expr, $($field:ident),+) => {
                $(if $new.$field != $old.$field {
                    put($out, stringify!($field), serde_json::to_value(&$new.$field));
                })+
            };
        }
        diff!(
            &mut out,
            self,
            before,
            task_id,
            session_id,
            workspace,
            title,
            cwd,
            status,
            start_time,
            end_time,
            duration_ms,
            meta
        );
        let mut summary = serde_json::Map::new();
        let (new, old) = (&self.summary, &before.summary);
        // Exhaustive on purpose: a new `Summary` field must be compared too.
        let mindgate_taskgraph::Summary {
            counts: _,
            tokens: _,
            slowest_steps: _,
            failed_steps: _,
            retried_steps: _,
            most_used_tools: _,
            files_changed: _,
            waiting_ms: _,
            headline: _,
        } = new;
        diff!(
            &mut summary,
            new,
            old,
            counts,
            tokens,
            slowest_steps,
            failed_steps,
            retried_steps,
            most_used_tools,
            files_changed,
            waiting_ms,
            headline
        );
        if !summary.is_empty() {
            out.insert("summary".to_owned(), serde_json::Value::Object(summary));
        }
        out
    }
}

/// Serialises the change from `base` (whose fields were `before`) to `version` of `g`.
fn delta_json(
    g: &TaskGraph,
    ch: &GraphChanges,
    (before, now): (&Fields, &Fields),
    event_ids: &mut PublishedEventIds,
    base: u64,
    version: u64,
) -> Arc<str> {
    let nodes: serde_json::Result<Vec<serde_json::Value>> = ch
        .nodes
        .iter()
        .filter_map(|&i| Some((i, g.nodes.get(i)?)))
        .map(|(i, n)| event_ids.node_json(i, n))
        .collect();
    let nodes = match nodes {
        Ok(nodes) => nodes,
        Err(e) => return json!({ "error": e.to_string() }).to_string().into(),
    };
    let d = Delta {
        version,
        base,
        node_count: g.nodes.len(),
        edge_count: g.edges.len(),
        node_index: &ch.nodes,
        nodes,
        edge_index: &ch.edges,
        edges: ch.edges.iter().filter_map(|&i| g.edges.get(i)).collect(),
        fields: now.changed_since(before),
        critical_path: PathSplice::between(&before.critical_path, &now.critical_path),
    };
    serde_json::to_string(&d)
        .unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
        .into()
}

/// A followed session and what was last published of it.
struct State {
    follower: Follower,
    version: u64,
    /// The top-level fields at the last published version (what a delta is relative to).
    published: Fields,
    /// What the clients hold of each node's event ids (a delta sends the rest).
    event_ids: PublishedEventIds,
}

/// The cache's read a live view opened from (its graph is the view's at version 0).
#[derive(Clone)]
struct Seed {
    overview: Arc<std::sync::OnceLock<Arc<TaskOverview>>>,
    tree: Arc<mindgate_taskgraph::GraphTree>,
}

impl Seed {
    fn make(&self, prices: &mindgate_pricing::PriceTable) -> Arc<TaskOverview> {
        Arc::new(mindgate_taskgraph::overview(
            &self.tree.graph,
            &self.tree.children,
            prices,
        ))
    }
}

/// A watched session.
pub(super) struct Live {
    path: PathBuf,
    agent: Agent,
    file: PathBuf,
    state: Mutex<State>,
    tx: watch::Sender<Arc<Snapshot>>,
    /// `(version, delta from version - 1)`, oldest first; `None` where that version was a
    /// whole-graph change.
    deltas: Mutex<VecDeque<(u64, Option<Arc<str>>)>>,
    /// The whole graph, serialised at the version it names (made on demand).
    full: Mutex<Option<FullGraph>>,
    /// An archived session's finished graph at the version it names (made on demand, so a
    /// turn or the timeline does not copy and finish the whole graph per request).
    finished: Mutex<Option<(u64, Arc<TaskGraph>)>>,
    /// The overview at the version it names (the page's fetch and its feed's first message
    /// share it).
    overview: Mutex<Option<(u64, Arc<TaskOverview>)>>,
    /// The cache's read this view opened from, while the graph is that read's (version 0;
    /// dropped at the first update), when the two graphs are equal: its overview is shared.
    seed: Mutex<Option<Seed>>,
    /// The turn index at the version it names (made when a turn is opened).
    turns: Mutex<Option<(u64, Arc<mindgate_taskgraph::TurnIndex>)>>,
    stopped: AtomicBool,
    /// The follower read the file again when it opened (a resumable reader catching up).
    read_at_open: bool,
}

impl Live {
    /// Follows the session `cached` holds (read once, by the cache) and builds its graph
    /// (live mode when recently modified).
    fn open(
        t: &TaskSummary,
        config: &DiscoveryConfig,
        cached: &super::Cached,
    ) -> Result<Live, ApiError> {
        // The graph the cache built for this read, when live, is gone on from: the session is
        // built once (at 100,000 events a build is ~0.15 s).
        let built = lock(&cached.follow).take();
        let follower = Follower::from_built(
            &cached.session,
            cached.stamp,
            &t.path,
            t.agent,
            &t.workspace,
            config.live_window,
            built,
        )
        .map_err(super::tg_error)?;
        // While the graph is the cache's, so is its overview (made once for the page's fetch
        // and the feed's first message, whichever asks first).
        let g = follower.graph();
        let seed = (g.options().live
            && g.graph() == &cached.tree.graph
            && follower.children() == cached.tree.children.as_slice())
        .then(|| Seed {
            overview: cached.overview.clone(),
            tree: cached.tree.clone(),
        });
        let file = follower.file().to_path_buf();
        let st_read = follower.streaming();
        let state = State {
            published: Fields::of(follower.graph().graph()),
            event_ids: PublishedEventIds::default(),
            follower,
            version: 0,
        };
        let snap = Snapshot {
            generation: 0,
            error: None,
        };
        Ok(Live {
            path: t.path.clone(),
            agent: t.agent,
            file,
            state: Mutex::new(state),
            tx: watch::Sender::new(Arc::new(snap)),
            deltas: Mutex::new(VecDeque::new()),
            full: Mutex::new(None),
            finished: Mutex::new(None),
            overview: Mutex::new(None),
            seed: Mutex::new(seed),
            turns: Mutex::new(None),
            stopped: AtomicBool::new(false),
            read_at_open: st_read,
        })
    }

    /// The graph as served: live graphs as they are, archived ones finished (open nodes
    /// closed).
    fn graph_text(g: &IncrementalGraph) -> Arc<str> {
        let text = if g.options().live {
            serde_json::to_string(g.graph())
        } else {
            serde_json::to_string(&g.clone().finish())
        };
        text.unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
            .into()
    }

    /// The whole graph at the current version (serialised once per version, on demand).
    pub(super) fn full(&self) -> FullGraph {
        let st = lock(&self.state);
        let mut full = lock(&self.full);
        if let Some(f) = full.as_ref().filter(|f| f.version == st.version) {
            return f.clone();
        }
        let f = FullGraph {
            version: st.version,
            last_seq: st.follower.events().last().map(|e| e.seq),
            json: Self::graph_text(st.follower.graph()),
        };
        *full = Some(f.clone());
        f
    }

    /// `f` over the graph as served now (live graphs as they are, archived ones finished)
    /// and its children's graphs as last read.
    pub(super) fn with_graph_and_children<R>(
        &self,
        f: impl FnOnce(&TaskGraph, &[mindgate_taskgraph::GraphTree]) -> R,
    ) -> R {
        self.with_versioned_graph(|g, children, _| f(g, children))
    }

    /// `f` over the graph as served now, its children's graphs and its version (read under
    /// the same lock).
    fn with_versioned_graph<R>(
        &self,
        f: impl FnOnce(&TaskGraph, &[mindgate_taskgraph::GraphTree], u64) -> R,
    ) -> R {
        let st = lock(&self.state);
        let g = st.follower.graph();
        let children = st.follower.children();
        if g.options().live {
            return f(g.graph(), children, st.version);
        }
        let mut finished = lock(&self.finished);
        let graph = match finished.as_ref().filter(|(v, _)| *v == st.version) {
            Some((_, graph)) => graph.clone(),
            None => {
                let graph = Arc::new(g.clone().finish());
                *finished = Some((st.version, graph.clone()));
                graph
            }
        };
        drop(finished);
        f(&graph, children, st.version)
    }

    /// `f` over turn `turn` of the graph as served now, through its turn index (built once
    /// per version).
    pub(super) fn with_turn<R>(
        &self,
        turn: &str,
        f: impl FnOnce(Option<mindgate_taskgraph::graph::overview::TurnDetail<'_>>) -> R,
    ) -> R {
        self.with_versioned_graph(|g, _, version| {
            let mut turns = lock(&self.turns);
            let index = match turns.as_ref().filter(|(v, _)| *v == version) {
                Some((_, ix)) => ix.clone(),
                None => {
                    let ix = Arc::new(mindgate_taskgraph::TurnIndex::new(g));
                    *turns = Some((version, ix.clone()));
                    ix
                }
            };
            drop(turns);
            f(index.detail(g, turn))
        })
    }

    /// The overview of the graph and its children as served now (computed once per version).
    pub(super) fn overview(&self, prices: &mindgate_pricing::PriceTable) -> Arc<TaskOverview> {
        let version = lock(&self.state).version;
        if let Some((_, v)) = lock(&self.overview).as_ref().filter(|(v, _)| *v == version) {
            return v.clone();
        }
        let make = || {
            Arc::new(self.with_graph_and_children(|g, children| {
                mindgate_taskgraph::overview(g, children, prices)
            }))
        };
        let seed = lock(&self.seed).clone();
        let value = match seed {
            Some(seed) => seed.overview.get_or_init(|| seed.make(prices)).clone(),
            None => make(),
        };
        *lock(&self.overview) = Some((version, value.clone()));
        value
    }

    /// The latest graph JSON.
    pub(super) fn graph_json(&self) -> Arc<str> {
        self.full().json
    }

    /// The deltas after version `after`, oldest first; `None` when one of them is missing
    /// (dropped from the ring) or was a whole-graph change.
    fn deltas_after(&self, after: u64) -> Option<Vec<(u64, Arc<str>)>> {
        let ring = lock(&self.deltas);
        let newest = ring.back().map_or(after, |(v, _)| *v);
        if newest <= after {
            return Some(Vec::new());
        }
        let start = ring.iter().position(|(v, _)| *v == after + 1)?;
        ring.iter()
            .skip(start)
            .map(|(v, d)| d.clone().map(|d| (*v, d)))
            .collect()
    }

    /// Applies whatever the file gained since the last update and publishes a snapshot when
    /// something changed.
    fn update(&self) {
        let mut guard = lock(&self.state);
        let st = &mut *guard;
        let generation = st.follower.generation();
        let error = match st.follower.update() {
            Ok(false) => return,
            Ok(true) => None,
            Err(e) => Some(super::tg_error(e).message),
        };
        st.version += 1;
        // The graph is no longer the cache's read.
        lock(&self.seed).take();
        let changes = st.follower.take_changes();
        let swapped = st.follower.take_swapped();
        let graph = st.follower.graph();
        let fields = Fields::of(graph.graph());
        let incremental =
            st.follower.generation() == generation && !swapped && graph.options().live;
        if !incremental {
            // Clients get the whole graph: nothing they held before counts.
            st.event_ids.clear();
        }
        let delta = incremental.then(|| {
            delta_json(
                graph.graph(),
                &changes,
                (&st.published, &fields),
                &mut st.event_ids,
                st.version - 1,
                st.version,
            )
        });
        st.published = fields;
        {
            let mut ring = lock(&self.deltas);
            ring.push_back((st.version, delta));
            let mut bytes: usize = ring
                .iter()
                .filter_map(|(_, d)| d.as_ref())
                .map(|d| d.len())
                .sum();
            while ring.len() > DELTA_RING || (bytes > DELTA_RING_BYTES && ring.len() > 1) {
                if let Some((_, Some(d))) = ring.pop_front() {
                    bytes -= d.len();
                }
            }
        }
        let snap = Snapshot {
            generation: st.follower.generation(),
            error,
        };
        drop(guard);
        self.tx.send_replace(Arc::new(snap));
    }

    /// Events with `seq > after`.
    fn events_after(&self, after: Option<u64>) -> Vec<Event> {
        let st = lock(&self.state);
        let events = st.follower.events();
        let start = after.map_or(0, |a| events.partition_point(|e| e.seq <= a));
        events[start..].to_vec()
    }

    fn last_seq(&self) -> Option<u64> {
        lock(&self.state).follower.events().last().map(|e| e.seq)
    }
}

/// What an overview client was last sent: the overview's turns and the critical path's
/// segments (a delta carries the turns that changed and the segments as a splice).
pub(super) struct OverviewFeed {
    prices: mindgate_pricing::PriceTable,
    turns: Vec<TurnOverview>,
    segments: Vec<PathSegment>,
}

impl OverviewFeed {
    /// A feed that has sent nothing yet.
    pub(super) fn new(prices: mindgate_pricing::PriceTable) -> Self {
        Self {
            prices,
            turns: Vec::new(),
            segments: Vec::new(),
        }
    }

    /// The overview of `live` now: an `overview` message the first time (`first`), then an
    /// `overview_delta` holding every top-level field, the critical path's segments as a splice
    /// (`critical_path.keep`, then the new ones) and only the turns that changed
    /// (`turns: [{index, turn}]`, `turn_count`), so the page re-lays out just those turns.
    /// The turns and segments are compared typed; only what is sent is serialised.
    async fn message(&mut self, live: &Arc<Live>, version: u64, first: bool) -> SseEvent {
        let l = live.clone();
        let prices = self.prices.clone();
        let overview = blocking(move || Ok(l.overview(&prices))).await;
        let text = overview.and_then(|ov| {
            let text = if first {
                serde_json::to_string(&*ov)
            } else {
                self.delta_text(&ov)
            };
            self.turns.clone_from(&ov.turns);
            self.segments.clone_from(&ov.critical_path.segments);
            text.map_err(|e| ApiError::internal(e.to_string()))
        });
        match text {
            Ok(text) => SseEvent::default()
                .event(if first { "overview" } else { "overview_delta" })
                .id(version.to_string())
                .data(text),
            Err(e) => SseEvent::default()
                .event("error")
                .data(json!({ "error": e.message }).to_string()),
        }
    }

    /// The `overview_delta` from what this client has to `ov`.
    fn delta_text(&self, ov: &TaskOverview) -> serde_json::Result<String> {
        let mut head = ov.clone_without_rows();
        let changed: Vec<serde_json::Value> = ov
            .turns
            .iter()
            .enumerate()
            .filter(|(i, t)| self.turns.get(*i) != Some(*t))
            .map(|(i, t)| Ok(json!({ "index": i, "turn": serde_json::to_value(t)? })))
            .collect::<serde_json::Result<_>>()?;
        let segments = &ov.critical_path.segments;
        let keep = common_prefix(&self.segments, segments);
        head.critical_path.segments = segments[keep..].to_vec();
        let mut value = serde_json::to_value(&head)?;
        value["critical_path"]["keep"] = json!(keep);
        value["turn_count"] = json!(ov.turns.len());
        value["turns"] = serde_json::Value::Array(changed);
        serde_json::to_string(&value)
    }
}

/// One `/live` client.
pub(super) struct Subscription {
    /// Set for an overview client (`view=overview`): it gets overviews instead of graphs.
    pub(super) overview: Option<OverviewFeed>,
    live: Arc<Live>,
    rx: watch::Receiver<Arc<Snapshot>>,
    /// Highest event `seq` this client was told about.
    sent_seq: Option<u64>,
    /// Graph version this client has.
    version: u64,
    generation: u64,
}

impl Subscription {
    fn new(live: &Arc<Live>) -> Self {
        let rx = live.tx.subscribe();
        let generation = rx.borrow().generation;
        Self {
            overview: None,
            live: live.clone(),
            rx,
            sent_seq: live.last_seq(),
            version: 0,
            generation,
        }
    }

    /// The whole graph now, as a `graph` message.
    fn whole(&mut self) -> SseEvent {
        let full = self.live.full();
        self.version = full.version;
        graph_event(&full)
    }

    /// The SSE stream: `graph` now, then after every change the `delta`s since the version
    /// the client has (or `graph` again when it fell behind or the graph was rebuilt) and the
    /// new `events`, until the client goes away or the server shuts down.
    pub(super) fn into_stream(
        self,
        shutdown: CancellationToken,
    ) -> impl Stream<Item = Result<SseEvent, Infallible>> {
        stream::unfold((self, shutdown, true), |(mut s, sd, first)| async move {
            if first && let Some(feed) = s.overview.as_mut() {
                s.rx.borrow_and_update();
                s.sent_seq = s.live.last_seq();
                let out = vec![feed.message(&s.live, 0, true).await];
                return Some((out, (s, sd, false)));
            }
            if first {
                s.rx.borrow_and_update();
                let full = s.live.full();
                s.version = full.version;
                s.sent_seq = full.last_seq;
                let out = vec![graph_event(&full)];
                return Some((out, (s, sd, false)));
            }
            tokio::select! {
                _ = sd.cancelled() => None,
                changed = s.rx.changed() => {
                    changed.ok()?;
                    let snap = s.rx.borrow_and_update().clone();
                    let mut out = Vec::new();
                    if let Some(feed) = s.overview.as_mut() {
                        let version = lock(&s.live.state).version;
                        let reset = snap.generation != s.generation;
                        s.generation = snap.generation;
                        out.push(feed.message(&s.live, version, reset).await);
                    } else if snap.generation != s.generation {
                        s.generation = snap.generation;
                        out.push(s.whole());
                        s.sent_seq = s.live.last_seq();
                        out.push(SseEvent::default().event("events").data(
                            json!({ "reset": true, "last_seq": s.sent_seq, "events": [] }).to_string(),
                        ));
                    } else {
                        match s.live.deltas_after(s.version) {
                            Some(deltas) => {
                                for (v, d) in deltas {
                                    s.version = v;
                                    out.push(SseEvent::default().event("delta").id(v.to_string()).data(&*d));
                                }
                            }
                            None => out.push(s.whole()),
                        }
                        let fresh = s.live.events_after(s.sent_seq);
                        if let Some(last) = fresh.last() {
                            s.sent_seq = Some(last.seq);
                            out.push(SseEvent::default().event("events").data(
                                json!({ "reset": false, "last_seq": s.sent_seq, "events": fresh })
                                    .to_string(),
                            ));
                        }
                    }
                    if let Some(e) = &snap.error {
                        out.push(
                            SseEvent::default()
                                .event("error")
                                .data(json!({ "error": e }).to_string()),
                        );
                    }
                    Some((out, (s, sd, false)))
                }
            }
        })
        .flat_map(|v| stream::iter(v.into_iter().map(Ok)))
    }
}

fn graph_event(full: &FullGraph) -> SseEvent {
    SseEvent::default()
        .event("graph")
        .id(full.version.to_string())
        .data(&*full.json)
}

/// Joins the live view of `t`, starting (and watching) it when nobody watches it yet.
pub(super) async fn subscribe(
    tg: &Arc<TaskGraphs>,
    t: &TaskSummary,
) -> Result<Subscription, ApiError> {
    if let Some(sub) = join(tg, &t.path) {
        return Ok(sub);
    }
    let config = tg.config();
    let (tg2, t2) = (tg.clone(), t.clone());
    let live = Arc::new(
        blocking(move || {
            // The session as the cache holds it (the page's overview read it a moment ago):
            // read once, not once for the overview and again for the feed.
            let cached = tg2.load_cached(&t2)?;
            let live = Live::open(&t2, &config, &cached)?;
            if live.read_at_open {
                tg2.count_read();
            }
            Ok(live)
        })
        .await?,
    );
    let (ntx, nrx) = mpsc::channel::<()>(1);
    let watcher = start_watcher(&live, ntx)?;
    let sub = {
        let mut reg = lock(&tg.live);
        if let Some(existing) = reg.get(&t.path).and_then(Weak::upgrade)
            && !existing.stopped.load(Ordering::SeqCst)
        {
            // Someone else started it meanwhile; ours is dropped with its watcher.
            return Ok(Subscription::new(&existing));
        }
        reg.insert(t.path.clone(), Arc::downgrade(&live));
        Subscription::new(&live)
    };
    tokio::spawn(watch_loop(tg.clone(), live, nrx, watcher));
    Ok(sub)
}

fn join(tg: &TaskGraphs, path: &PathBuf) -> Option<Subscription> {
    let reg = lock(&tg.live);
    let live = reg.get(path).and_then(Weak::upgrade)?;
    (!live.stopped.load(Ordering::SeqCst)).then(|| Subscription::new(&live))
}

fn start_watcher(
    live: &Arc<Live>,
    ntx: mpsc::Sender<()>,
) -> Result<notify::RecommendedWatcher, ApiError> {
    let dir = live
        .file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let name = live.file.file_name().map(|n| n.to_owned());
    let any_session_file = live.agent == Agent::Dsh;
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(ev) = res else { return };
        if matches!(ev.kind, notify::EventKind::Access(_)) {
            return;
        }
        let relevant = ev.paths.iter().any(|p| {
            let n = p.file_name();
            n == name.as_deref()
                || (any_session_file
                    && n.and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("session")))
        });
        if relevant {
            // A full channel already holds a wake-up: that one will see this change too.
            let _ = ntx.try_send(());
        }
    })
    .map_err(|e| ApiError::internal(format!("cannot watch {}: {e}", dir.display())))?;
    watcher
        .watch(&dir, notify::RecursiveMode::NonRecursive)
        .map_err(|e| ApiError::internal(format!("cannot watch {}: {e}", dir.display())))?;
    Ok(watcher)
}

/// Applies file changes until the last subscriber leaves or the server stops.
async fn watch_loop(
    tg: Arc<TaskGraphs>,
    live: Arc<Live>,
    mut nrx: mpsc::Receiver<()>,
    watcher: notify::RecommendedWatcher,
) {
    let mut check = tokio::time::interval(CHILD_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    check.tick().await;
    loop {
        tokio::select! {
            _ = tg.shutdown.cancelled() => break,
            _ = live.tx.closed() => {
                let mut reg = lock(&tg.live);
                if live.tx.receiver_count() == 0 {
                    live.stopped.store(true, Ordering::SeqCst);
                    if reg.get(&live.path).is_some_and(|w| w.as_ptr() == Arc::as_ptr(&live)) {
                        reg.remove(&live.path);
                    }
                    break;
                }
            }
            got = nrx.recv() => {
                if got.is_none() {
                    break;
                }
                tokio::time::sleep(COALESCE).await;
                while nrx.try_recv().is_ok() {}
                let l = live.clone();
                let _ = tokio::task::spawn_blocking(move || l.update()).await;
            }
            // Files the watcher does not see (a subagent's, in a folder of its own) are
            // checked now and then: a child that grows changes its parent's totals.
            _ = check.tick() => {
                let l = live.clone();
                let _ = tokio::task::spawn_blocking(move || l.update()).await;
            }
        }
    }
    live.stopped.store(true, Ordering::SeqCst);
    drop(watcher);
    let mut reg = lock(&tg.live);
    if reg
        .get(&live.path)
        .is_some_and(|w| w.as_ptr() == Arc::as_ptr(&live))
    {
        reg.remove(&live.path);
    }
}
