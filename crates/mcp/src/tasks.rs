//! The task tools: `list_tasks` and `get_task_graph`, over the task-graph
//! crate's [`Catalog`] (the same discovery and `build_graph` the viewer uses).
//!
//! What `get_task_graph` may read ([`TaskCatalog::resolve`]): a discovered
//! session, by id or unique id prefix, or by path; or a path naming a regular
//! file or a DSH session folder that lies, once symlinks are resolved, under
//! one of the configured session roots (the agents' homes and the
//! `--sessions` paths). Anything else — `/etc/passwd`, `/dev/zero`, a FIFO, a
//! symlink under a root to something outside that is not a discovered
//! session — is refused before it is opened. The reading itself goes through the task-graph crate's
//! [`bounded`](mindgate_taskgraph::bounded) reader (regular files only, size
//! caps on the file and on zstd output), and no lock is held while it runs.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::graph::NodeRef;
use mindgate_taskgraph::{
    Agent, Catalog, DiscoveryConfig, IdMatch, SessionLocation, TaskGraph, TaskReport, TaskSummary,
    detect_agent, match_task_id,
};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::output::Links;
use crate::output::ToolOutput;
use crate::output_limits::{cut_str, one_line};
use crate::params::{DetailArg, GetTaskGraphArgs, GetUsageArgs, ListTasksArgs, SearchTasksArgs};
use crate::time::{duration, iso};
use crate::views::task::TaskGraphView;
use crate::views::to_structured;

/// Default `list_tasks` page.
pub const LIST_TASKS_DEFAULT: u32 = 20;
/// Largest `list_tasks` page.
pub const LIST_TASKS_MAX: u32 = 200;
pub use crate::views::task::{FULL_MAX_NODES, MAX_FILES};

fn task_value(t: &TaskSummary) -> Value {
    json!({
        "id": t.id,
        "agent": t.agent,
        "title": cut_str(&t.title, 200),
        "workspace": t.workspace,
        "cwd": t.cwd,
        "status": t.status,
        "startTime": t.start_time,
        "durationMs": t.duration_ms,
        "live": t.live,
        "path": t.path,
        "parentSession": t.parent_session,
        "counts": t.counts,
        "totals": t.totals,
        "warnings": t.warnings,
    })
}

/// The task catalog every MCP session shares: the last discovered task list,
/// behind a lock that is held only to copy or swap a snapshot — never while a
/// folder is listed or a session file is read.
#[derive(Debug)]
pub struct TaskCatalog {
    config: DiscoveryConfig,
    current: Mutex<Arc<Catalog>>,
    /// Whether a refresh has run.
    scanned: AtomicBool,
}

impl TaskCatalog {
    /// An empty catalog over `config` (nothing is read until the first refresh).
    pub fn new(config: DiscoveryConfig) -> Self {
        TaskCatalog {
            current: Mutex::new(Arc::new(Catalog::new(config.clone()))),
            config,
            scanned: AtomicBool::new(false),
        }
    }

    /// Where sessions are looked for.
    pub fn config(&self) -> &DiscoveryConfig {
        &self.config
    }

    /// The task list as of the last refresh.
    pub fn snapshot(&self) -> Arc<Catalog> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Rescans the session roots (re-reading only changed files) on a copy of
    /// the catalog, outside the lock, then publishes it.
    pub fn refresh(&self) -> Arc<Catalog> {
        let mut next = (*self.snapshot()).clone();
        next.refresh();
        let next = Arc::new(next);
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = next.clone();
        self.scanned.store(true, Ordering::Relaxed);
        next
    }

    /// The session folders and files `get_task_graph` may read paths under,
    /// with symlinks resolved (roots that do not exist are left out).
    pub fn roots(&self) -> Vec<PathBuf> {
        let c = &self.config;
        [
            &c.dsh_sessions,
            &c.pi_sessions,
            &c.claude_projects,
            &c.codex_sessions,
            &c.gemini_sessions,
            &c.opencode_data,
        ]
        .into_iter()
        .flatten()
        .chain(&c.extra_paths)
        .filter_map(|p| fs::canonicalize(p).ok())
        .collect()
    }

    /// Resolves `get_task_graph`'s `id` to a session to read: a discovered
    /// session's id or unique id prefix (rescanning once when unknown), or a
    /// path allowed by the policy in the [module docs](self).
    pub fn resolve(&self, id: &str) -> Result<SessionLocation, ToolError> {
        if looks_like_path(id) {
            return self.resolve_path(id);
        }
        match match_id(self.snapshot().tasks(), id) {
            Err(ToolError::UnknownTask { .. }) => match_id(self.refresh().tasks(), id),
            other => other,
        }
    }

    fn resolve_path(&self, raw: &str) -> Result<SessionLocation, ToolError> {
        let refuse = |reason: &str| ToolError::PathNotAllowed {
            path: raw.to_owned(),
            reason: reason.to_owned(),
        };
        let path =
            fs::canonicalize(raw).map_err(|_| ToolError::UnknownTask { id: raw.to_owned() })?;
        // A discovered session: the listing follows the user's own symlinks under a root.
        let discovered = |catalog: &Catalog| {
            catalog
                .tasks()
                .iter()
                .find(|t| {
                    t.path == Path::new(raw) || fs::canonicalize(&t.path).is_ok_and(|p| p == path)
                })
                .map(TaskSummary::location)
        };
        if let Some(loc) = discovered(&self.snapshot()) {
            return Ok(loc);
        }
        if !self.roots().iter().any(|r| path.starts_with(r)) {
            // Before the first scan nothing is known yet; after it, a refusal costs no scan.
            let catalog = if self.scanned.load(Ordering::Relaxed) {
                self.snapshot()
            } else {
                self.refresh()
            };
            return discovered(&catalog).ok_or_else(|| {
                refuse(
                    "it is outside the session folders (the agents' homes and the --sessions paths), with symlinks resolved",
                )
            });
        }
        let meta =
            fs::metadata(&path).map_err(|_| ToolError::UnknownTask { id: raw.to_owned() })?;
        if !meta.is_file() && !meta.is_dir() {
            return Err(refuse(
                "it is not a regular file or a session folder (pipes, sockets and devices are never read)",
            ));
        }
        let agent = detect_agent(&path)?;
        Ok(SessionLocation {
            agent,
            path,
            workspace: None,
        })
    }

    /// Reads a resolved session and builds its graph (no lock held).
    pub fn graph(&self, loc: &SessionLocation) -> Result<TaskGraph, ToolError> {
        Ok(self.tree(loc)?.graph)
    }

    /// A session's graph with its subagent sessions' graphs.
    pub fn tree(&self, loc: &SessionLocation) -> Result<mindgate_taskgraph::GraphTree, ToolError> {
        Ok(load_tree(loc, &self.config)?.1)
    }
}

/// Whether `get_task_graph`'s `id` names a path rather than a session id.
fn looks_like_path(id: &str) -> bool {
    id.contains('/')
        || id.contains(std::path::MAIN_SEPARATOR)
        || id.starts_with('.')
        || id.starts_with('~')
}

/// An exact id, else a unique prefix, among discovered tasks.
fn match_id(tasks: &[TaskSummary], id: &str) -> Result<SessionLocation, ToolError> {
    match match_task_id(tasks, id, |t| t.id.as_str()) {
        IdMatch::One(t) => Ok(t.location()),
        IdMatch::None => Err(ToolError::UnknownTask { id: id.to_owned() }),
        IdMatch::Many(many) => {
            let mut paths: Vec<&Path> = many.iter().map(|t| t.path.as_path()).collect();
            paths.sort();
            Err(ToolError::AmbiguousTask {
                id: id.to_owned(),
                count: many.len(),
                candidates: paths
                    .iter()
                    .take(10)
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    }
}

/// `list_tasks`: coding-agent sessions found on this machine, newest first.
/// Refreshes the catalog (only changed session files are read again).
pub fn list_tasks(catalog: &TaskCatalog, args: &ListTasksArgs) -> Result<ToolOutput, ToolError> {
    let limit = match args.limit {
        None => LIST_TASKS_DEFAULT,
        Some(n) if (1..=LIST_TASKS_MAX).contains(&n) => n,
        Some(n) => {
            return Err(ToolError::bad(
                "limit",
                format!("{n} is not between 1 and {LIST_TASKS_MAX}"),
            ));
        }
    } as usize;
    let agent = args.agent.map(Agent::from);
    let catalog = catalog.refresh();
    let tasks: Vec<&TaskSummary> = catalog
        .tasks()
        .iter()
        .filter(|t| agent.is_none_or(|a| t.agent == a))
        .collect();
    let total = tasks.len();
    let shown: Vec<&TaskSummary> = tasks.into_iter().take(limit).collect();
    let mut text = if shown.is_empty() {
        "No coding-agent sessions found (looked in the DSH, pi, Claude Code and Codex homes)."
            .to_owned()
    } else {
        format!(
            "{total} session(s) found; {} shown, newest first:\n",
            shown.len()
        )
    };
    for t in &shown {
        let c = &t.counts;
        let _ = writeln!(
            text,
            "- {} [{}] \"{}\" — {}{}, {}{}; {} turns, {} steps, {} tools, {} errors, {} files changed\n  {}",
            t.id,
            t.agent.as_str(),
            cut_str(&one_line(&Value::String(t.title.clone()), 200), 120),
            t.status.as_str(),
            if t.live { " (live)" } else { "" },
            t.start_time
                .map(iso)
                .unwrap_or_else(|| "no start time".to_owned()),
            if t.duration_ms > 0 {
                format!(", {}", duration(t.duration_ms as f64))
            } else {
                String::new()
            },
            c.phases,
            c.agents,
            c.tools + c.skills + c.subagents + c.code_changes + c.tests + c.plans,
            c.errors,
            c.files_changed,
            t.path.display()
        );
    }
    if !shown.is_empty() {
        text.push_str("Open one with get_task_graph {\"id\": …}.");
    }
    let values: Vec<Value> = shown.iter().map(|t| task_value(t)).collect();
    Ok(ToolOutput::new(
        text,
        json!({ "tasks": values, "total": total }),
    ))
}

/// `get_task_graph`: a session's task graph — summary, critical path, failures,
/// files changed (and, with `detail: full`, its nodes). Which sessions may be
/// read: see [`TaskCatalog::resolve`].
pub fn get_task_graph(
    catalog: &TaskCatalog,
    args: &GetTaskGraphArgs,
    prices: &mindgate_pricing::PriceTable,
) -> Result<ToolOutput, ToolError> {
    if args.id.trim().is_empty() {
        return Err(ToolError::bad("id", "must not be empty"));
    }
    let loc = catalog.resolve(&args.id)?;
    let detail = args.detail.unwrap_or_default();
    if detail == DetailArg::Overview {
        let tree = catalog.tree(&loc)?;
        let o = mindgate_taskgraph::overview(&tree.graph, &tree.children, prices);
        return Ok(ToolOutput::new(overview_text(&o), to_structured(&o)));
    }
    let g = catalog.graph(&loc)?;
    let report = TaskReport::new(&g);
    let view = TaskGraphView::new(&g, &report, report.cost(prices), detail == DetailArg::Full);
    let text = task_graph_text(&g, &report, &view);
    Ok(ToolOutput::new(text, to_structured(&view)))
}

/// `get_task_graph`'s text in overview mode: the task line, then one line per turn.
fn overview_text(o: &mindgate_taskgraph::TaskOverview) -> String {
    use std::fmt::Write as _;
    let h = &o.headline;
    let mut text = format!(
        "{} [{}] {} turns, {} steps, {} tool calls, {} errors, {} retries; critical path {} ms of agent work, {} ms waiting\n",
        o.title,
        o.status.as_str(),
        h.turns,
        h.steps,
        h.tool_calls,
        h.errors,
        h.retries,
        o.critical_path.duration_ms,
        o.critical_path.waiting_ms,
    );
    for t in &o.turns {
        let c = &t.counts;
        let message: String = t
            .user_message
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect();
        let _ = writeln!(
            text,
            "Turn {} ({}, {} ms, {} steps, {} calls, {} errors, {} retries, {} subagents): {}",
            t.turn,
            t.status.as_str(),
            t.duration_ms,
            c.steps,
            c.tool_calls,
            c.errors,
            c.retries,
            c.subagents,
            message.replace('\n', " ")
        );
    }
    text
}

/// The critical path and the failures in `get_task_graph`'s text.
fn critical_path_and_failures_text(text: &mut String, g: &TaskGraph, report: &TaskReport<'_>) {
    let s = &g.summary;
    let name_of = |id: &str| report.node(id).map(|n| n.name.clone()).unwrap_or_default();
    let failure_text = |r: &NodeRef| report.failure_text(r);
    let _ = writeln!(
        text,
        "\nCritical path ({} of agent work in {}; waiting for the person {}):",
        duration(g.critical_path.duration_ms as f64),
        duration(g.critical_path.total_ms as f64),
        duration(s.waiting_ms as f64)
    );
    for (i, step) in report.critical_path().enumerate().take(60) {
        let n = step.node;
        let _ = writeln!(
            text,
            "{}. {} {} \"{}\" {} {}",
            i + 1,
            step.id,
            n.map(|n| n.node_type.as_str()).unwrap_or("?"),
            cut_str(&one_line(&Value::String(name_of(step.id)), 200), 80),
            n.map(|n| n.status.as_str()).unwrap_or_default(),
            n.map(|n| duration(n.duration_ms as f64))
                .unwrap_or_default()
        );
    }
    if g.critical_path.node_ids.len() > 60 {
        let _ = writeln!(text, "… {} more", g.critical_path.node_ids.len() - 60);
    }
    if !s.failed_steps.is_empty() {
        let _ = writeln!(text, "\nFailures ({}):", s.failed_steps.len());
        for f in s.failed_steps.iter().take(30) {
            let _ = writeln!(
                text,
                "- {} {} \"{}\"{}: {}",
                f.id,
                f.node_type.as_str(),
                cut_str(&one_line(&Value::String(f.name.clone()), 200), 80),
                if f.attempts > 1 {
                    format!(" after {} attempts", f.attempts)
                } else {
                    String::new()
                },
                failure_text(f)
                    .map(|e| one_line(&Value::String(e), 300))
                    .unwrap_or_else(|| "(no message)".to_owned())
            );
        }
    }
}

/// `get_task_graph`'s text: the task line, headline, cost, critical path, failures, slowest
/// steps, files, tools and how to list the nodes.
fn task_graph_text(g: &TaskGraph, report: &TaskReport<'_>, view: &TaskGraphView<'_>) -> String {
    let s = &g.summary;
    let mut text = format!(
        "Task {} \"{}\" — {}, {}{}\n",
        g.task_id,
        cut_str(&one_line(&Value::String(g.title.clone()), 300), 200),
        g.status.as_str(),
        g.start_time
            .map(iso)
            .unwrap_or_else(|| "no start time".to_owned()),
        if g.duration_ms > 0 {
            format!(", {}", duration(g.duration_ms as f64))
        } else {
            String::new()
        },
    );
    if let Some(cwd) = &g.cwd {
        let _ = writeln!(text, "cwd: {cwd}");
    }
    let _ = writeln!(
        text,
        "{} turns, {} LLM steps, {} tool calls ({} code changes, {} tests, {} subagents), {} errors, {} retries; tokens {} in / {} out / {} cache read",
        s.headline.turns,
        s.headline.steps,
        s.headline.tool_calls,
        s.headline.code_changes,
        s.headline.tests,
        s.headline.subagents,
        s.headline.errors,
        s.headline.retries,
        s.tokens.input,
        s.tokens.output,
        s.tokens.cache_read
    );
    if s.tokens.total > 0 {
        let _ = writeln!(text, "Cost: {}", view.cost);
    }
    if let Some(kind) = &g.meta.final_turn_reason.kind {
        let _ = writeln!(
            text,
            "Last turn ended: {kind}{}",
            g.meta
                .final_turn_reason
                .message
                .as_deref()
                .map(|m| format!(" — {}", cut_str(m, 300)))
                .unwrap_or_default()
        );
    }
    critical_path_and_failures_text(&mut text, g, report);
    if !s.slowest_steps.is_empty() {
        text.push_str("\nSlowest steps:\n");
        for r in &s.slowest_steps {
            let _ = writeln!(
                text,
                "- {} \"{}\" {}",
                r.id,
                cut_str(&r.name, 80),
                duration(r.duration_ms as f64)
            );
        }
    }
    if !s.files_changed.is_empty() {
        let _ = writeln!(text, "\nFiles changed ({}):", s.files_changed.len());
        for f in s.files_changed.iter().take(50) {
            let _ = writeln!(text, "- {f}");
        }
        if s.files_changed.len() > 50 {
            let _ = writeln!(text, "… {} more", s.files_changed.len() - 50);
        }
    }
    if !s.most_used_tools.is_empty() {
        let tools: Vec<String> = s
            .most_used_tools
            .iter()
            .map(|t| format!("{} ×{}", t.name, t.count))
            .collect();
        let _ = writeln!(text, "\nMost used tools: {}", tools.join(", "));
    }

    if view.nodes.is_some() {
        let _ = writeln!(
            text,
            "\nNodes: {} (listed in the structured content{}).",
            g.nodes.len(),
            if g.nodes.len() > FULL_MAX_NODES {
                ", first 300"
            } else {
                ""
            }
        );
    } else {
        let _ = writeln!(
            text,
            "\nThe graph has {} nodes; pass detail: \"full\" to list them.",
            g.nodes.len()
        );
    }
    text
}

/// `get_usage`: token usage and cost across every coding-agent session found (each subagent
/// session once), grouped as asked — the report `mindgate usage` prints and the Tasks page's
/// Usage view shows ([`mindgate_taskgraph::discover::usage_of_tasks`]).
pub fn get_usage(
    catalog: &TaskCatalog,
    args: &GetUsageArgs,
    prices: &mindgate_pricing::PriceTable,
) -> Result<ToolOutput, ToolError> {
    use mindgate_taskgraph::usage::{UsageQuery, since_ms};
    let tz = match args.tz.as_deref().map(str::trim) {
        None | Some("") => jiff::tz::TimeZone::UTC,
        Some(name) => jiff::tz::TimeZone::get(name)
            .map_err(|_| ToolError::bad("tz", format!("`{name}` is not an IANA time zone name")))?,
    };
    let since_ms = match args.since.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(s) => Some(since_ms(s, &tz, jiff::Timestamp::now()).ok_or_else(|| {
            ToolError::bad(
                "since",
                format!("`{s}` is not a span (7d), an RFC 3339 time, a date or Unix ms"),
            )
        })?),
    };
    let by = args.by.unwrap_or_default();
    let catalog = catalog.refresh();
    let report = catalog.usage(&UsageQuery { by, since_ms, tz }, prices);
    let cost = |c: &mindgate_pricing::Cost| match c.usd {
        Some(usd) => mindgate_pricing::format_usd(usd),
        None => format!(
            "at least {} (no price for {})",
            mindgate_pricing::format_usd(c.priced_usd),
            c.unpriced_models.join(", ")
        ),
    };
    let t = &report.total.tokens;
    let mut text = format!(
        "Usage by {} ({} sessions): {} tokens (input {} of which cache writes {}, cache reads {}, output {}), cost {}.\n",
        report.by.as_str(),
        report.total.sessions,
        t.total,
        t.input,
        t.cache_write,
        t.cache_read,
        t.output,
        cost(&report.total.cost)
    );
    for r in report.rows.iter().take(50) {
        let _ = writeln!(
            text,
            "- {}{}: {} tokens, {}",
            r.key,
            r.title
                .as_deref()
                .map(|t| format!(" \"{}\"", cut_str(t, 80)))
                .unwrap_or_default(),
            r.tokens.total,
            cost(&r.cost)
        );
    }
    if report.rows.len() > 50 {
        let _ = writeln!(
            text,
            "… {} more rows in the structured content",
            report.rows.len() - 50
        );
    }
    Ok(ToolOutput::new(text, to_structured(&report)))
}

/// `search_tasks`: the texts of every coding-agent session found that contain the query, each
/// hit with its session, node, turn and viewer link — through the session search index in the
/// Mindgate home at `index_path` (the one `serve` and `mindgate tasks --search` use; brought
/// up to date with the sessions first).
pub fn search_tasks(
    catalog: &TaskCatalog,
    index_path: &Path,
    args: &SearchTasksArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    use mindgate_store::search::sessions::SessionIndex;
    let query = args.query.trim();
    if query.is_empty() {
        return Err(ToolError::bad("query", "give the text to look for"));
    }
    if query.chars().count() > 500 {
        return Err(ToolError::bad("query", "longer than 500 characters"));
    }
    let limit = match args.limit {
        None => 20,
        Some(n) if (1..=200).contains(&n) => n as usize,
        Some(n) => {
            return Err(ToolError::bad(
                "limit",
                format!("{n} is not between 1 and 200"),
            ));
        }
    };
    let catalog = catalog.refresh();
    let failed = |e: mindgate_store::StoreError| {
        ToolError::read(
            mindgate_errors::ErrorCode::Unavailable,
            format!(
                "the session search index {}: {}",
                index_path.display(),
                mindgate_errors::error_chain(&e)
            ),
        )
    };
    let index = SessionIndex::open(index_path).map_err(failed)?;
    let (_, hits) = index
        .search_current(query, catalog.tasks(), catalog.config(), limit)
        .map_err(failed)?;
    let mut text = if hits.is_empty() {
        format!("No session text contains \"{query}\".")
    } else {
        format!("{} hit(s) for \"{query}\", best first:\n", hits.len())
    };
    let mut values = Vec::with_capacity(hits.len());
    for h in &hits {
        let link = links.task_node(&h.session_id, h.turn.as_deref(), &h.node_id);
        let _ = writeln!(
            text,
            "- {} [{}] \"{}\" {} {}: {}\n  {}",
            h.session_id,
            h.agent,
            cut_str(&h.title, 80),
            h.kind,
            h.node_id,
            cut_str(&h.snippet, 200),
            link
        );
        let mut v = serde_json::to_value(h).unwrap_or_else(|_| json!({}));
        v["link"] = Value::String(link);
        values.push(v);
    }
    Ok(ToolOutput::new(
        text,
        json!({ "query": query, "hits": values }),
    ))
}
