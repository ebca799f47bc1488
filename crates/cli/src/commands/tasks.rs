//! `mindgate tasks`: the coding-agent sessions found on this machine, newest first.
//!
//! Also the discovery helpers `serve` and `taskgraph` share: flags → [`DiscoveryConfig`],
//! and a scan that shows a progress bar on a terminal.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use mindgate_taskgraph::discover::summarize;
use mindgate_taskgraph::format::DurationStyle;
use mindgate_taskgraph::{
    DiscoveryConfig, Found, SessionLocation, Skipped, TaskSummary, scan_sessions,
};

use crate::args::{DiscoveryArgs, TasksArgs};

/// The discovery settings the flags ask for: the agents' homes from the environment (unless
/// `--no-default-homes`), explicit folders over them, plus every `--sessions` path.
pub fn discovery_config(args: &DiscoveryArgs) -> DiscoveryConfig {
    let mut c = if args.no_default_homes {
        DiscoveryConfig::empty()
    } else {
        DiscoveryConfig::from_env()
    };
    let set = |slot: &mut Option<PathBuf>, v: &Option<PathBuf>| {
        if let Some(v) = v {
            *slot = Some(v.clone());
        }
    };
    set(&mut c.dsh_sessions, &args.dsh_sessions);
    set(&mut c.pi_sessions, &args.pi_sessions);
    set(&mut c.claude_projects, &args.claude_projects);
    set(&mut c.codex_sessions, &args.codex_sessions);
    set(&mut c.gemini_sessions, &args.gemini_sessions);
    set(&mut c.opencode_data, &args.opencode_data);
    c.extra_paths.extend(args.sessions.iter().cloned());
    if c.now.is_none() {
        c.now = mindgate_taskgraph::discover::now_from_env();
    }
    c
}

/// Finds and reads every session (a progress bar on stderr when it is a terminal), newest
/// start first. Unreadable sessions are reported on stderr and skipped.
pub fn scan(config: &DiscoveryConfig) -> Vec<(SessionLocation, TaskSummary)> {
    let Found {
        sessions: locs,
        skipped,
    } = scan_sessions(config);
    for s in &skipped {
        report(s);
    }
    let bar = ProgressBar::new(locs.len() as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} reading sessions {pos}/{len} {wide_bar} {eta}")
    {
        bar.set_style(style);
    }
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(SessionLocation, TaskSummary)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(locs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(loc) = locs.get(i) else { break };
                    match summarize(loc, config) {
                        Ok(t) => out
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push((loc.clone(), t)),
                        Err(e) => bar.suspend(|| report(&Skipped::new(&loc.path, &e))),
                    }
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish_and_clear();
    let mut out = out
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    out.sort_by(|(_, a), (_, b)| {
        b.start_time
            .cmp(&a.start_time)
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

/// Reports a skipped file on stderr (`mindgate: skipping <path>: <reason>`).
fn report(s: &Skipped) {
    eprintln!("mindgate: {s}");
}

/// Prints the task list (`--search` is [`super::task_search`]'s).
pub fn run(args: &TasksArgs) -> anyhow::Result<ExitCode> {
    let config = discovery_config(&args.discovery);
    let mut tasks: Vec<TaskSummary> = scan(&config).into_iter().map(|(_, t)| t).collect();
    if let Some(n) = args.limit {
        tasks.truncate(n);
    }
    if args.json {
        super::write_stdout(&(serde_json::to_string_pretty(&tasks)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if tasks.is_empty() {
        super::write_stdout(&format!(
            "No coding-agent sessions found (looked in the DSH, pi, Claude Code and Codex homes{}).\n",
            if config.extra_paths.is_empty() {
                ""
            } else {
                " and --sessions"
            }
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    super::write_stdout(&table(&children_under_parents(tasks)))?;
    Ok(ExitCode::SUCCESS)
}

/// The list in its order (newest start first), each subagent session moved right under its
/// parent when the parent is listed (recursively, children by start); the others stay put.
pub fn children_under_parents(tasks: Vec<TaskSummary>) -> Vec<TaskSummary> {
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let listed_parent = t
            .parent_session
            .as_deref()
            .filter(|p| *p != t.id && ids.contains(p));
        match listed_parent {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    for v in children.values_mut() {
        v.sort_by_key(|&i| (tasks[i].start_time, i));
    }
    let mut order = Vec::with_capacity(tasks.len());
    let mut placed = vec![false; tasks.len()];
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut placed[i], true) {
            continue;
        }
        order.push(i);
        if let Some(kids) = children.get(tasks[i].id.as_str()) {
            stack.extend(kids.iter().rev());
        }
    }
    // Children whose parents form a cycle (never written by an agent) keep their place.
    order.extend((0..tasks.len()).filter(|&i| !placed[i]));
    let mut slots: Vec<Option<TaskSummary>> = tasks.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

fn table(tasks: &[TaskSummary]) -> String {
    let header = [
        "ID",
        "AGENT",
        "STATUS",
        "START (UTC)",
        "DURATION",
        "TOKENS",
        "LIVE",
        "WORKSPACE",
        "TITLE",
    ];
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    let rows: Vec<[String; 9]> = tasks
        .iter()
        .map(|t| {
            let parent = t.parent_session.as_deref();
            let (id, title) = match parent {
                // A subagent session: marked, with its parent's id (the row under it when listed).
                Some(p) => (
                    format!("↳ {}", clip(&t.id, 38)),
                    format!(
                        "[subagent of {}{}] {}",
                        clip(p, 12),
                        if ids.contains(p) { "" } else { ", not listed" },
                        one_line(&t.title)
                    ),
                ),
                None => (clip(&t.id, 40), one_line(&t.title)),
            };
            [
                id,
                t.agent.as_str().to_owned(),
                t.status.as_str().to_owned(),
                t.start_time.map_or_else(|| "-".to_owned(), datetime),
                duration(t.duration_ms),
                tokens_cell(t, parent.is_some_and(|p| ids.contains(p))),
                if t.live { "live" } else { "" }.to_owned(),
                clip(&t.workspace, 40),
                clip(&title, 70),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let last = cells.len() - 1;
        for (i, c) in cells.iter().enumerate() {
            if i == last {
                out.push_str(c);
            } else {
                out.push_str(c);
                out.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        out.push('\n');
    };
    line(&header.map(str::to_owned));
    for r in &rows {
        line(r);
    }
    out
}

/// The task's tokens with its subagents' (each once); a subagent session's in parentheses when
/// its parent is listed, whose row already counts them.
fn tokens_cell(t: &TaskSummary, parent_listed: bool) -> String {
    let total = thousands(t.totals.tokens.total);
    if parent_listed {
        format!("({total})")
    } else {
        total
    }
}

/// First line of `s`, whitespace collapsed.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `1,234,567`.
pub(crate) fn thousands(x: u64) -> String {
    let digits = x.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `s` cut to `max` characters (with an ellipsis).
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `1h 02m`, `3m 05s`, `12.3s`, `450ms` (the task graph's compact duration).
pub fn duration(ms: i64) -> String {
    mindgate_taskgraph::format::duration(ms as f64, DurationStyle::Compact)
}

/// `2026-08-24 19:33:20` (UTC) from Unix milliseconds (`?` when out of range).
pub fn datetime(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(datetime(0), "1970-01-01 00:00:00");
        assert_eq!(datetime(1_787_600_000_000), "2026-08-24 19:33:20");
        assert_eq!(datetime(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(duration(450), "450ms");
        assert_eq!(duration(12_345), "12.3s");
        assert_eq!(duration(185_000), "3m 05s");
        assert_eq!(duration(3_720_000), "1h 02m");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(one_line(" a\n b "), "a b");
    }
}
