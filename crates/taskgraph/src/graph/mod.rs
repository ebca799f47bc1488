//! Building the task graph from events.
//!
//! [`build_graph`] is a pure function of the events and [`BuildOptions`];
//! [`IncrementalGraph`] keeps the same state between appends (a full build is exactly
//! "new + append everything + finish", so both always agree).

mod builder;
pub mod classify;
mod critical;
pub mod headline;
mod model;
mod node_index;
pub mod overview;
mod streamed;
mod turn_index;
pub mod waiting;

use serde::{Deserialize, Serialize};

pub use builder::{AppendStats, GraphChanges, IncrementalGraph};
pub use headline::{Headline, headline};
pub use model::*;
pub use overview::{
    TaskOverview, TurnOverview, graph_cost, overview, price, timeline, turn_detail,
};
pub(crate) use streamed::StreamedBuild;
pub use turn_index::TurnIndex;
pub use waiting::{WaitKind, WaitSegment};

use crate::event::Event;
use crate::session::{Agent, Session};
use node_index::NodeIndex;

/// Options of a graph build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildOptions {
    /// Live mode: open nodes stay `RUNNING`. Archived mode (`false`): open nodes are closed
    /// as `FAILED` (tool/test) or `CANCELLED` with `meta.unclosed = true`.
    pub live: bool,
    /// Session id to use instead of the header's.
    pub session_id: Option<String>,
    /// Task id (root session id) when building a child session's graph.
    pub task_id: Option<String>,
    /// Workspace slug to use instead of the one derived from the header's `cwd`.
    pub workspace: Option<String>,
    /// The agent that wrote the events (goes to `meta.header.agent`).
    pub agent: Option<Agent>,
    /// Child sessions that subagent calls can be linked to.
    pub children: Vec<ChildSummary>,
    /// Tool outputs and messages in node meta are cut to this many characters
    /// (the events API keeps them whole).
    pub max_output_chars: usize,
    /// A child created within the call window ± this many ms matches a subagent call.
    pub child_window_ms: i64,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            live: false,
            session_id: None,
            task_id: None,
            workspace: None,
            agent: None,
            children: Vec::new(),
            max_output_chars: 4096,
            child_window_ms: 5_000,
        }
    }
}

/// What a parent graph needs to know about a child (subagent) session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildSummary {
    /// Child session id.
    pub id: String,
    /// Where to load it from (path, or id).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Child title.
    pub title: String,
    /// Child task status.
    pub status: Status,
    /// Child summary counts.
    pub counts: Counts,
    /// The child's `parentSession`, when it names one.
    pub parent_session: Option<String>,
    /// When the child was created (for window matching).
    pub created_ms: Option<i64>,
    /// The spawning call id, when the format records it (exact matching).
    pub call_id: Option<String>,
}

impl ChildSummary {
    /// What a parent graph records of child session `c` whose graph is `graph` (its
    /// subagent node's `child_session`): referenced by its path, else its id.
    pub fn of_session(c: &Session, graph: &TaskGraph) -> ChildSummary {
        let reference = if c.path.as_os_str().is_empty() {
            c.id.clone()
        } else {
            c.path.display().to_string()
        };
        let mut s = ChildSummary::from_graph(graph, reference);
        s.id.clone_from(&c.id);
        s.parent_session = c.header.parent_session.clone();
        s.created_ms = c.header.created_ms.or(s.created_ms);
        s
    }

    /// Summarises a child graph.
    pub fn from_graph(g: &TaskGraph, reference: impl Into<String>) -> Self {
        Self {
            id: g.session_id.clone(),
            reference: reference.into(),
            title: g.title.clone(),
            status: g.status,
            counts: g.summary.counts,
            parent_session: g
                .meta
                .header
                .get("parent_session")
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            created_ms: g.start_time,
            call_id: None,
        }
    }
}

/// Builds the task graph of `events` (any order; sorted by `seq` and de-duplicated first).
///
/// ```
/// use mindgate_taskgraph::{build_graph, BuildOptions, Event, EventKind, TurnEndKind, TurnReason};
///
/// let events = vec![
///     Event::new(1, 1_000, EventKind::UserMessage { text: "fix the bug".into() }),
///     Event::new(2, 1_000, EventKind::TurnStart { turn: 1 }),
///     Event::new(3, 1_100, EventKind::StepStart { turn: 1, step: 1 }),
///     Event::new(4, 1_900, EventKind::StepEnd { turn: 1, step: 1 }),
///     Event::new(5, 2_000, EventKind::TurnEnd { turn: 1, reason: TurnReason::new(TurnEndKind::Completed) }),
/// ];
/// let g = build_graph(&events, &BuildOptions::default());
/// assert_eq!(g.title, "fix the bug");
/// assert_eq!(g.critical_path.node_ids, ["task", "phase-1", "step-1-1"]);
/// assert_eq!(g.critical_path.duration_ms, 800);
/// ```
pub fn build_graph(events: &[Event], options: &BuildOptions) -> TaskGraph {
    built(events, options, None).0.finish()
}

/// `events` applied in `seq` order to a new graph with `options`, and whether they came in
/// that order (then a graph fed them as they are is the same graph). `fed`: a graph already
/// fed exactly `events` in order while they were read ([`StreamedBuild`]), taken when it was
/// made with `options` ([`IncrementalGraph::settle`]).
fn built(
    events: &[Event],
    options: &BuildOptions,
    fed: Option<IncrementalGraph>,
) -> (IncrementalGraph, bool) {
    if let Some(mut b) = fed
        && b.settle(options)
    {
        return (b, true);
    }
    let mut b = IncrementalGraph::new(options.clone());
    b.reserve(events.len());
    let in_order = events.windows(2).all(|w| w[0].seq <= w[1].seq);
    if in_order {
        b.append_iter(events.iter());
    } else {
        let mut order: Vec<&Event> = events.iter().collect();
        order.sort_by_key(|e| e.seq);
        b.append_iter(order.into_iter());
    }
    (b, in_order)
}

/// A session's graph with its children's graphs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphTree {
    /// This session's graph (subagent nodes carry `child_session`).
    pub graph: TaskGraph,
    /// Child sessions' graphs, in the session's child order.
    pub children: Vec<GraphTree>,
}

/// Builds a session's graph and, recursively, its children's; links subagent calls to children
/// (explicit ids first, then `parentSession` + creation time within the call window ± 5 s).
///
/// `options.children` is extended with the session's children; `session_id`, `agent` are
/// filled from the session when unset.
pub fn build_session_tree(session: &Session, options: &BuildOptions) -> GraphTree {
    build_tree(session, options, None)
}

/// [`build_session_tree`] with the root's graph already fed its events while they were read
/// ([`StreamedBuild`]; `None`: built here).
pub(crate) fn build_session_tree_fed(
    session: &Session,
    options: &BuildOptions,
    fed: Option<IncrementalGraph>,
) -> GraphTree {
    let (children, opts) = tree_parts(session, options, None);
    let graph = built(&session.events, &opts, fed).0.finish();
    GraphTree { graph, children }
}

/// [`build_session_tree`] for a session about to be followed live: also the root's
/// [`IncrementalGraph`] as built (the tree's graph is its graph), for a
/// [`Follower`](crate::follow::Follower) to go on from instead of building the graph again
/// ([`Follower::from_built`](crate::follow::Follower::from_built)). `None` in archived mode
/// (the tree's graph is finished: its open nodes closed) and when the events were not in `seq`
/// order. Costs a copy of the graph.
pub fn build_session_tree_followable(
    session: &Session,
    options: &BuildOptions,
) -> (GraphTree, Option<IncrementalGraph>) {
    build_session_tree_followable_fed(session, options, None)
}

/// [`build_session_tree_followable`] with the root's graph already fed its events while they
/// were read ([`StreamedBuild`]; `None`: built here).
pub(crate) fn build_session_tree_followable_fed(
    session: &Session,
    options: &BuildOptions,
    fed: Option<IncrementalGraph>,
) -> (GraphTree, Option<IncrementalGraph>) {
    let (children, opts) = tree_parts(session, options, None);
    let (b, in_order) = built(&session.events, &opts, fed);
    if !opts.live || !in_order {
        return (
            GraphTree {
                graph: b.finish(),
                children,
            },
            None,
        );
    }
    // In live mode finishing only refreshes what the last append refreshed: the graph as
    // built is the finished graph (a test holds them equal).
    let graph = b.graph().clone();
    (GraphTree { graph, children }, Some(b))
}

fn build_tree(session: &Session, options: &BuildOptions, task_id: Option<&str>) -> GraphTree {
    let (children, opts) = tree_parts(session, options, task_id);
    let graph = build_graph(&session.events, &opts);
    GraphTree { graph, children }
}

/// The children's trees of a session and the options its own graph is built with.
fn tree_parts(
    session: &Session,
    options: &BuildOptions,
    task_id: Option<&str>,
) -> (Vec<GraphTree>, BuildOptions) {
    let root_id = task_id.unwrap_or(&session.id).to_owned();
    let children: Vec<GraphTree> = session
        .children
        .iter()
        .map(|c| {
            let child_opts = BuildOptions {
                session_id: None,
                task_id: Some(root_id.clone()),
                workspace: options.workspace.clone(),
                children: Vec::new(),
                ..options.clone()
            };
            build_tree(c, &child_opts, Some(&root_id))
        })
        .collect();
    let mut opts = options.clone();
    if opts.session_id.is_none() && !session.id.is_empty() {
        opts.session_id = Some(session.id.clone());
    }
    if task_id.is_some() {
        opts.task_id = Some(root_id.clone());
    }
    opts.agent = opts.agent.or(Some(session.agent));
    for (c, tree) in session.children.iter().zip(&children) {
        opts.children.push(ChildSummary::of_session(c, &tree.graph));
    }
    (children, opts)
}

/// Builds only the root graph of [`build_session_tree`].
pub fn build_session_graph(session: &Session, options: &BuildOptions) -> TaskGraph {
    build_session_tree(session, options).graph
}

/// The weight the critical path gives each node, in node order: task and phase 0; an agent
/// step its duration minus its child tools' durations (floored at 0); a call that waited for
/// the person ([`waiting::node_wait_kind`]) 0; any other node its duration.
pub fn node_weights(g: &TaskGraph) -> Vec<i64> {
    node_weights_with(g, &NodeIndex::new(g))
}

/// [`node_weights`] over a [`NodeIndex`] already built.
pub(crate) fn node_weights_with(g: &TaskGraph, index: &NodeIndex<'_>) -> Vec<i64> {
    let mut child = vec![0i64; g.nodes.len()];
    for n in &g.nodes {
        if n.node_type.is_tool_like()
            && let Some(p) = n.parent_id.as_ref().and_then(|p| index.get(p))
            && g.nodes[p].node_type == NodeType::Agent
        {
            child[p] += n.duration_ms;
        }
    }
    g.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match n.node_type {
            NodeType::Task | NodeType::Phase => 0,
            NodeType::Agent => (n.duration_ms - child[i]).max(0),
            _ if waiting::node_wait_kind(n).is_some() => 0,
            _ => n.duration_ms.max(0),
        })
        .collect()
}
