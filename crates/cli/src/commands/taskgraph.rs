//! `mindgate taskgraph <PATH|ID>`: one coding-agent session as a task graph.
//!
//! `--json` prints the graph exactly as `build_graph` makes it (the body of
//! `/task-graph/api/task`); the default is a readable summary computed from that same JSON.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::read::dsh_session_file;
use mindgate_taskgraph::{DiscoveryConfig, SessionLocation, TaskGraph, detect_agent};
use serde_json::Value;

use super::tasks::{clip, datetime, discovery_config, duration, one_line, scan};
use crate::args::TaskgraphArgs;

/// Prints the task graph of one session.
pub fn run(args: &TaskgraphArgs) -> anyhow::Result<ExitCode> {
    let config = discovery_config(&args.discovery);
    let path = Path::new(&args.target);
    let loc = if path.is_dir() && dsh_session_file(path).is_none() {
        in_folder(path, &config)?
    } else if path.exists() {
        let agent = detect_agent(path)
            .with_context(|| format!("cannot read {} as a session", path.display()))?;
        SessionLocation {
            agent,
            path: path.to_path_buf(),
            workspace: None,
        }
    } else {
        locate(&args.target, &scan(&config))?
    };
    let (session, tree) =
        load_tree(&loc, &config).with_context(|| format!("cannot read {}", loc.path.display()))?;
    for w in &session.warnings {
        eprintln!("mindgate: warning: {w}");
    }
    if args.json {
        // Straight from the typed graph to stdout: no intermediate `Value` tree.
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &tree.graph)?;
        out.write_all(b"\n")?;
        out.flush()?;
        std::mem::forget(tree);
    } else {
        super::write_stdout(&summary(&summary_value(tree.graph)?, &loc))?;
    }
    // The process exits next: freeing ~100,000 events and ~35,000 nodes one by one would
    // only add time (the OS takes the memory back at once).
    std::mem::forget(session);
    Ok(ExitCode::SUCCESS)
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

/// The graph as JSON for [`summary`], without what the summary never reads: the edges and
/// every node that is not on the critical path (a 100,000-event session has ~35,000 nodes;
/// building a `Value` tree of all of them cost most of the command's time and memory).
fn summary_value(mut graph: TaskGraph) -> anyhow::Result<Value> {
    let on_path: HashSet<&str> = graph
        .critical_path
        .node_ids
        .iter()
        .chain(&graph.critical_path.hot_node_ids)
        .map(|id| id.as_str())
        .collect();
    let nodes: Vec<_> = graph
        .nodes
        .iter()
        .filter(|n| on_path.contains(n.id.as_str()))
        .cloned()
        .collect();
    // Not freed one by one: the process exits after the summary (see `run`).
    std::mem::forget(std::mem::replace(&mut graph.nodes, nodes));
    std::mem::forget(std::mem::take(&mut graph.edges));
    Ok(serde_json::to_value(&graph)?)
}

fn locate(
    id: &str,
    found: &[(SessionLocation, mindgate_taskgraph::TaskSummary)],
) -> anyhow::Result<SessionLocation> {
    if id.is_empty() {
        bail!("give a session file, folder or id (see `mindgate tasks`)");
    }
    if let Some((loc, _)) = found.iter().find(|(_, t)| t.id == id) {
        return Ok(loc.clone());
    }
    let hits: Vec<_> = found.iter().filter(|(_, t)| t.id.starts_with(id)).collect();
    match hits.as_slice() {
        [] => bail!(
            "no session with id `{id}` among {} found (see `mindgate tasks`; add folders with --sessions)",
            found.len()
        ),
        [(loc, _)] => Ok(loc.clone()),
        many => bail!(
            "`{id}` matches {} sessions: {}",
            many.len(),
            many.iter()
                .map(|(_, t)| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn n(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or_default()
}

fn thousands(x: i64) -> String {
    let digits = x.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0 { format!("-{out}") } else { out }
}

/// The readable summary of a graph's JSON.
pub fn summary(g: &Value, loc: &SessionLocation) -> String {
    let mut o = String::new();
    let nodes: HashMap<&str, &Value> = g["nodes"]
        .as_array()
        .map(|a| a.iter().map(|n| (s(n, "id"), n)).collect())
        .unwrap_or_default();
    let sum = &g["summary"];
    let counts = &sum["counts"];
    let _ = writeln!(o, "{}", one_line(s(g, "title")));
    let _ = writeln!(
        o,
        "  session   {}  ({}, {})",
        s(g, "session_id"),
        loc.agent,
        loc.path.display()
    );
    let _ = writeln!(o, "  workspace {}", s(g, "workspace"));
    let live = if g["meta"]["live"] == true {
        "  (live)"
    } else {
        ""
    };
    let _ = writeln!(o, "  status    {}{live}", s(g, "status"));
    let start = g["start_time"]
        .as_i64()
        .map_or_else(|| "-".to_owned(), |t| format!("{} UTC", datetime(t)));
    let _ = writeln!(
        o,
        "  duration  {}  (started {start})",
        duration(n(g, "duration_ms"))
    );
    let t = &sum["tokens"];
    let _ = writeln!(
        o,
        "  tokens    {} total: {} in, {} out, {} cache read",
        thousands(n(t, "total")),
        thousands(n(t, "input")),
        thousands(n(t, "output")),
        thousands(n(t, "cache_read"))
    );
    let count_names = [
        ("phases", "turn", "turns"),
        ("agents", "LLM step", "LLM steps"),
        ("tools", "tool", "tools"),
        ("skills", "skill", "skills"),
        ("subagents", "subagent", "subagents"),
        ("plans", "plan", "plans"),
        ("code_changes", "code change", "code changes"),
        ("tests", "test", "tests"),
        ("errors", "error", "errors"),
        ("retries", "retry", "retries"),
        ("files_changed", "file changed", "files changed"),
    ];
    let parts: Vec<String> = count_names
        .iter()
        .filter(|(k, _, _)| n(counts, k) > 0)
        .map(|(k, one, many)| {
            let c = n(counts, k);
            format!("{c} {}", if c == 1 { one } else { many })
        })
        .collect();
    let _ = writeln!(o, "  counts    {}", parts.join(", "));

    let cp = &g["critical_path"];
    let hot: Vec<&str> = cp["hot_node_ids"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "\nCritical path: {} of {} ({} nodes, {} hot)",
        duration(n(cp, "duration_ms")),
        duration(n(cp, "total_ms")),
        cp["node_ids"].as_array().map_or(0, Vec::len),
        hot.len()
    );
    for id in &hot {
        let Some(node) = nodes.get(id) else { continue };
        let _ = writeln!(
            o,
            "  {:>9}  {:<8} {:<9} {}",
            duration(n(node, "duration_ms")),
            s(node, "type"),
            s(node, "status"),
            clip(&one_line(s(node, "name")), 70)
        );
    }

    let list = |o: &mut String, title: &str, key: &str, extra: &dyn Fn(&Value) -> String| {
        let items = sum[key].as_array().cloned().unwrap_or_default();
        if items.is_empty() {
            return;
        }
        let _ = writeln!(o, "\n{title}:");
        for r in &items {
            let _ = writeln!(
                o,
                "  {:>9}  {:<8} {:<9} {}{}",
                duration(n(r, "duration_ms")),
                s(r, "type"),
                s(r, "status"),
                clip(&one_line(s(r, "name")), 60),
                extra(r)
            );
        }
    };
    list(&mut o, "Slowest steps", "slowest_steps", &|_| String::new());
    list(&mut o, "Failures", "failed_steps", &|r| {
        let e = s(r, "error");
        if e.is_empty() {
            String::new()
        } else {
            format!(" — {}", clip(&one_line(e), 100))
        }
    });
    list(&mut o, "Retries", "retried_steps", &|r| {
        format!(" ({} attempts)", n(r, "attempts"))
    });
    if let Some(files) = sum["files_changed"].as_array().filter(|f| !f.is_empty()) {
        let _ = writeln!(o, "\nFiles changed:");
        for f in files.iter().filter_map(Value::as_str) {
            let _ = writeln!(o, "  {f}");
        }
    }
    if let Some(tools) = sum["most_used_tools"].as_array().filter(|t| !t.is_empty()) {
        let parts: Vec<String> = tools
            .iter()
            .map(|t| format!("{} ×{}", s(t, "name"), n(t, "count")))
            .collect();
        let _ = writeln!(o, "\nTools: {}", parts.join(", "));
    }
    o
}
