//! The counts a person reads first about a task — one function, [`headline`], that the page,
//! `mindgate taskgraph`, `GET /task-graph/api/task` and MCP `get_task_graph` all show
//! (served as `summary.headline`), so no surface recounts.

pub use super::model::Headline;
use super::model::Summary;

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
