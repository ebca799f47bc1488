//! The stateful graph builder behind [`build_graph`](super::build_graph) and
//! [`IncrementalGraph`].

use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::classify::{classify, command_of, files_of, skill_name};
use super::critical::CritState;
use super::model::*;
use super::waiting::{WaitSegment, node_wait_kind, node_wait_segment};
use super::{BuildOptions, ChildSummary};
use crate::event::{
    Event, EventKind, SessionStart, SubagentDescriptor, Todo, TurnEndKind, TurnReason,
};
use crate::fast_hash::{FastHasher, FastMap, FastSet, hash_value};
use crate::text::{truncate_chars, workspace_slug};

mod apply;
mod children;
mod ids;
mod nodes;
mod phases;
mod steps;
mod summary;
mod tools;

use ids::{args_hash, build_id, event_key, key_hash};

/// Display names are cut to this many characters.
const NAME_CHARS: usize = 80;

/// What the builder keeps per node while it builds (links, running sums, pending edges);
/// not part of the graph it returns.
#[derive(Debug, Default, Clone)]
struct NodeScratch {
    parent: Option<usize>,
    phase: Option<usize>,
    /// Agent steps: sum of child tool durations.
    child_dur: i64,
    /// Phases: last step, tools awaiting a `consumes` edge, latest failure/success ends.
    last_step: Option<usize>,
    unconsumed: Vec<usize>,
    fail_end: Option<i64>,
    ok_end: Option<i64>,
    max_step_no: u32,
    /// Got its closing event (turn end, step end, tool result) or was force-closed.
    closed: bool,
    /// A code node taken out of `counts.code_changes` (it was cancelled: it never ran).
    uncounted: bool,
    reason: Option<TurnEndKind>,
    /// Tools.
    retry_key: Option<u64>,
    closed_attempts_ms: i64,
    open_attempt_start: Option<i64>,
    pending_consume: bool,
    explicit_child: Option<String>,
    child_matched: bool,
    /// The duration this (work) node is filed under in `slow`, once filed.
    slow_key: Option<i64>,
    /// Index of the node's `retries` self-loop edge, once created.
    retry_edge: Option<usize>,
    /// In `IncrementalGraph::touched`.
    touched: bool,
    /// In `IncrementalGraph::changed_nodes`.
    changed: bool,
}

/// Which nodes and edges an [`IncrementalGraph`] added or changed between two
/// [`take_changes`](IncrementalGraph::take_changes) calls (indices into `nodes` / `edges`,
/// ascending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphChanges {
    /// Indices of added or changed nodes.
    pub nodes: Vec<usize>,
    /// Indices of added or changed edges.
    pub edges: Vec<usize>,
}

/// Counters of what an [`IncrementalGraph::append`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendStats {
    /// Events applied.
    pub applied: usize,
    /// Events dropped as exact duplicates of earlier ones.
    pub duplicates: usize,
    /// Events whose `seq` was lower than one already applied (applied anyway, in arrival
    /// order; rebuild with [`build_graph`](super::build_graph) for exact ordering).
    pub out_of_order: usize,
    /// Tool results whose call was never seen (ignored).
    pub orphan_results: usize,
}

/// A task graph kept up to date as events are appended.
///
/// Each [`append`](Self::append) applies the new events to the builder state (hash-map
/// lookups, O(1) per event), then refreshes what depends on the whole graph cheaply:
/// open nodes' running durations (only the open ones), the task status (from running
/// maxima), summary lists (from ordered sets maintained on every status/duration change) and
/// the critical path (recomputed only from the lowest node index whose weight or in-edges
/// changed, keeping the unchanged path prefix). [`graph`](Self::graph) is then a borrow.
///
/// ```
/// use mindgate_taskgraph::{BuildOptions, Event, EventKind, IncrementalGraph, Status};
///
/// let mut g = IncrementalGraph::new(BuildOptions { live: true, ..BuildOptions::default() });
/// g.append(&[Event::new(1, 1_000, EventKind::TurnStart { turn: 1 })]);
/// assert_eq!(g.graph().status, Status::Running);
/// ```
#[derive(Debug, Clone)]
pub struct IncrementalGraph {
    opts: BuildOptions,
    g: TaskGraph,
    sid: SharedStr,
    tid: SharedStr,
    scratch: Vec<NodeScratch>,
    crit: CritState,
    phase_by_turn: FastMap<u32, usize>,
    step_by_key: FastMap<(u32, u32), usize>,
    /// Tool node by call id, keyed by the id's hash (no key allocation); a hit is checked
    /// against the node's attempts' call ids. Ids whose hash slot holds another id's node
    /// go to `call_spill`.
    tool_by_call: FastMap<u64, usize>,
    call_spill: FastMap<String, usize>,
    by_retry_key: FastMap<u64, usize>,
    ids: FastSet<u64>,
    cur_phase: Option<usize>,
    cur_step: Option<usize>,
    last_phase: Option<usize>,
    pending_user: Option<(String, u64)>,
    title_set: bool,
    first_time: Option<i64>,
    last_time: i64,
    last_seq: Option<u64>,
    seen: FastSet<u64>,
    open: BTreeSet<usize>,
    /// Phase nodes in turn order, and tool-like nodes whose time was waiting for the person.
    phases: Vec<usize>,
    waiting_nodes: BTreeSet<usize>,
    failed: BTreeSet<usize>,
    retried: BTreeSet<usize>,
    /// Node indices behind `summary.failed_steps` / `summary.retried_steps`, in order.
    failed_idx: Vec<usize>,
    retried_idx: Vec<usize>,
    /// Nodes whose status, duration or attempts changed since the last refresh.
    touched: Vec<usize>,
    /// Work nodes by duration (longest first). Filed lazily at refresh from `touched`: every
    /// work node is either filed under its current duration (`NodeScratch::slow_key`) or in `touched`.
    slow: BTreeSet<(Reverse<i64>, usize)>,
    files: FastSet<String>,
    task_fail_end: Option<i64>,
    task_ok_end: Option<i64>,
    /// Latest end of a failed / successful tool-like node (the task's last work outcome).
    work_fail_end: Option<i64>,
    work_ok_end: Option<i64>,
    unmatched_subagents: Vec<usize>,
    children_used: Vec<bool>,
    finished: bool,
    /// Nodes added or changed since the last [`IncrementalGraph::take_changes`] (each once).
    changed_nodes: Vec<usize>,
    /// Edges changed in place since then (new edges are those past `edges_seen`).
    changed_edges: Vec<usize>,
    /// How many edges the last `take_changes` reported as known.
    edges_seen: usize,
    /// Reusable buffers for building node and edge ids.
    idbuf: String,
    edgebuf: String,
}

impl IncrementalGraph {
    /// An empty graph (just the `task` node).
    pub fn new(options: BuildOptions) -> Self {
        let session_id = options.session_id.clone().unwrap_or_default();
        let task_id = options
            .task_id
            .clone()
            .unwrap_or_else(|| session_id.clone());
        let workspace = options.workspace.clone().unwrap_or_default();
        let mut me = Self {
            children_used: vec![false; options.children.len()],
            g: TaskGraph {
                task_id: task_id.clone(),
                session_id: session_id.clone(),
                workspace: workspace.clone(),
                title: session_id.clone(),
                cwd: None,
                status: Status::Pending,
                start_time: None,
                end_time: None,
                duration_ms: 0,
                nodes: Vec::new(),
                edges: Vec::new(),
                summary: Summary::default(),
                critical_path: CriticalPath::default(),
                meta: GraphMeta {
                    live: options.live,
                    ..GraphMeta::default()
                },
            },
            sid: session_id.as_str().into(),
            tid: task_id.as_str().into(),
            opts: options,
            scratch: Vec::new(),
            crit: CritState::default(),
            phase_by_turn: FastMap::default(),
            step_by_key: FastMap::default(),
            tool_by_call: FastMap::default(),
            call_spill: FastMap::default(),
            by_retry_key: FastMap::default(),
            ids: FastSet::default(),
            cur_phase: None,
            cur_step: None,
            last_phase: None,
            pending_user: None,
            title_set: false,
            first_time: None,
            last_time: 0,
            last_seq: None,
            seen: FastSet::default(),
            open: BTreeSet::new(),
            phases: Vec::new(),
            waiting_nodes: BTreeSet::new(),
            failed: BTreeSet::new(),
            retried: BTreeSet::new(),
            failed_idx: Vec::new(),
            retried_idx: Vec::new(),
            touched: Vec::new(),
            slow: BTreeSet::new(),
            files: FastSet::default(),
            task_fail_end: None,
            work_fail_end: None,
            work_ok_end: None,
            task_ok_end: None,
            unmatched_subagents: Vec::new(),
            finished: false,
            changed_nodes: Vec::new(),
            changed_edges: Vec::new(),
            edges_seen: 0,
            idbuf: String::new(),
            edgebuf: String::new(),
        };
        let meta = NodeMeta::Task(TaskMeta {
            workspace,
            title: session_id,
            ..TaskMeta::default()
        });
        me.add_node(
            "task",
            NodeType::Task,
            String::new(),
            Status::Pending,
            None,
            None,
            None,
            meta,
        );
        me.g.meta
            .header
            .insert("agent".into(), me.opts.agent.map(|a| a.as_str()).into());
        me.refresh();
        me
    }

    /// Reserves room for about `events` more events (a third of them become nodes).
    pub fn reserve(&mut self, events: usize) {
        self.reserve_lists(events);
        self.reserve_tables(events);
    }

    /// [`reserve`](Self::reserve)'s lists only (nodes, edges, the critical path's state): room
    /// reserved and never used costs no memory, one short is copied when it grows.
    pub(crate) fn reserve_lists(&mut self, events: usize) {
        self.g.nodes.reserve(events / 3);
        self.scratch.reserve(events / 3);
        self.g.edges.reserve(events);
        self.crit.reserve(events / 3);
    }

    /// [`reserve`](Self::reserve)'s hash tables only: a table reserved for more than it gets
    /// has more buckets than it needs, and its inserts touch them all.
    pub(crate) fn reserve_tables(&mut self, events: usize) {
        self.seen.reserve(events);
        self.ids.reserve(events / 3);
        self.tool_by_call.reserve(events / 5);
        self.by_retry_key.reserve(events / 5);
        self.step_by_key.reserve(events / 10);
    }

    /// The graph as of the last append (open nodes `RUNNING`).
    pub fn graph(&self) -> &TaskGraph {
        &self.g
    }

    /// The options this graph was built with.
    pub fn options(&self) -> &BuildOptions {
        &self.opts
    }

    /// Highest `seq` applied so far.
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// What changed since the previous call (or since the graph was made): the indices, in
    /// ascending order, of the nodes added or changed and of the edges added or changed. Nodes
    /// and edges are never removed or reordered, so applying these to the previous graph
    /// (replace by index, append past its end) and taking every other field of
    /// [`graph`](Self::graph) gives the current graph.
    pub fn take_changes(&mut self) -> GraphChanges {
        let mut nodes = std::mem::take(&mut self.changed_nodes);
        for &i in &nodes {
            self.scratch[i].changed = false;
        }
        nodes.sort_unstable();
        let mut edges = std::mem::take(&mut self.changed_edges);
        edges.retain(|&e| e < self.edges_seen);
        edges.extend(self.edges_seen..self.g.edges.len());
        edges.sort_unstable();
        edges.dedup();
        self.edges_seen = self.g.edges.len();
        GraphChanges { nodes, edges }
    }

    /// Records that node `i` was added or changed (for [`take_changes`](Self::take_changes)).
    fn mark(&mut self, i: usize) {
        if let Some(a) = self.scratch.get_mut(i)
            && !a.changed
        {
            a.changed = true;
            self.changed_nodes.push(i);
        }
    }

    /// Applies `events` (in the given order) and refreshes summary and critical path.
    pub fn append(&mut self, events: &[Event]) -> AppendStats {
        self.append_iter(events.iter())
    }

    pub(crate) fn append_iter<'a>(
        &mut self,
        events: impl Iterator<Item = &'a Event>,
    ) -> AppendStats {
        let stats = self.apply_all(events);
        self.refresh();
        stats
    }

    /// Applies `events` as [`append`](Self::append) does, without refreshing summary and
    /// critical path: a build fed while the session is read
    /// ([`StreamedBuild`](super::streamed::StreamedBuild)) refreshes once, when
    /// [`settled`](Self::settle).
    pub(crate) fn feed(&mut self, events: &[Event]) {
        self.apply_all(events.iter());
    }

    /// A graph fed a whole session ([`feed`](Self::feed)) made what a build with `options`
    /// makes after appending the same events: its options take `options`' liveness and
    /// children (the two a build only consults when it refreshes) and it refreshes. `false`
    /// (nothing changed) when it was made with other options otherwise, or already has
    /// children.
    pub(crate) fn settle(&mut self, options: &BuildOptions) -> bool {
        let made = BuildOptions {
            live: options.live,
            children: Vec::new(),
            ..self.opts.clone()
        };
        let wanted = BuildOptions {
            children: Vec::new(),
            ..options.clone()
        };
        if made != wanted || !self.opts.children.is_empty() {
            return false;
        }
        self.opts = options.clone();
        self.children_used = vec![false; options.children.len()];
        self.refresh();
        true
    }

    fn apply_all<'a>(&mut self, events: impl Iterator<Item = &'a Event>) -> AppendStats {
        let mut stats = AppendStats::default();
        for e in events {
            if !self.seen.insert(event_key(e)) {
                stats.duplicates += 1;
                continue;
            }
            if self.last_seq.is_some_and(|l| e.seq < l) {
                stats.out_of_order += 1;
            }
            self.last_seq = Some(self.last_seq.map_or(e.seq, |l| l.max(e.seq)));
            if !self.apply(e) {
                stats.orphan_results += 1;
            }
            stats.applied += 1;
        }
        stats
    }

    /// Adds a child session that subagent calls may be matched to.
    pub fn add_child(&mut self, child: ChildSummary) {
        self.opts.children.push(child);
        self.children_used.push(false);
        self.match_children();
    }

    /// Finishes the build: in archived mode (`live == false`) open nodes are closed as
    /// `FAILED` (tool/test) or `CANCELLED` (others) with `meta.unclosed = true`.
    pub fn finish(mut self) -> TaskGraph {
        if !self.opts.live {
            self.close_unclosed();
        }
        self.finished = true;
        self.refresh();
        self.g
    }

    /// The graph without archived finalisation (open nodes stay `RUNNING`).
    pub fn into_graph(self) -> TaskGraph {
        self.g
    }
}
