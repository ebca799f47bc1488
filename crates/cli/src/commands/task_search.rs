//! `mindgate tasks --search TEXT`: the sessions' texts that contain `TEXT`, through the session
//! search index in the Mindgate home
//! ([`SessionIndex`](mindgate_store::search::sessions::SessionIndex), the one `serve` and MCP
//! use; it is brought up to date with the sessions found first).

use std::process::ExitCode;

use anyhow::{Context, bail};
use mindgate_home::Home;
use mindgate_store::search::sessions::{MAX_SESSION_HITS, SessionHit, SessionIndex};
use mindgate_taskgraph::TaskSummary;

use super::tasks::{clip, discovery_config, one_line, scan};
use crate::args::TasksArgs;

/// Hits shown when `--limit` is not given.
const DEFAULT_HITS: usize = 50;

/// Finds the sessions as `mindgate tasks` does, searches them for `query` and prints the hits
/// (grouped by session) or, with `--json`, `{query, hits, indexed}`.
pub fn run(query: &str, args: &TasksArgs) -> anyhow::Result<ExitCode> {
    let config = discovery_config(&args.discovery);
    let tasks: Vec<TaskSummary> = scan(&config).into_iter().map(|(_, t)| t).collect();
    let (limit, json) = (args.limit, args.json);
    let query = query.trim();
    if query.is_empty() {
        bail!("--search: give the text to look for");
    }
    let limit = limit.unwrap_or(DEFAULT_HITS);
    if !(1..=MAX_SESSION_HITS).contains(&limit) {
        bail!("--limit {limit}: give 1 to {MAX_SESSION_HITS} with --search");
    }
    let path = Home::from_env().session_search_db();
    let index = SessionIndex::open(&path)
        .with_context(|| format!("cannot open the session search index {}", path.display()))?;
    let (indexed, hits) = index
        .search_current(query, &tasks, &config, limit)
        .context("session search failed")?;
    if json {
        let body = serde_json::json!({ "query": query, "hits": hits, "indexed": indexed });
        super::write_stdout(&(serde_json::to_string_pretty(&body)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    super::write_stdout(&render(query, &hits, limit))?;
    Ok(ExitCode::SUCCESS)
}

/// The hits grouped by session, in the order of their best hit.
fn render(query: &str, hits: &[SessionHit], limit: usize) -> String {
    if hits.is_empty() {
        return format!("No session text contains \"{query}\".\n");
    }
    let mut order: Vec<&str> = Vec::new();
    for h in hits {
        if !order.contains(&h.path.as_str()) {
            order.push(&h.path);
        }
    }
    let mut out = format!(
        "{} hit(s) for \"{query}\" in {} session(s){}:\n",
        hits.len(),
        order.len(),
        if hits.len() == limit {
            " (more with --limit)"
        } else {
            ""
        }
    );
    for path in order {
        let mut first = true;
        for h in hits.iter().filter(|h| h.path == path) {
            if first {
                out.push_str(&format!(
                    "\n{} [{}] {}\n",
                    clip(&h.session_id, 40),
                    h.agent,
                    clip(&one_line(&h.title), 80)
                ));
                first = false;
            }
            out.push_str(&format!(
                "  {:<11}  {}{}  {}\n",
                h.kind,
                h.node_id,
                h.turn
                    .as_deref()
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default(),
                clip(&one_line(&h.snippet), 140)
            ));
        }
    }
    out.push_str(
        "\nOpen one with `mindgate taskgraph <session id>`, or in the viewer's Tasks page.\n",
    );
    out
}
