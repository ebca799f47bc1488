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

use crate::error::Result;
use crate::types::Actor;

/// Strength one counted recall adds to a fact.
pub const RECALL_STRENGTH: f64 = 0.1;

/// A principal's recalls strengthen one fact at most once within this window (one hour).
pub const RECALL_WINDOW_MS: i64 = 60 * 60 * 1000;

/// The `at` at or before which an earlier recall no longer blocks one at `now`.
pub(crate) fn window_start(now: i64) -> i64 {
    now.saturating_sub(RECALL_WINDOW_MS)
}

/// The two statements of the access update, in one backend transaction.
pub(crate) trait RecallWrites {
    /// Claims the window of each of `facts` for `principal` (one row per fact and
    /// principal, taken when its last claim is at or before `since`); answers the rowids
    /// claimed.
    fn claim(&mut self, facts: &[i64], principal: &str, now: i64, since: i64) -> Result<Vec<i64>>;
    /// Adds `amount` to the strength of `rowids` and sets their `last_accessed_at`.
    fn strengthen(&mut self, rowids: &[i64], amount: f64, now: i64) -> Result<()>;
}

/// Strengthens each of `facts` that `by` has not strengthened within the recall window —
/// the rule both backends apply after a search.
pub(crate) fn strengthen(
    writes: &mut impl RecallWrites,
    facts: &[i64],
    by: Actor,
    now: i64,
) -> Result<()> {
    let claimed = writes.claim(facts, by.as_str(), now, window_start(now))?;
    if !claimed.is_empty() {
        writes.strengthen(&claimed, RECALL_STRENGTH, now)?;
    }
    Ok(())
}
