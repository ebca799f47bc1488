//! What a person searches for in a coding-agent session — user messages, the model's text,
//! tool arguments and tool output — and the exact node each piece belongs to. The session
//! search index (`mindgate_store::search::sessions`) stores these; this module only says what
//! they are.
//!
//! Where a piece belongs: a tool's arguments and output to its tool node (by call id); any
//! other event to the most specific node whose events include its `seq` (a tool before a
//! step, a step before a turn), else to the node of the nearest earlier event. `turn` is the
//! turn (phase node) holding that node, so a viewer can open the turn and select the node.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde::Serialize;
use serde_json::Value;

use crate::event::EventKind;
use crate::graph::{NodeMeta, NodeType, TaskGraph};
use crate::session::Session;

/// Most bytes of one piece of text that are kept (the rest is not found).
pub const MAX_TEXT_BYTES: usize = 16 * 1024;

/// Which kind of text a piece is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextKind {
    /// What the person wrote.
    User,
    /// What the model wrote.
    Assistant,
    /// A tool call's arguments.
    ToolArgs,
    /// A tool's output (or error).
    ToolOutput,
}

impl TextKind {
    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            TextKind::User => "user",
            TextKind::Assistant => "assistant",
            TextKind::ToolArgs => "tool_args",
            TextKind::ToolOutput => "tool_output",
        }
    }
}

/// One searchable piece of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionText {
    /// The node it belongs to.
    pub node_id: String,
    /// The turn (phase node id) holding that node, when it is inside one.
    pub turn: Option<String>,
    /// The event's `seq`.
    pub seq: u64,
    /// What kind of text.
    pub kind: TextKind,
    /// The text, at most [`MAX_TEXT_BYTES`].
    pub text: String,
}

/// Every searchable piece of `session`, whose graph is `graph`, in event order.
pub fn session_texts(session: &Session, graph: &TaskGraph) -> Vec<SessionText> {
    let places = Places::new(graph);
    let mut out = Vec::new();
    // An agent that writes the same call twice (Codex: the item and its event) is found once.
    let mut seen: HashSet<(usize, TextKind, u64)> = HashSet::new();
    for e in &session.events {
        let (kind, text, node) = match &e.kind {
            EventKind::UserMessage { text } => (TextKind::User, text.clone(), None),
            EventKind::AssistantText { text } => (TextKind::Assistant, text.clone(), None),
            EventKind::ToolCall {
                call_id, arguments, ..
            } => (
                TextKind::ToolArgs,
                strings_of(arguments),
                places.by_call.get(call_id.as_str()).copied(),
            ),
            EventKind::ToolResult {
                call_id, output, ..
            } => (
                TextKind::ToolOutput,
                output.to_string(),
                places.by_call.get(call_id.as_str()).copied(),
            ),
            _ => continue,
        };
        if text.trim().is_empty() {
            continue;
        }
        let Some(node) = node.or_else(|| places.at_seq(e.seq)) else {
            continue;
        };
        if !seen.insert((node, kind, text_hash(&text))) {
            continue;
        }
        out.push(SessionText {
            node_id: graph.nodes[node].id.to_string(),
            turn: places.turn_of(graph, node),
            seq: e.seq,
            kind,
            text: bounded(text),
        });
    }
    out
}

/// Where events and calls sit in a graph.
struct Places<'g> {
    /// `seq` → (specificity, node index): the most specific node listing the event.
    by_seq: BTreeMap<u64, (u8, usize)>,
    by_call: HashMap<&'g str, usize>,
    by_id: HashMap<&'g str, usize>,
}

impl<'g> Places<'g> {
    fn new(g: &'g TaskGraph) -> Self {
        let mut by_seq: BTreeMap<u64, (u8, usize)> = BTreeMap::new();
        let mut by_call = HashMap::new();
        let mut by_id = HashMap::with_capacity(g.nodes.len());
        for (i, n) in g.nodes.iter().enumerate() {
            by_id.insert(n.id.as_str(), i);
            let rank = match n.node_type {
                NodeType::Task => 0,
                NodeType::Phase => 1,
                NodeType::Agent => 2,
                _ => 3,
            };
            for &seq in &n.event_ids {
                let slot = by_seq.entry(seq).or_insert((rank, i));
                if rank > slot.0 {
                    *slot = (rank, i);
                }
            }
            if let NodeMeta::Tool(m) = &n.meta {
                for a in &m.attempts {
                    by_call.insert(a.call_id.as_str(), i);
                }
            }
        }
        Places {
            by_seq,
            by_call,
            by_id,
        }
    }

    /// The node of the event at `seq`, else of the nearest earlier one.
    fn at_seq(&self, seq: u64) -> Option<usize> {
        self.by_seq.range(..=seq).next_back().map(|(_, &(_, i))| i)
    }

    /// The phase node holding node `i` (itself when it is one).
    fn turn_of(&self, g: &TaskGraph, mut i: usize) -> Option<String> {
        for _ in 0..g.nodes.len() {
            let n = &g.nodes[i];
            if n.node_type == NodeType::Phase {
                return Some(n.id.to_string());
            }
            i = *self.by_id.get(n.parent_id.as_deref()?)?;
        }
        None
    }
}

/// The strings of a JSON value (a tool's arguments), one per line.
fn strings_of(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        if out.len() >= MAX_TEXT_BYTES {
            return;
        }
        match v {
            Value::String(s) if !s.trim().is_empty() => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(s);
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

fn text_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// `text` cut to [`MAX_TEXT_BYTES`] at a character boundary.
fn bounded(mut text: String) -> String {
    if text.len() > MAX_TEXT_BYTES {
        let mut end = MAX_TEXT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}
