//! Finding sessions on disk and summarising them as tasks.
//!
//! Default homes (each overridable in [`DiscoveryConfig`], or by the environment variables the
//! agents themselves use, listed in [`env`](mod@env)):
//!
//! | agent | sessions folder |
//! | --- | --- |
//! | DSH | `$DSH_HOME/sessions` (`~/.dsh/sessions`) |
//! | pi | `$PI_CODING_AGENT_DIR/sessions` (`~/.pi/agent/sessions`) |
//! | Claude Code | `$CLAUDE_CONFIG_DIR/projects` (`~/.claude/projects`) |
//! | Codex | `$CODEX_HOME/sessions` (`~/.codex/sessions`) |
//! | Gemini CLI | `$GEMINI_CLI_HOME/.gemini/tmp` (`~/.gemini/tmp`) |
//! | OpenCode | `$XDG_DATA_HOME/opencode` (`~/.local/share/opencode`) |

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mindgate_pricing::PriceTable;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::graph::overview::subagent_totals;
use crate::graph::{
    BuildOptions, Counts, GraphTree, IncrementalGraph, Status, StreamedBuild, TaskGraph,
    TokenTotals, build_session_tree_fed, build_session_tree_followable_fed,
};
use crate::read::{detect_agent, dsh_session_file, read_session_as, read_session_feeding};
use crate::session::{Agent, Session};
use crate::text::workspace_slug;
use crate::usage::{SessionUsage, UsageQuery, UsageReport, usage_report};

/// Environment variables read by [`DiscoveryConfig::from_env`].
pub mod env {
    /// DSH home (sessions under `$DSH_HOME/sessions`).
    pub const DSH_HOME: &str = "DSH_HOME";
    /// pi agent folder (sessions under `$PI_CODING_AGENT_DIR/sessions`).
    pub const PI_CODING_AGENT_DIR: &str = "PI_CODING_AGENT_DIR";
    /// Claude Code config folder (sessions under `$CLAUDE_CONFIG_DIR/projects`).
    pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
    /// Codex home (sessions under `$CODEX_HOME/sessions`).
    pub const CODEX_HOME: &str = "CODEX_HOME";
    /// Replaces the home folder for Gemini CLI (sessions under
    /// `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats`).
    pub const GEMINI_CLI_HOME: &str = "GEMINI_CLI_HOME";
    /// XDG data folder (OpenCode's data under `$XDG_DATA_HOME/opencode`).
    pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
    /// Pins "now" for the live test (Unix milliseconds or RFC 3339): reproducible output, and
    /// tests over fixtures written at a fixed time.
    pub const MINDGATE_NOW: &str = "MINDGATE_NOW";
}

/// Where to look for sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryConfig {
    /// DSH sessions folder (`<slug>/<session-dir>/session*.jsonl*`).
    pub dsh_sessions: Option<PathBuf>,
    /// pi sessions folder (`<slug>/<timestamp>_<uuid>.jsonl`).
    pub pi_sessions: Option<PathBuf>,
    /// Claude Code projects folder (`<slug>/<sessionId>.jsonl`).
    pub claude_projects: Option<PathBuf>,
    /// Codex sessions folder (`YYYY/MM/DD/rollout-*.jsonl`).
    pub codex_sessions: Option<PathBuf>,
    /// Gemini CLI `tmp` folder (`<project>/chats/session-*.json[l]`).
    pub gemini_sessions: Option<PathBuf>,
    /// OpenCode data folder (`opencode.db`, or `storage/session|message|part/…`).
    pub opencode_data: Option<PathBuf>,
    /// Extra session files or folders (searched recursively, up to 16 folders deep; symbolic
    /// links to folders are not followed).
    pub extra_paths: Vec<PathBuf>,
    /// A session is live when it ends on an open turn or step, its file was modified within
    /// this window and its last event is this recent too (a copied old session is not live).
    pub live_window: Duration,
    /// "Now" for the live test (`None`: the system clock). Set it for reproducible output.
    pub now: Option<SystemTime>,
}

impl Default for DiscoveryConfig {
    fn default() -> Self {
        Self::empty()
    }
}

impl DiscoveryConfig {
    /// No homes at all (add paths yourself).
    pub fn empty() -> Self {
        Self {
            dsh_sessions: None,
            pi_sessions: None,
            claude_projects: None,
            codex_sessions: None,
            gemini_sessions: None,
            opencode_data: None,
            extra_paths: Vec::new(),
            live_window: Duration::from_secs(180),
            now: None,
        }
    }

    /// Homes from the environment, falling back to the defaults under the user's home folder.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| std::env::var_os(k).map(PathBuf::from), dirs::home_dir())
    }

    /// Like [`from_env`](Self::from_env) with an injected lookup and home (for tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<PathBuf>, home: Option<PathBuf>) -> Self {
        let pick = |var: &str, default: &[&str], sub: &str| -> Option<PathBuf> {
            get(var)
                .filter(|p| !p.as_os_str().is_empty())
                .or_else(|| {
                    home.as_ref()
                        .map(|h| default.iter().fold(h.clone(), |p, c| p.join(c)))
                })
                .map(|p| p.join(sub))
        };
        Self {
            dsh_sessions: pick(env::DSH_HOME, &[".dsh"], "sessions"),
            pi_sessions: pick(env::PI_CODING_AGENT_DIR, &[".pi", "agent"], "sessions"),
            claude_projects: pick(env::CLAUDE_CONFIG_DIR, &[".claude"], "projects"),
            codex_sessions: pick(env::CODEX_HOME, &[".codex"], "sessions"),
            gemini_sessions: get(env::GEMINI_CLI_HOME)
                .filter(|p| !p.as_os_str().is_empty())
                .or_else(|| home.clone())
                .map(|p| p.join(".gemini").join("tmp")),
            opencode_data: pick(env::XDG_DATA_HOME, &[".local", "share"], "opencode"),
            now: get(env::MINDGATE_NOW).and_then(|v| parse_now(v.to_str()?)),
            ..Self::empty()
        }
    }

    fn now(&self) -> SystemTime {
        self.now.unwrap_or_else(SystemTime::now)
    }
}

/// The "now" pinned by `MINDGATE_NOW` (see [`env::MINDGATE_NOW`]), if set and readable.
pub fn now_from_env() -> Option<SystemTime> {
    parse_now(std::env::var(env::MINDGATE_NOW).ok()?.as_str())
}

/// Reads a pinned "now": Unix milliseconds or an RFC 3339 time.
fn parse_now(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let ms = s
        .parse::<i64>()
        .ok()
        .or_else(|| crate::timestamp::parse_rfc3339_ms(s))?;
    let ms = u64::try_from(ms).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_millis(ms))
}

/// A session found on disk, not yet read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SessionLocation {
    /// Format.
    pub agent: Agent,
    /// File (pi, Claude Code, Codex) or folder (DSH).
    pub path: PathBuf,
    /// Workspace slug from the folder layout, when it has one.
    pub workspace: Option<String>,
}

/// One row of the task list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSummary {
    /// Session id.
    pub id: String,
    /// Format.
    pub agent: Agent,
    /// Workspace slug.
    pub workspace: String,
    /// Title.
    pub title: String,
    /// Working directory.
    pub cwd: Option<String>,
    /// Task status.
    pub status: Status,
    /// Start, Unix ms.
    pub start_time: Option<i64>,
    /// Duration.
    pub duration_ms: i64,
    /// Modified within the live window and ends on an open turn or step.
    pub live: bool,
    /// File or folder.
    pub path: PathBuf,
    /// Last modification, Unix ms.
    pub modified_ms: i64,
    /// Parent session (for subagent and forked sessions): a subagent session is listed on its
    /// own, marked as its parent's child.
    pub parent_session: Option<String>,
    /// Summary counts.
    pub counts: Counts,
    /// The session with its subagent sessions, each counted once.
    pub totals: WithSubagents,
    /// Number of read warnings.
    pub warnings: usize,
    /// The token usage of the session and of each of its subagent sessions (each once), for
    /// [`crate::usage`]; not serialised.
    #[serde(skip)]
    pub usage: Arc<[SessionUsage]>,
}

/// A session's totals with its subagent sessions (recursively, each session once). Their wall
/// time ran inside the parent's subagent calls, so the task's `duration_ms` already holds it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WithSubagents {
    /// Subagent sessions, each once.
    pub subagent_sessions: u64,
    /// The session's own tokens plus each subagent session's once.
    pub tokens: TokenTotals,
}

impl WithSubagents {
    /// The totals of the session whose graphs are `tree` (the same sum the task page's
    /// overview shows as `totals`: [`subagent_totals`]).
    pub fn of(tree: &GraphTree) -> Self {
        let children = subagent_totals(
            &tree.graph,
            &tree.children,
            &mindgate_pricing::PriceTable::default(),
        );
        let mut tokens = tree.graph.summary.tokens;
        tokens.merge(&children.tokens);
        Self {
            subagent_sessions: children.sessions,
            tokens,
        }
    }
}

impl TaskSummary {
    /// Where to read this task again: its file or folder, agent and workspace.
    pub fn location(&self) -> SessionLocation {
        SessionLocation {
            agent: self.agent,
            path: self.path.clone(),
            workspace: Some(self.workspace.clone()),
        }
    }
}

fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    v.sort();
    v
}

fn name_of(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default()
}

/// A file found where sessions are searched that is not listed as one, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The file or folder.
    pub path: PathBuf,
    /// Why it is not listed (the reading error's text).
    pub reason: String,
}

impl Skipped {
    /// `path` skipped because of `error`.
    pub fn new(path: &Path, error: &Error) -> Self {
        Self {
            path: path.to_path_buf(),
            reason: error.to_string(),
        }
    }
}

impl std::fmt::Display for Skipped {
    /// `skipping <path>: <reason>` — the one way a skipped file is reported.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "skipping {}: {}", self.path.display(), self.reason)
    }
}

/// What [`scan_sessions`] found: the sessions, and the files it skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The sessions, by path.
    pub sessions: Vec<SessionLocation>,
    /// `.jsonl` files under `--sessions` paths (and session paths given directly) that are in
    /// no agent's format or cannot be read, by path.
    pub skipped: Vec<Skipped>,
}

/// Lists the sessions under the configured homes and extra paths (cheap: no parsing, except
/// sniffing the first lines of files found under extra paths).
pub fn find_sessions(config: &DiscoveryConfig) -> Vec<SessionLocation> {
    scan_sessions(config).sessions
}

/// Like [`find_sessions`], and also reports the files it skipped: a `.jsonl` under an extra
/// path (or an extra path itself) that is in no agent's format or cannot be read.
pub fn scan_sessions(config: &DiscoveryConfig) -> Found {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    if let Some(root) = &config.dsh_sessions {
        for ws in list_dir(root).into_iter().filter(|p| p.is_dir()) {
            if dsh_session_file(&ws).is_some() {
                out.push(SessionLocation {
                    agent: Agent::Dsh,
                    path: ws,
                    workspace: None,
                });
                continue;
            }
            let slug = name_of(&ws).to_owned();
            for s in list_dir(&ws).into_iter().filter(|p| p.is_dir()) {
                if dsh_session_file(&s).is_some() {
                    out.push(SessionLocation {
                        agent: Agent::Dsh,
                        path: s,
                        workspace: Some(slug.clone()),
                    });
                }
            }
        }
    }
    for (root, agent) in [
        (&config.pi_sessions, Agent::Pi),
        (&config.claude_projects, Agent::ClaudeCode),
    ] {
        let Some(root) = root else { continue };
        for ws in list_dir(root).into_iter().filter(|p| p.is_dir()) {
            let slug = name_of(&ws).to_owned();
            for f in list_dir(&ws) {
                if f.is_file() && name_of(&f).ends_with(".jsonl") {
                    if agent == Agent::ClaudeCode {
                        // Its subagent sessions are listed too, each marked as its child.
                        for child in claude_subagent_files(&f) {
                            out.push(SessionLocation {
                                agent,
                                path: child,
                                workspace: Some(slug.clone()),
                            });
                        }
                    }
                    out.push(SessionLocation {
                        agent,
                        path: f,
                        workspace: Some(slug.clone()),
                    });
                }
            }
        }
    }
    if let Some(root) = &config.codex_sessions {
        walk(root, 5, &mut |p| {
            if name_of(p).starts_with("rollout-") && name_of(p).ends_with(".jsonl") {
                out.push(SessionLocation {
                    agent: Agent::Codex,
                    path: p.to_path_buf(),
                    workspace: None,
                });
            }
        });
    }
    gemini_and_opencode(config, &mut out, &mut skipped);
    for extra in &config.extra_paths {
        if extra.is_file() || dsh_session_file(extra).is_some() {
            match detect_agent(extra) {
                Ok(agent) => out.push(SessionLocation {
                    agent,
                    path: extra.clone(),
                    workspace: None,
                }),
                Err(e) => skipped.push(Skipped::new(extra, &e)),
            }
            continue;
        }
        let mut found = Vec::new();
        walk_dirs(extra, MAX_DEPTH, &mut |p| {
            if p.is_dir() {
                if is_opencode_data(p) {
                    opencode_sessions(p, &mut found, &mut skipped);
                    return false;
                }
                if dsh_session_file(p).is_some() {
                    found.push(SessionLocation {
                        agent: Agent::Dsh,
                        path: p.to_path_buf(),
                        workspace: None,
                    });
                    return false;
                }
                // Claude Code `subagents` folders hold child sessions: listed too, as children.
                return true;
            }
            let gemini_json =
                name_of(p).ends_with(".json") && crate::gemini::is_session_name(name_of(p));
            if gemini_json || name_of(p).ends_with(".jsonl") {
                match detect_agent(p) {
                    Ok(agent) => found.push(SessionLocation {
                        agent,
                        path: p.to_path_buf(),
                        workspace: None,
                    }),
                    Err(e) => skipped.push(Skipped::new(p, &e)),
                }
            }
            false
        });
        out.extend(found);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.dedup();
    Found {
        sessions: out,
        skipped,
    }
}

/// A Claude Code transcript's subagent sessions, `<session>/subagents/agent-*.jsonl` (a
/// subagent transcript read on its own is a session whose `parent_session` is the transcript's).
fn claude_subagent_files(transcript: &Path) -> Vec<PathBuf> {
    let Some(stem) = transcript.file_stem() else {
        return Vec::new();
    };
    list_dir(&transcript.with_file_name(stem).join("subagents"))
        .into_iter()
        .filter(|f| {
            let n = name_of(f);
            n.starts_with("agent-") && n.ends_with(".jsonl") && f.is_file()
        })
        .collect()
}

/// The sessions under the Gemini CLI and OpenCode homes.
fn gemini_and_opencode(
    config: &DiscoveryConfig,
    out: &mut Vec<SessionLocation>,
    skipped: &mut Vec<Skipped>,
) {
    if let Some(root) = &config.gemini_sessions {
        for (path, project) in crate::gemini::list_sessions(root) {
            out.push(SessionLocation {
                agent: Agent::Gemini,
                path,
                workspace: Some(project),
            });
        }
    }
    if let Some(root) = &config.opencode_data {
        opencode_sessions(root, out, skipped);
    }
}

/// An OpenCode data folder: it holds `opencode.db` or a `storage/session` tree.
fn is_opencode_data(dir: &Path) -> bool {
    dir.join(crate::opencode::DB_FILE).is_file() || dir.join("storage").join("session").is_dir()
}

/// The top-level OpenCode sessions of a data folder; a database that cannot be read is
/// reported as skipped with the reason.
fn opencode_sessions(root: &Path, out: &mut Vec<SessionLocation>, skipped: &mut Vec<Skipped>) {
    let (paths, failed) = crate::opencode::list_sessions(root);
    out.extend(paths.into_iter().map(|path| SessionLocation {
        agent: Agent::OpenCode,
        path,
        workspace: None,
    }));
    skipped.extend(
        failed
            .into_iter()
            .map(|(path, reason)| Skipped { path, reason }),
    );
}

fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    for p in list_dir(dir) {
        if p.is_dir() {
            if depth > 0 {
                walk(&p, depth - 1, f);
            }
        } else {
            f(&p);
        }
    }
}

/// How deep [`find_sessions`] looks under an extra path (a Codex home's
/// `sessions/YYYY/MM/DD/` inside a mixed folder is six levels down).
const MAX_DEPTH: usize = 16;

/// Walks files and folders; `f` returns whether to descend into a folder. Symbolic links to
/// folders are not followed (no cycles).
fn walk_dirs(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path) -> bool) {
    for p in list_dir(dir) {
        let descend = f(&p);
        let real_dir = fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
        if real_dir && descend && depth > 0 {
            walk_dirs(&p, depth - 1, f);
        }
    }
}

fn modified(loc: &SessionLocation) -> (i64, u64) {
    if loc.agent == Agent::OpenCode {
        let (t, len) = crate::opencode::stamp(&loc.path);
        let t = t
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64);
        return (t, len);
    }
    let file = if loc.path.is_dir() {
        dsh_session_file(&loc.path).unwrap_or_else(|| loc.path.clone())
    } else {
        loc.path.clone()
    };
    match fs::metadata(&file) {
        Ok(m) => {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as i64);
            (t, m.len())
        }
        Err(_) => (0, 0),
    }
}

fn is_recent(modified_ms: i64, config: &DiscoveryConfig) -> bool {
    let now = config
        .now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    now - modified_ms <= config.live_window.as_millis() as i64
}

/// Reads a located session and builds its graph tree (live mode when recently modified).
pub fn load_tree(loc: &SessionLocation, config: &DiscoveryConfig) -> Result<(Session, GraphTree)> {
    let (session, opts, fed) = read_for_tree(loc, config)?;
    let tree = build_session_tree_fed(&session, &opts, fed);
    Ok((session, tree))
}

/// [`load_tree`] for a session about to be followed: also the root's graph as built when it
/// is live ([`build_session_tree_followable`]), which a
/// [`Follower`](crate::follow::Follower) goes on from instead of building it again.
pub fn load_tree_followable(
    loc: &SessionLocation,
    config: &DiscoveryConfig,
) -> Result<(Session, GraphTree, Option<IncrementalGraph>)> {
    let (session, opts, fed) = read_for_tree(loc, config)?;
    let (tree, graph) = build_session_tree_followable_fed(&session, &opts, fed);
    Ok((session, tree, graph))
}

/// A located session read, the options its tree is built with, and its root graph when it
/// was built while the session was read ([`StreamedBuild`]: a DSH zstd file).
fn read_for_tree(
    loc: &SessionLocation,
    config: &DiscoveryConfig,
) -> Result<(Session, BuildOptions, Option<IncrementalGraph>)> {
    let mut stream = StreamedBuild::new(loc.workspace.clone());
    let (session, fed_whole) = read_session_feeding(&loc.path, loc.agent, &mut stream)?;
    let fed = stream.into_graph(fed_whole);
    let (modified_ms, _) = modified(loc);
    // One workspace string however the session was found: from its working directory (the
    // folder layouts slug it differently: Claude Code's `-work-x` is pi's `--work-x--`), the
    // folder's name only when the session names no directory.
    let workspace = session
        .cwd()
        .map(workspace_slug)
        .or_else(|| loc.workspace.clone());
    // Live: written to recently, and its last event is recent too (a copy of an old session
    // has a fresh modification time but old events).
    let last_event = session.events.iter().map(|e| e.time_ms).max();
    let live = is_recent(modified_ms, config) && last_event.is_none_or(|t| is_recent(t, config));
    let opts = BuildOptions {
        live,
        workspace,
        ..BuildOptions::default()
    };
    Ok((session, opts, fed))
}

fn summary_of(
    loc: &SessionLocation,
    session: &Session,
    tree: &GraphTree,
    modified_ms: i64,
) -> TaskSummary {
    let g: &TaskGraph = &tree.graph;
    TaskSummary {
        id: session.id.clone(),
        agent: loc.agent,
        workspace: g.workspace.clone(),
        title: g.title.clone(),
        cwd: g.cwd.clone(),
        status: g.status,
        start_time: g.start_time,
        duration_ms: g.duration_ms,
        live: g.meta.live && g.status == Status::Running,
        path: loc.path.clone(),
        modified_ms,
        parent_session: session.header.parent_session.clone(),
        counts: g.summary.counts,
        totals: WithSubagents::of(tree),
        warnings: session.warnings.len(),
        usage: SessionUsage::of_tree(tree, Some(loc.agent)).into(),
    }
}

/// Token usage and cost across `tasks` and their subagent sessions (each session once),
/// grouped as `query` asks: what `mindgate usage`, the Usage view and its HTTP route show.
pub fn usage_of_tasks<'a>(
    tasks: impl IntoIterator<Item = &'a TaskSummary>,
    query: &UsageQuery,
    prices: &PriceTable,
) -> UsageReport {
    usage_report(
        tasks.into_iter().flat_map(|t| t.usage.iter()),
        query,
        prices,
    )
}

/// Reads and summarises one located session.
pub fn summarize(loc: &SessionLocation, config: &DiscoveryConfig) -> Result<TaskSummary> {
    let (session, tree) = load_tree(loc, config)?;
    Ok(summary_of(loc, &session, &tree, modified(loc).0))
}

/// Finds and summarises every session, newest start first. Unreadable sessions are skipped
/// (logged at `warn` level).
pub fn discover(config: &DiscoveryConfig) -> Vec<TaskSummary> {
    let mut c = Catalog::new(config.clone());
    c.refresh();
    c.tasks().to_vec()
}

/// Loads a session by id (exact or unique prefix) or by path.
pub fn load(config: &DiscoveryConfig, id_or_path: &str) -> Result<Session> {
    let mut c = Catalog::new(config.clone());
    let p = Path::new(id_or_path);
    if p.exists() {
        return c.load(id_or_path);
    }
    c.refresh();
    c.load(id_or_path)
}

/// What a session id names among a task list (see [`match_task_id`]).
#[derive(Debug, PartialEq)]
pub enum IdMatch<'a, T> {
    /// One session: the first with exactly that id, else the only one whose id starts with it.
    One(&'a T),
    /// No session (an empty id names none).
    None,
    /// Several sessions' ids start with it (none is exactly it), in list order.
    Many(Vec<&'a T>),
}

/// The one rule by which every view (CLI, HTTP, MCP, [`Catalog::locate`]) resolves a session
/// id: an exact id (the first in list order), else a unique prefix.
pub fn match_task_id<'a, T>(
    items: &'a [T],
    id: &str,
    id_of: impl Fn(&T) -> &str,
) -> IdMatch<'a, T> {
    if id.is_empty() {
        return IdMatch::None;
    }
    if let Some(exact) = items.iter().find(|t| id_of(t) == id) {
        return IdMatch::One(exact);
    }
    let mut hits: Vec<&T> = items.iter().filter(|t| id_of(t).starts_with(id)).collect();
    match hits.len() {
        0 => IdMatch::None,
        1 => IdMatch::One(hits.remove(0)),
        _ => IdMatch::Many(hits),
    }
}

#[derive(Debug, Clone)]
struct Entry {
    loc: SessionLocation,
    modified_ms: i64,
    len: u64,
    summary: TaskSummary,
}

/// A session a [`Catalog::refresh_keeping`] read: its summary, the stamp of its file taken
/// before the read ([`crate::follow::stamp`]), the session, its graph tree and, when live, its
/// graph as built ([`load_tree_followable`]).
#[derive(Debug)]
pub struct ReadSession {
    /// The session as listed.
    pub summary: TaskSummary,
    /// Its file's size and modification time before the read.
    pub stamp: crate::follow::Stamp,
    /// The session read (with its children).
    pub session: Session,
    /// Its graph and its children's.
    pub tree: GraphTree,
    /// When live, its graph as built, to be followed.
    pub graph: Option<IncrementalGraph>,
}

/// A cached task list: [`refresh`](Self::refresh) re-reads only sessions whose file changed
/// (modification time or size).
#[derive(Debug, Clone)]
pub struct Catalog {
    config: DiscoveryConfig,
    entries: HashMap<PathBuf, Entry>,
    tasks: Vec<TaskSummary>,
    skipped: Vec<Skipped>,
    /// Sessions read and built whole so far.
    reads: u64,
}

impl Catalog {
    /// An empty catalog over `config`.
    pub fn new(config: DiscoveryConfig) -> Self {
        Self {
            config,
            entries: HashMap::new(),
            tasks: Vec::new(),
            skipped: Vec::new(),
            reads: 0,
        }
    }

    /// How many sessions the refreshes so far read and built whole (new or changed ones).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The configuration.
    pub fn config(&self) -> &DiscoveryConfig {
        &self.config
    }

    /// Rescans the homes; returns the task list (newest start first, then path).
    pub fn refresh(&mut self) -> &[TaskSummary] {
        self.rescan(None).0
    }

    /// [`refresh`](Self::refresh), handing over what it read of the sessions `keep` picks
    /// (by their summaries): a caller that reads a session for its own use next (a server
    /// opening the task it was asked for) need not read and build it a second time. Only
    /// sessions read by this refresh (new or changed) are handed over, live ones with their
    /// graphs as built to be followed ([`load_tree_followable`]: each live session read costs
    /// a copy of its graph).
    pub fn refresh_keeping(
        &mut self,
        mut keep: impl FnMut(&TaskSummary) -> bool,
    ) -> (&[TaskSummary], Vec<ReadSession>) {
        self.rescan(Some(&mut keep))
    }

    fn rescan(
        &mut self,
        mut keep: Option<&mut dyn FnMut(&TaskSummary) -> bool>,
    ) -> (&[TaskSummary], Vec<ReadSession>) {
        let mut kept = Vec::new();
        let Found {
            sessions: locs,
            mut skipped,
        } = scan_sessions(&self.config);
        let mut next = HashMap::with_capacity(locs.len());
        for loc in locs {
            let (modified_ms, len) = modified(&loc);
            let recent = is_recent(modified_ms, &self.config);
            let cached = self.entries.remove(&loc.path).filter(|e| {
                // a live summary goes stale when the live window passes
                (recent || !e.summary.live)
                    && e.modified_ms == modified_ms
                    && e.len == len
                    && e.loc == loc
            });
            let entry = match cached {
                Some(e) => e,
                None => {
                    // The stamp before the read: a file that grows meanwhile reads as changed.
                    let stamp = crate::follow::stamp(&loc.path, loc.agent);
                    let read = match keep {
                        Some(_) => load_tree_followable(&loc, &self.config),
                        None => load_tree(&loc, &self.config).map(|(s, t)| (s, t, None)),
                    };
                    match read {
                        Ok((session, tree, graph)) => {
                            self.reads += 1;
                            let summary = summary_of(&loc, &session, &tree, modified_ms);
                            if let Some(keep) = keep.as_mut()
                                && keep(&summary)
                            {
                                kept.push(ReadSession {
                                    summary: summary.clone(),
                                    stamp,
                                    session,
                                    tree,
                                    graph,
                                });
                            }
                            Entry {
                                summary,
                                loc: loc.clone(),
                                modified_ms,
                                len,
                            }
                        }
                        Err(e) => {
                            skipped.push(Skipped::new(&loc.path, &e));
                            continue;
                        }
                    }
                }
            };
            next.insert(loc.path.clone(), entry);
        }
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        for s in &skipped {
            tracing::warn!(path = %s.path.display(), reason = %s.reason, "skipping session");
        }
        self.skipped = skipped;
        self.entries = next;
        let mut tasks: Vec<TaskSummary> =
            self.entries.values().map(|e| e.summary.clone()).collect();
        tasks.sort_by(|a, b| {
            b.start_time
                .cmp(&a.start_time)
                .then_with(|| a.path.cmp(&b.path))
        });
        self.tasks = tasks;
        (&self.tasks, kept)
    }

    /// The task list as of the last refresh.
    pub fn tasks(&self) -> &[TaskSummary] {
        &self.tasks
    }

    /// Token usage and cost across the listed sessions and their subagent sessions (each
    /// session once), grouped as `query` asks.
    pub fn usage(&self, query: &UsageQuery, prices: &PriceTable) -> UsageReport {
        usage_of_tasks(&self.tasks, query, prices)
    }

    /// The files the last refresh skipped (in no agent's format, or unreadable), by path.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// Resolves an id (exact, else unique prefix) or a path to a location.
    pub fn locate(&self, id_or_path: &str) -> Result<SessionLocation> {
        let p = Path::new(id_or_path);
        // A listed session by its path (an OpenCode session's path names a row of its
        // database, not a file).
        if let Some(e) = self.entries.get(p) {
            return Ok(e.loc.clone());
        }
        if p.exists() {
            let agent = detect_agent(p)?;
            return Ok(SessionLocation {
                agent,
                path: p.to_path_buf(),
                workspace: None,
            });
        }
        let mut entries: Vec<&Entry> = self.entries.values().collect();
        entries.sort_by(|a, b| a.loc.path.cmp(&b.loc.path));
        match match_task_id(&entries, id_or_path, |e| e.summary.id.as_str()) {
            IdMatch::One(e) => Ok(e.loc.clone()),
            IdMatch::None => Err(Error::NotFound {
                id: id_or_path.to_owned(),
            }),
            IdMatch::Many(many) => Err(Error::Ambiguous {
                id: id_or_path.to_owned(),
                candidates: many.iter().map(|e| e.loc.path.clone()).collect(),
            }),
        }
    }

    /// Reads a session (with children) by id or path.
    pub fn load(&self, id_or_path: &str) -> Result<Session> {
        let loc = self.locate(id_or_path)?;
        read_session_as(&loc.path, loc.agent)
    }

    /// Reads a session and builds its graph tree (live mode when recently modified).
    pub fn tree(&self, id_or_path: &str) -> Result<(Session, GraphTree)> {
        let loc = self.locate(id_or_path)?;
        load_tree(&loc, &self.config)
    }

    /// Reads a session and builds its graph.
    pub fn graph(&self, id_or_path: &str) -> Result<TaskGraph> {
        self.tree(id_or_path).map(|(_, t)| t.graph)
    }
}
