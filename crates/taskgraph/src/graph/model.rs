//! The task graph: the JSON served as `/task-graph/api/task` (see the crate docs).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::{Failure, Todo};

/// An immutable, cheaply clonable string: node ids are shared by nodes, edges and the
/// critical path without copying. Serialises as a plain JSON string.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    /// The string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The address of the shared text: equal for clones of one `SharedStr` (a node's id and
    /// the parent ids, edge ends and path entries copied from it), a cheap key for finding
    /// the node again.
    pub(crate) fn address(&self) -> usize {
        Arc::as_ptr(&self.0).cast::<u8>() as usize
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        Self(s.into())
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        Self(s.into())
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == &*other.0
    }
}

impl Serialize for SharedStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A whole task graph. Serialises (snake_case keys) to exactly the seed's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskGraph {
    /// Task id (the root session's id).
    pub task_id: String,
    /// Session id.
    pub session_id: String,
    /// Workspace slug (`--Users-kevin-project--`).
    pub workspace: String,
    /// Task title (session title, else the first user message, else the session id).
    pub title: String,
    /// Working directory, when known.
    pub cwd: Option<String>,
    /// Task status (recovery-aware; see [`Status`]).
    pub status: Status,
    /// First event time, Unix ms.
    pub start_time: Option<i64>,
    /// Last event time (`null` while running), Unix ms.
    pub end_time: Option<i64>,
    /// `end_time - start_time` (while running: up to the last event).
    pub duration_ms: i64,
    /// Nodes in creation order (a topological order of the execution edges).
    pub nodes: Vec<Node>,
    /// Edges in creation order, ids `e1`, `e2`, ….
    pub edges: Vec<Edge>,
    /// Aggregates.
    pub summary: Summary,
    /// Longest weighted path over execution edges.
    pub critical_path: CriticalPath,
    /// Session-level extras.
    pub meta: GraphMeta,
}

impl TaskGraph {
    /// Finds a node by id (linear scan).
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == *id)
    }

    /// Finds an edge by id (ids are `e<index+1>`, so this is O(1)).
    pub fn edge(&self, id: &str) -> Option<&Edge> {
        let n: usize = id.strip_prefix('e')?.parse().ok()?;
        self.edges.get(n.checked_sub(1)?).filter(|e| e.id == *id)
    }
}

/// Node type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeType {
    /// The task root (`task`).
    Task,
    /// One turn (`phase-<turn>`).
    Phase,
    /// One LLM step (`step-<turn>-<step>`).
    Agent,
    /// A plain tool call.
    Tool,
    /// A skill invocation (`skill` tool).
    Skill,
    /// A delegated subagent (`subagent`/`agent`/`spawn_agent`/`Task` tools).
    Subagent,
    /// A code change (`edit`/`write`/`str_replace_editor`/`apply_patch`).
    Code,
    /// A shell command that runs tests.
    Test,
    /// A todo list write (`todo_write`).
    Plan,
}

impl NodeType {
    /// Whether nodes of this type are tool calls (everything but task, phase and agent).
    pub fn is_tool_like(self) -> bool {
        !matches!(self, NodeType::Task | NodeType::Phase | NodeType::Agent)
    }

    /// The serialised name.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeType::Task => "task",
            NodeType::Phase => "phase",
            NodeType::Agent => "agent",
            NodeType::Tool => "tool",
            NodeType::Skill => "skill",
            NodeType::Subagent => "subagent",
            NodeType::Code => "code",
            NodeType::Test => "test",
            NodeType::Plan => "plan",
        }
    }
}

/// Node (and task) status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Nothing happened yet.
    Pending,
    /// Open (live sessions).
    Running,
    /// Finished well (possibly after retries: see `meta.retried`).
    Success,
    /// Finished badly (for phases and tasks: only when the last outcome is a failure).
    Failed,
    /// Not run.
    Skipped,
    /// Aborted, or left open in an archived session (`meta.unclosed`).
    Cancelled,
    /// An LLM step waiting for its retry.
    Retrying,
}

impl Status {
    /// The serialised name (`SUCCESS`, `FAILED`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "PENDING",
            Status::Running => "RUNNING",
            Status::Success => "SUCCESS",
            Status::Failed => "FAILED",
            Status::Skipped => "SKIPPED",
            Status::Cancelled => "CANCELLED",
            Status::Retrying => "RETRYING",
        }
    }

    /// Whether the node is still open.
    pub fn is_open(self) -> bool {
        matches!(self, Status::Running | Status::Retrying)
    }
}

/// A graph node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Stable id: `task`, `phase-<turn>`, `step-<turn>-<step>`, `tool-<callId>`, `plan-<seq>`.
    pub id: SharedStr,
    /// Node type.
    #[serde(rename = "type")]
    pub node_type: NodeType,
    /// Display name.
    pub name: String,
    /// Status.
    pub status: Status,
    /// Start, Unix ms.
    pub start_time: Option<i64>,
    /// End, Unix ms (`null` while open).
    pub end_time: Option<i64>,
    /// Duration; for retried nodes the sum of the attempts' spans.
    pub duration_ms: i64,
    /// `seq` of the events that created, updated or closed the node.
    pub event_ids: Vec<u64>,
    /// Session the node belongs to.
    pub session_id: SharedStr,
    /// Task (root session) the node belongs to.
    pub task_id: SharedStr,
    /// Parent in the `contains` hierarchy (`null` for the task).
    pub parent_id: Option<SharedStr>,
    /// Type-specific fields.
    pub meta: NodeMeta,
}

/// Type-specific node fields (serialised without a tag).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum NodeMeta {
    /// For `task`.
    Task(TaskMeta),
    /// For `phase`.
    Phase(PhaseMeta),
    /// For `agent`.
    Agent(AgentMeta),
    /// For `tool`, `skill`, `subagent`, `code`, `test`, `plan`.
    Tool(Box<ToolMeta>),
}

/// `task` meta.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskMeta {
    /// Working directory.
    pub cwd: Option<String>,
    /// Title.
    pub title: String,
    /// First user message.
    pub user_request: Option<String>,
    /// Delegation depth from the header.
    pub delegation_depth: u32,
    /// Workspace slug.
    pub workspace: String,
    /// Left open in an archived session.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unclosed: bool,
}

/// `phase` meta.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PhaseMeta {
    /// Turn number.
    pub turn: u32,
    /// The turn's first user message.
    pub user_message: Option<String>,
    /// How the turn ended (`completed`/`error`/`aborted`), `null` while open.
    pub reason: Option<String>,
    /// Error or abort message of the turn end, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_message: Option<String>,
    /// Left open in an archived session.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unclosed: bool,
}

/// Token counts of one step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StepTokens {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Of `input`, the tokens written to the prompt cache.
    pub cache_write: u64,
}

impl StepTokens {
    /// Adds one response's usage.
    pub(crate) fn add_usage(&mut self, u: &crate::event::Usage) {
        self.input = self.input.saturating_add(u.input);
        self.output = self.output.saturating_add(u.output);
        self.cache_read = self.cache_read.saturating_add(u.cache_read);
        self.cache_write = self.cache_write.saturating_add(u.cache_write);
    }
}

/// One failed LLM attempt of a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmAttempt {
    /// Attempt number (1-based).
    pub attempt: u32,
    /// Always `FAILED` (the final successful attempt is the step itself).
    pub status: Status,
    /// When the failure was recorded, Unix ms.
    pub time: i64,
    /// Back-off before the next attempt.
    pub delay_ms: Option<u64>,
    /// Maximum retries, when known.
    pub max_retries: Option<u32>,
    /// The failure.
    pub failure: Failure,
    /// Events of this attempt.
    pub event_ids: Vec<u64>,
}

/// `agent` meta.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentMeta {
    /// Turn number.
    pub turn: u32,
    /// Step number.
    pub step: u32,
    /// Provider.
    pub provider: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Tokens of this step.
    pub tokens: StepTokens,
    /// Finish reason of the last response.
    pub finish_reason: Option<String>,
    /// Failed LLM attempts (retries).
    pub attempts: Vec<LlmAttempt>,
    /// Tool calls made by this step.
    pub tool_call_count: u64,
    /// Succeeded after at least one retry.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retried: bool,
    /// Left open in an archived session.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unclosed: bool,
}

/// One attempt of a tool node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolAttempt {
    /// Call id of this attempt.
    pub call_id: String,
    /// Attempt status.
    pub status: Status,
    /// Start, Unix ms.
    pub start: i64,
    /// End, Unix ms (`null` while open).
    pub end: Option<i64>,
    /// Error text of a failed attempt (truncated).
    pub error: Option<String>,
    /// Events of this attempt.
    pub event_ids: Vec<u64>,
}

/// Child session summary attached to a `subagent` node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChildSessionRef {
    /// Child session id.
    pub id: String,
    /// Where to load it from (path or id).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Child title.
    pub title: String,
    /// Child task status.
    pub status: Status,
    /// Child summary counts.
    pub counts: Counts,
}

/// Meta of tool-like nodes (`tool`, `skill`, `subagent`, `code`, `test`, `plan`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolMeta {
    /// Tool name as called.
    pub tool_name: String,
    /// First call id.
    pub call_id: String,
    /// Arguments (parsed JSON), shared with the event that carried them.
    pub arguments: Arc<Value>,
    /// Output of the last attempt (truncated to `BuildOptions::max_output_chars`); shared
    /// with the event that carried it when it was not cut.
    pub output: Option<Arc<str>>,
    /// Error text of the last attempt when it failed.
    pub error: Option<String>,
    /// Every attempt, in order.
    pub attempts: Vec<ToolAttempt>,
    /// Succeeded (or ended) after at least one failed attempt.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retried: bool,
    /// Output was cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub output_truncated: bool,
    /// Left open in an archived session.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unclosed: bool,
    /// `test`: the command run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Option<String>>,
    /// `code`: the (first) file changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Option<String>>,
    /// `code`: every file named by the change (patches can touch several).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// `subagent`: the matched child session, `null` when none matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub child_session: Option<Option<ChildSessionRef>>,
    /// `plan`: the todo list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todos: Option<Vec<Todo>>,
}

/// Edge type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeType {
    /// Hierarchy task→phase→step→tool.
    Contains,
    /// Time spine.
    DependsOn,
    /// Step → plain tool.
    Calls,
    /// Step → skill.
    Invokes,
    /// Step → subagent.
    Delegates,
    /// Step → code change.
    Modifies,
    /// Step → test run.
    Validates,
    /// Tool result → next step of the same phase.
    Consumes,
    /// Step → plan.
    Produces,
    /// Self-loop on a retried node (`meta.attempts`).
    Retries,
}

impl EdgeType {
    /// Whether the critical path may follow this edge (everything but `contains`/`retries`).
    pub fn is_execution(self) -> bool {
        !matches!(self, EdgeType::Contains | EdgeType::Retries)
    }
}

/// A graph edge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edge {
    /// `e<n>`, numbered in creation order from 1.
    pub id: SharedStr,
    /// Source node id.
    pub source: SharedStr,
    /// Target node id.
    pub target: SharedStr,
    /// Edge type.
    #[serde(rename = "type")]
    pub edge_type: EdgeType,
    /// Extras (`attempts` on `retries`).
    pub meta: Map<String, Value>,
}

/// `summary.counts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Phases (turns).
    pub phases: u64,
    /// LLM steps.
    pub agents: u64,
    /// Plain tool nodes.
    pub tools: u64,
    /// Skill nodes.
    pub skills: u64,
    /// Subagent nodes.
    pub subagents: u64,
    /// Plan nodes.
    pub plans: u64,
    /// Code-change nodes.
    pub code_changes: u64,
    /// Test nodes.
    pub tests: u64,
    /// Work nodes (steps and tools) whose status is `FAILED`.
    pub errors: u64,
    /// Extra attempts: tool re-attempts plus LLM retries.
    pub retries: u64,
    /// Distinct files changed by successful code nodes.
    pub files_changed: u64,
}

/// Token totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenTotals {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Of `input`, the tokens written to the prompt cache (Claude Code's cache creation,
    /// pi's and OpenCode's cache writes; 0 for agents that report none). Priced apart.
    pub cache_write: u64,
    /// `input + output + cache_read`.
    pub total: u64,
}

impl TokenTotals {
    /// Adds counts given by kind.
    pub(crate) fn add_counts(&mut self, t: StepTokens) {
        self.input = self.input.saturating_add(t.input);
        self.output = self.output.saturating_add(t.output);
        self.cache_read = self.cache_read.saturating_add(t.cache_read);
        self.cache_write = self.cache_write.saturating_add(t.cache_write);
        self.total = self
            .input
            .saturating_add(self.output)
            .saturating_add(self.cache_read);
    }

    /// Adds another total.
    pub(crate) fn merge(&mut self, t: &TokenTotals) {
        self.add_counts(t.counts());
    }

    /// The counts by kind (without the total).
    pub fn counts(&self) -> StepTokens {
        StepTokens {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
        }
    }

    /// The counts as the price table takes them: `input` without the cache writes, which
    /// are priced apart.
    pub fn priced_counts(&self) -> mindgate_pricing::TokenCounts {
        self.counts().priced_counts()
    }
}

impl StepTokens {
    /// The counts as the price table takes them: `input` without the cache writes, which
    /// are priced apart.
    pub fn priced_counts(&self) -> mindgate_pricing::TokenCounts {
        mindgate_pricing::TokenCounts {
            input: self.input.saturating_sub(self.cache_write),
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write.min(self.input),
        }
    }
}

/// A node named in a summary list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeRef {
    /// Node id.
    pub id: SharedStr,
    /// Node name.
    pub name: String,
    /// Node type.
    #[serde(rename = "type")]
    pub node_type: NodeType,
    /// Status.
    pub status: Status,
    /// Duration.
    pub duration_ms: i64,
    /// Attempts (tool attempts, or LLM attempts including the last).
    pub attempts: u32,
    /// Error text, for failed nodes.
    pub error: Option<String>,
}

/// A tool name and how often it was called.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCount {
    /// Tool name.
    pub name: String,
    /// Calls (attempts merged into one node count once).
    pub count: u64,
}

/// `summary`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Counts.
    pub counts: Counts,
    /// Token totals.
    pub tokens: TokenTotals,
    /// The three longest work nodes (steps and tools).
    pub slowest_steps: Vec<NodeRef>,
    /// Work nodes whose final status is `FAILED`.
    pub failed_steps: Vec<NodeRef>,
    /// Work nodes with more than one attempt.
    pub retried_steps: Vec<NodeRef>,
    /// Up to ten tools, most called first (ties by name).
    pub most_used_tools: Vec<ToolCount>,
    /// Files changed by successful code nodes, first change first.
    pub files_changed: Vec<String>,
    /// Time the agent waited for the person over the whole task: replies between turns,
    /// rejected and never-run calls (see `graph::waiting`).
    pub waiting_ms: i64,
    /// The headline counts every view shows ([`super::headline()`]).
    pub headline: Headline,
}

/// `critical_path`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CriticalPath {
    /// Nodes from the task root to the path's end.
    pub node_ids: Vec<SharedStr>,
    /// The few path nodes that dominate its agent time: longest first until 80 % of
    /// `duration_ms`, at most 10 % of the path's nodes (see `graph::waiting::hot_positions`).
    pub hot_node_ids: Vec<SharedStr>,
    /// Edges between consecutive path nodes.
    pub edge_ids: Vec<SharedStr>,
    /// Sum of the path nodes' weights: the agent's work along the path.
    pub duration_ms: i64,
    /// The task's duration.
    pub total_ms: i64,
    /// Waiting for the person along the path (its own kind of segment, never weight).
    pub waiting: Vec<WaitSegment>,
    /// Sum of `waiting`.
    pub waiting_ms: i64,
}

/// The turn outcome that closed the session's last turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FinalTurnReason {
    /// Turn number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// `completed` / `error` / `aborted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Message, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Token totals with a per-model breakdown.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TokenMeta {
    /// Totals.
    #[serde(flatten)]
    pub totals: TokenTotals,
    /// Per model (`unknown` when the step named none).
    pub by_model: BTreeMap<String, TokenTotals>,
}

/// `meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GraphMeta {
    /// The session header (`id`, `version`, `cwd`, `created_ms`, `parent_session`,
    /// `delegation_depth`, `origin`, `agent`).
    pub header: Map<String, Value>,
    /// Built in live mode.
    pub live: bool,
    /// Token totals.
    pub tokens: TokenMeta,
    /// Calls per tool name.
    pub tool_name_counts: BTreeMap<String, u64>,
    /// How the last closed turn ended (`{}` when none did).
    pub final_turn_reason: FinalTurnReason,
}

/// The headline counts of a task (`summary.headline`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Headline {
    /// Turns (phases).
    pub turns: u64,
    /// LLM steps.
    pub steps: u64,
    /// Every call the agent made: plain tools, skills, subagents, plans, code changes and
    /// tests (a call retried in place counts once).
    pub tool_calls: u64,
    /// Code changes among them.
    pub code_changes: u64,
    /// Tests among them.
    pub tests: u64,
    /// Subagents among them.
    pub subagents: u64,
    /// Work nodes whose final status is `FAILED`.
    pub errors: u64,
    /// Extra attempts (tool re-attempts plus LLM retries).
    pub retries: u64,
    /// Tokens, all kinds (`summary.tokens.total`).
    pub tokens: u64,
    /// Time the agent waited for the person (`summary.waiting_ms`).
    pub waiting_ms: i64,
}

/// Why the agent was waiting for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// A tool call the person rejected at the permission prompt.
    Permission,
    /// A tool call that never ran: the turn was interrupted or the session ended on it.
    Interrupted,
    /// Between two turns: the person reading and replying.
    UserReply,
}

/// One stretch of waiting for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitSegment {
    /// What the wait was.
    pub kind: WaitKind,
    /// The node that waited (the tool), or for a reply the turn that followed it.
    pub node_id: SharedStr,
    /// Start, Unix ms.
    pub start_time: Option<i64>,
    /// Length.
    pub duration_ms: i64,
}
