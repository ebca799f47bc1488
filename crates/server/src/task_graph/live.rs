//! Live task graphs: one watched session per path, shared by every `/live` subscriber.
//!
//! A session's file is watched with `notify` (its folder, non-recursively, so replaced files
//! are seen too); each change wakes a task that applies what was appended:
//!
//! * **DSH plain JSONL** (`session.v1…v4.jsonl`, the files DSH appends to while it runs):
//!   only the bytes after the last complete line read so far are read and parsed, and their
//!   events are appended to the [`IncrementalGraph`] — an append costs time proportional to
//!   the new events.
//! * **pi, Claude Code, Codex** (stream mode): a [`LiveReader`] keeps the parser state
//!   between changes, so only the bytes after its offset are read; its newly committed events
//!   and its provisional tail go to a [`LiveGraph`]. When the reader diverges, the file shrinks
//!   or is replaced, or (Claude Code) sidechain lines or `subagents/agent-*.jsonl` files
//!   change, the whole-file path below takes over for that change (and stream mode is
//!   re-established when a fresh reader agrees with the whole-file read).
//! * **Otherwise** (zstd DSH, or a stream reader that disagrees with the whole-file read at
//!   open): the file is re-parsed; when the old events are an unchanged prefix of the new
//!   ones only the new events are appended to the graph, otherwise it is rebuilt.
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
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use axum::response::sse::Event as SseEvent;
use futures_util::{Stream, StreamExt, stream};
use mindgate_taskgraph::bounded::{MAX_SESSION_BYTES, open_regular, read_regular};
use mindgate_taskgraph::live::{Change, Feed, LiveGraph, LiveReader};
use mindgate_taskgraph::read::{dsh_session_file, read_session_as};
use mindgate_taskgraph::{
    Agent, BuildOptions, ChildSummary, DiscoveryConfig, Event, EventKind, GraphChanges,
    IncrementalGraph, Session, TaskGraph, TaskSummary, build_session_tree, parse,
};
use notify::Watcher;
use serde::Serialize;
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{TaskGraphs, blocking, lock};
use crate::error::ApiError;

/// Changes arriving within this window after the first are applied together.
const COALESCE: Duration = Duration::from_millis(15);
/// Most deltas kept for subscribers that are behind.
const DELTA_RING: usize = 64;
/// Most bytes of deltas kept (older ones are dropped first; a client behind them gets the
/// whole graph).
const DELTA_RING_BYTES: usize = 16 << 20;

/// Size and modification time of the file behind a session path.
pub(super) fn stamp(path: &Path, agent: Agent) -> (Option<SystemTime>, u64) {
    let file = session_file(path, agent);
    match fs::metadata(&file) {
        Ok(m) => (m.modified().ok(), m.len()),
        Err(_) => (None, 0),
    }
}

/// The file a session path stands for (DSH folders hold their newest `session*.jsonl*`).
fn session_file(path: &Path, agent: Agent) -> PathBuf {
    if agent == Agent::Dsh && path.is_dir() {
        dsh_session_file(path).unwrap_or_else(|| path.to_path_buf())
    } else {
        path.to_path_buf()
    }
}

fn is_recent(modified: Option<SystemTime>, window: Duration) -> bool {
    modified
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_none_or(|age| age <= window)
}

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
    nodes: Vec<&'a mindgate_taskgraph::Node>,
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
        } = now;
        fn common<T: PartialEq>(a: &[T], b: &[T]) -> usize {
            a.iter().zip(b).take_while(|(x, y)| x == y).count()
        }
        let keep = PathKeep {
            node_ids: common(&before.node_ids, node_ids),
            hot_node_ids: common(&before.hot_node_ids, hot_node_ids),
            edge_ids: common(&before.edge_ids, edge_ids),
        };
        Some(PathSplice {
            node_ids: &node_ids[keep.node_ids..],
            hot_node_ids: &hot_node_ids[keep.hot_node_ids..],
            edge_ids: &edge_ids[keep.edge_ids..],
            keep,
            duration_ms: *duration_ms,
            total_ms: *total_ms,
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
            files_changed
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
    before: &Fields,
    now: &Fields,
    base: u64,
    version: u64,
) -> Arc<str> {
    let d = Delta {
        version,
        base,
        node_count: g.nodes.len(),
        edge_count: g.edges.len(),
        node_index: &ch.nodes,
        nodes: ch.nodes.iter().filter_map(|&i| g.nodes.get(i)).collect(),
        edge_index: &ch.edges,
        edges: ch.edges.iter().filter_map(|&i| g.edges.get(i)).collect(),
        fields: now.changed_since(before),
        critical_path: PathSplice::between(&before.critical_path, &now.critical_path),
    };
    serde_json::to_string(&d)
        .unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
        .into()
}

enum Mode {
    /// Read only bytes after `offset` (always just past a newline).
    Tail { offset: u64 },
    /// Re-parse the file; `stamp` is the file state last parsed.
    Reparse { stamp: (Option<SystemTime>, u64) },
    /// Feed the bytes after the reader's offset to a resumable reader (pi, Claude Code,
    /// Codex); the graph and events live in the stream, not in `State`.
    Stream(Box<Streamer>),
}

/// The stream-mode state of a pi / Claude Code / Codex session.
struct Streamer {
    reader: LiveReader,
    graph: LiveGraph,
    /// Claude Code sidechain lines the reader had seen when the graph was last in sync.
    sidechain: usize,
    /// `subagents/agent-*.jsonl` files next to a Claude Code session.
    subagents: usize,
    /// Identity of the file read (a replaced file has a new one).
    id: Option<(u64, u64)>,
}

struct State {
    /// The graph and events outside stream mode (unused while streaming).
    graph: IncrementalGraph,
    events: Vec<Event>,
    mode: Mode,
    children: usize,
    version: u64,
    generation: u64,
    /// The graph object was swapped (stream mode left or re-entered): its changes do not
    /// describe the difference, so the next publish sends the whole graph.
    swapped: bool,
    /// The top-level fields at the last published version (what a delta is relative to).
    published: Fields,
}

impl State {
    fn graph(&self) -> &IncrementalGraph {
        match &self.mode {
            Mode::Stream(s) => s.graph.graph(),
            _ => &self.graph,
        }
    }

    fn events(&self) -> &[Event] {
        match &self.mode {
            Mode::Stream(s) => s.graph.events(),
            _ => &self.events,
        }
    }

    /// The shown graph's changes since the last call.
    fn take_changes(&mut self) -> GraphChanges {
        match &mut self.mode {
            Mode::Stream(s) => s.graph.take_changes(),
            _ => self.graph.take_changes(),
        }
    }
}

/// Device and inode of an open file (None where unknown).
#[cfg(unix)]
fn file_id(m: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// How many `<stem>/subagents/agent-*.jsonl` files a Claude Code session has (0 otherwise).
fn subagent_files(agent: Agent, file: &Path) -> usize {
    if agent != Agent::ClaudeCode {
        return 0;
    }
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let dir = file.with_file_name(stem).join("subagents");
    fs::read_dir(dir).map_or(0, |rd| {
        rd.filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
            })
            .count()
    })
}

impl Streamer {
    /// Reads `file` with a fresh reader; `None` when the agent has no reader, the file cannot
    /// be read, the reader diverges, or its events differ from `expected` (the whole-file
    /// read).
    fn open(
        agent: Agent,
        file: &Path,
        opts: BuildOptions,
        expected: &[Event],
    ) -> Option<Box<Streamer>> {
        let mut reader = LiveReader::new(agent, &file.display().to_string())?;
        let subagents = subagent_files(agent, file);
        let (mut f, len) = open_regular(file).ok()?;
        let meta = f.metadata().ok()?;
        if len > MAX_SESSION_BYTES {
            return None;
        }
        let mut bytes = Vec::with_capacity(len as usize);
        (&mut f)
            .take(MAX_SESSION_BYTES)
            .read_to_end(&mut bytes)
            .ok()?;
        let Feed::Events(committed) = reader.feed(&bytes) else {
            return None;
        };
        let tail = reader.tail();
        if committed.len() + tail.len() != expected.len()
            || !committed.iter().chain(&tail).eq(expected.iter())
        {
            return None;
        }
        let graph = LiveGraph::new(IncrementalGraph::new(opts), committed, tail);
        Some(Box::new(Streamer {
            sidechain: reader.sidechain_lines(),
            reader,
            graph,
            subagents,
            id: file_id(&meta),
        }))
    }
}

/// What a stream-mode update found.
enum Step {
    Unchanged,
    Changed(Change),
    /// Re-read the whole file.
    FallBack,
}

/// A watched session.
pub(super) struct Live {
    path: PathBuf,
    agent: Agent,
    file: PathBuf,
    workspace: String,
    state: Mutex<State>,
    tx: watch::Sender<Arc<Snapshot>>,
    /// `(version, delta from version - 1)`, oldest first; `None` where that version was a
    /// whole-graph change.
    deltas: Mutex<VecDeque<(u64, Option<Arc<str>>)>>,
    /// The whole graph, serialised at the version it names (made on demand).
    full: Mutex<Option<FullGraph>>,
    stopped: AtomicBool,
}

fn child_summaries(session: &Session, base: &BuildOptions) -> Vec<ChildSummary> {
    session
        .children
        .iter()
        .map(|c| {
            let opts = BuildOptions {
                session_id: None,
                task_id: Some(session.id.clone()),
                children: Vec::new(),
                ..base.clone()
            };
            let tree = build_session_tree(c, &opts);
            let reference = if c.path.as_os_str().is_empty() {
                c.id.clone()
            } else {
                c.path.display().to_string()
            };
            let mut s = ChildSummary::from_graph(&tree.graph, reference);
            s.id.clone_from(&c.id);
            s.parent_session = c.header.parent_session.clone();
            s.created_ms = c.header.created_ms.or(s.created_ms);
            s
        })
        .collect()
}

fn io_error(file: &Path, e: std::io::Error) -> ApiError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ApiError::not_found(format!("{} is gone", file.display()))
    } else {
        ApiError::internal(format!("cannot read {}: {e}", file.display()))
    }
}

/// Index just past the last `\n` of `bytes` (0 when there is none).
fn complete_lines(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)
}

impl Live {
    /// Reads the session and builds its graph (live mode when recently modified).
    fn open(t: &TaskSummary, config: &DiscoveryConfig) -> Result<Live, ApiError> {
        let session = read_session_as(&t.path, t.agent).map_err(super::tg_error)?;
        let file = session_file(&t.path, t.agent);
        let stamp = stamp(&t.path, t.agent);
        let label = file.display().to_string();
        let plain_dsh = t.agent == Agent::Dsh && !label.ends_with(".zstd");
        let live = is_recent(stamp.0, config.live_window);
        let opts = Self::options(&session, &t.workspace, live);
        let (events, mode) = if plain_dsh {
            let bytes = read_regular(&file, MAX_SESSION_BYTES).map_err(super::tg_error)?;
            let end = complete_lines(&bytes);
            let s = parse::dsh::parse(&bytes[..end], &label);
            (s.events, Mode::Tail { offset: end as u64 })
        } else if let Some(s) = Streamer::open(t.agent, &file, opts.clone(), &session.events) {
            (Vec::new(), Mode::Stream(s))
        } else {
            (session.events.clone(), Mode::Reparse { stamp })
        };
        let mut graph = IncrementalGraph::new(opts);
        graph.append(&events);
        let published = Fields::of(graph.graph());
        let mut state = State {
            graph,
            events,
            mode,
            children: session.children.len(),
            version: 0,
            generation: 0,
            swapped: false,
            published,
        };
        // Subscribers start from the whole graph: changes count from here.
        state.take_changes();
        let snap = Snapshot {
            generation: 0,
            error: None,
        };
        Ok(Live {
            path: t.path.clone(),
            agent: t.agent,
            file,
            workspace: t.workspace.clone(),
            state: Mutex::new(state),
            tx: watch::Sender::new(Arc::new(snap)),
            deltas: Mutex::new(VecDeque::new()),
            full: Mutex::new(None),
            stopped: AtomicBool::new(false),
        })
    }

    fn options(session: &Session, workspace: &str, live: bool) -> BuildOptions {
        let mut opts = BuildOptions {
            live,
            workspace: Some(workspace.to_owned()),
            agent: Some(session.agent),
            ..BuildOptions::default()
        };
        if !session.id.is_empty() {
            opts.session_id = Some(session.id.clone());
        }
        opts.children = child_summaries(session, &opts);
        opts
    }

    fn build(session: &Session, workspace: &str, live: bool, events: &[Event]) -> IncrementalGraph {
        let mut g = IncrementalGraph::new(Self::options(session, workspace, live));
        g.append(events);
        g
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
            last_seq: st.events().last().map(|e| e.seq),
            json: Self::graph_text(st.graph()),
        };
        *full = Some(f.clone());
        f
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
        let mut st = lock(&self.state);
        let generation = st.generation;
        let outcome = match st.mode {
            Mode::Tail { offset } => self.tail(&mut st, offset),
            Mode::Reparse { stamp } => self.reparse(&mut st, stamp),
            Mode::Stream(_) => self.stream(&mut st),
        };
        let error = match outcome {
            Ok(false) => return,
            Ok(true) => None,
            Err(e) => Some(e.message),
        };
        st.version += 1;
        let changes = st.take_changes();
        let fields = Fields::of(st.graph().graph());
        let delta =
            (st.generation == generation && !st.swapped && st.graph().options().live).then(|| {
                delta_json(
                    st.graph().graph(),
                    &changes,
                    &st.published,
                    &fields,
                    st.version - 1,
                    st.version,
                )
            });
        st.published = fields;
        st.swapped = false;
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
            generation: st.generation,
            error,
        };
        drop(st);
        self.tx.send_replace(Arc::new(snap));
    }

    /// Reads the new complete lines of a plain DSH file.
    fn tail(&self, st: &mut State, offset: u64) -> Result<bool, ApiError> {
        let (mut f, _) = open_regular(&self.file).map_err(super::tg_error)?;
        let len = f.metadata().map_err(|e| io_error(&self.file, e))?.len();
        if len < offset {
            // Truncated or replaced: start over.
            return self.reparse(st, (None, 0));
        }
        if len == offset {
            return Ok(false);
        }
        f.seek(SeekFrom::Start(offset))
            .map_err(|e| io_error(&self.file, e))?;
        let mut chunk = Vec::with_capacity((len - offset) as usize);
        f.take(len - offset)
            .read_to_end(&mut chunk)
            .map_err(|e| io_error(&self.file, e))?;
        let end = complete_lines(&chunk);
        if end == 0 {
            return Ok(false);
        }
        st.mode = Mode::Tail {
            offset: offset + end as u64,
        };
        let parsed = parse::dsh::parse(&chunk[..end], &self.file.display().to_string());
        let fresh: Vec<Event> = parsed
            .events
            .into_iter()
            .filter(|e| !matches!(e.kind, EventKind::Session(_)))
            .filter(|e| {
                let lo = st.events.partition_point(|x| x.seq < e.seq);
                let hi = st.events.partition_point(|x| x.seq <= e.seq);
                !st.events[lo..hi].contains(e)
            })
            .collect();
        if fresh.is_empty() {
            return Ok(false);
        }
        self.apply(st, fresh);
        Ok(true)
    }

    /// Feeds what a pi / Claude Code / Codex file gained to its reader and graph.
    fn stream(&self, st: &mut State) -> Result<bool, ApiError> {
        let Mode::Stream(s) = &mut st.mode else {
            return Ok(false);
        };
        match self.stream_step(s)? {
            Step::Unchanged | Step::Changed(Change::None) => Ok(false),
            Step::Changed(Change::Appended) => Ok(true),
            Step::Changed(Change::Replaced) => {
                // The shown tail was replaced: clients start over, as after a rebuild.
                st.generation += 1;
                Ok(true)
            }
            Step::FallBack => self.fall_back(st),
        }
    }

    fn stream_step(&self, s: &mut Streamer) -> Result<Step, ApiError> {
        let (mut f, _) = open_regular(&self.file).map_err(super::tg_error)?;
        let meta = f.metadata().map_err(|e| io_error(&self.file, e))?;
        let len = meta.len();
        let offset = s.reader.offset();
        if len < offset || file_id(&meta) != s.id || !s.graph.graph().options().live {
            // Shrunk or replaced, or an archived graph coming alive: re-read it all.
            return Ok(Step::FallBack);
        }
        if self.agent == Agent::ClaudeCode && subagent_files(self.agent, &self.file) != s.subagents
        {
            return Ok(Step::FallBack);
        }
        if len == offset {
            return Ok(Step::Unchanged);
        }
        // Re-read the newline before the offset too: if it is gone, the file was rewritten.
        let start = offset.saturating_sub(1);
        f.seek(SeekFrom::Start(start))
            .map_err(|e| io_error(&self.file, e))?;
        let mut chunk = Vec::with_capacity((len - start) as usize);
        f.take(len - start)
            .read_to_end(&mut chunk)
            .map_err(|e| io_error(&self.file, e))?;
        if offset > 0 && chunk.first() != Some(&b'\n') {
            return Ok(Step::FallBack);
        }
        let new = chunk.get((offset - start) as usize..).unwrap_or_default();
        if complete_lines(new) == 0 {
            return Ok(Step::Unchanged);
        }
        let fresh = match s.reader.feed(new) {
            Feed::Events(ev) => ev,
            Feed::Diverged => return Ok(Step::FallBack),
        };
        if s.reader.sidechain_lines() != s.sidechain {
            // Child sessions changed, which the reader does not build.
            return Ok(Step::FallBack);
        }
        Ok(Step::Changed(s.graph.update(fresh, s.reader.tail())))
    }

    /// Leaves stream mode for one whole-file read (which bumps the generation when the shown
    /// events are not a prefix of the new ones), then streams again if a fresh reader agrees.
    fn fall_back(&self, st: &mut State) -> Result<bool, ApiError> {
        if let Mode::Stream(s) = std::mem::replace(&mut st.mode, Mode::Reparse { stamp: (None, 0) })
        {
            st.events = s.graph.events().to_vec();
            st.graph = s.graph.graph().clone();
        }
        st.swapped = true;
        let changed = self.reparse(st, (None, 0))?;
        if let Some(s) = Streamer::open(
            self.agent,
            &self.file,
            st.graph.options().clone(),
            &st.events,
        ) {
            st.mode = Mode::Stream(s);
            st.events = Vec::new();
            st.graph = IncrementalGraph::new(st.graph.options().clone());
        }
        Ok(changed)
    }

    /// Appends `fresh` (already de-duplicated) to the event list and the graph.
    fn apply(&self, st: &mut State, fresh: Vec<Event>) {
        let in_order = st
            .events
            .last()
            .is_none_or(|l| fresh.first().is_none_or(|f| f.seq >= l.seq));
        if !st.graph.options().live || !in_order {
            // Archived → live, or events that go before ones already applied: rebuild once.
            st.events.extend(fresh);
            st.events.sort_by_key(|e| e.seq);
            st.generation += 1;
            let opts = BuildOptions {
                live: true,
                ..st.graph.options().clone()
            };
            let mut g = IncrementalGraph::new(opts);
            g.append(&st.events);
            st.graph = g;
        } else {
            st.graph.append(&fresh);
            st.events.extend(fresh);
        }
    }

    /// Re-parses the whole session; appends only the new events when the old ones are an
    /// unchanged prefix.
    fn reparse(&self, st: &mut State, before: (Option<SystemTime>, u64)) -> Result<bool, ApiError> {
        let now = stamp(&self.path, self.agent);
        if now == before && now.0.is_some() {
            return Ok(false);
        }
        let session = read_session_as(&self.path, self.agent).map_err(super::tg_error)?;
        let old = st.events.len();
        let prefix_ok = session.events.len() >= old && session.events[..old] == st.events[..];
        if matches!(st.mode, Mode::Tail { .. }) {
            // A plain DSH file that shrank: continue tailing from its new end.
            let bytes = read_regular(&self.file, MAX_SESSION_BYTES).map_err(super::tg_error)?;
            st.mode = Mode::Tail {
                offset: complete_lines(&bytes) as u64,
            };
        } else {
            st.mode = Mode::Reparse { stamp: now };
        }
        if prefix_ok && session.children.len() == st.children && st.graph.options().live {
            if session.events.len() == old {
                return Ok(false);
            }
            let fresh = session.events[old..].to_vec();
            self.apply(st, fresh);
            return Ok(true);
        }
        st.generation += 1;
        st.children = session.children.len();
        st.events = session.events.clone();
        st.graph = Self::build(&session, &self.workspace, true, &st.events);
        Ok(true)
    }

    /// Events with `seq > after`.
    fn events_after(&self, after: Option<u64>) -> Vec<Event> {
        let st = lock(&self.state);
        let events = st.events();
        let start = after.map_or(0, |a| events.partition_point(|e| e.seq <= a));
        events[start..].to_vec()
    }

    fn last_seq(&self) -> Option<u64> {
        lock(&self.state).events().last().map(|e| e.seq)
    }
}

/// One `/live` client.
pub(super) struct Subscription {
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
                    if snap.generation != s.generation {
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
    let t2 = t.clone();
    let live = Arc::new(blocking(move || Live::open(&t2, &config)).await?);
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
