//! The stateful graph builder behind [`build_graph`](super::build_graph) and
//! [`IncrementalGraph`].

use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use serde_json::{Map, Value};

use super::classify::{classify, command_of, files_of, skill_name};
use super::critical::CritState;
use super::model::*;
use super::{BuildOptions, ChildSummary};
use crate::event::{
    Event, EventKind, SessionStart, SubagentDescriptor, Todo, TurnEndKind, TurnReason,
};
use crate::util::{FastHasher, FastMap, FastSet, hash_value, truncate_chars, workspace_slug};

mod children;
mod ids;
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
        self.g.nodes.reserve(events / 3);
        self.scratch.reserve(events / 3);
        self.g.edges.reserve(events);
        self.seen.reserve(events);
        self.crit.reserve(events / 3);
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
        self.refresh();
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

    // ----- node and edge primitives -------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn add_node(
        &mut self,
        base_id: &str,
        node_type: NodeType,
        name: String,
        status: Status,
        start: Option<i64>,
        parent: Option<usize>,
        seq: Option<u64>,
        meta: NodeMeta,
    ) -> usize {
        let id: SharedStr = if self.ids.contains(&key_hash(base_id)) {
            (2..)
                .map(|n| format!("{base_id}~{n}"))
                .find(|c| !self.ids.contains(&key_hash(c)))
                .map_or_else(|| base_id.into(), SharedStr::from)
        } else {
            base_id.into()
        };
        self.ids.insert(key_hash(id.as_str()));
        let idx = self.g.nodes.len();
        let phase = match node_type {
            NodeType::Phase => Some(idx),
            _ => parent.and_then(|p| self.scratch[p].phase),
        };
        self.g.nodes.push(Node {
            id,
            node_type,
            name,
            status,
            start_time: start,
            end_time: None,
            duration_ms: 0,
            event_ids: {
                // Most nodes get a few more events (tool: result; step: header, usage, finish, end).
                let mut v = Vec::with_capacity(if node_type == NodeType::Agent { 6 } else { 2 });
                v.extend(seq);
                v
            },
            session_id: self.sid.clone(),
            task_id: self.tid.clone(),
            parent_id: parent.map(|p| self.g.nodes[p].id.clone()),
            meta,
        });
        self.scratch.push(NodeScratch {
            parent,
            phase,
            ..NodeScratch::default()
        });
        self.mark(idx);
        self.crit.add_node(0);
        if status.is_open() && node_type != NodeType::Task {
            self.open.insert(idx);
        }
        if node_type != NodeType::Task && node_type != NodeType::Phase {
            self.touch(idx);
        }
        let c = &mut self.g.summary.counts;
        match node_type {
            NodeType::Task => {}
            NodeType::Phase => c.phases += 1,
            NodeType::Agent => c.agents += 1,
            NodeType::Tool => c.tools += 1,
            NodeType::Skill => c.skills += 1,
            NodeType::Subagent => c.subagents += 1,
            NodeType::Code => c.code_changes += 1,
            NodeType::Test => c.tests += 1,
            NodeType::Plan => c.plans += 1,
        }
        if let Some(p) = parent {
            self.add_edge(p, idx, EdgeType::Contains, Map::new());
        }
        idx
    }

    fn add_edge(
        &mut self,
        src: usize,
        dst: usize,
        edge_type: EdgeType,
        meta: Map<String, Value>,
    ) -> usize {
        let idx = self.g.edges.len();
        // `e<n>` in a reusable buffer: the only allocation is the shared string itself.
        self.edgebuf.clear();
        self.edgebuf.push('e');
        self.edgebuf.push_str(itoa::Buffer::new().format(idx + 1));
        let id = SharedStr::from(self.edgebuf.as_str());
        self.g.edges.push(Edge {
            id,
            source: self.g.nodes[src].id.clone(),
            target: self.g.nodes[dst].id.clone(),
            edge_type,
            meta,
        });
        if edge_type.is_execution() {
            self.crit.add_edge(src, dst, idx);
        }
        idx
    }

    /// Records that node `i` changed (status, duration, attempts) since the last refresh.
    fn touch(&mut self, i: usize) {
        if !self.scratch[i].touched {
            self.scratch[i].touched = true;
            self.touched.push(i);
        }
    }

    /// Whether tool node `i` has an attempt with call id `c`.
    fn has_call(&self, i: usize, c: &str) -> bool {
        matches!(&self.g.nodes[i].meta, NodeMeta::Tool(m) if m.attempts.iter().any(|a| a.call_id == c))
    }

    /// The tool node of call id `c`.
    fn tool_of_call(&self, c: &str) -> Option<usize> {
        match self.tool_by_call.get(&key_hash(c)) {
            Some(&i) if self.has_call(i, c) => Some(i),
            Some(_) => self.call_spill.get(c).copied(),
            None => None,
        }
    }

    /// Maps call id `c` to tool node `i` (which already has an attempt with that id).
    fn map_call(&mut self, c: &str, i: usize) {
        let h = key_hash(c);
        match self.tool_by_call.get(&h) {
            Some(&j) if j != i && !self.has_call(j, c) => {
                self.call_spill.insert(c.to_owned(), i);
            }
            _ => {
                self.tool_by_call.insert(h, i);
            }
        }
    }

    fn note(&mut self, i: usize, seq: u64) {
        self.mark(i);
        let ids = &mut self.g.nodes[i].event_ids;
        if ids.last() != Some(&seq) {
            ids.push(seq);
        }
    }

    fn set_status(&mut self, i: usize, s: Status) {
        if self.g.nodes[i].status == s {
            return;
        }
        self.mark(i);
        let node = &mut self.g.nodes[i];
        node.status = s;
        let t = node.node_type;
        self.touch(i);
        if t == NodeType::Task {
            return;
        }
        if s.is_open() {
            self.open.insert(i);
        } else {
            self.open.remove(&i);
        }
        if t != NodeType::Phase {
            if s == Status::Failed {
                self.failed.insert(i);
            } else {
                self.failed.remove(&i);
            }
        }
    }

    fn set_duration(&mut self, i: usize, d: i64) {
        let d = d.max(0);
        let old = self.g.nodes[i].duration_ms;
        if old == d {
            return;
        }
        self.g.nodes[i].duration_ms = d;
        self.mark(i);
        self.touch(i);
        let t = self.g.nodes[i].node_type;
        if t.is_tool_like()
            && let Some(p) = self.scratch[i].parent
            && self.g.nodes[p].node_type == NodeType::Agent
        {
            self.scratch[p].child_dur += d - old;
            self.update_weight(p);
        }
        self.update_weight(i);
    }

    fn update_weight(&mut self, i: usize) {
        let n = &self.g.nodes[i];
        let w = match n.node_type {
            NodeType::Task | NodeType::Phase => 0,
            NodeType::Agent => (n.duration_ms - self.scratch[i].child_dur).max(0),
            _ => n.duration_ms,
        };
        self.crit.set_weight(i, w);
    }

    fn running_duration(&self, i: usize) -> i64 {
        let n = &self.g.nodes[i];
        if n.node_type.is_tool_like() {
            let a = &self.scratch[i];
            a.closed_attempts_ms
                + a.open_attempt_start
                    .map_or(0, |s| (self.last_time - s).max(0))
        } else {
            n.start_time.map_or(0, |s| (self.last_time - s).max(0))
        }
    }

    fn agent_meta(&mut self, i: usize) -> Option<&mut AgentMeta> {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Agent(m) => Some(m),
            _ => None,
        }
    }

    fn tool_meta(&mut self, i: usize) -> Option<&mut ToolMeta> {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Tool(m) => Some(m),
            _ => None,
        }
    }

    fn phase_meta(&mut self, i: usize) -> Option<&mut PhaseMeta> {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Phase(m) => Some(m),
            _ => None,
        }
    }

    fn task_meta(&mut self) -> Option<&mut TaskMeta> {
        self.mark(0);
        match &mut self.g.nodes[0].meta {
            NodeMeta::Task(m) => Some(m),
            _ => None,
        }
    }

    fn set_unclosed(&mut self, i: usize) {
        self.mark(i);
        match &mut self.g.nodes[i].meta {
            NodeMeta::Task(m) => m.unclosed = true,
            NodeMeta::Phase(m) => m.unclosed = true,
            NodeMeta::Agent(m) => m.unclosed = true,
            NodeMeta::Tool(m) => m.unclosed = true,
        }
    }

    // ----- events ---------------------------------------------------------------------------

    /// Applies one event; returns false for an orphan tool result.
    fn apply(&mut self, e: &Event) -> bool {
        let t = e.time_ms;
        self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
        self.last_time = self.last_time.max(t);
        if self.g.nodes.len() == 1 && self.g.nodes[0].start_time.is_none() {
            self.g.nodes[0].start_time = Some(t);
            self.mark(0);
        }
        match &e.kind {
            EventKind::Session(h) => self.on_session(h, e.seq),
            EventKind::Title { title } => {
                self.title_set = true;
                self.set_title(title.clone());
                self.note(0, e.seq);
            }
            EventKind::UserMessage { text } => self.on_user(text, e.seq),
            EventKind::TurnStart { turn } => {
                self.start_phase(*turn, t, e.seq, false);
            }
            EventKind::TurnEnd { turn, reason } => self.end_phase(*turn, reason, t, e.seq),
            EventKind::StepStart { turn, step } => {
                self.start_step(*turn, *step, t, e.seq);
            }
            EventKind::StepEnd { turn, step } => {
                let i = self
                    .step_by_key
                    .get(&(self.resolve_turn(*turn), *step))
                    .copied()
                    .or(self.cur_step);
                if let Some(i) = i {
                    self.note(i, e.seq);
                    self.close_step(i, t);
                }
            }
            EventKind::RequestHeader { provider, model } => {
                let i = self.ensure_step(t, e.seq);
                self.note(i, e.seq);
                if let Some(m) = self.agent_meta(i) {
                    if provider.is_some() {
                        m.provider.clone_from(provider);
                    }
                    if model.is_some() {
                        m.model.clone_from(model);
                    }
                }
            }
            EventKind::Usage(u) => {
                let i = self.ensure_step(t, e.seq);
                self.note(i, e.seq);
                if let Some(m) = self.agent_meta(i) {
                    m.tokens.input += u.input;
                    m.tokens.output += u.output;
                    m.tokens.cache_read += u.cache_read;
                }
                self.g.summary.tokens.add(u.input, u.output, u.cache_read);
                self.g.meta.tokens.totals = self.g.summary.tokens;
                // Borrow the model name; allocate the key only for a model not seen before.
                let key = match &self.g.nodes[i].meta {
                    NodeMeta::Agent(m) => m.model.as_deref(),
                    _ => None,
                }
                .unwrap_or("unknown");
                let by_model = &mut self.g.meta.tokens.by_model;
                match by_model.get_mut(key) {
                    Some(tot) => tot.add(u.input, u.output, u.cache_read),
                    None => by_model.entry(key.to_owned()).or_default().add(
                        u.input,
                        u.output,
                        u.cache_read,
                    ),
                }
            }
            EventKind::Finish { reason } => {
                let i = self.ensure_step(t, e.seq);
                self.note(i, e.seq);
                if let Some(m) = self.agent_meta(i) {
                    m.finish_reason = Some(reason.clone());
                }
            }
            EventKind::LlmRetry {
                retry,
                max_retries,
                delay_ms,
                failure,
            } => {
                let i = self.ensure_step(t, e.seq);
                self.note(i, e.seq);
                let mut n = 0;
                if let Some(m) = self.agent_meta(i) {
                    m.attempts.push(LlmAttempt {
                        attempt: (*retry).max(m.attempts.len() as u32 + 1),
                        status: Status::Failed,
                        time: t,
                        delay_ms: *delay_ms,
                        max_retries: *max_retries,
                        failure: failure.clone(),
                        event_ids: vec![e.seq],
                    });
                    m.retried = true;
                    n = m.attempts.len();
                }
                if !self.scratch[i].closed {
                    self.set_status(i, Status::Retrying);
                }
                self.g.summary.counts.retries += 1;
                self.retried.insert(i);
                self.touch(i);
                self.upsert_retry_edge(i, n as u64 + 1);
            }
            EventKind::ToolCall {
                turn,
                step,
                call_id,
                name,
                arguments,
            } => self.on_tool_call(*turn, *step, call_id, name, arguments, t, e.seq),
            EventKind::ToolResult {
                call_id,
                output,
                is_error,
            } => return self.on_tool_result(call_id, output, *is_error, t, e.seq),
            EventKind::ToolCancelled { call_id, reason } => {
                self.on_tool_cancelled(call_id, reason, t, e.seq)
            }
            EventKind::TodoWrite { todos, call_id } => {
                self.on_todos(todos, call_id.as_deref(), t, e.seq)
            }
            EventKind::SubagentDescriptor(d) => self.on_descriptor(d, e.seq),
        }
        true
    }

    fn set_title(&mut self, title: String) {
        self.g.title = title.clone();
        self.g.nodes[0].name = truncate_chars(&title, NAME_CHARS);
        self.mark(0);
        if let Some(m) = self.task_meta() {
            m.title = title;
        }
    }

    fn on_session(&mut self, h: &SessionStart, seq: u64) {
        self.note(0, seq);
        if self.opts.session_id.is_none() && !h.id.is_empty() {
            self.g.session_id = h.id.clone();
            if self.opts.task_id.is_none() {
                self.g.task_id = h.id.clone();
            }
            self.sid = self.g.session_id.as_str().into();
            self.tid = self.g.task_id.as_str().into();
            let (sid, tid) = (self.sid.clone(), self.tid.clone());
            for n in &mut self.g.nodes {
                n.session_id.clone_from(&sid);
                n.task_id.clone_from(&tid);
            }
            for i in 0..self.g.nodes.len() {
                self.mark(i);
            }
            if !self.title_set && self.g.title.is_empty() {
                self.g.title = h.id.clone();
            }
        }
        if let Some(t) = h.created_ms {
            self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
            self.g.nodes[0].start_time = self.first_time;
            self.mark(0);
        }
        self.g.cwd.clone_from(&h.cwd);
        if self.opts.workspace.is_none() {
            self.g.workspace = h.cwd.as_deref().map(workspace_slug).unwrap_or_default();
        }
        let ws = self.g.workspace.clone();
        let cwd = h.cwd.clone();
        let depth = h.delegation_depth;
        if let Some(m) = self.task_meta() {
            m.cwd = cwd;
            m.delegation_depth = depth;
            m.workspace = ws;
        }
        let hm = &mut self.g.meta.header;
        hm.insert("id".into(), h.id.clone().into());
        hm.insert("version".into(), h.version.clone().into());
        hm.insert("cwd".into(), h.cwd.clone().into());
        hm.insert("created_ms".into(), h.created_ms.into());
        hm.insert("parent_session".into(), h.parent_session.clone().into());
        hm.insert("delegation_depth".into(), h.delegation_depth.into());
        hm.insert("origin".into(), h.origin.clone().into());
        hm.insert("raw".into(), h.raw.clone());
    }
}
