//! The turn-level overview of a task — what the task page opens on, `GET
//! /task-graph/api/task/overview` serves and MCP `get_task_graph` gives in its overview mode —
//! and the pieces a person opens from it: one turn's detail graph ([`turn_detail`]) and the
//! session's waterfall ([`timeline`]). One implementation for every view.
//!
//! A turn's counts are the headline's rules applied to the nodes inside that turn, so the
//! turns' counts add up to `summary.headline` (checked on every fixture). The critical path is
//! given as time segments: the agent's work on the path (the path nodes that carry weight,
//! overlapping spans merged) and the path's waiting for the person ([`super::WaitSegment`]),
//! each its own kind.

// The fast unkeyed hasher: these maps are keyed by a graph's node ids (100,000s at size).
use crate::fast_hash::{FastMap as HashMap, FastSet as HashSet};

use mindgate_pricing::{Cost, PriceTable};
use serde::Serialize;

use super::model::{
    ChildSessionRef, Edge, Node, NodeMeta, NodeType, SharedStr, Status, StepTokens, TaskGraph,
    TokenTotals,
};
use super::node_index::NodeIndex;
use super::waiting::{WaitKind, node_wait_kind};
use super::{GraphTree, Headline, node_weights_with};

/// What one turn holds, counted by the headline's rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TurnCounts {
    /// LLM steps.
    pub steps: u64,
    /// Every call (plain tools, skills, subagents, plans, code changes, tests).
    pub tool_calls: u64,
    /// Code changes among them.
    pub code_changes: u64,
    /// Tests among them.
    pub tests: u64,
    /// Subagents among them.
    pub subagents: u64,
    /// Steps and calls whose final status is `FAILED`.
    pub errors: u64,
    /// Extra attempts (tool re-attempts plus LLM retries).
    pub retries: u64,
}

/// A subagent call of a turn and the child session it opened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnSubagent {
    /// The `subagent` node.
    pub node_id: SharedStr,
    /// Its name (the call's description).
    pub name: String,
    /// The call's status.
    pub status: Status,
    /// The call's duration (the child's wall time is inside it, never added to it).
    pub duration_ms: i64,
    /// The linked child session (`null` when none matched).
    pub child_session: Option<ChildSessionRef>,
}

/// One turn (phase) of the overview.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnOverview {
    /// The phase node id (`phase-<turn>`): what `/task/turn?turn=` takes.
    pub id: SharedStr,
    /// Turn number.
    pub turn: u32,
    /// The person's message that opened the turn.
    pub user_message: Option<String>,
    /// Turn status.
    pub status: Status,
    /// Start, Unix ms.
    pub start_time: Option<i64>,
    /// End, Unix ms (`null` while open).
    pub end_time: Option<i64>,
    /// Wall time of the turn.
    pub duration_ms: i64,
    /// Counts of the turn's nodes.
    pub counts: TurnCounts,
    /// Tokens of the turn's LLM steps.
    pub tokens: TokenTotals,
    /// What those tokens cost.
    pub cost: Cost,
    /// Waiting for the person: the reply before this turn and the turn's waiting calls.
    pub waiting_ms: i64,
    /// Agent work on the critical path inside this turn.
    pub path_ms: i64,
    /// Nodes in the turn (the phase and everything it contains).
    pub node_count: u64,
    /// The turn's subagent calls with their child sessions.
    pub subagents: Vec<TurnSubagent>,
}

/// The kind of one stretch of the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentKind {
    /// The agent working (LLM steps and calls on the path).
    Work,
    /// A call the person rejected at the permission prompt.
    Permission,
    /// A call that never ran.
    Interrupted,
    /// The person reading and replying between turns.
    UserReply,
}

impl From<WaitKind> for SegmentKind {
    fn from(k: WaitKind) -> Self {
        match k {
            WaitKind::Permission => SegmentKind::Permission,
            WaitKind::Interrupted => SegmentKind::Interrupted,
            WaitKind::UserReply => SegmentKind::UserReply,
        }
    }
}

/// One stretch of the critical path on the time axis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathSegment {
    /// Work or a kind of waiting.
    pub kind: SegmentKind,
    /// The turn it lies in (for a reply: the turn that followed it).
    pub turn_id: SharedStr,
    /// The first path node of the stretch (for waiting: the node that waited).
    pub node_id: SharedStr,
    /// Start, Unix ms.
    pub start_time: i64,
    /// End, Unix ms.
    pub end_time: i64,
}

/// The critical path as the overview draws it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PathOverview {
    /// Agent work along the path (`critical_path.duration_ms`).
    pub duration_ms: i64,
    /// The task's wall time.
    pub total_ms: i64,
    /// Waiting along the path (`critical_path.waiting_ms`).
    pub waiting_ms: i64,
    /// Work and waiting stretches in time order.
    pub segments: Vec<PathSegment>,
}

/// Subagent sessions' totals, each child counted once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubagentTotals {
    /// Child sessions (recursively), each once.
    pub sessions: u64,
    /// Their tokens.
    pub tokens: TokenTotals,
    /// Their cost.
    pub cost: Cost,
    /// Their wall time (already inside the parent's subagent calls: never added to the
    /// task's duration).
    pub duration_ms: i64,
}

/// The task with its subagents: tokens and cost of the parent plus each child once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskTotals {
    /// Parent and children tokens.
    pub tokens: TokenTotals,
    /// Parent and children cost.
    pub cost: Cost,
    /// The task's wall time (the children ran inside it).
    pub duration_ms: i64,
}

/// The turn-level overview of a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskOverview {
    /// Task id.
    pub task_id: String,
    /// Session id.
    pub session_id: String,
    /// Title.
    pub title: String,
    /// The agent that wrote the session (`dsh`, `pi`, `claude_code`, `codex`), as its header
    /// names it.
    pub agent: Option<String>,
    /// The recorded working directory.
    pub cwd: Option<String>,
    /// Workspace slug.
    pub workspace: String,
    /// Status.
    pub status: Status,
    /// First event, Unix ms.
    pub start_time: Option<i64>,
    /// Last event, Unix ms (`null` while running).
    pub end_time: Option<i64>,
    /// Wall time.
    pub duration_ms: i64,
    /// Nodes in the whole graph.
    pub node_count: u64,
    /// The headline counts (`summary.headline`).
    pub headline: Headline,
    /// The session's own tokens (`summary.tokens`).
    pub tokens: TokenTotals,
    /// The session's own cost.
    pub cost: Cost,
    /// The subagent sessions' totals.
    pub subagents: SubagentTotals,
    /// The session with its subagents, each counted once.
    pub totals: TaskTotals,
    /// The critical path as time segments.
    pub critical_path: PathOverview,
    /// Turns in order.
    pub turns: Vec<TurnOverview>,
}

impl TaskOverview {
    /// A copy of everything but the turns and the critical path's segments (which a live
    /// feed sends as changes), without copying those.
    pub fn clone_without_rows(&self) -> TaskOverview {
        let TaskOverview {
            task_id,
            session_id,
            title,
            agent,
            cwd,
            workspace,
            status,
            start_time,
            end_time,
            duration_ms,
            node_count,
            headline,
            tokens,
            cost,
            subagents,
            totals,
            critical_path,
            turns: _,
        } = self;
        TaskOverview {
            task_id: task_id.clone(),
            session_id: session_id.clone(),
            title: title.clone(),
            agent: agent.clone(),
            cwd: cwd.clone(),
            workspace: workspace.clone(),
            status: *status,
            start_time: *start_time,
            end_time: *end_time,
            duration_ms: *duration_ms,
            node_count: *node_count,
            headline: *headline,
            tokens: *tokens,
            cost: cost.clone(),
            subagents: subagents.clone(),
            totals: totals.clone(),
            critical_path: PathOverview {
                duration_ms: critical_path.duration_ms,
                total_ms: critical_path.total_ms,
                waiting_ms: critical_path.waiting_ms,
                segments: Vec::new(),
            },
            turns: Vec::new(),
        }
    }
}

/// For each node (by index), the index of the phase that contains it (`None` for the task and
/// for nodes outside every turn).
pub fn turn_of_nodes(g: &TaskGraph) -> Vec<Option<usize>> {
    turn_of_nodes_with(g, &NodeIndex::new(g))
}

/// [`turn_of_nodes`] over a [`NodeIndex`] already built.
pub(crate) fn turn_of_nodes_with(g: &TaskGraph, index: &NodeIndex<'_>) -> Vec<Option<usize>> {
    let parent: Vec<Option<usize>> = g
        .nodes
        .iter()
        .map(|n| n.parent_id.as_ref().and_then(|p| index.get(p)))
        .collect();
    let mut turn: Vec<Option<Option<usize>>> = vec![None; g.nodes.len()];
    for i in 0..g.nodes.len() {
        // Walk up to a phase (or a node already resolved), then fill the walked chain.
        let mut chain = Vec::new();
        let mut at = Some(i);
        let found = loop {
            let Some(k) = at else { break None };
            if let Some(t) = turn[k] {
                break t;
            }
            if g.nodes[k].node_type == NodeType::Phase {
                break Some(k);
            }
            if chain.len() > g.nodes.len() {
                break None;
            }
            chain.push(k);
            at = parent[k];
        };
        for k in chain {
            turn[k] = Some(found);
        }
        if g.nodes[i].node_type == NodeType::Phase {
            turn[i] = Some(Some(i));
        }
    }
    turn.into_iter().map(Option::flatten).collect()
}

/// What `tokens` of `model` cost at `prices`: cache reads and writes priced apart, the
/// `unknown` model (a step that named none) unpriced. The one pricing rule of a task graph.
pub fn price(prices: &PriceTable, model: Option<&str>, t: StepTokens) -> Cost {
    let mut cost = Cost::default();
    cost.add(
        prices,
        model.filter(|m| *m != "unknown"),
        &t.priced_counts(),
    );
    cost
}

/// The counts node `n` adds to its turn (the headline's rules).
fn count_node(c: &mut TurnCounts, n: &Node) {
    match n.node_type {
        NodeType::Task | NodeType::Phase => return,
        NodeType::Agent => c.steps += 1,
        // An edit that never ran changed nothing: not a code change, not a call.
        NodeType::Code if n.status == Status::Cancelled => {}
        t => {
            c.tool_calls += 1;
            match t {
                NodeType::Code => c.code_changes += 1,
                NodeType::Test => c.tests += 1,
                NodeType::Subagent => c.subagents += 1,
                _ => {}
            }
        }
    }
    if n.status == Status::Failed {
        c.errors += 1;
    }
    c.retries += match &n.meta {
        NodeMeta::Tool(m) => m.attempts.len().saturating_sub(1) as u64,
        NodeMeta::Agent(m) => m.attempts.len() as u64,
        _ => 0,
    };
}

fn empty_turn(n: &Node) -> TurnOverview {
    let (turn, user_message) = match &n.meta {
        NodeMeta::Phase(m) => (m.turn, m.user_message.clone()),
        _ => (0, None),
    };
    TurnOverview {
        id: n.id.clone(),
        turn,
        user_message,
        status: n.status,
        start_time: n.start_time,
        end_time: n.end_time,
        duration_ms: n.duration_ms,
        counts: TurnCounts::default(),
        tokens: TokenTotals::default(),
        cost: Cost::default(),
        waiting_ms: 0,
        path_ms: 0,
        node_count: 1,
        subagents: Vec::new(),
    }
}

/// Adds node `n` (inside the turn) to `row`.
fn add_to_turn(row: &mut TurnOverview, n: &Node, prices: &PriceTable) {
    row.node_count += 1;
    count_node(&mut row.counts, n);
    match &n.meta {
        NodeMeta::Agent(m) => {
            row.tokens.add_counts(m.tokens);
            row.cost.merge(&price(prices, m.model.as_deref(), m.tokens));
        }
        NodeMeta::Tool(m) if n.node_type == NodeType::Subagent => {
            row.subagents.push(TurnSubagent {
                node_id: n.id.clone(),
                name: n.name.clone(),
                status: n.status,
                duration_ms: n.duration_ms,
                child_session: m.child_session.clone().flatten(),
            });
        }
        _ => {}
    }
    if node_wait_kind(n).is_some() {
        row.waiting_ms += n.duration_ms.max(0);
    }
}

/// The turns of `g` with their counts, tokens, cost and waiting.
fn turns(g: &TaskGraph, turn_of: &[Option<usize>], prices: &PriceTable) -> Vec<TurnOverview> {
    let mut rows: Vec<TurnOverview> = Vec::new();
    let mut row_of: HashMap<usize, usize> = HashMap::default();
    for (i, n) in g.nodes.iter().enumerate() {
        if n.node_type == NodeType::Phase {
            row_of.insert(i, rows.len());
            rows.push(empty_turn(n));
        }
    }
    for (i, n) in g.nodes.iter().enumerate() {
        if n.node_type == NodeType::Phase {
            continue;
        }
        if let Some(r) = turn_of[i].and_then(|p| row_of.get(&p)) {
            add_to_turn(&mut rows[*r], n, prices);
        }
    }
    // The reply before each turn: the gap since the previous turn ended.
    for k in 1..rows.len() {
        if let (Some(end), Some(start)) = (rows[k - 1].end_time, rows[k].start_time) {
            rows[k].waiting_ms += (start - end).max(0);
        }
    }
    rows
}

/// The critical path as time segments, and each turn's agent work on it.
fn path_segments(
    g: &TaskGraph,
    index: &NodeIndex<'_>,
    turn_of: &[Option<usize>],
    rows: &mut [TurnOverview],
) -> Vec<PathSegment> {
    let row_of: HashMap<SharedStr, usize> = rows
        .iter()
        .enumerate()
        .map(|(k, r)| (r.id.clone(), k))
        .collect();
    let weights = node_weights_with(g, index);
    let mut work: Vec<PathSegment> = Vec::new();
    for id in &g.critical_path.node_ids {
        let Some(i) = index.get(id) else {
            continue;
        };
        let n = &g.nodes[i];
        let Some(p) = turn_of[i] else { continue };
        let turn_id = &g.nodes[p].id;
        if let Some(&r) = row_of.get(turn_id.as_str()) {
            rows[r].path_ms += weights[i];
        }
        let (Some(start), true) = (n.start_time, weights[i] > 0) else {
            continue;
        };
        let end = n.end_time.unwrap_or(start + n.duration_ms.max(0));
        match work.last_mut() {
            Some(last) if last.turn_id == *turn_id && start <= last.end_time => {
                last.end_time = last.end_time.max(end);
            }
            _ => work.push(PathSegment {
                kind: SegmentKind::Work,
                turn_id: turn_id.clone(),
                node_id: n.id.clone(),
                start_time: start,
                end_time: end,
            }),
        }
    }
    let waits = g.critical_path.waiting.iter().filter_map(|w| {
        let start = w.start_time?;
        let i = index.get(&w.node_id)?;
        let p = turn_of[i]?;
        Some(PathSegment {
            kind: w.kind.into(),
            turn_id: g.nodes[p].id.clone(),
            node_id: w.node_id.clone(),
            start_time: start,
            end_time: start + w.duration_ms.max(0),
        })
    });
    let waits: Vec<PathSegment> = waits.collect();
    let mut all = cut_out(work, &waits);
    all.extend(waits);
    all.sort_by_key(|s| (s.start_time, s.end_time));
    all
}

/// `work` with the `waits` spans cut out: a step that spans a call the person rejected worked
/// before and after the prompt, not during it. Each segment meets only the waits that overlap
/// it (found by binary search over the waits by start), so a path of 10,000 segments and 250
/// replies costs the segments, not their product.
fn cut_out(work: Vec<PathSegment>, waits: &[PathSegment]) -> Vec<PathSegment> {
    let mut spans: Vec<(i64, i64)> = waits
        .iter()
        .filter(|w| w.end_time > w.start_time)
        .map(|w| (w.start_time, w.end_time))
        .collect();
    spans.sort_unstable();
    // The latest end among the first k spans: non-decreasing, so the first span that can reach
    // a segment is found by binary search.
    let reach: Vec<i64> = spans
        .iter()
        .scan(i64::MIN, |m, &(_, e)| {
            *m = (*m).max(e);
            Some(*m)
        })
        .collect();
    let mut out = Vec::with_capacity(work.len());
    for seg in work {
        let first = reach.partition_point(|&e| e <= seg.start_time);
        let mut pieces = vec![seg];
        for &(ws, we) in &spans[first..] {
            let Some(last_end) = pieces.iter().map(|p| p.end_time).max() else {
                break;
            };
            if ws >= last_end {
                break;
            }
            pieces = pieces
                .into_iter()
                .flat_map(|p| {
                    if we <= p.start_time || ws >= p.end_time {
                        return vec![p];
                    }
                    let before = PathSegment {
                        end_time: ws,
                        ..p.clone()
                    };
                    let after = PathSegment {
                        start_time: we,
                        ..p
                    };
                    [before, after]
                        .into_iter()
                        .filter(|q| q.end_time > q.start_time)
                        .collect()
                })
                .collect();
        }
        out.extend(pieces);
    }
    out
}

/// The session's own cost: each model's tokens (`meta.tokens.by_model`) priced by that model.
pub fn graph_cost(g: &TaskGraph, prices: &PriceTable) -> Cost {
    let mut cost = Cost::default();
    for (model, t) in &g.meta.tokens.by_model {
        cost.merge(&price(prices, Some(model), t.counts()));
    }
    cost
}

/// The child sessions `children` (recursively) of session `g`, each session once, summed.
pub fn subagent_totals(
    g: &TaskGraph,
    children: &[GraphTree],
    prices: &PriceTable,
) -> SubagentTotals {
    let mut seen: HashSet<&str> = HashSet::default();
    seen.insert(g.session_id.as_str());
    let mut out = SubagentTotals {
        sessions: 0,
        tokens: TokenTotals::default(),
        cost: Cost::default(),
        duration_ms: 0,
    };
    let mut stack: Vec<&GraphTree> = children.iter().collect();
    while let Some(t) = stack.pop() {
        stack.extend(t.children.iter());
        if !seen.insert(t.graph.session_id.as_str()) {
            continue;
        }
        let s = &t.graph.summary.tokens;
        out.sessions += 1;
        out.tokens.merge(s);
        out.cost.merge(&graph_cost(&t.graph, prices));
        out.duration_ms += t.graph.duration_ms.max(0);
    }
    out
}

/// The overview of task graph `g` and its subagent sessions' graphs `children` (empty when
/// it has none, or they are not known).
pub fn overview(g: &TaskGraph, children: &[GraphTree], prices: &PriceTable) -> TaskOverview {
    let index = NodeIndex::new(g);
    let turn_of = turn_of_nodes_with(g, &index);
    let mut rows = turns(g, &turn_of, prices);
    let segments = path_segments(g, &index, &turn_of, &mut rows);
    let cost = graph_cost(g, prices);
    let subagents = subagent_totals(g, children, prices);
    let mut tokens = g.summary.tokens;
    tokens.merge(&subagents.tokens);
    let mut total_cost = cost.clone();
    total_cost.merge(&subagents.cost);
    TaskOverview {
        task_id: g.task_id.clone(),
        session_id: g.session_id.clone(),
        title: g.title.clone(),
        agent: g
            .meta
            .header
            .get("agent")
            .and_then(|a| a.as_str())
            .map(str::to_owned),
        cwd: g.cwd.clone(),
        workspace: g.workspace.clone(),
        status: g.status,
        start_time: g.start_time,
        end_time: g.end_time,
        duration_ms: g.duration_ms,
        node_count: g.nodes.len() as u64,
        headline: g.summary.headline,
        tokens: g.summary.tokens,
        cost,
        subagents,
        totals: TaskTotals {
            tokens,
            cost: total_cost,
            duration_ms: g.duration_ms,
        },
        critical_path: PathOverview {
            duration_ms: g.critical_path.duration_ms,
            total_ms: g.critical_path.total_ms,
            waiting_ms: g.critical_path.waiting_ms,
            segments,
        },
        turns: rows,
    }
}

/// One turn's detail: the task node, the phase and everything it contains, the edges between
/// them, and the critical path's nodes among them — the shape of a whole graph, so the page
/// draws it as it draws any graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnDetail<'g> {
    /// Task id.
    pub task_id: &'g str,
    /// Session id.
    pub session_id: &'g str,
    /// The phase id.
    pub turn_id: &'g str,
    /// The task node, then the turn's nodes in creation order.
    pub nodes: Vec<&'g Node>,
    /// Edges between those nodes.
    pub edges: Vec<&'g Edge>,
    /// The critical path restricted to those nodes.
    pub critical_path: TurnPath<'g>,
}

/// The critical path inside one turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnPath<'g> {
    /// Path nodes in the turn, in path order (the task node first when on the path).
    pub node_ids: Vec<&'g SharedStr>,
    /// Hot nodes among them.
    pub hot_node_ids: Vec<&'g SharedStr>,
    /// Path edges between them.
    pub edge_ids: Vec<&'g SharedStr>,
}

/// The detail of turn `turn` (a phase id such as `phase-3`, or its number), `None` when the
/// graph has no such turn.
///
/// Indexes the whole graph to answer once; a caller asking for several turns of one graph keeps
/// a [`TurnIndex`](super::TurnIndex) instead.
pub fn turn_detail<'g>(g: &'g TaskGraph, turn: &str) -> Option<TurnDetail<'g>> {
    super::TurnIndex::new(g).detail(g, turn)
}

/// One bar of the session's waterfall: an LLM step or a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineBar<'g> {
    /// Node id.
    pub id: &'g SharedStr,
    /// Node type.
    #[serde(rename = "type")]
    pub node_type: NodeType,
    /// Name.
    pub name: &'g str,
    /// The turn (phase id) it belongs to.
    pub turn_id: Option<&'g SharedStr>,
    /// Its parent (the step of a call).
    pub parent_id: Option<&'g SharedStr>,
    /// Status.
    pub status: Status,
    /// Start, Unix ms.
    pub start_time: i64,
    /// End, Unix ms (start + duration while open).
    pub end_time: i64,
    /// On the critical path.
    pub critical: bool,
    /// A hot path node.
    pub hot: bool,
    /// How the call waited for the person, when it did.
    pub waiting: Option<WaitKind>,
}

/// The session's waterfall: every LLM step and call with a start time, in creation order.
pub fn timeline(g: &TaskGraph) -> Vec<TimelineBar<'_>> {
    let turn_of = turn_of_nodes(g);
    let path: HashSet<&str> = g
        .critical_path
        .node_ids
        .iter()
        .map(|s| s.as_str())
        .collect();
    let hot: HashSet<&str> = g
        .critical_path
        .hot_node_ids
        .iter()
        .map(|s| s.as_str())
        .collect();
    g.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !matches!(n.node_type, NodeType::Task | NodeType::Phase))
        .filter_map(|(i, n)| {
            let start = n.start_time?;
            Some(TimelineBar {
                id: &n.id,
                node_type: n.node_type,
                name: &n.name,
                turn_id: turn_of[i].map(|p| &g.nodes[p].id),
                parent_id: n.parent_id.as_ref(),
                status: n.status,
                start_time: start,
                end_time: n.end_time.unwrap_or(start + n.duration_ms.max(0)),
                critical: path.contains(n.id.as_str()),
                hot: hot.contains(n.id.as_str()),
                waiting: node_wait_kind(n),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(kind: SegmentKind, start_time: i64, end_time: i64) -> PathSegment {
        PathSegment {
            kind,
            turn_id: SharedStr::from("phase-1"),
            node_id: SharedStr::from("n"),
            start_time,
            end_time,
        }
    }

    fn spans(segs: &[PathSegment]) -> Vec<(i64, i64)> {
        segs.iter().map(|s| (s.start_time, s.end_time)).collect()
    }

    #[test]
    fn waits_are_cut_out_of_work_even_when_they_overlap_each_other() {
        let work = vec![
            seg(SegmentKind::Work, 0, 10),
            seg(SegmentKind::Work, 20, 30),
            seg(SegmentKind::Work, 40, 50),
            seg(SegmentKind::Work, 60, 70),
        ];
        // A long wait reaching into the second segment, one inside it, one splitting the
        // third, and an empty one (ignored); given out of order.
        let waits = vec![
            seg(SegmentKind::Permission, 45, 46),
            seg(SegmentKind::UserReply, 5, 25),
            seg(SegmentKind::Permission, 22, 24),
            seg(SegmentKind::Interrupted, 65, 65),
        ];
        assert_eq!(
            spans(&cut_out(work, &waits)),
            vec![(0, 5), (25, 30), (40, 45), (46, 50), (60, 70)]
        );
    }

    #[test]
    fn a_wait_covering_a_segment_removes_it() {
        let work = vec![seg(SegmentKind::Work, 10, 20)];
        let waits = vec![seg(SegmentKind::UserReply, 0, 100)];
        assert!(cut_out(work, &waits).is_empty());
    }
}
