//! The thread tools: `list_threads` and `get_thread` (the runs of one conversation,
//! grouped and totalled by the store).

use std::fmt::Write as _;

use mindgate_store::{RunStore, ThreadFilter, ThreadSummary};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::output::{Links, ToolOutput};
use crate::output_limits::cut_str;
use crate::params::{GetThreadArgs, ListThreadsArgs};
use crate::runs::{LIST_DEFAULT, LIST_MAX, check_id, check_limit, run_line, run_value};
use crate::time::{duration, iso};

/// One thread on one line: its id, runs, span, user, totals.
fn thread_line(t: &ThreadSummary) -> String {
    let mut s = format!(
        "{} — {} run(s), {} to {}",
        cut_str(&t.id, 120),
        t.run_count,
        iso(t.first_started_at),
        iso(t.last_started_at)
    );
    if let Some(user) = &t.user_id {
        let _ = write!(s, ", user {}", cut_str(user, 60));
    }
    let _ = write!(
        s,
        ", {} work, tokens {} in / {} out, {} error(s)",
        duration(t.work_ms as f64),
        t.tokens.input_tokens,
        t.tokens.output_tokens,
        t.errors
    );
    match t.cost_usd {
        Some(usd) if usd > 0.0 => {
            let _ = write!(s, ", cost {}", mindgate_pricing::format_usd(usd));
        }
        Some(_) => {}
        None => s.push_str(", cost unknown"),
    }
    s
}

fn thread_value(t: &ThreadSummary, links: &Links) -> Value {
    let mut v = serde_json::to_value(t).unwrap_or_else(|_| json!({}));
    if let Some(obj) = v.as_object_mut() {
        obj.insert("link".to_owned(), Value::String(links.thread(&t.id)));
    }
    v
}

/// `list_threads`: threads (runs grouped by their meta's thread id), latest active first.
pub fn list_threads(
    store: &RunStore,
    args: &ListThreadsArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    let limit = check_limit("limit", args.limit, LIST_DEFAULT, LIST_MAX)?;
    let filter = ThreadFilter {
        limit: Some(limit),
        before: args.before,
        user: args.user.clone().filter(|u| !u.is_empty()),
        tag: args.tag.clone().filter(|t| !t.is_empty()),
    };
    let list = store.list_threads(&filter)?;
    let mut text = if list.threads.is_empty() {
        "No threads match (a run joins a thread through its meta threadId, conversationId or sessionId).".to_owned()
    } else {
        format!("{} thread(s), latest active first:\n", list.threads.len())
    };
    for t in &list.threads {
        let _ = writeln!(text, "- {}\n  {}", thread_line(t), links.thread(&t.id));
    }
    if let Some(next) = list.next_before {
        let _ = writeln!(text, "More threads: call list_threads with before={next}.");
    }
    if !list.threads.is_empty() {
        text.push_str("Open one with get_thread {\"threadId\": …}.");
    }
    let threads: Vec<Value> = list
        .threads
        .iter()
        .map(|t| thread_value(t, links))
        .collect();
    Ok(ToolOutput::new(
        text,
        json!({"threads": threads, "nextBefore": list.next_before}),
    ))
}

/// `get_thread`: one thread's totals and its runs in the order they started.
pub fn get_thread(
    store: &RunStore,
    args: &GetThreadArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    check_id("threadId", &args.thread_id)?;
    let detail = store
        .get_thread(&args.thread_id)?
        .ok_or_else(|| ToolError::UnknownThread {
            thread_id: args.thread_id.clone(),
        })?;
    let mut text = format!(
        "Thread {}\n{}\nRuns in order:\n",
        thread_line(&detail.thread),
        links.thread(&detail.thread.id)
    );
    for (i, run) in detail.runs.iter().enumerate() {
        let _ = writeln!(
            text,
            "{}. {}\n   {}",
            i + 1,
            run_line(run),
            links.run(&run.id)
        );
    }
    text.push_str("Open a run with get_run {\"runId\": …}.");
    let runs: Vec<Value> = detail.runs.iter().map(|r| run_value(r, links)).collect();
    Ok(ToolOutput::new(
        text,
        json!({"thread": thread_value(&detail.thread, links), "runs": runs}),
    ))
}
