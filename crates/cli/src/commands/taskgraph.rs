//! `mindgate taskgraph <PATH|ID>`: one coding-agent session as a task graph.
//!
//! `--json` prints the graph exactly as `build_graph` makes it (the body of
//! `/task-graph/api/task`); the default is a readable summary of that same graph (its
//! [`TaskReport`]).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mindgate_home::Home;
use mindgate_pricing::PriceTable;
use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::read::dsh_session_file;
use mindgate_taskgraph::{
    DiscoveryConfig, GraphTree, IdMatch, Session, SessionLocation, Summary, TaskGraph, TaskReport,
    detect_agent, graph::NodeRef, match_task_id,
};

use super::tasks::{clip, datetime, discovery_config, duration, one_line, scan, thousands};
use crate::args::TaskgraphArgs;

/// Prints the task graph of one session.
pub fn run(args: &TaskgraphArgs) -> anyhow::Result<ExitCode> {
    let config = discovery_config(&args.discovery);
    let (loc, session, tree) = load_target(&args.target, &config)?;
    if args.json {
        // Straight from the typed graph to stdout: no intermediate `Value` tree.
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &tree.graph)?;
        out.write_all(b"\n")?;
        out.flush()?;
        std::mem::forget(tree);
    } else {
        let prices = mindgate_pricing::PriceTable::load(&Home::from_env().prices_file())?;
        super::write_stdout(&summary(&tree.graph, &loc, &prices, args.full))?;
        std::mem::forget(tree);
    }
    // The process exits next: freeing ~100,000 events and ~35,000 nodes one by one would
    // only add time (the OS takes the memory back at once).
    std::mem::forget(session);
    Ok(ExitCode::SUCCESS)
}

/// The session a `PATH|ID` argument names — a session file, a folder holding one session,
/// else the id (or unique id prefix) of a discovered session — read with its children and
/// built as a task graph (archived mode); read warnings go to stderr. `mindgate taskgraph`
/// and `mindgate memory induce` resolve their argument with this one rule.
pub(crate) fn load_target(
    target: &str,
    config: &DiscoveryConfig,
) -> anyhow::Result<(SessionLocation, Session, GraphTree)> {
    let path = Path::new(target);
    let loc = if path.is_dir() && dsh_session_file(path).is_none() {
        in_folder(path, config)?
    } else if path.exists() || mindgate_taskgraph::opencode::is_session_path(path) {
        // An OpenCode session in its database is named `<data>/opencode.db/<session id>`.
        let agent = detect_agent(path)
            .with_context(|| format!("cannot read {} as a session", path.display()))?;
        SessionLocation {
            agent,
            path: path.to_path_buf(),
            workspace: None,
        }
    } else {
        locate(target, &scan(config))?
    };
    let (session, tree) =
        load_tree(&loc, config).with_context(|| format!("cannot read {}", loc.path.display()))?;
    for w in &session.warnings {
        eprintln!("mindgate: warning: {w}");
    }
    Ok((loc, session, tree))
}

/// The one session in a folder (any agent's layout, any depth): the sessions found there that
/// have no parent among them (subagent sessions belong to their parent). Unreadable files are
/// reported as `mindgate tasks` reports them.
fn in_folder(dir: &Path, config: &DiscoveryConfig) -> anyhow::Result<SessionLocation> {
    let inner = DiscoveryConfig {
        extra_paths: vec![dir.to_path_buf()],
        now: config.now,
        live_window: config.live_window,
        ..DiscoveryConfig::empty()
    };
    let found = scan(&inner);
    let ids: HashSet<&str> = found.iter().map(|(_, t)| t.id.as_str()).collect();
    let roots: Vec<&(SessionLocation, mindgate_taskgraph::TaskSummary)> = found
        .iter()
        .filter(|(_, t)| t.parent_session.as_deref().is_none_or(|p| !ids.contains(p)))
        .collect();
    match roots.as_slice() {
        [] => bail!("no readable session under {}", dir.display()),
        [(loc, _)] => Ok(loc.clone()),
        many => {
            let mut msg = format!(
                "{} sessions under {}; give one of:",
                many.len(),
                dir.display()
            );
            for (loc, t) in many {
                let _ = write!(msg, "\n  {}  {}", t.id, loc.path.display());
            }
            bail!(msg)
        }
    }
}

fn locate(
    id: &str,
    found: &[(SessionLocation, mindgate_taskgraph::TaskSummary)],
) -> anyhow::Result<SessionLocation> {
    if id.is_empty() {
        bail!("give a session file, folder or id (see `mindgate tasks`)");
    }
    match match_task_id(found, id, |(_, t)| t.id.as_str()) {
        IdMatch::One((loc, _)) => Ok(loc.clone()),
        // A missing file is named as one, not searched for among the sessions.
        IdMatch::None if looks_like_path(id) => bail!("no such file or folder: {id}"),
        IdMatch::None => bail!(
            "no session with id `{id}` among {} found (see `mindgate tasks`; add folders with --sessions)",
            found.len()
        ),
        IdMatch::Many(many) => bail!(
            "`{id}` matches {} sessions: {}",
            many.len(),
            many.iter()
                .map(|(_, t)| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An argument that names a file rather than a session id: it has a folder part or an
/// extension (`nope.jsonl`, `./s`, `~/x`); session ids have neither.
fn looks_like_path(arg: &str) -> bool {
    arg.contains(['/', '\\']) || arg.starts_with('~') || Path::new(arg).extension().is_some()
}

/// The headline counts (`summary.headline`, the same fields the page, HTTP and MCP show) as
/// one line.
pub fn counts_line(h: &mindgate_taskgraph::Headline) -> String {
    format!(
        "{} turns, {} LLM steps, {} tool calls ({} code changes, {} tests, {} subagents), {} errors, {} retries",
        h.turns, h.steps, h.tool_calls, h.code_changes, h.tests, h.subagents, h.errors, h.retries
    )
}

/// The readable summary of a graph (its [`TaskReport`]), its cost at `prices`.
///
/// By default at most [`SHORT_LIMITS`] items per list, so the summary of any session fits in
/// 40 lines (the head of the critical path, failures, slowest steps, counts); `full` lists
/// everything, retries and changed files included.
pub fn summary(g: &TaskGraph, loc: &SessionLocation, prices: &PriceTable, full: bool) -> String {
    let report = TaskReport::new(g);
    let mut o = String::new();
    write_header(&mut o, g, loc, &report, prices, full);
    write_critical_path(&mut o, g, &report, full);
    write_step_lists(&mut o, &g.summary, full);
    let sum = &g.summary;
    if !sum.most_used_tools.is_empty() {
        let parts: Vec<String> = sum
            .most_used_tools
            .iter()
            .map(|t| format!("{} ×{}", t.name, t.count))
            .collect();
        let _ = writeln!(o, "\nTools: {}", parts.join(", "));
    }
    if !full {
        let _ = writeln!(
            o,
            "\n(--full lists every hot step, failure, retry and changed file)"
        );
    }
    o
}

/// The summary's header: title, session, workspace, status, duration, tokens, cost, counts.
fn write_header(
    o: &mut String,
    g: &TaskGraph,
    loc: &SessionLocation,
    report: &TaskReport,
    prices: &PriceTable,
    full: bool,
) {
    let sum = &g.summary;
    let _ = writeln!(o, "{}", one_line(&g.title));
    let _ = writeln!(
        o,
        "  session   {}  ({}, {})",
        g.session_id,
        loc.agent,
        loc.path.display()
    );
    // The real folder from the recorded cwd; the agents' lossy folder encoding only in --full.
    match (&g.cwd, full) {
        (Some(cwd), true) => {
            let _ = writeln!(o, "  workspace {cwd}  (folder {})", g.workspace);
        }
        (Some(cwd), false) => {
            let _ = writeln!(o, "  workspace {cwd}");
        }
        (None, _) => {
            let _ = writeln!(o, "  workspace {}", g.workspace);
        }
    }
    let live = if g.meta.live { "  (live)" } else { "" };
    let _ = writeln!(o, "  status    {}{live}", g.status.as_str());
    let start = g
        .start_time
        .map_or_else(|| "-".to_owned(), |t| format!("{} UTC", datetime(t)));
    let _ = writeln!(
        o,
        "  duration  {}  (started {start})",
        duration(g.duration_ms)
    );
    let t = &sum.tokens;
    let _ = writeln!(
        o,
        "  tokens    {} total: {} in, {} out, {} cache read",
        thousands(t.total),
        thousands(t.input),
        thousands(t.output),
        thousands(t.cache_read)
    );
    if t.total > 0 {
        let _ = writeln!(o, "  cost      {}", report.cost(prices));
    }
    let _ = writeln!(o, "  counts    {}", counts_line(&sum.headline));
    if sum.counts.files_changed > 0 {
        let _ = writeln!(o, "  files     {} changed", sum.counts.files_changed);
    }
}

/// The critical path's line and its hot steps (the first [`SHORT_LIMITS`]`.hot` unless
/// `full`).
fn write_critical_path(o: &mut String, g: &TaskGraph, report: &TaskReport, full: bool) {
    let cp = &g.critical_path;
    let _ = writeln!(
        o,
        "\nCritical path: {} of agent work in {} ({} nodes, {} hot); waiting for the person {}",
        duration(cp.duration_ms),
        duration(cp.total_ms),
        cp.node_ids.len(),
        cp.hot_node_ids.len(),
        duration(g.summary.waiting_ms)
    );
    let hot_shown = if full { usize::MAX } else { SHORT_LIMITS.hot };
    for node in report.hot_steps().take(hot_shown) {
        let _ = writeln!(
            o,
            "  {:>9}  {:<8} {:<9} {}",
            duration(node.duration_ms),
            node.node_type.as_str(),
            node.status.as_str(),
            clip(&one_line(&node.name), 70)
        );
    }
    more(o, cp.hot_node_ids.len(), hot_shown);
}

/// The slowest steps, the failures, and with `full` the retries and changed files.
fn write_step_lists(o: &mut String, sum: &Summary, full: bool) {
    node_list(o, "Slowest steps", &sum.slowest_steps, 3, full, &|_| {
        String::new()
    });
    node_list(
        o,
        "Failures",
        &sum.failed_steps,
        SHORT_LIMITS.failures,
        full,
        &|r| match r.error.as_deref() {
            None | Some("") => String::new(),
            Some(e) => format!(" — {}", clip(&one_line(e), 100)),
        },
    );
    // Retries and changed files are counted in the header; listed with --full.
    let retries_shown = if full { usize::MAX } else { 0 };
    node_list(
        o,
        "Retries",
        &sum.retried_steps,
        retries_shown,
        full,
        &|r| format!(" ({} attempts)", r.attempts),
    );
    if full && !sum.files_changed.is_empty() {
        let _ = writeln!(o, "\nFiles changed:");
        for f in &sum.files_changed {
            let _ = writeln!(o, "  {f}");
        }
    }
}

/// One titled list of nodes (nothing when empty or `limit` is 0): at most `limit` unless
/// `full`, each with `extra`'s tail.
fn node_list(
    o: &mut String,
    title: &str,
    items: &[NodeRef],
    limit: usize,
    full: bool,
    extra: &dyn Fn(&NodeRef) -> String,
) {
    if items.is_empty() || limit == 0 {
        return;
    }
    let limit = if full { usize::MAX } else { limit };
    let _ = writeln!(o, "\n{title}:");
    for r in items.iter().take(limit) {
        let _ = writeln!(
            o,
            "  {:>9}  {:<8} {:<9} {}{}",
            duration(r.duration_ms),
            r.node_type.as_str(),
            r.status.as_str(),
            clip(&one_line(&r.name), 60),
            extra(r)
        );
    }
    more(o, items.len(), limit);
}

/// How many items each list of the default (short) summary shows.
pub struct ShortLimits {
    /// Hot steps of the critical path.
    pub hot: usize,
    /// Failures.
    pub failures: usize,
}

/// The default summary's limits (header ≤ 10 lines + path ≤ 8 + slowest 5 + failures ≤ 7 +
/// tools 2 + hint 2: ≤ 40 lines).
pub const SHORT_LIMITS: ShortLimits = ShortLimits {
    hot: 5,
    failures: 5,
};

/// `… N more` under a list cut at `shown` of `total` items.
fn more(o: &mut String, total: usize, shown: usize) {
    if total > shown {
        let _ = writeln!(o, "  … {} more (--full)", total - shown);
    }
}
