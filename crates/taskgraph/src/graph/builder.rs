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

/// Display names are cut to this many characters.
const NAME_CHARS: usize = 80;

#[derive(Debug, Default, Clone)]
struct Aux {
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
    aux: Vec<Aux>,
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
    /// work node is either filed under its current duration (`Aux::slow_key`) or in `touched`.
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

fn key_hash(parts: impl Hash) -> u64 {
    let mut h = FastHasher::default();
    parts.hash(&mut h);
    h.finish()
}

fn event_key(e: &Event) -> u64 {
    let k = match &e.kind {
        EventKind::Session(h) => key_hash(&h.id),
        EventKind::Title { title } => key_hash(title),
        EventKind::UserMessage { text } => key_hash(text),
        EventKind::TurnStart { turn } | EventKind::TurnEnd { turn, .. } => u64::from(*turn),
        EventKind::StepStart { turn, step } | EventKind::StepEnd { turn, step } => {
            (u64::from(*turn) << 32) | u64::from(*step)
        }
        EventKind::RequestHeader { provider, model } => key_hash((provider, model)),
        EventKind::Usage(u) => key_hash((u.input, u.output, u.cache_read)),
        EventKind::Finish { reason } => key_hash(reason),
        EventKind::LlmRetry { retry, failure, .. } => key_hash((retry, &failure.message)),
        EventKind::ToolCall { call_id, .. } => key_hash(call_id),
        EventKind::ToolResult {
            call_id, is_error, ..
        } => key_hash((call_id, is_error)),
        EventKind::TodoWrite { todos, call_id } => key_hash((call_id, todos.len())),
        EventKind::SubagentDescriptor(d) => key_hash((&d.call_id, &d.session_id)),
        EventKind::ToolCancelled { call_id, .. } => key_hash(call_id),
    };
    key_hash((e.seq, e.kind.tag(), k))
}

/// Appends the decimal digits of `n` (no formatting machinery, no allocation).
fn push_num(buf: &mut String, n: u64) {
    buf.push_str(itoa::Buffer::new().format(n));
}

/// `prefix` followed by the parts, numbers in decimal, separated by `sep`, into `buf`.
fn build_id(buf: &mut String, prefix: &str, nums: &[u64], sep: char) {
    buf.clear();
    buf.push_str(prefix);
    for (k, &n) in nums.iter().enumerate() {
        if k > 0 {
            buf.push(sep);
        }
        push_num(buf, n);
    }
}

fn args_hash(name: &str, args: &Value) -> u64 {
    let mut h = FastHasher::default();
    name.hash(&mut h);
    hash_value(args, &mut h);
    h.finish()
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
            aux: Vec::new(),
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
        self.aux.reserve(events / 3);
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
            self.aux[i].changed = false;
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
        if let Some(a) = self.aux.get_mut(i)
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
            _ => parent.and_then(|p| self.aux[p].phase),
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
        self.aux.push(Aux {
            parent,
            phase,
            ..Aux::default()
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
        if !self.aux[i].touched {
            self.aux[i].touched = true;
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
            && let Some(p) = self.aux[i].parent
            && self.g.nodes[p].node_type == NodeType::Agent
        {
            self.aux[p].child_dur += d - old;
            self.update_weight(p);
        }
        self.update_weight(i);
    }

    fn update_weight(&mut self, i: usize) {
        let n = &self.g.nodes[i];
        let w = match n.node_type {
            NodeType::Task | NodeType::Phase => 0,
            NodeType::Agent => (n.duration_ms - self.aux[i].child_dur).max(0),
            _ => n.duration_ms,
        };
        self.crit.set_weight(i, w);
    }

    fn running_duration(&self, i: usize) -> i64 {
        let n = &self.g.nodes[i];
        if n.node_type.is_tool_like() {
            let a = &self.aux[i];
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
                if !self.aux[i].closed {
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

    fn on_user(&mut self, text: &str, seq: u64) {
        // Titles come from the first real request (not a slash-command envelope or a preamble).
        let request = crate::util::request_text(text);
        let first = match (self.task_meta(), request) {
            (Some(m), Some(r)) if m.user_request.is_none() => {
                m.user_request = Some(r.to_owned());
                true
            }
            _ => false,
        };
        if first && !self.title_set {
            let r = request.unwrap_or_default();
            self.g.title = truncate_chars(r.lines().next().unwrap_or_default(), NAME_CHARS);
            self.g.nodes[0].name.clone_from(&self.g.title);
            self.mark(0);
            let title = self.g.title.clone();
            if let Some(m) = self.task_meta() {
                m.title = title;
            }
        }
        // Attach to the open phase that has no message and no steps yet; else to the next turn.
        if let Some(p) = self.cur_phase
            && self.g.nodes[p].status.is_open()
            && self.aux[p].last_step.is_none()
            && matches!(&self.g.nodes[p].meta, NodeMeta::Phase(m) if m.user_message.is_none())
        {
            self.set_phase_message(p, text);
            self.note(p, seq);
        } else {
            self.pending_user = Some((text.to_owned(), seq));
        }
    }

    fn set_phase_message(&mut self, p: usize, text: &str) {
        let shown = crate::util::request_text(text).unwrap_or(text.trim());
        self.g.nodes[p].name = truncate_chars(shown.lines().next().unwrap_or_default(), NAME_CHARS);
        self.mark(p);
        let max = self.opts.max_output_chars;
        if let Some(m) = self.phase_meta(p) {
            m.user_message = Some(truncate_chars(text, max));
        }
    }

    fn resolve_turn(&self, turn: u32) -> u32 {
        if turn == 0 {
            self.cur_phase
                .and_then(|p| match &self.g.nodes[p].meta {
                    NodeMeta::Phase(m) => Some(m.turn),
                    _ => None,
                })
                .unwrap_or(0)
        } else {
            turn
        }
    }

    fn start_phase(&mut self, turn: u32, t: i64, seq: u64, implicit: bool) -> usize {
        if let Some(&p) = self.phase_by_turn.get(&turn)
            && !self.aux[p].closed
        {
            // An implicitly created phase (or a repeated turn/start) is the same phase.
            self.note(p, seq);
            if !implicit {
                let s = self.g.nodes[p].start_time.map_or(t, |s| s.min(t));
                self.g.nodes[p].start_time = Some(s);
                self.mark(p);
            }
            return p;
        }
        if let Some(prev) = self.cur_phase
            && !self.aux[prev].closed
        {
            self.force_close_phase(prev, t);
        }
        let mut name = String::with_capacity(8);
        build_id(&mut name, "Turn ", &[u64::from(turn)], '-');
        let meta = NodeMeta::Phase(PhaseMeta {
            turn,
            ..PhaseMeta::default()
        });
        let mut buf = std::mem::take(&mut self.idbuf);
        build_id(&mut buf, "phase-", &[u64::from(turn)], '-');
        let p = self.add_node(
            &buf,
            NodeType::Phase,
            name,
            Status::Running,
            Some(t),
            Some(0),
            Some(seq),
            meta,
        );
        self.idbuf = buf;
        let from = self.last_phase.unwrap_or(0);
        self.add_edge(from, p, EdgeType::DependsOn, Map::new());
        // The work of the previous turn leads into this one: its last step, and the calls whose
        // results no step of that turn consumed, so the critical path can cross turns.
        if let Some(prev) = self.last_phase {
            let mut tails: Vec<usize> = self.aux[prev].last_step.into_iter().collect();
            tails.extend(self.aux[prev].unconsumed.iter().copied());
            for tail in tails {
                self.add_edge(tail, p, EdgeType::DependsOn, Map::new());
            }
        }
        self.phase_by_turn.insert(turn, p);
        self.cur_phase = Some(p);
        self.last_phase = Some(p);
        self.cur_step = None;
        if let Some((text, useq)) = self.pending_user.take() {
            self.set_phase_message(p, &text);
            self.note(p, useq);
            self.g.nodes[p].event_ids.sort_unstable();
            self.mark(p);
        }
        p
    }

    fn ensure_phase(&mut self, t: i64, seq: u64) -> usize {
        match self.cur_phase {
            Some(p) => p,
            None => {
                let turn = self.phase_by_turn.keys().max().map_or(1, |m| m + 1);
                self.start_phase(turn, t, seq, true)
            }
        }
    }

    fn phase_status(&self, p: usize) -> Status {
        let a = &self.aux[p];
        // An aborted turn is the user's decision, not a failure: it stays CANCELLED even when
        // the interrupted tool reported an error.
        if a.reason == Some(TurnEndKind::Aborted) {
            return Status::Cancelled;
        }
        let failed_last = match (a.fail_end, a.ok_end) {
            (Some(f), Some(o)) => f > o,
            (Some(_), None) => true,
            _ => false,
        };
        if failed_last {
            return Status::Failed;
        }
        match a.reason {
            Some(TurnEndKind::Error) => Status::Failed,
            Some(TurnEndKind::Aborted) => Status::Cancelled,
            _ => Status::Success,
        }
    }

    fn end_phase(&mut self, turn: u32, reason: &TurnReason, t: i64, seq: u64) {
        let turn = self.resolve_turn(turn);
        let p = match self.phase_by_turn.get(&turn).copied().or(self.cur_phase) {
            Some(p) => p,
            None => self.start_phase(turn, t, seq, true),
        };
        self.note(p, seq);
        // Close what is still open in this phase.
        let open_here: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| i != p && self.aux[i].phase == Some(p))
            .collect();
        for i in open_here {
            let nt = self.g.nodes[i].node_type;
            match (reason.kind, nt) {
                (TurnEndKind::Aborted, _) => self.close_as(i, Status::Cancelled, t, false),
                (_, NodeType::Agent) => self.close_step(i, t),
                _ => {} // tools may still report; archived finish closes them
            }
        }
        self.aux[p].closed = true;
        self.aux[p].reason = Some(reason.kind);
        if let Some(m) = self.phase_meta(p) {
            m.reason = Some(reason.kind.as_str().to_owned());
            m.reason_message.clone_from(&reason.message);
        }
        let st = self.phase_status(p);
        self.set_status(p, st);
        self.g.nodes[p].end_time = Some(t);
        self.mark(p);
        let d = self.g.nodes[p].start_time.map_or(0, |s| t - s);
        self.set_duration(p, d);
        self.record_phase_outcome(p);
        self.g.meta.final_turn_reason = FinalTurnReason {
            turn: Some(turn),
            kind: Some(reason.kind.as_str().to_owned()),
            message: reason.message.clone(),
        };
        if self.cur_phase == Some(p) {
            self.cur_step = None;
        }
    }

    fn record_phase_outcome(&mut self, p: usize) {
        let end = self.g.nodes[p].end_time;
        match self.g.nodes[p].status {
            Status::Failed => self.task_fail_end = self.task_fail_end.max(end),
            Status::Success => self.task_ok_end = self.task_ok_end.max(end),
            _ => {}
        }
    }

    /// A descendant of phase `p` closed with `status` at `end`: update the recovery maxima.
    fn phase_outcome(&mut self, i: usize, status: Status, end: i64) {
        if self.g.nodes[i].node_type.is_tool_like() {
            match status {
                Status::Failed => self.work_fail_end = self.work_fail_end.max(Some(end)),
                Status::Success => self.work_ok_end = self.work_ok_end.max(Some(end)),
                _ => {}
            }
        }
        let Some(p) = self.aux[i].phase else {
            return;
        };
        match status {
            Status::Failed => {
                self.aux[p].fail_end = Some(self.aux[p].fail_end.map_or(end, |f| f.max(end)))
            }
            Status::Success => {
                self.aux[p].ok_end = Some(self.aux[p].ok_end.map_or(end, |o| o.max(end)))
            }
            _ => {}
        }
        if self.aux[p].closed && !self.g.nodes[p].status.is_open() && self.aux[p].reason.is_some() {
            let st = self.phase_status(p);
            self.set_status(p, st);
            self.record_phase_outcome(p);
        }
    }

    fn start_step(&mut self, turn: u32, step: u32, t: i64, seq: u64) -> usize {
        let turn = self.resolve_turn(turn);
        if let Some(&i) = self.step_by_key.get(&(turn, step))
            && !self.aux[i].closed
        {
            self.note(i, seq);
            return i;
        }
        let p = match self.phase_by_turn.get(&turn).copied() {
            Some(p) if !self.aux[p].closed || self.cur_phase == Some(p) => p,
            _ if turn == 0 => self.ensure_phase(t, seq),
            _ => self.start_phase(turn, t, seq, true),
        };
        if let Some(prev) = self.aux[p].last_step
            && !self.aux[prev].closed
        {
            self.force_close(prev, t);
        }
        let turn_no = match &self.g.nodes[p].meta {
            NodeMeta::Phase(m) => m.turn,
            _ => turn,
        };
        let step = if step == 0 {
            self.aux[p].max_step_no + 1
        } else {
            step
        };
        self.aux[p].max_step_no = self.aux[p].max_step_no.max(step);
        let meta = NodeMeta::Agent(AgentMeta {
            turn: turn_no,
            step,
            ..AgentMeta::default()
        });
        let mut buf = std::mem::take(&mut self.idbuf);
        build_id(
            &mut buf,
            "step-",
            &[u64::from(turn_no), u64::from(step)],
            '-',
        );
        let mut name = String::with_capacity(12);
        build_id(
            &mut name,
            "LLM ",
            &[u64::from(turn_no), u64::from(step)],
            '.',
        );
        let i = self.add_node(
            &buf,
            NodeType::Agent,
            name,
            Status::Running,
            Some(t),
            Some(p),
            Some(seq),
            meta,
        );
        self.idbuf = buf;
        let from = self.aux[p].last_step.unwrap_or(p);
        self.add_edge(from, i, EdgeType::DependsOn, Map::new());
        // Keep the phase's buffer (and its capacity) for the next step's tools.
        let mut pending = std::mem::take(&mut self.aux[p].unconsumed);
        for &tool in &pending {
            self.aux[tool].pending_consume = false;
            self.add_edge(tool, i, EdgeType::Consumes, Map::new());
        }
        pending.clear();
        self.aux[p].unconsumed = pending;
        self.aux[p].last_step = Some(i);
        self.step_by_key.insert((turn_no, step), i);
        self.cur_step = Some(i);
        i
    }

    fn ensure_step(&mut self, t: i64, seq: u64) -> usize {
        match self.cur_step {
            Some(i) => i,
            None => {
                let p = self.ensure_phase(t, seq);
                let turn = match &self.g.nodes[p].meta {
                    NodeMeta::Phase(m) => m.turn,
                    _ => 0,
                };
                self.start_step(turn, 0, t, seq)
            }
        }
    }

    fn close_step(&mut self, i: usize, t: i64) {
        if self.aux[i].closed {
            return;
        }
        let failed = match &self.g.nodes[i].meta {
            NodeMeta::Agent(m) => m.finish_reason.as_deref() == Some("error"),
            _ => false,
        };
        let st = if failed {
            Status::Failed
        } else {
            Status::Success
        };
        self.close_as(i, st, t, false);
    }

    /// Closes node `i` with status `st` at `t` (tools: closes the open attempt).
    fn close_as(&mut self, i: usize, st: Status, t: i64, unclosed: bool) {
        if self.aux[i].closed && !unclosed {
            return;
        }
        self.aux[i].closed = true;
        let start = self.g.nodes[i].start_time.unwrap_or(t);
        let t = t.max(start);
        self.g.nodes[i].end_time = Some(t);
        self.mark(i);
        if self.g.nodes[i].node_type.is_tool_like() {
            if let Some(s) = self.aux[i].open_attempt_start.take() {
                self.aux[i].closed_attempts_ms += (t - s).max(0);
            }
            if let Some(m) = self.tool_meta(i)
                && let Some(a) = m.attempts.last_mut()
                && a.end.is_none()
            {
                a.end = Some(t);
                a.status = st;
            }
            let d = self.aux[i].closed_attempts_ms;
            self.set_duration(i, d);
        } else {
            self.set_duration(i, t - start);
        }
        self.set_status(i, st);
        if unclosed {
            self.set_unclosed(i);
        }
        // An edit that was cancelled never changed a file: it is not a code change.
        if st == Status::Cancelled
            && self.g.nodes[i].node_type == NodeType::Code
            && !self.aux[i].uncounted
        {
            self.aux[i].uncounted = true;
            let c = &mut self.g.summary.counts.code_changes;
            *c = c.saturating_sub(1);
        }
        self.phase_outcome(i, st, t);
    }

    /// Closes a node left open (superseded or archived) as CANCELLED with `meta.unclosed`:
    /// a call without output never reported a failure, so (in every reader alike) it is not
    /// counted as one.
    fn force_close(&mut self, i: usize, default_end: i64) {
        let st = Status::Cancelled;
        let end = self.aux[i]
            .parent
            .filter(|&p| self.aux[p].closed)
            .and_then(|p| self.g.nodes[p].end_time)
            .unwrap_or(default_end);
        self.close_as(i, st, end, true);
        if let Some(m) = self.tool_meta(i)
            && m.error.is_none()
        {
            m.error = Some("no result recorded (unclosed)".into());
        }
    }

    fn force_close_phase(&mut self, p: usize, t: i64) {
        let open_here: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| i != p && self.aux[i].phase == Some(p))
            .collect();
        self.force_close(p, t);
        for i in open_here {
            self.force_close(i, t);
        }
    }

    fn close_unclosed(&mut self) {
        let end = self.last_time;
        let open: Vec<usize> = self.open.iter().copied().collect();
        // Children first, so they take their still-open parents' end (the session end).
        for &i in open.iter().rev() {
            if self.g.nodes[i].status.is_open() {
                self.force_close(i, end);
            }
        }
        // Recompute phase outcomes from scratch.
        self.task_fail_end = None;
        self.task_ok_end = None;
        for p in 0..self.g.nodes.len() {
            if self.g.nodes[p].node_type == NodeType::Phase {
                if self.aux[p].reason.is_some() {
                    let st = self.phase_status(p);
                    self.set_status(p, st);
                }
                self.record_phase_outcome(p);
            }
        }
    }

    fn upsert_retry_edge(&mut self, i: usize, attempts: u64) {
        // The retries edge of a node is created once.
        if let Some(ei) = self.aux[i].retry_edge
            && let Some(e) = self.g.edges.get_mut(ei)
        {
            e.meta.insert("attempts".into(), attempts.into());
            self.changed_edges.push(ei);
            return;
        }
        let mut meta = Map::new();
        meta.insert("attempts".into(), attempts.into());
        let e = self.add_edge(i, i, EdgeType::Retries, meta);
        self.aux[i].retry_edge = Some(e);
    }

    #[allow(clippy::too_many_arguments)]
    fn on_tool_call(
        &mut self,
        turn: u32,
        step: u32,
        call_id: &str,
        name: &str,
        args: &Value,
        t: i64,
        seq: u64,
    ) {
        if let Some(i) = self.tool_of_call(call_id) {
            self.note(i, seq); // duplicate call
            return;
        }
        let parent = if step == 0 {
            self.ensure_step(t, seq)
        } else {
            let turn = self.resolve_turn(turn);
            match self.step_by_key.get(&(turn, step)) {
                Some(&s) => s,
                None => self.start_step(turn, step, t, seq),
            }
        };
        let counts = &mut self.g.meta.tool_name_counts;
        match counts.get_mut(name) {
            Some(c) => *c += 1,
            None => {
                counts.insert(name.to_owned(), 1);
            }
        }
        if let Some(m) = self.agent_meta(parent) {
            m.tool_call_count += 1;
        }
        let key = args_hash(name, args);
        let phase = self.aux[parent].phase;
        // Same tool and arguments right after a failure: another attempt of that node.
        if let Some(&prev) = self.by_retry_key.get(&key)
            && self.g.nodes[prev].status == Status::Failed
            && self.aux[prev].phase == phase
            && self.aux[prev].closed
        {
            self.aux[prev].closed = false;
            self.aux[prev].open_attempt_start = Some(t);
            self.g.nodes[prev].end_time = None;
            self.mark(prev);
            self.note(prev, seq);
            let mut n = 0;
            if let Some(m) = self.tool_meta(prev) {
                m.attempts.push(ToolAttempt {
                    call_id: call_id.to_owned(),
                    status: Status::Running,
                    start: t,
                    end: None,
                    error: None,
                    event_ids: {
                        let mut v = Vec::with_capacity(2);
                        v.push(seq);
                        v
                    },
                });
                m.retried = true;
                n = m.attempts.len();
            }
            self.map_call(call_id, prev);
            self.set_status(prev, Status::Running);
            self.g.summary.counts.retries += 1;
            self.retried.insert(prev);
            self.touch(prev);
            self.upsert_retry_edge(prev, n as u64);
            if !self.aux[prev].pending_consume
                && let Some(p) = phase
            {
                self.aux[prev].pending_consume = true;
                self.aux[p].unconsumed.push(prev);
            }
            return;
        }
        let nt = classify(name, args);
        let display = match nt {
            NodeType::Skill => format!("skill:{}", skill_name(args).unwrap_or_default()),
            _ => name.to_owned(),
        };
        let mut meta = ToolMeta {
            tool_name: if nt == NodeType::Skill {
                "skill".into()
            } else {
                name.to_owned()
            },
            call_id: call_id.to_owned(),
            arguments: args.clone(),
            attempts: vec![ToolAttempt {
                call_id: call_id.to_owned(),
                status: Status::Running,
                start: t,
                end: None,
                error: None,
                event_ids: {
                    let mut v = Vec::with_capacity(2);
                    v.push(seq);
                    v
                },
            }],
            ..ToolMeta::default()
        };
        let mut name_out = display;
        match nt {
            NodeType::Test => meta.command = Some(command_of(args)),
            NodeType::Code => {
                let files = files_of(args);
                if let Some(f) = files.first() {
                    name_out = f.rsplit(['/', '\\']).next().unwrap_or(f).to_owned();
                }
                meta.file = Some(files.first().cloned());
                meta.files = files;
            }
            NodeType::Subagent => meta.child_session = Some(None),
            NodeType::Plan => {
                let todos = Todo::list_from_value(
                    args.get("todos")
                        .or_else(|| args.get("plan"))
                        .unwrap_or(&Value::Null),
                );
                meta.todos = Some(todos);
            }
            _ => {}
        }
        let mut buf = std::mem::take(&mut self.idbuf);
        if call_id.is_empty() {
            build_id(&mut buf, "tool-", &[seq], '-');
        } else {
            buf.clear();
            buf.push_str("tool-");
            buf.push_str(call_id);
        }
        let i = self.add_node(
            &buf,
            nt,
            name_out,
            Status::Running,
            Some(t),
            Some(parent),
            Some(seq),
            NodeMeta::Tool(Box::new(meta)),
        );
        self.idbuf = buf;
        let et = match nt {
            NodeType::Skill => EdgeType::Invokes,
            NodeType::Subagent => EdgeType::Delegates,
            NodeType::Code => EdgeType::Modifies,
            NodeType::Test => EdgeType::Validates,
            NodeType::Plan => EdgeType::Produces,
            _ => EdgeType::Calls,
        };
        self.add_edge(parent, i, et, Map::new());
        self.aux[i].open_attempt_start = Some(t);
        self.aux[i].retry_key = Some(key);
        self.by_retry_key.insert(key, i);
        if !call_id.is_empty() {
            self.map_call(call_id, i);
        }
        if let Some(p) = phase {
            self.aux[i].pending_consume = true;
            self.aux[p].unconsumed.push(i);
        }
        if nt == NodeType::Subagent {
            self.unmatched_subagents.push(i);
        }
    }

    fn on_tool_result(
        &mut self,
        call_id: &str,
        output: &str,
        is_error: bool,
        t: i64,
        seq: u64,
    ) -> bool {
        let Some(i) = self.tool_of_call(call_id) else {
            return false;
        };
        self.note(i, seq);
        if self.aux[i].closed {
            return true; // duplicate result
        }
        let max = self.opts.max_output_chars;
        let truncated = output.chars().nth(max).is_some();
        let text = if truncated {
            truncate_chars(output, max)
        } else {
            output.to_owned()
        };
        let st = if is_error {
            Status::Failed
        } else {
            Status::Success
        };
        if let Some(m) = self.tool_meta(i) {
            let error = is_error.then(|| text.clone());
            m.error = error.clone();
            m.output = Some(text);
            m.output_truncated = truncated;
            if let Some(a) = m.attempts.last_mut() {
                a.error = error;
                if a.event_ids.last() != Some(&seq) {
                    a.event_ids.push(seq);
                }
            }
        }
        self.close_as(i, st, t, false);
        if st == Status::Success && self.g.nodes[i].node_type == NodeType::Code {
            let files = match &self.g.nodes[i].meta {
                NodeMeta::Tool(m) => m.files.clone(),
                _ => Vec::new(),
            };
            for f in files {
                if self.files.insert(f.clone()) {
                    self.g.summary.files_changed.push(f);
                }
            }
        }
        true
    }

    /// A call that never ran: `CANCELLED`, and not a code change.
    fn on_tool_cancelled(&mut self, call_id: &str, reason: &str, t: i64, seq: u64) {
        let Some(i) = self.tool_of_call(call_id) else {
            return;
        };
        self.note(i, seq);
        if self.aux[i].closed {
            return;
        }
        if let Some(m) = self.tool_meta(i) {
            m.error = Some(format!("never ran: {reason}"));
        }
        self.close_as(i, Status::Cancelled, t, false);
    }

    fn on_todos(&mut self, todos: &[Todo], call_id: Option<&str>, t: i64, seq: u64) {
        let target = call_id
            .and_then(|c| self.tool_of_call(c))
            .filter(|&i| self.g.nodes[i].node_type == NodeType::Plan)
            .or_else(|| {
                // The latest plan call of the current step.
                let s = self.cur_step?;
                (s + 1..self.g.nodes.len()).rev().find(|&i| {
                    self.g.nodes[i].node_type == NodeType::Plan && self.aux[i].parent == Some(s)
                })
            });
        let i = match target {
            Some(i) => i,
            None => {
                let parent = self.ensure_step(t, seq);
                let meta = ToolMeta {
                    tool_name: "todo_write".into(),
                    call_id: String::new(),
                    arguments: Value::Object(Map::new()),
                    ..ToolMeta::default()
                };
                let mut buf = std::mem::take(&mut self.idbuf);
                build_id(&mut buf, "plan-", &[seq], '-');
                let i = self.add_node(
                    &buf,
                    NodeType::Plan,
                    "plan".into(),
                    Status::Success,
                    Some(t),
                    Some(parent),
                    Some(seq),
                    NodeMeta::Tool(Box::new(meta)),
                );
                self.idbuf = buf;
                self.add_edge(parent, i, EdgeType::Produces, Map::new());
                self.aux[i].closed = true;
                self.g.nodes[i].end_time = Some(t);
                self.mark(i);
                if let Some(m) = self.tool_meta(i) {
                    m.attempts.push(ToolAttempt {
                        call_id: String::new(),
                        status: Status::Success,
                        start: t,
                        end: Some(t),
                        error: None,
                        event_ids: vec![seq],
                    });
                }
                self.phase_outcome(i, Status::Success, t);
                i
            }
        };
        self.note(i, seq);
        if let Some(m) = self.tool_meta(i) {
            m.todos = Some(todos.to_vec());
        }
    }

    fn on_descriptor(&mut self, d: &SubagentDescriptor, seq: u64) {
        let target = d
            .call_id
            .as_deref()
            .and_then(|c| self.tool_of_call(c))
            .or_else(|| self.unmatched_subagents.last().copied());
        let Some(i) = target else {
            return;
        };
        self.note(i, seq);
        if let Some(sid) = &d.session_id {
            self.aux[i].explicit_child = Some(sid.clone());
        }
        if let Some(m) = self.tool_meta(i)
            && let Value::Object(args) = &mut m.arguments
        {
            if let Some(desc) = &d.description {
                args.entry("description")
                    .or_insert_with(|| desc.clone().into());
            }
            if let Some(p) = &d.prompt {
                args.entry("prompt").or_insert_with(|| p.clone().into());
            }
        }
    }

    // ----- children -------------------------------------------------------------------------

    fn match_children(&mut self) {
        if self.opts.children.is_empty() || self.unmatched_subagents.is_empty() {
            return;
        }
        let window = self.opts.child_window_ms;
        let mut still = Vec::new();
        for i in std::mem::take(&mut self.unmatched_subagents) {
            let node = &self.g.nodes[i];
            let call_id = match &node.meta {
                NodeMeta::Tool(m) => m.call_id.clone(),
                _ => String::new(),
            };
            let explicit = self.aux[i].explicit_child.clone();
            let mut found = self.opts.children.iter().enumerate().position(|(k, c)| {
                !self.children_used[k]
                    && (explicit.as_deref() == Some(c.id.as_str())
                        || (!call_id.is_empty() && c.call_id.as_deref() == Some(call_id.as_str())))
            });
            let closed = self.aux[i].closed;
            if found.is_none() && (closed || self.opts.live || self.finished) && explicit.is_none()
            {
                let start = node.start_time.unwrap_or(0);
                let end = node.end_time.unwrap_or(i64::MAX - window);
                let sid = &self.g.session_id;
                found = self
                    .opts
                    .children
                    .iter()
                    .enumerate()
                    .filter(|(k, c)| {
                        !self.children_used[*k]
                            && c.call_id.is_none()
                            && c.parent_session.as_deref().is_none_or(|p| p == sid)
                            && c.created_ms
                                .is_some_and(|t| t >= start - window && t <= end + window)
                    })
                    .min_by_key(|(k, c)| ((c.created_ms.unwrap_or(0) - start).abs(), *k))
                    .map(|(k, _)| k);
            }
            match found {
                Some(k) => {
                    self.children_used[k] = true;
                    let r = self.opts.children[k].to_ref();
                    self.aux[i].child_matched = true;
                    if let Some(m) = self.tool_meta(i) {
                        m.child_session = Some(Some(r));
                    }
                }
                None => still.push(i),
            }
        }
        self.unmatched_subagents = still;
    }

    // ----- refresh ----------------------------------------------------------------------------

    fn refresh(&mut self) {
        // Running durations of open nodes.
        let open: Vec<usize> = self.open.iter().copied().collect();
        for i in open {
            let d = self.running_duration(i);
            self.set_duration(i, d);
        }
        self.match_children();
        // Task.
        let start = self.first_time;
        let last_open = self
            .last_phase
            .is_some_and(|p| self.g.nodes[p].status.is_open())
            || self
                .cur_step
                .is_some_and(|s| self.g.nodes[s].status.is_open());
        let last_unclosed = self
            .last_phase
            .is_some_and(|p| matches!(&self.g.nodes[p].meta, NodeMeta::Phase(m) if m.unclosed));
        let status = match self.last_phase {
            None if self.g.nodes.len() == 1 => Status::Pending,
            _ if self.opts.live && last_open => Status::Running,
            // An archived session cut off mid-turn: FAILED when its last work outcome is a
            // failure with no later success (recovery-aware), else CANCELLED.
            _ if last_unclosed => match (self.work_fail_end, self.work_ok_end) {
                (Some(f), Some(o)) if f > o => Status::Failed,
                (Some(_), None) => Status::Failed,
                _ => Status::Cancelled,
            },
            _ if last_open => Status::Running,
            _ => {
                let reason = self.last_phase.and_then(|p| self.aux[p].reason);
                match reason {
                    Some(TurnEndKind::Error) => Status::Failed,
                    Some(TurnEndKind::Aborted) => Status::Cancelled,
                    _ => match (self.task_fail_end, self.task_ok_end) {
                        (Some(f), Some(o)) if f > o => Status::Failed,
                        (Some(_), None) => Status::Failed,
                        _ => Status::Success,
                    },
                }
            }
        };
        if self.g.nodes[0].status != status {
            self.g.nodes[0].status = status;
            self.mark(0);
        }
        if last_unclosed && let Some(m) = self.task_meta() {
            m.unclosed = true;
        }
        let end = if status.is_open() || start.is_none() {
            None
        } else {
            Some(self.last_time)
        };
        let dur = start.map_or(0, |s| (self.last_time - s).max(0));
        let task = &self.g.nodes[0];
        if (task.start_time, task.end_time, task.duration_ms) != (start, end, dur) {
            self.mark(0);
        }
        let task = &mut self.g.nodes[0];
        task.start_time = start;
        task.end_time = end;
        task.duration_ms = dur;
        self.g.status = status;
        self.g.start_time = start;
        self.g.end_time = end;
        self.g.duration_ms = dur;
        self.g.meta.live = self.opts.live;
        // Summary.
        let s = &mut self.g.summary;
        s.counts.errors = self.failed.len() as u64;
        s.counts.files_changed = s.files_changed.len() as u64;
        let nodes = &self.g.nodes;
        // Only the nodes touched by this append can enter, leave or change in these lists.
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        for &i in &touched {
            self.aux[i].touched = false;
        }
        let work = |i: usize| !matches!(nodes[i].node_type, NodeType::Task | NodeType::Phase);
        if self.slow.is_empty() {
            // Nothing filed yet (first refresh of a build): every work node is in `touched`.
            self.slow = touched
                .iter()
                .filter(|&&i| work(i))
                .map(|&i| {
                    let d = nodes[i].duration_ms;
                    self.aux[i].slow_key = Some(d);
                    (Reverse(d), i)
                })
                .collect();
        } else {
            for &i in &touched {
                let d = nodes[i].duration_ms;
                if !work(i) || self.aux[i].slow_key == Some(d) {
                    continue;
                }
                if let Some(old) = self.aux[i].slow_key.replace(d) {
                    self.slow.remove(&(Reverse(old), i));
                }
                self.slow.insert((Reverse(d), i));
            }
        }
        let slowest: Vec<NodeRef> = self
            .slow
            .iter()
            .take(3)
            .map(|&(_, i)| node_ref(nodes, i))
            .collect();
        let s = &mut self.g.summary;
        for &i in &touched {
            sync_list(
                &mut self.failed_idx,
                &mut s.failed_steps,
                i,
                self.failed.contains(&i),
                nodes,
            );
            sync_list(
                &mut self.retried_idx,
                &mut s.retried_steps,
                i,
                self.retried.contains(&i),
                nodes,
            );
        }
        touched.clear();
        self.touched = touched;
        let mut tools: Vec<ToolCount> = self
            .g
            .meta
            .tool_name_counts
            .iter()
            .map(|(k, v)| ToolCount {
                name: k.clone(),
                count: *v,
            })
            .collect();
        tools.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        tools.truncate(10);
        let s = &mut self.g.summary;
        s.slowest_steps = slowest;
        s.most_used_tools = tools;
        // Critical path.
        self.crit
            .recompute(&self.g.nodes, &self.g.edges, &mut self.g.critical_path);
        self.g.critical_path.total_ms = dur;
    }
}

/// The summary entry of node `i`.
fn node_ref(nodes: &[Node], i: usize) -> NodeRef {
    let n = &nodes[i];
    let (attempts, error) = match &n.meta {
        NodeMeta::Tool(m) => (m.attempts.len() as u32, m.error.clone()),
        NodeMeta::Agent(m) => (
            m.attempts.len() as u32 + 1,
            m.attempts.last().map(|a| a.failure.message.clone()),
        ),
        _ => (1, None),
    };
    NodeRef {
        id: n.id.clone(),
        name: n.name.clone(),
        node_type: n.node_type,
        status: n.status,
        duration_ms: n.duration_ms,
        attempts,
        error: if n.status == Status::Failed || n.node_type == NodeType::Agent {
            error
        } else {
            None
        },
    }
}

/// Keeps `list` (ordered by node index, indices in `idx`) in step with node `i`.
fn sync_list(idx: &mut Vec<usize>, list: &mut Vec<NodeRef>, i: usize, want: bool, nodes: &[Node]) {
    match (idx.binary_search(&i), want) {
        (Ok(p), true) => list[p] = node_ref(nodes, i),
        (Ok(p), false) => {
            idx.remove(p);
            list.remove(p);
        }
        (Err(p), true) => {
            idx.insert(p, i);
            list.insert(p, node_ref(nodes, i));
        }
        (Err(_), false) => {}
    }
}

impl ChildSummary {
    /// The `child_session` object for a subagent node.
    pub fn to_ref(&self) -> ChildSessionRef {
        ChildSessionRef {
            id: self.id.clone(),
            reference: self.reference.clone(),
            title: self.title.clone(),
            status: self.status,
            counts: self.counts,
        }
    }
}
