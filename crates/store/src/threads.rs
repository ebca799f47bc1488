//! Threads: the runs of one conversation, keyed from the run's `meta`.
//!
//! A run's thread, user and tags are read once from its `run.started` meta by
//! [`run_keys`] (the order of the keys is documented in `docs/threads.md`) and stored on
//! the run row, so the run list filters on them and [`crate::RunStore::list_threads`]
//! groups on them without reading any event. A thread's totals are folded from its run
//! summaries by one function, [`thread_summary`], which every surface shows.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::model::{RunFilter, RunSummary};

/// The meta keys that name a run's thread, first present wins.
pub const THREAD_KEYS: &[&str] = &["threadId", "conversationId", "sessionId"];
/// The meta key that names a run's user.
pub const USER_KEY: &str = "userId";
/// The meta key that lists a run's tags.
pub const TAGS_KEY: &str = "tags";
/// Longest thread or user id kept (bytes); a longer one is ignored.
pub const MAX_KEY_BYTES: usize = 256;
/// Longest tag kept (bytes); a longer one is ignored.
pub const MAX_TAG_BYTES: usize = 64;

/// What a run's meta says about its thread, user and tags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunKeys {
    /// The thread: the first of [`THREAD_KEYS`] that holds a usable id.
    pub thread_id: Option<String>,
    /// The user ([`USER_KEY`]).
    pub user_id: Option<String>,
    /// The tags ([`TAGS_KEY`]: an array; its strings of 1 to [`MAX_TAG_BYTES`] bytes).
    pub tags: Vec<String>,
}

/// An id from a meta value: a string of 1 to [`MAX_KEY_BYTES`] bytes without a NUL, or
/// an integer (its decimal text). Anything else names nothing.
fn key_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if usable(s, MAX_KEY_BYTES) => Some(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// A text of 1 to `max` bytes without a NUL (which PostgreSQL's text cannot hold).
fn usable(text: &str, max: usize) -> bool {
    !text.is_empty() && text.len() <= max && !text.contains('\0')
}

/// The thread, user and tags a run's `meta` names: the one rule the writer, an import
/// and the schema's backfill of older rows apply.
pub fn run_keys(meta: Option<&Value>) -> RunKeys {
    let Some(Value::Object(meta)) = meta else {
        return RunKeys::default();
    };
    let thread_id = THREAD_KEYS
        .iter()
        .find_map(|k| meta.get(*k).and_then(key_text));
    let user_id = meta.get(USER_KEY).and_then(key_text);
    let tags = match meta.get(TAGS_KEY) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| usable(t, MAX_TAG_BYTES))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    RunKeys {
        thread_id,
        user_id,
        tags,
    }
}

/// The stored spelling of a run's tags (`tags_json`): a JSON array, `None` when empty.
pub(crate) fn tags_to_column(tags: &[String]) -> Option<String> {
    if tags.is_empty() {
        return None;
    }
    serde_json::to_string(tags).ok()
}

/// A run's tags from their stored spelling.
pub(crate) fn tags_from_column(column: Option<&str>) -> Vec<String> {
    column
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// One thread: its runs counted and totalled.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    /// The thread id.
    pub id: String,
    /// How many runs it holds.
    pub run_count: u64,
    /// When its first run started (epoch ms).
    pub first_started_at: i64,
    /// When its latest run started (epoch ms).
    pub last_started_at: i64,
    /// The user of its latest run that names one.
    pub user_id: Option<String>,
    /// The tags its runs carry, each once, in the order first seen.
    pub tags: Vec<String>,
    /// The sum of its runs' durations ([`crate::run_duration_ms`]).
    pub duration_ms: i64,
    /// The sum of its runs' work times ([`crate::run_work_ms`]).
    pub work_ms: i64,
    /// Its runs' token usage, summed.
    pub tokens: crate::UsageTotals,
    /// Its runs' cost, summed (`None` when a run was read without its cost).
    pub cost_usd: Option<f64>,
    /// Models no price was found for (so `costUsd` is a lower bound, or `null`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Its runs' `node.error` events, summed.
    pub errors: u64,
    /// How many of its runs are still running.
    pub running: u64,
}

/// The totals of thread `id` from its runs (any order): the one fold the thread list,
/// the thread page, MCP and the CLI show.
pub fn thread_summary(id: &str, runs: &[RunSummary]) -> ThreadSummary {
    let mut cost = mindgate_pricing::Cost::default();
    let mut costed = true;
    let mut sum = ThreadSummary {
        id: id.to_owned(),
        run_count: runs.len() as u64,
        first_started_at: runs.iter().map(|r| r.started_at).min().unwrap_or(0),
        last_started_at: runs.iter().map(|r| r.started_at).max().unwrap_or(0),
        user_id: None,
        tags: Vec::new(),
        duration_ms: 0,
        work_ms: 0,
        tokens: crate::UsageTotals::default(),
        cost_usd: None,
        unpriced_models: Vec::new(),
        errors: 0,
        running: 0,
    };
    let mut by_start: Vec<&RunSummary> = runs.iter().collect();
    by_start.sort_by_key(|r| r.started_at);
    for run in by_start {
        sum.duration_ms = sum.duration_ms.saturating_add(run.duration_ms.unwrap_or(0));
        sum.work_ms = sum.work_ms.saturating_add(run.work_ms.unwrap_or(0));
        sum.tokens.input_tokens += run.usage.input_tokens;
        sum.tokens.output_tokens += run.usage.output_tokens;
        sum.errors += run.counts.errors;
        sum.running += u64::from(!run.status.is_terminal());
        if run.user_id.is_some() {
            sum.user_id.clone_from(&run.user_id);
        }
        for tag in &run.tags {
            if !sum.tags.contains(tag) {
                sum.tags.push(tag.clone());
            }
        }
        match &run.cost {
            Some(c) => cost.merge(c),
            None => costed = false,
        }
    }
    if costed {
        sum.cost_usd = cost.usd();
        sum.unpriced_models = cost.unpriced_models;
    }
    sum
}

/// Which threads [`crate::RunStore::list_threads`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadFilter {
    /// At most this many (default 50, capped at 500).
    pub limit: Option<u32>,
    /// Only threads whose latest run started strictly before this epoch ms (the cursor).
    pub before: Option<i64>,
    /// Only threads with a run of this user.
    pub user: Option<String>,
    /// Only threads with a run carrying this tag.
    pub tag: Option<String>,
}

impl ThreadFilter {
    /// Default page size.
    pub const DEFAULT_LIMIT: u32 = 50;
    /// Largest page size.
    pub const MAX_LIMIT: u32 = 500;

    /// The effective limit.
    pub fn effective_limit(&self) -> u32 {
        self.limit
            .unwrap_or(Self::DEFAULT_LIMIT)
            .clamp(1, Self::MAX_LIMIT)
    }
}

/// A page of threads, the latest active first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadList {
    /// The threads.
    pub threads: Vec<ThreadSummary>,
    /// Pass as `before` for the next page; `None` when this was the last.
    pub next_before: Option<i64>,
}

/// One thread with its runs in the order they started.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDetail {
    /// Its totals.
    pub thread: ThreadSummary,
    /// Its runs, oldest first (each with its cost).
    pub runs: Vec<RunSummary>,
}

/// Most runs one thread read returns (the oldest first; a longer thread's totals cover
/// these).
pub const MAX_THREAD_RUNS: u32 = 1_000;

impl crate::RunStore {
    /// Threads, the latest started first, each totalled from its runs ([`thread_summary`];
    /// runs are read with their cost).
    pub fn list_threads(&self, filter: &ThreadFilter) -> Result<ThreadList> {
        let limit = filter.effective_limit() as usize;
        let mut ids = match self.postgres() {
            Some(pg) => pg.thread_ids(filter)?,
            None => self.with_conn(|conn| sqlite_thread_ids(conn, filter))?,
        };
        let more = ids.len() > limit;
        ids.truncate(limit);
        let next_before = if more {
            ids.last().map(|(_, last)| *last)
        } else {
            None
        };
        let mut threads = Vec::with_capacity(ids.len());
        for (id, _) in ids {
            let runs = self.thread_runs(&id)?;
            threads.push(thread_summary(&id, &runs));
        }
        Ok(ThreadList {
            threads,
            next_before,
        })
    }

    /// One thread with its runs oldest first (its latest [`MAX_THREAD_RUNS`]); `None` when
    /// no run names it.
    pub fn get_thread(&self, thread_id: &str) -> Result<Option<ThreadDetail>> {
        let mut runs = self.thread_runs(thread_id)?;
        if runs.is_empty() {
            return Ok(None);
        }
        runs.reverse();
        Ok(Some(ThreadDetail {
            thread: thread_summary(thread_id, &runs),
            runs,
        }))
    }

    /// The latest [`MAX_THREAD_RUNS`] runs of a thread, newest first, with their costs.
    fn thread_runs(&self, thread_id: &str) -> Result<Vec<RunSummary>> {
        Ok(self
            .list_runs(&RunFilter {
                limit: Some(MAX_THREAD_RUNS),
                thread: Some(thread_id.to_owned()),
                ..RunFilter::default()
            })?
            .runs)
    }
}

/// A page of thread ids with their latest start (one more than the limit, to tell
/// whether another page follows).
fn sqlite_thread_ids(conn: &Connection, filter: &ThreadFilter) -> Result<Vec<(String, i64)>> {
    let mut sql = "SELECT thread_id, MAX(started_at) AS last FROM runs \
                   WHERE thread_id IS NOT NULL"
        .to_owned();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(user) = &filter.user {
        sql.push_str(" AND thread_id IN (SELECT thread_id FROM runs WHERE user_id = ?)");
        args.push(user.clone().into());
    }
    if let Some(tag) = &filter.tag {
        sql.push_str(
            " AND thread_id IN (SELECT thread_id FROM runs \
               WHERE EXISTS (SELECT 1 FROM json_each(runs.tags_json) WHERE value = ?))",
        );
        args.push(tag.clone().into());
    }
    sql.push_str(" GROUP BY thread_id");
    if let Some(before) = filter.before {
        sql.push_str(" HAVING MAX(started_at) < ?");
        args.push(before.into());
    }
    sql.push_str(" ORDER BY last DESC, thread_id DESC LIMIT ?");
    args.push((i64::from(filter.effective_limit()) + 1).into());
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_thread_key_order_is_thread_then_conversation_then_session() {
        let keys = run_keys(Some(&json!({"sessionId": "s", "conversationId": "c"})));
        assert_eq!(keys.thread_id.as_deref(), Some("c"));
        let keys = run_keys(Some(&json!({"sessionId": 7, "threadId": ""})));
        assert_eq!(keys.thread_id.as_deref(), Some("7"));
        let keys = run_keys(Some(
            &json!({"threadId": "t", "userId": "u", "tags": ["a", 3, "", "b"]}),
        ));
        assert_eq!(keys.thread_id.as_deref(), Some("t"));
        assert_eq!(keys.user_id.as_deref(), Some("u"));
        assert_eq!(keys.tags, vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(
            run_keys(Some(&json!({"threadId": {"x": 1}}))),
            RunKeys::default()
        );
    }
}
