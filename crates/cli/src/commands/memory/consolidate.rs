//! `mindgate memory consolidate`: a thin view over `mindgate_memory::consolidate` (the
//! same core `POST /api/memory/sessions/:sessionId/consolidate` calls).

use std::process::ExitCode;

use mindgate_memory::consolidate::{self, ConsolidateOptions, ConsolidationReport};
use mindgate_memory::{Actor, MemoryItem};

use super::records::{item_line, open};
use crate::args::MemoryConsolidateArgs;

/// `mindgate memory consolidate`.
pub fn run(args: &MemoryConsolidateArgs) -> anyhow::Result<ExitCode> {
    let chat = consolidate::chat_from_env()?;
    let store = open(args.db.db.as_ref())?;
    let mut options = ConsolidateOptions::new(args.session.clone());
    options.user_id = args.user.clone();
    options.by = Actor::User;
    let report = consolidate::consolidate(&store, &chat, &options)?;
    if args.db.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", describe(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(r: &ConsolidationReport) -> String {
    let Some((first, last)) = r.sequences else {
        return format!(
            "session {} of {}: nothing new to consolidate since the last run",
            r.session_id, r.user_id
        );
    };
    let mut out = format!(
        "consolidated session {} of {} (messages {first}–{last}, {} chat calls to {}): {} episodes, {} facts, {} insights — all quarantined until validated (`mindgate memory quarantine --user {}`)",
        r.session_id,
        r.user_id,
        r.calls,
        r.model,
        r.episodes.len(),
        r.facts.len(),
        r.insights.len(),
        r.user_id
    );
    let items = r
        .episodes
        .iter()
        .cloned()
        .map(MemoryItem::Episode)
        .chain(r.facts.iter().cloned().map(MemoryItem::Fact))
        .chain(r.insights.iter().cloned().map(MemoryItem::Insight));
    for item in items {
        out.push_str(&format!("\n  {}", item_line(&item)));
        if let MemoryItem::Insight(i) = &item {
            out.push_str(&format!("\n      cites {}", i.cites.join(", ")));
        }
    }
    for s in &r.skipped {
        out.push_str(&format!("\n  skipped {}: {}", s.what, s.reason));
    }
    if r.more {
        out.push_str("\nmore messages wait: run it again to consolidate them");
    }
    out
}
