//! Resumable readers for growing pi, Claude Code and Codex session files, and a graph that
//! follows them.
//!
//! The whole-file readers in [`crate::parse`] keep state across the file (pi's branch, Claude
//! Code's merged response lines, turn and step numbering) and decide a few things at the end of
//! input (closing the last step or turn). [`LiveReader`] keeps that state between calls: it is
//! fed the bytes appended to the file, consumes complete lines only (a partial trailing line
//! waits for its newline) and returns the **committed** events — those no later line can change
//! or reorder. [`LiveReader::tail`] gives the rest of what a whole-file read of the lines so far
//! would produce: events at or after the last line that pushed something and the end-of-input
//! closings, e.g. the usage, finish reason and end of a Claude Code response whose lines may
//! still continue. So at any time
//!
//! ```text
//! committed events so far ++ tail()  ==  parse(all complete lines so far).events
//! ```
//!
//! and the tests check exactly that for every fixture under random line splits.
//!
//! When a new line cannot be applied incrementally — a pi entry that branches off the current
//! leaf (or re-uses an id, or arrives before the header), a Claude Code header field first seen
//! late, a Codex `user_message` event after a `response_item` user message was already read as
//! input — the reader reports [`Feed::Diverged`] and the caller re-reads the whole file.
//!
//! [`LiveGraph`] applies committed events to an [`IncrementalGraph`] and shows the tail
//! provisionally on a second graph: when the previous tail is a prefix of the new events (the
//! common case: the provisional events were right) only the new events are appended; otherwise
//! the shown graph is re-derived from the committed one (a clone plus the tail, no re-parse).

use serde_json::Value;

use crate::event::Event;
use crate::graph::IncrementalGraph;
use crate::parse::{self, claude, codex, pi};
use crate::session::{Agent, ReadWarning};

/// What a [`LiveReader::feed`] produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Feed {
    /// Newly committed events (possibly none), in `seq` order, after the earlier ones.
    Events(Vec<Event>),
    /// A line could not be applied incrementally: re-read the whole file.
    Diverged,
}

enum Inner {
    Pi(Box<pi::Stream>),
    Claude(Box<claude::Stream>),
    Codex(Box<codex::Stream>),
}

/// A resumable reader of one pi, Claude Code (main file) or Codex session file.
///
/// ```
/// use mindgate_taskgraph::live::{Feed, LiveReader};
/// use mindgate_taskgraph::{parse, Agent};
///
/// let text = concat!(
///     r#"{"type":"session","version":3,"id":"p1","timestamp":"2026-08-24T10:00:00Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-08-24T10:00:01Z","message":{"role":"user","content":"hi"}}"#, "\n",
///     r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-08-24T10:00:02Z","message":{"role":"assistant","content":[],"stopReason":"stop"}}"#, "\n",
/// );
/// let mut r = LiveReader::new(Agent::Pi, "p1.jsonl").unwrap();
/// let mut events = Vec::new();
/// for cut in [150, text.len()] {
///     // The first cut is mid-line: that line waits for its newline.
///     match r.feed(&text.as_bytes()[r.offset() as usize..cut]) {
///         Feed::Events(ev) => events.extend(ev),
///         Feed::Diverged => unreachable!("the branch only grows"),
///     }
/// }
/// events.extend(r.tail());
/// assert_eq!(events, parse::parse_bytes(Agent::Pi, text.as_bytes(), "p1.jsonl").events);
/// ```
pub struct LiveReader {
    inner: Inner,
    file: String,
    offset: u64,
    next_line: u64,
    warnings: Vec<ReadWarning>,
}

impl LiveReader {
    /// A reader at the start of an (empty) file; `None` for DSH, whose plain files need no
    /// cross-line state (see `parse::dsh`), and for Gemini CLI and OpenCode, whose sessions
    /// are re-read whole on a change (a rewritten JSON file, a database). `file` labels warnings.
    pub fn new(agent: Agent, file: &str) -> Option<Self> {
        let inner = match agent {
            Agent::Dsh | Agent::Gemini | Agent::OpenCode => return None,
            Agent::Pi => Inner::Pi(Box::default()),
            Agent::ClaudeCode => Inner::Claude(Box::new(claude::Stream::new(file))),
            Agent::Codex => Inner::Codex(Box::new(codex::Stream::new())),
        };
        Some(Self {
            inner,
            file: file.to_owned(),
            offset: 0,
            next_line: 1,
            warnings: Vec::new(),
        })
    }

    /// Bytes of the file consumed so far (always just past a newline, or 0).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Lines consumed so far.
    pub fn lines(&self) -> u64 {
        self.next_line - 1
    }

    /// Malformed lines skipped so far.
    pub fn warnings(&self) -> &[ReadWarning] {
        &self.warnings
    }

    /// Claude Code sidechain lines seen so far (each one changes the child sessions, which
    /// this reader does not build); 0 for other formats.
    pub fn sidechain_lines(&self) -> usize {
        match &self.inner {
            Inner::Claude(s) => s.side_lines(),
            _ => 0,
        }
    }

    /// Feeds the bytes that follow [`offset`](Self::offset) in the file. Only complete lines
    /// are consumed (the offset moves past the last newline); the rest is left for the next
    /// call, which must pass it again. Returns the newly committed events.
    pub fn feed(&mut self, bytes: &[u8]) -> Feed {
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut lines: Vec<(u64, Value)> = Vec::new();
        let mut lineno = self.next_line;
        let body = &bytes[..end];
        let mut start = 0;
        while start < body.len() {
            let stop = body[start..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(body.len(), |i| start + i);
            for v in parse::json_line(&body[start..stop], lineno, &self.file, &mut self.warnings) {
                lines.push((lineno, v));
            }
            lineno += 1;
            start = stop + 1;
        }
        self.next_line = lineno;
        self.offset += end as u64;
        let next = self.next_line;
        match &mut self.inner {
            Inner::Pi(s) => {
                s.feed(lines, next, &self.file);
                if s.diverged() {
                    return Feed::Diverged;
                }
                Feed::Events(s.commit())
            }
            Inner::Claude(s) => {
                s.feed(lines, next);
                if s.diverged() {
                    return Feed::Diverged;
                }
                Feed::Events(s.commit())
            }
            Inner::Codex(s) => {
                s.feed(lines, next);
                if s.diverged() {
                    return Feed::Diverged;
                }
                Feed::Events(s.commit())
            }
        }
    }

    /// The uncommitted rest of a whole-file read of the lines consumed so far (see the module
    /// docs). Cheap: proportional to the open step's state, not to the file.
    pub fn tail(&self) -> Vec<Event> {
        match &self.inner {
            Inner::Pi(s) => s.tail(),
            Inner::Claude(s) => s.tail(),
            Inner::Codex(s) => s.tail(),
        }
    }
}

/// How a [`LiveGraph::update`] changed the shown events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing changed.
    None,
    /// Events were appended to the shown list (and graph).
    Appended,
    /// The provisional tail was replaced: the shown list changed from some index on.
    Replaced,
}

/// An [`IncrementalGraph`] over committed events plus a provisional tail (see the module
/// docs).
#[derive(Debug, Clone)]
pub struct LiveGraph {
    /// The graph over the committed events only, while a tail is shown (else `shown` is it).
    base: Option<IncrementalGraph>,
    shown: IncrementalGraph,
    events: Vec<Event>,
    committed: usize,
}

impl LiveGraph {
    /// Starts from an empty graph (its options are kept) with `committed` then `tail` applied.
    pub fn new(graph: IncrementalGraph, committed: Vec<Event>, tail: Vec<Event>) -> Self {
        let mut me = Self {
            base: None,
            shown: graph,
            events: Vec::new(),
            committed: 0,
        };
        me.update(committed, tail);
        me
    }

    /// The graph over the shown events.
    pub fn graph(&self) -> &IncrementalGraph {
        &self.shown
    }

    /// The shown events: committed, then the current tail.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The shown graph's changes since the previous call (see
    /// [`IncrementalGraph::take_changes`]); after [`Change::Replaced`] they cover more than
    /// the difference, so show the whole graph then.
    pub fn take_changes(&mut self) -> crate::graph::GraphChanges {
        self.shown.take_changes()
    }

    /// How many of [`events`](Self::events) are committed.
    pub fn committed(&self) -> usize {
        self.committed
    }

    /// Appends newly committed events and replaces the tail. Work is proportional to the new
    /// events when the previous tail is a prefix of `fresh ++ tail`; otherwise the shown graph
    /// is re-derived by cloning the committed one (no re-parse, no rebuild).
    pub fn update(&mut self, fresh: Vec<Event>, tail: Vec<Event>) -> Change {
        let old_tail_len = self.events.len() - self.committed;
        if old_tail_len == 0 {
            if fresh.is_empty() && tail.is_empty() {
                return Change::None;
            }
            self.shown.append(&fresh);
            self.committed += fresh.len();
            self.events.extend(fresh);
            if !tail.is_empty() {
                self.base = Some(self.shown.clone());
                self.shown.append(&tail);
                self.events.extend(tail);
            }
            return Change::Appended;
        }
        let old_tail = &self.events[self.committed..];
        let kept = old_tail.len() <= fresh.len() + tail.len()
            && old_tail
                .iter()
                .zip(fresh.iter().chain(tail.iter()))
                .all(|(a, b)| a == b);
        let mut base = self.base.take().unwrap_or_else(|| self.shown.clone());
        base.append(&fresh);
        let n_fresh = fresh.len();
        if kept {
            let rest: Vec<Event> = fresh.into_iter().chain(tail).skip(old_tail_len).collect();
            self.committed += n_fresh;
            if rest.is_empty() && n_fresh == 0 {
                self.base = Some(base);
                return Change::None;
            }
            self.shown.append(&rest);
            self.events.extend(rest);
            if self.committed < self.events.len() {
                self.base = Some(base);
            } // else both hold the same events: drop the copy
            return Change::Appended;
        }
        self.events.truncate(self.committed);
        self.committed += n_fresh;
        self.events.extend(fresh);
        if tail.is_empty() {
            self.shown = base;
        } else {
            self.shown = base.clone();
            self.shown.append(&tail);
            self.base = Some(base);
            self.events.extend(tail);
        }
        Change::Replaced
    }
}
