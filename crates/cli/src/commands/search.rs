//! `mindgate search`: every stored run's text through the store's search index (the same
//! search `GET /api/search`, MCP `search_events` and the viewer's Ctrl+K answer with).

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use mindgate_home::Home;
use mindgate_store::EventHit;

use super::export::open_store;
use super::tasks::clip;
use super::write_stdout;
use crate::args::SearchArgs;
use crate::db_arg::RunDb;

/// Most hits one search shows.
const MAX_HITS: u32 = 1_000;

/// Runs `mindgate search`.
pub fn run(args: &SearchArgs) -> anyhow::Result<ExitCode> {
    let query = args.query.trim();
    if query.is_empty() {
        bail!("the text to search for is empty");
    }
    if !(1..=MAX_HITS).contains(&args.limit) {
        bail!("--limit must be between 1 and {MAX_HITS}");
    }
    let db = RunDb::or_default(args.db.as_ref(), || Home::from_env().run_db());
    let store = open_store(&db)?;
    let hits = store
        .search_events(query, args.run.as_deref(), args.limit)
        .with_context(|| format!("cannot search {db}"))?;
    if args.json {
        let mut text = serde_json::to_string_pretty(&hits)?;
        text.push('\n');
        write_stdout(&text)?;
    } else if hits.is_empty() {
        write_stdout(&format!(
            "No stored event contains \"{}\" in {db}.\n",
            clip(query, 80)
        ))?;
    } else {
        write_stdout(&lines(&hits))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One hit per line: where it is, then its snippet with the match in `[…]`.
fn lines(hits: &[EventHit]) -> String {
    let mut out = String::new();
    for h in hits {
        let node = h.node_id.as_deref().unwrap_or("-");
        let _ = writeln!(
            out,
            "{}  seq {}  {}  {}\n    {}",
            h.run_id,
            h.seq,
            h.type_name,
            node,
            marked(h)
        );
    }
    out
}

/// The snippet with its match between brackets.
fn marked(hit: &EventHit) -> String {
    let Some([from, to]) = hit.mark else {
        return hit.snippet.clone();
    };
    let mut out = String::with_capacity(hit.snippet.len() + 2);
    for (i, c) in hit.snippet.chars().enumerate() {
        if i == from {
            out.push('[');
        }
        if i == to {
            out.push(']');
        }
        out.push(c);
    }
    if to >= hit.snippet.chars().count() {
        out.push(']');
    }
    out
}
