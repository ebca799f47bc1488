//! The counts a person reads first about a task — one function, [`headline`], that the page,
//! `mindgate taskgraph`, `GET /task-graph/api/task` and MCP `get_task_graph` all show
//! (served as `summary.headline`), so no surface recounts.

use serde::Serialize;

use super::model::Summary;

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

/// The headline counts of a graph's summary.
pub fn headline(s: &Summary) -> Headline {
    let c = &s.counts;
    Headline {
        turns: c.phases,
        steps: c.agents,
        tool_calls: c.tools + c.skills + c.subagents + c.plans + c.code_changes + c.tests,
        code_changes: c.code_changes,
        tests: c.tests,
        subagents: c.subagents,
        errors: c.errors,
        retries: c.retries,
        tokens: s.tokens.total,
        waiting_ms: s.waiting_ms,
    }
}
