//! A session as read from disk: header, events, child sessions and read warnings.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::{Event, SessionStart};

/// Which coding agent wrote a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    /// DeepSeek Harness (`~/.dsh/sessions`).
    Dsh,
    /// pi coding agent (`~/.pi/agent/sessions`).
    Pi,
    /// Claude Code (`~/.claude/projects`).
    ClaudeCode,
    /// OpenAI Codex CLI (`~/.codex/sessions`).
    Codex,
    /// Gemini CLI (`~/.gemini/tmp/<project>/chats`).
    Gemini,
    /// OpenCode (`~/.local/share/opencode`: `opencode.db` or the `storage` tree).
    #[serde(rename = "opencode")]
    OpenCode,
}

impl Agent {
    /// Every agent, in the order of the enum.
    pub const ALL: [Agent; 6] = [
        Agent::Dsh,
        Agent::Pi,
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::OpenCode,
    ];

    /// The snake-case name (`dsh`, `pi`, `claude_code`, `codex`, `gemini`, `opencode`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Dsh => "dsh",
            Agent::Pi => "pi",
            Agent::ClaudeCode => "claude_code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem in the input that was skipped over; reading went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadWarning {
    /// File the problem is in.
    pub file: String,
    /// 1-based line number (0 when the problem is not tied to a line, e.g. a torn zstd frame).
    pub line: u64,
    /// What was wrong.
    pub message: String,
}

impl ReadWarning {
    /// Creates a warning.
    pub fn new(file: impl Into<String>, line: u64, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for ReadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// One session (a task), possibly with subagent sessions as children.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// Which agent wrote it.
    pub agent: Agent,
    /// The file or folder it was read from (empty for in-memory input).
    pub path: PathBuf,
    /// Header data (also the first event, when the format has one).
    pub header: SessionStart,
    /// Format-specific extras, e.g. pi's abandoned branches (`abandoned_branches`) or Claude
    /// Code's `summary` lines.
    pub meta: Map<String, Value>,
    /// Events in `seq` order.
    pub events: Vec<Event>,
    /// Subagent sessions (read recursively).
    pub children: Vec<Session>,
    /// Problems skipped while reading this session (children keep their own).
    pub warnings: Vec<ReadWarning>,
}

impl Session {
    /// An empty session.
    pub fn new(id: impl Into<String>, agent: Agent) -> Self {
        let id = id.into();
        Self {
            header: SessionStart {
                id: id.clone(),
                ..SessionStart::default()
            },
            id,
            agent,
            path: PathBuf::new(),
            meta: Map::new(),
            events: Vec::new(),
            children: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Working directory from the header, when known.
    pub fn cwd(&self) -> Option<&str> {
        self.header.cwd.as_deref()
    }

    /// Sorts events by `seq` (stable, so events sharing a line keep their order) and drops exact
    /// duplicates that share a `seq`.
    pub fn normalize_events(&mut self) {
        normalize_events(&mut self.events);
    }
}

/// Whether `events` are in `seq` order with no exact duplicate sharing a `seq`: what
/// [`normalize_events`] leaves as it is.
pub(crate) fn is_normal(events: &[Event]) -> bool {
    let duplicated = |run: &[Event]| (1..run.len()).any(|i| run[..i].contains(&run[i]));
    events.windows(2).all(|w| w[0].seq <= w[1].seq)
        && !events.chunk_by(|a, b| a.seq == b.seq).any(duplicated)
}

/// Sorts `events` stably by `seq` and removes exact duplicates sharing a `seq`.
///
/// Returns how many events were dropped.
pub fn normalize_events(events: &mut Vec<Event>) -> usize {
    // The usual case, in order and no event twice: nothing to copy.
    if is_normal(events) {
        return 0;
    }
    let sorted = events.windows(2).all(|w| w[0].seq <= w[1].seq);
    if !sorted {
        events.sort_by_key(|e| e.seq);
    }
    let before = events.len();
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    let mut run_start = 0;
    for e in events.drain(..) {
        if out.last().is_some_and(|l| l.seq != e.seq) {
            run_start = out.len();
        }
        if out[run_start..].contains(&e) {
            continue;
        }
        out.push(e);
    }
    *events = out;
    before - events.len()
}
