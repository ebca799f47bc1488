//! Following a growing session file: what the server's live view applies on every change of
//! the file, kept in this crate so every view follows a session the same way.
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
//!   ones only the new events are appended to the graph, otherwise it is rebuilt (a new
//!   [`generation`](Follower::generation)).

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::bounded::{MAX_SESSION_BYTES, open_regular, read_regular};
use crate::error::{Error, Result};
use crate::event::{Event, EventKind};
use crate::graph::{BuildOptions, GraphChanges, GraphTree, IncrementalGraph};
use crate::live::{Change, Feed, LiveGraph, LiveReader};
use crate::parse;
use crate::read::{dsh_session_file, read_session_as};
use crate::session::{Agent, Session};

mod children;

use children::Children;
pub use children::children_stamp;

/// Modification time and size of a session's file: what tells that it changed.
pub type Stamp = (Option<SystemTime>, u64);

/// Size and modification time of the file behind a session path.
pub fn stamp(path: &Path, agent: Agent) -> Stamp {
    if agent == Agent::OpenCode {
        return crate::opencode::stamp(path);
    }
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

enum Mode {
    /// Read only bytes after `offset` (always just past a newline).
    Tail { offset: u64 },
    /// Re-parse the file; `stamp` is the file state last parsed.
    Reparse { stamp: Stamp },
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

fn io_error(file: &Path, e: std::io::Error) -> Error {
    Error::io(file, e)
}

/// Index just past the last `\n` of `bytes` (0 when there is none).
fn complete_lines(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)
}

/// Offset just past the last `\n` among the first `len` bytes of `file` (0 when none),
/// read backwards in 64 KiB blocks, so a file already parsed is not read whole again.
fn last_line_end(file: &Path, len: u64) -> Result<u64> {
    const BLOCK: u64 = 64 << 10;
    let (mut f, _) = open_regular(file)?;
    let mut end = len;
    let mut buf = Vec::with_capacity(BLOCK as usize);
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        f.seek(SeekFrom::Start(start))
            .map_err(|e| io_error(file, e))?;
        buf.clear();
        (&mut f)
            .take(end - start)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(file, e))?;
        if let Some(i) = buf.iter().rposition(|b| *b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// A session file followed as it grows: its events and incrementally kept graph.
pub struct Follower {
    path: PathBuf,
    agent: Agent,
    file: PathBuf,
    workspace: String,
    /// The graph and events outside stream mode (unused while streaming).
    graph: IncrementalGraph,
    events: Vec<Event>,
    mode: Mode,
    /// The child sessions as last read (their files are checked on every update).
    children: Children,
    /// How recently a file must have changed for its session to count as live.
    live_window: Duration,
    /// When the last re-read for a child's change ended, and what it cost.
    last_reload: Option<(Instant, Duration)>,
    generation: u64,
    /// The graph object was swapped (stream mode left or re-entered): its changes do not
    /// describe the difference.
    swapped: bool,
}

impl Follower {
    /// Reads the session at `path` (a file, or a DSH folder) and builds its graph, live when
    /// the file was modified within `live_window`.
    pub fn open(path: &Path, agent: Agent, workspace: &str, live_window: Duration) -> Result<Self> {
        let stamp = stamp(path, agent);
        let session = read_session_as(path, agent)?;
        Self::from_session(&session, stamp, path, agent, workspace, live_window)
    }

    /// Follows `session`, already read from `path` when the file's [`stamp`] was `stamp`
    /// (taken *before* the read), without reading it again where the format allows: a plain
    /// DSH file is tailed from its last complete line at `stamp`'s length (lines read twice
    /// because the file grew meanwhile are recognised and skipped), a zstd DSH file is
    /// re-parsed only once it changes after `stamp`. A pi / Claude Code / Codex file is read
    /// once more by its resumable reader, which must agree with `session`.
    pub fn from_session(
        session: &Session,
        stamp: Stamp,
        path: &Path,
        agent: Agent,
        workspace: &str,
        live_window: Duration,
    ) -> Result<Self> {
        Self::from_built(session, stamp, path, agent, workspace, live_window, None)
    }

    /// [`from_session`](Self::from_session) going on from `built`, the graph of `session`'s
    /// events as already built ([`crate::build_session_tree_followable`]), instead of building
    /// it again, when it was built with the options the follower would use (else, or for a
    /// file a resumable reader follows, the graph is built as `from_session` builds it).
    pub fn from_built(
        session: &Session,
        stamp: Stamp,
        path: &Path,
        agent: Agent,
        workspace: &str,
        live_window: Duration,
        built: Option<IncrementalGraph>,
    ) -> Result<Self> {
        let file = session_file(path, agent);
        let label = file.display().to_string();
        let plain_dsh = agent == Agent::Dsh && !label.ends_with(".zstd");
        let live = is_recent(stamp.0, live_window);
        let (opts, children) = options(session, workspace, live);
        let (events, mode) = if plain_dsh {
            let offset = last_line_end(&file, stamp.1)?;
            (with_room(&session.events), Mode::Tail { offset })
        } else if let Some(s) = Streamer::open(agent, &file, opts.clone(), &session.events) {
            (Vec::new(), Mode::Stream(s))
        } else {
            (with_room(&session.events), Mode::Reparse { stamp })
        };
        let graph = match built {
            Some(g)
                if !matches!(mode, Mode::Stream(_))
                    && g.options() == &opts
                    && g.last_seq() == events.iter().map(|e| e.seq).max() =>
            {
                g
            }
            _ => {
                let mut graph = IncrementalGraph::new(opts);
                graph.append(&events);
                graph
            }
        };
        let mut follower = Follower {
            path: path.to_path_buf(),
            agent,
            file,
            workspace: workspace.to_owned(),
            graph,
            events,
            mode,
            children,
            live_window,
            last_reload: None,
            generation: 0,
            swapped: false,
        };
        // Changes count from the graph as opened.
        follower.take_changes();
        Ok(follower)
    }

    /// Whether a resumable reader follows the file (pi, Claude Code, Codex): it read the
    /// file itself when it opened.
    pub fn streaming(&self) -> bool {
        matches!(self.mode, Mode::Stream(_))
    }

    /// The file followed (a DSH folder's newest `session*.jsonl*`).
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The graph as of the last update.
    pub fn graph(&self) -> &IncrementalGraph {
        match &self.mode {
            Mode::Stream(s) => s.graph.graph(),
            _ => &self.graph,
        }
    }

    /// The events as of the last update, in `seq` order.
    pub fn events(&self) -> &[Event] {
        match &self.mode {
            Mode::Stream(s) => s.graph.events(),
            _ => &self.events,
        }
    }

    /// The graph's changes since the last call.
    pub fn take_changes(&mut self) -> GraphChanges {
        match &mut self.mode {
            Mode::Stream(s) => s.graph.take_changes(),
            _ => self.graph.take_changes(),
        }
    }

    /// Bumped whenever the events were rebuilt rather than appended to (the graph's changes
    /// then do not describe the difference).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether the graph object was swapped since the last call (its changes then do not
    /// describe the difference either).
    pub fn take_swapped(&mut self) -> bool {
        std::mem::take(&mut self.swapped)
    }

    /// The child (subagent) sessions' graphs as of the last update, in the session's child
    /// order.
    pub fn children(&self) -> &[GraphTree] {
        &self.children.trees
    }

    /// Applies whatever the file gained since the last update, and re-reads the session when
    /// one of its children's files changed; whether anything changed.
    pub fn update(&mut self) -> Result<bool> {
        if self.children.changed() && reload_due(self.last_reload, Instant::now()) {
            return self.reload();
        }
        match self.mode {
            Mode::Tail { offset } => self.tail(offset),
            Mode::Reparse { stamp } => self.reparse(stamp),
            Mode::Stream(_) => self.stream(),
        }
    }

    /// Reads the new complete lines of a plain DSH file.
    fn tail(&mut self, offset: u64) -> Result<bool> {
        let (mut f, _) = open_regular(&self.file)?;
        let len = f.metadata().map_err(|e| io_error(&self.file, e))?.len();
        if len < offset {
            // Truncated or replaced: start over.
            return self.reparse((None, 0));
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
        self.mode = Mode::Tail {
            offset: offset + end as u64,
        };
        let parsed = parse::dsh::parse(&chunk[..end], &self.file.display().to_string());
        let fresh: Vec<Event> = parsed
            .events
            .into_iter()
            .filter(|e| !matches!(e.kind, EventKind::Session(_)))
            .filter(|e| {
                let lo = self.events.partition_point(|x| x.seq < e.seq);
                let hi = self.events.partition_point(|x| x.seq <= e.seq);
                !self.events[lo..hi].contains(e)
            })
            .collect();
        if fresh.is_empty() {
            return Ok(false);
        }
        self.apply(fresh);
        Ok(true)
    }

    /// Feeds what a pi / Claude Code / Codex file gained to its reader and graph.
    fn stream(&mut self) -> Result<bool> {
        let Mode::Stream(s) = &mut self.mode else {
            return Ok(false);
        };
        match Self::stream_step(&self.file, self.agent, s)? {
            Step::Unchanged | Step::Changed(Change::None) => Ok(false),
            Step::Changed(Change::Appended) => Ok(true),
            Step::Changed(Change::Replaced) => {
                // The shown tail was replaced: clients start over, as after a rebuild.
                self.generation += 1;
                Ok(true)
            }
            Step::FallBack => self.fall_back(),
        }
    }

    fn stream_step(file: &Path, agent: Agent, s: &mut Streamer) -> Result<Step> {
        let (mut f, _) = open_regular(file)?;
        let meta = f.metadata().map_err(|e| io_error(file, e))?;
        let len = meta.len();
        let offset = s.reader.offset();
        if len < offset || file_id(&meta) != s.id || !s.graph.graph().options().live {
            // Shrunk or replaced, or an archived graph coming alive: re-read it all.
            return Ok(Step::FallBack);
        }
        if agent == Agent::ClaudeCode && subagent_files(agent, file) != s.subagents {
            return Ok(Step::FallBack);
        }
        if len == offset {
            return Ok(Step::Unchanged);
        }
        // Re-read the newline before the offset too: if it is gone, the file was rewritten.
        let start = offset.saturating_sub(1);
        f.seek(SeekFrom::Start(start))
            .map_err(|e| io_error(file, e))?;
        let mut chunk = Vec::with_capacity((len - start) as usize);
        f.take(len - start)
            .read_to_end(&mut chunk)
            .map_err(|e| io_error(file, e))?;
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
    fn fall_back(&mut self) -> Result<bool> {
        if let Mode::Stream(s) =
            std::mem::replace(&mut self.mode, Mode::Reparse { stamp: (None, 0) })
        {
            self.events = s.graph.events().to_vec();
            self.graph = s.graph.graph().clone();
        }
        self.swapped = true;
        let changed = self.reparse((None, 0))?;
        if let Some(s) = Streamer::open(
            self.agent,
            &self.file,
            self.graph.options().clone(),
            &self.events,
        ) {
            self.mode = Mode::Stream(s);
            self.events = Vec::new();
            self.graph = IncrementalGraph::new(self.graph.options().clone());
        }
        Ok(changed)
    }

    /// Appends `fresh` (already de-duplicated) to the event list and the graph.
    fn apply(&mut self, fresh: Vec<Event>) {
        let in_order = self
            .events
            .last()
            .is_none_or(|l| fresh.first().is_none_or(|f| f.seq >= l.seq));
        if !self.graph.options().live || !in_order {
            // Archived → live, or events that go before ones already applied: rebuild once.
            self.events.extend(fresh);
            self.events.sort_by_key(|e| e.seq);
            self.generation += 1;
            let opts = BuildOptions {
                live: true,
                ..self.graph.options().clone()
            };
            let mut g = IncrementalGraph::new(opts);
            g.append(&self.events);
            self.graph = g;
        } else {
            self.graph.append(&fresh);
            self.events.extend(fresh);
        }
    }

    /// Re-parses the whole session; appends only the new events when the old ones are an
    /// unchanged prefix.
    fn reparse(&mut self, before: Stamp) -> Result<bool> {
        let now = stamp(&self.path, self.agent);
        if now == before && now.0.is_some() {
            return Ok(false);
        }
        let session = read_session_as(&self.path, self.agent)?;
        let old = self.events.len();
        let prefix_ok = session.events.len() >= old && session.events[..old] == self.events[..];
        if matches!(self.mode, Mode::Tail { .. }) {
            // A plain DSH file that shrank: continue tailing from its new end.
            let bytes = read_regular(&self.file, MAX_SESSION_BYTES)?;
            self.mode = Mode::Tail {
                offset: complete_lines(&bytes) as u64,
            };
        } else {
            self.mode = Mode::Reparse { stamp: now };
        }
        if prefix_ok && session.children.len() == self.children.count && self.graph.options().live {
            if session.events.len() == old {
                return Ok(false);
            }
            let fresh = session.events[old..].to_vec();
            self.apply(fresh);
            return Ok(true);
        }
        self.generation += 1;
        self.events = session.events.clone();
        (self.graph, self.children) = build(&session, &self.workspace, true, &self.events);
        Ok(true)
    }

    /// Reads the session and its children again and follows it afresh (a new generation):
    /// a child's growth changes the parent's totals and its subagent node's summary.
    fn reload(&mut self) -> Result<bool> {
        let started = Instant::now();
        let before = stamp(&self.path, self.agent);
        let session = read_session_as(&self.path, self.agent)?;
        let mut fresh = Follower::from_session(
            &session,
            before,
            &self.path,
            self.agent,
            &self.workspace,
            self.live_window,
        )?;
        fresh.generation = self.generation + 1;
        fresh.swapped = true;
        fresh.last_reload = Some((Instant::now(), started.elapsed()));
        *self = fresh;
        Ok(true)
    }
}

/// A re-read for a child's change may cost at most 1 / this of the time (a big parent whose
/// subagent keeps writing is re-read every few seconds, not on every check).
const RELOAD_PACE: u32 = 10;

/// Whether a re-read for a child's change may run at `now`, after the last one (`None`:
/// none yet) ended and cost what it did.
fn reload_due(last: Option<(Instant, Duration)>, now: Instant) -> bool {
    last.is_none_or(|(ended, cost)| now.saturating_duration_since(ended) >= cost * RELOAD_PACE)
}

/// The build options of `session`'s graph (its children's summaries included) and its
/// children as built.
/// A copy of `events` with room to grow: a copy is exactly as long as its source, so the
/// first append after opening moved every event (at 100,000 events ~12 MB into fresh pages,
/// the first live update's cost on top of the later ones').
fn with_room(events: &[Event]) -> Vec<Event> {
    let mut out = Vec::with_capacity(events.len() + events.len() / 8 + 256);
    out.extend_from_slice(events);
    out
}

fn options(session: &Session, workspace: &str, live: bool) -> (BuildOptions, Children) {
    let mut opts = BuildOptions {
        live,
        workspace: Some(workspace.to_owned()),
        agent: Some(session.agent),
        ..BuildOptions::default()
    };
    if !session.id.is_empty() {
        opts.session_id = Some(session.id.clone());
    }
    let (children, summaries) = Children::of(session, &opts);
    opts.children = summaries;
    (opts, children)
}

fn build(
    session: &Session,
    workspace: &str,
    live: bool,
    events: &[Event],
) -> (IncrementalGraph, Children) {
    let (opts, children) = options(session, workspace, live);
    let mut g = IncrementalGraph::new(opts);
    g.append(events);
    (g, children)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_costly_reload_waits_ten_times_its_cost() {
        let t0 = Instant::now();
        assert!(reload_due(None, t0), "the first one runs at once");
        let last = Some((t0, Duration::from_millis(400)));
        assert!(!reload_due(last, t0 + Duration::from_millis(1000)));
        assert!(!reload_due(last, t0 + Duration::from_millis(3999)));
        assert!(reload_due(last, t0 + Duration::from_millis(4000)));
        let cheap = Some((t0, Duration::from_millis(2)));
        assert!(reload_due(cheap, t0 + Duration::from_millis(20)));
    }
}
