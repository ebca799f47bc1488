//! Task graphs from coding-agent session logs.
//!
//! `mindgate-taskgraph` reads the sessions of six coding agents — DeepSeek Harness (DSH), pi,
//! Claude Code, Codex CLI, Gemini CLI and OpenCode — into one format-neutral [`Event`] model, and turns
//! those events into a typed [`TaskGraph`]: task → phases (turns) → LLM steps → tool calls,
//! with execution edges, recovery-aware statuses, a summary and a critical path.
//!
//! Layers, pointing one way:
//!
//! - [`event`]: the event vocabulary (DSH names) every reader emits;
//! - [`parse`]: pure parsers, bytes in, [`Session`] out (never panic, report [`ReadWarning`]s);
//! - [`read`]: file I/O for one session (file or folder, children included), through
//!   [`bounded`] (regular files only, size caps); [`gemini`](mod@gemini) and
//!   [`opencode`](mod@opencode) find and read those agents' sessions (OpenCode's SQLite
//!   database read-only, WAL included);
//! - [`discover`](mod@discover): finding sessions under the agents' homes, the task list, loading by id;
//! - [`graph`]: [`build_graph`] (pure) and [`IncrementalGraph`] (live append).
//! - [`induce`](mod@induce): a succeeded task as a value-abstracted procedure (steps, variables,
//!   success criteria), or the reason there is none;
//! - [`report`]: what a person reads first about a graph (critical path, hot steps,
//!   failures), and [`mod@format`]: readable durations — one of each for every view;
//! - [`follow`]: following a growing session file ([`follow::Follower`]), what the live
//!   views apply on every change;
//! - small pure helpers the readers and the builder share: [`timestamp`] (RFC 3339 and
//!   numeric times as Unix ms), [`json_fields`] (loosely typed JSON fields of session
//!   records), [`text`] (truncated names, a user message's request, workspace slugs) and
//!   [`fast_hash`] (the builder's deterministic hash maps);
//! - [`live`]: resumable readers for growing pi / Claude Code / Codex files ([`live::LiveReader`])
//!   and a graph that shows their provisional tail ([`live::LiveGraph`]).
//!
//! ```
//! use mindgate_taskgraph::{build_graph, parse, Agent, BuildOptions, NodeType, Status};
//!
//! let jsonl = br#"{"type":"session","version":1,"id":"s1","createdAt":1000,"cwd":"/w","delegationDepth":0}
//! {"type":"user/message","seq":1,"time":1000,"data":{"text":"list files"}}
//! {"type":"turn/start","seq":2,"time":1000,"data":{"turn":1}}
//! {"type":"step/start","seq":3,"time":1010,"data":{"turn":1,"step":1}}
//! {"type":"tool/call","seq":4,"time":1500,"data":{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}}
//! {"type":"step/end","seq":5,"time":1500,"data":{"turn":1,"step":1}}
//! {"type":"tool/result","seq":6,"time":1700,"data":{"message":{"source":{"callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":"a.txt","isError":false}]}}}
//! {"type":"turn/end","seq":7,"time":1800,"data":{"turn":1,"reason":{"kind":"completed"}}}
//! "#;
//! let session = parse::parse_bytes(Agent::Dsh, jsonl, "inline");
//! assert!(session.warnings.is_empty());
//! let graph = build_graph(&session.events, &BuildOptions::default());
//! assert_eq!(graph.status, Status::Success);
//! assert_eq!(graph.node("tool-c1").map(|n| n.node_type), Some(NodeType::Tool));
//! let json = serde_json::to_value(&graph).unwrap();
//! assert_eq!(json["workspace"], "--w--");
//! ```

pub mod bounded;
pub mod discover;
pub mod error;
pub mod event;
pub mod fast_hash;
pub mod follow;
pub mod format;
pub mod gemini;
pub mod graph;
pub mod induce;
pub mod json_fields;
pub mod live;
pub mod opencode;
pub mod parse;
pub mod read;
pub mod report;
pub mod search_text;
pub mod session;
pub mod synth;
pub mod text;
pub mod timestamp;
pub mod usage;

pub use discover::{
    Catalog, DiscoveryConfig, Found, IdMatch, ReadSession, SessionLocation, Skipped, TaskSummary,
    discover, find_sessions, load, load_tree_followable, match_task_id, scan_sessions,
};
pub use error::{Error, Result};
pub use event::{
    Event, EventKind, Failure, SessionStart, SubagentDescriptor, Todo, TurnEndKind, TurnReason,
    Usage,
};
pub use graph::{
    AppendStats, BuildOptions, ChildSummary, Counts, CriticalPath, Edge, EdgeType, GraphChanges,
    GraphTree, Headline, IncrementalGraph, Node, NodeMeta, NodeType, Status, Summary, TaskGraph,
    TaskOverview, TurnIndex, TurnOverview, WaitKind, WaitSegment, build_graph, build_session_graph,
    build_session_tree, build_session_tree_followable, overview, timeline, turn_detail,
};
pub use read::{detect_agent, read_session, read_session_as};
pub use report::TaskReport;
pub use session::{Agent, ReadWarning, Session};
