//! `mindgate memory status|search|remember|show|history|quarantine|validate|reject`: thin
//! views over `mindgate_memory::agent` (the same operations the MCP tools and the HTTP
//! API call). Changes made here are recorded in the ledger as by `user`: a person.

use std::process::ExitCode;

use anyhow::Context;
use mindgate_home::Home;
use mindgate_memory::agent::{self, HitView, RememberArgs, ScopeArgs};
use mindgate_memory::{
    Actor, Memory, MemoryDb, MemoryItem, MemoryKind, MemoryProvenance, MemorySearchOptions,
    MemoryStore, SearchMode,
};
use serde::Serialize;

use crate::args::{
    MemoryDbArgs, MemoryIdArgs, MemoryQuarantineArgs, MemoryRejectArgs, MemoryRememberArgs,
    MemorySearchArgs, MemoryUserArgs, MemoryValidateArgs,
};

/// Opens the memory store of `db` (default `$MINDGATE_HOME/memory.db`) with the selected
/// embedder.
pub fn open(db: Option<&MemoryDb>) -> anyhow::Result<Memory> {
    let home = Home::from_env();
    let db = db
        .cloned()
        .unwrap_or_else(|| MemoryDb::Sqlite(home.memory_db()));
    agent::open_with_selected_embedder(home.root(), &db)
        .with_context(|| format!("opening the memory store {db}"))
}

/// Prints `value` as JSON when asked, else the text `describe` makes.
pub fn emit<T: Serialize>(
    db: &MemoryDbArgs,
    value: &T,
    describe: impl FnOnce(&T) -> String,
) -> anyhow::Result<ExitCode> {
    if db.json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        println!("{}", describe(value));
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn item_line(item: &MemoryItem) -> String {
    let r = item.record();
    let t = item.trust();
    let mut state = t.status.map_or("active", |s| s.as_str()).to_owned();
    if r.deleted_at.is_some() {
        state = format!(
            "deleted ({})",
            t.delete_reason.as_deref().unwrap_or("no reason")
        );
    } else if let MemoryItem::Fact(f) = item
        && f.superseded_by.is_some()
    {
        state = "superseded".to_owned();
    }
    let provenance = t.provenance.map_or("first-party", |p| p.as_str());
    let mut line = format!(
        "{} [{}] {} — {provenance}, {state}",
        r.id,
        r.kind,
        item.text()
    );
    if let Some(reason) = &t.quarantine_reason
        && t.status == Some(mindgate_memory::MemoryStatus::Quarantined)
    {
        line.push_str(&format!(" (quarantined: {reason})"));
    }
    line
}

fn hit_lines(hits: &[HitView]) -> String {
    if hits.is_empty() {
        return "no hits".to_owned();
    }
    hits.iter()
        .enumerate()
        .map(|(i, h)| {
            let signals = h.signals_text();
            format!(
                "{:>2}. {:.4} {}\n    {signals}",
                i + 1,
                h.score,
                item_line(&h.record)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `mindgate memory status`.
pub fn status(args: &MemoryUserArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let s = agent::status(&store, &args.user)?;
    emit(&args.db, &s, |s| {
        let m = &s.metadata;
        format!(
            "memory of {}: {} facts, {} episodes, {} messages, {} rules, {} blocks; {} waiting in quarantine\nembedder: {} (stored vectors: {})",
            s.user_id,
            m.fact_count,
            m.episode_count,
            m.message_count,
            m.active_rule_count,
            m.working_block_count,
            s.quarantined,
            s.embedder.as_deref().unwrap_or("none"),
            s.stored_embedder.as_deref().unwrap_or("none yet")
        )
    })
}

/// `mindgate memory search`.
pub fn search(args: &MemorySearchArgs) -> anyhow::Result<ExitCode> {
    let kinds = if args.kinds.is_empty() {
        None
    } else {
        Some(
            args.kinds
                .iter()
                .map(|k| {
                    MemoryKind::parse(k.trim()).with_context(|| {
                        format!(
                            "unknown kind {k:?} (semantic, episodic, procedural, insight, session)"
                        )
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?,
        )
    };
    let mode = match args.mode.as_deref() {
        None => None,
        Some("hybrid") => Some(SearchMode::Hybrid),
        Some("lexical") => Some(SearchMode::Lexical),
        Some("vector") => Some(SearchMode::Vector),
        Some(other) => anyhow::bail!("unknown mode {other:?} (hybrid, lexical, vector)"),
    };
    let options = MemorySearchOptions {
        top_k: Some(args.top_k),
        tags: (!args.tags.is_empty()).then(|| args.tags.clone()),
        as_of: args.as_of.clone(),
        known_at: args.known_at.clone(),
        include_quarantined: Some(args.include_quarantined),
        include_archived: Some(args.include_archived),
        kinds,
        mode,
        // A person's search at the terminal recalls as `user` (`mindgate_memory::recall`).
        recall_by: Some(Actor::User),
        ..MemorySearchOptions::new(args.user.clone(), args.query.clone())
    };
    let store = open(args.db.db.as_ref())?;
    let answer = agent::search(&store, &options)?;
    if let Some(why) = &answer.empty_because {
        eprintln!("no hits: {why}");
    }
    emit(&args.db, &answer.hits, |h| hit_lines(h))
}

/// `mindgate memory remember`.
pub fn remember(args: &MemoryRememberArgs) -> anyhow::Result<ExitCode> {
    let provenance = MemoryProvenance::parse(&args.provenance).with_context(|| {
        format!(
            "unknown provenance {:?} (user, tool, extraction, reflection, induction, imported, agent)",
            args.provenance
        )
    })?;
    let remember = RememberArgs {
        scope: ScopeArgs {
            user_id: Some(args.user.clone()),
            ..ScopeArgs::default()
        },
        text: args.text.clone(),
        subject: args.subject.clone(),
        predicate: args.predicate.clone(),
        object: args.object.clone(),
        valid_from: args.valid_from.clone(),
        valid_to: args.valid_to.clone(),
        importance: args.importance,
        confidence: None,
        tags: args.tags.clone(),
        provenance: Some(provenance),
    };
    let store = open(args.db.db.as_ref())?;
    let fact = agent::remember(&store, remember, None, Actor::User)?;
    emit(&args.db, &fact, |f| {
        format!("remembered {}", item_line(&MemoryItem::Fact(f.clone())))
    })
}

/// `mindgate memory show`.
pub fn show(args: &MemoryIdArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let item = store.get_item(&args.id)?;
    let link = agent::viewer_route(item.record().kind, item.id());
    let value = serde_json::json!({ "record": item, "link": link });
    emit(&args.db, &value, |_| {
        format!("{}\nviewer: {link}", item_line(&item))
    })
}

/// `mindgate memory history`.
pub fn history(args: &MemoryIdArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let h = agent::history(&store, &args.id)?;
    emit(&args.db, &h, |h| {
        let mut out = format!("{} version(s):", h.chain.len());
        for v in &h.chain {
            out.push_str(&format!("\n  {}", item_line(v)));
        }
        out.push_str(&format!("\n{} change(s):", h.events.len()));
        for e in &h.events {
            let reason = e
                .reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "\n  #{} {} {} {} by {}{reason}",
                e.seq, e.at, e.action, e.subject_id, e.actor
            ));
        }
        out
    })
}

/// `mindgate memory quarantine`.
pub fn quarantine(args: &MemoryQuarantineArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let items = store.quarantine_queue(args.user.as_deref(), Some(args.limit))?;
    emit(&args.db, &items, |items| {
        if items.is_empty() {
            return "the quarantine queue is empty".to_owned();
        }
        let mut out = format!(
            "{} record(s) waiting (validate with `mindgate memory validate ID`, reject with `mindgate memory reject ID --reason …`):",
            items.len()
        );
        for i in items {
            out.push_str(&format!("\n  {}", item_line(i)));
        }
        out
    })
}

/// `mindgate memory validate`.
pub fn validate(args: &MemoryValidateArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    let item = agent::validate(&store, &args.id, args.force, Actor::User)?;
    emit(&args.db, &item, |i| format!("validated {}", item_line(i)))
}

/// `mindgate memory reject`.
pub fn reject(args: &MemoryRejectArgs) -> anyhow::Result<ExitCode> {
    let store = open(args.db.db.as_ref())?;
    store.reject(&args.id, &args.reason, Actor::User)?;
    let value = serde_json::json!({ "id": args.id, "rejected": true });
    emit(&args.db, &value, |_| {
        format!("rejected {} ({})", args.id, args.reason)
    })
}
