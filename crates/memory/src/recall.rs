//! What a search does to the facts it returns. A recall strengthens a fact (strength
//! `+`[`RECALL_STRENGTH`], `lastAccessedAt` set), which slows its decay and keeps it past
//! eviction; so only a caller that proves who it is may cause one, and only once per
//! hour:
//!
//! - a search whose [`MemorySearchOptions::recall_by`](crate::MemorySearchOptions) is
//!   `None` (an HTTP read without a token: any web page can make a browser send one)
//!   changes nothing;
//! - a search by a principal (`user`: a person with the control token or the CLI; `agent`:
//!   the agent token, the MCP tools) strengthens each returned fact at most once per
//!   [`RECALL_WINDOW_MS`] for that principal. The claim is one row per (fact, principal)
//!   in `memory_recalls`, taken with an atomic upsert, so instances sharing a PostgreSQL
//!   store count one window too.

/// Strength one counted recall adds to a fact.
pub const RECALL_STRENGTH: f64 = 0.1;

/// A principal's recalls strengthen one fact at most once within this window (one hour).
pub const RECALL_WINDOW_MS: i64 = 60 * 60 * 1000;

/// The `at` at or before which an earlier recall no longer blocks one at `now`.
pub(crate) fn window_start(now: i64) -> i64 {
    now.saturating_sub(RECALL_WINDOW_MS)
}
