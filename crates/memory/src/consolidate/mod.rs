//! Consolidation: a chat model turns a session's messages into an episode summary,
//! subject/predicate/object facts (provenance `extraction`) and reflection insights that
//! cite the facts, episodes and messages they rest on (provenance `reflection`). Every one
//! lands quarantined (the trust gate's rule for derived provenance) until a person
//! validates it.
//!
//! Off unless a chat model is configured ([`chat::config_from_env`]). The prompts live in
//! [`prompts`]; completions are read defensively ([`parse`]): a completion without the
//! JSON asked for refuses the whole consolidation, a bad item inside a good one is skipped
//! and reported. Nothing is written until every call has answered, and then everything in
//! one transaction, with the session's mark (the last message consolidated): running it
//! again consolidates only the messages pushed since.
//!
//! The core is synchronous (the store and [`OpenAiChat`] block); the server runs it on a
//! blocking task, the CLI calls it directly.

pub mod chat;
pub mod error;
pub mod parse;
pub mod prompts;

use std::collections::HashMap;

use serde::Serialize;

pub use chat::{ChatConfig, ChatMessage, ChatModel, ChatRole, OpenAiChat};
pub use error::ConsolidateError;
pub use parse::Skipped;

use crate::backend::Memory;
use crate::error::MemoryError;
use crate::rules::consolidation::ConsolidationBatch;
use crate::rules::row::mint_id;
use crate::store::{MemoryStore, SessionMemory};
use crate::types::*;

/// Default most messages in one extraction call (longer sessions are chunked).
pub const DEFAULT_MESSAGES_PER_CALL: usize = 40;
/// Default most characters of transcript in one extraction call.
pub const DEFAULT_CHARS_PER_CALL: usize = 24_000;
/// Default most messages one consolidation reads (the rest wait for the next run).
pub const DEFAULT_MAX_MESSAGES: usize = 2_000;
/// Most facts the reflection call reads.
pub const MAX_REFLECTION_FACTS: usize = 200;
/// The tag on every record consolidation writes.
pub const CONSOLIDATION_TAG: &str = "consolidation";

/// What to consolidate, and the bounds.
#[derive(Debug, Clone)]
pub struct ConsolidateOptions {
    /// The session.
    pub session_id: String,
    /// Whose session (a session id is per user); unset: the one user with messages in a
    /// session of that id (several: refused, name one).
    pub user_id: Option<String>,
    /// Most messages in one extraction call.
    pub messages_per_call: usize,
    /// Most characters of transcript in one extraction call (a longer message is cut).
    pub chars_per_call: usize,
    /// Most messages read by one consolidation.
    pub max_messages: usize,
    /// Who asked (for the ledger).
    pub by: Actor,
}

impl ConsolidateOptions {
    /// The default bounds for a session.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            user_id: None,
            messages_per_call: DEFAULT_MESSAGES_PER_CALL,
            chars_per_call: DEFAULT_CHARS_PER_CALL,
            max_messages: DEFAULT_MAX_MESSAGES,
            by: Actor::Agent,
        }
    }
}

/// What a consolidation did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsolidationReport {
    /// The session.
    pub session_id: String,
    /// Its owner.
    pub user_id: String,
    /// The chat model asked.
    pub model: String,
    /// Messages consolidated by this run (0: nothing new since the last one).
    pub messages: usize,
    /// First and last sequence consolidated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequences: Option<(u64, u64)>,
    /// Whether more messages wait (over the per-run bound): run it again.
    pub more: bool,
    /// Chat calls made.
    pub calls: usize,
    /// Episodes written (quarantined).
    pub episodes: Vec<Episode>,
    /// Facts written (quarantined, provenance `extraction`).
    pub facts: Vec<Fact>,
    /// Insights written (quarantined, provenance `reflection`), with their citations.
    pub insights: Vec<Insight>,
    /// What the completions held that was not stored, and why.
    pub skipped: Vec<Skipped>,
}

/// The chat model the environment configures: `NotConfigured` when none is, the
/// configuration's error when it is malformed.
pub fn chat_from_env() -> Result<OpenAiChat, ConsolidateError> {
    let config = chat::config_from_env().ok_or(ConsolidateError::NotConfigured)??;
    OpenAiChat::new(config)
}

/// Consolidates a session's messages not consolidated yet (see the module docs).
pub fn consolidate(
    store: &Memory,
    chat: &dyn ChatModel,
    options: &ConsolidateOptions,
) -> Result<ConsolidationReport, ConsolidateError> {
    let session_id = options.session_id.as_str();
    if options.messages_per_call == 0 || options.chars_per_call == 0 || options.max_messages == 0 {
        return Err(MemoryError::Invalid {
            field: "options",
            reason: "the per-call and per-run bounds must be positive".to_owned(),
        }
        .into());
    }
    let owner = session_owner(store, session_id, options.user_id.as_deref())?;
    if store
        .session()
        .list(&owner, session_id, None, Some(1))?
        .is_empty()
    {
        return Err(not_found(session_id));
    }
    let mark = store.consolidation_mark(&owner, session_id)?;
    let mut messages =
        store
            .session()
            .list(&owner, session_id, mark, Some(options.max_messages + 1))?;
    let more = messages.len() > options.max_messages;
    messages.truncate(options.max_messages);
    let mut report = ConsolidationReport {
        session_id: session_id.to_owned(),
        user_id: owner.clone(),
        model: chat.model().to_owned(),
        messages: messages.len(),
        sequences: None,
        more,
        calls: 0,
        episodes: Vec::new(),
        facts: Vec::new(),
        insights: Vec::new(),
        skipped: Vec::new(),
    };
    let (Some(first), Some(last)) = (messages.first(), messages.last()) else {
        return Ok(report);
    };
    report.sequences = Some((first.sequence, last.sequence));
    let new_mark = last.sequence;
    let minter = Minter {
        scope: Scope {
            user_id: owner,
            agent_id: None,
            session_id: Some(session_id.to_owned()),
        },
        by: options.by,
    };
    let message_ids: HashMap<String, String> = messages
        .iter()
        .map(|m| (prompts::message_label(m.sequence), m.record.id.clone()))
        .collect();
    let (episodes, facts) = extract(chat, options, &minter, &messages, &message_ids, &mut report)?;
    let insights = reflect(chat, &minter, &episodes, &facts, message_ids, &mut report)?;
    let written = store.write_consolidation(ConsolidationBatch {
        session_id: session_id.to_owned(),
        user_id: report.user_id.clone(),
        seen_mark: mark,
        new_mark,
        episodes,
        facts,
        insights,
    })?;
    report.episodes = written.episodes;
    report.facts = written.facts;
    report.insights = written.insights;
    Ok(report)
}

/// The write fields of every record one consolidation derives: the session's scope, the
/// consolidation tag, a fresh id and who asked.
struct Minter {
    scope: Scope,
    by: Actor,
}

impl Minter {
    fn meta(&self, provenance: MemoryProvenance, prefix: &str) -> WriteMeta {
        WriteMeta {
            scope: self.scope.clone(),
            id: Some(mint_id(prefix)),
            sensitivity: Sensitivity::default(),
            tags: vec![CONSOLIDATION_TAG.to_owned()],
            provenance: Some(provenance),
            by: self.by,
        }
    }
}

/// The extraction calls, one per chunk of the transcript: the episodes and facts they
/// found (an error when there are none at all).
fn extract(
    chat: &dyn ChatModel,
    options: &ConsolidateOptions,
    minter: &Minter,
    messages: &[SessionMessage],
    message_ids: &HashMap<String, String>,
    report: &mut ConsolidationReport,
) -> Result<(Vec<NewEpisode>, Vec<NewFact>), ConsolidateError> {
    let mut episodes = Vec::new();
    let mut facts = Vec::new();
    for chunk in chunks(messages, options.messages_per_call, options.chars_per_call) {
        let texts: Vec<String> = chunk
            .iter()
            .map(|m| cut(&m.content.plain_text(), options.chars_per_call))
            .collect();
        let lines: Vec<prompts::TranscriptLine<'_>> = chunk
            .iter()
            .zip(&texts)
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(m, text)| prompts::TranscriptLine {
                sequence: m.sequence,
                role: m.role.as_str(),
                text,
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        report.calls += 1;
        let completion = chat.complete(&prompts::extraction(&lines))?;
        let extraction =
            parse::extraction(&completion, report.calls, message_ids, &mut report.skipped)?;
        if let (Some(summary), Some(start), Some(end)) =
            (extraction.summary, chunk.first(), chunk.last())
        {
            episodes.push(NewEpisode {
                meta: minter.meta(MemoryProvenance::Extraction, "episode"),
                summary,
                started_at: start.record.created_at.clone(),
                ended_at: end.record.created_at.clone(),
                importance: None,
            });
        }
        for f in extraction.facts {
            facts.push(NewFact {
                meta: minter.meta(MemoryProvenance::Extraction, "fact"),
                text: f.text,
                subject: f.subject,
                predicate: f.predicate,
                object: f.object,
                confidence: None,
                importance: f.importance,
                valid_from: None,
                valid_to: None,
                context: None,
            });
        }
    }
    if episodes.is_empty() && facts.is_empty() {
        return Err(nothing_usable(&report.skipped));
    }
    Ok((episodes, facts))
}

/// Why a consolidation whose completions held no summary and no fact is refused.
fn nothing_usable(skipped: &[Skipped]) -> ConsolidateError {
    let why = skipped
        .iter()
        .map(|s| format!("{}: {}", s.what, s.reason))
        .collect::<Vec<_>>()
        .join("; ");
    ConsolidateError::Completion(if why.is_empty() {
        "the completions held no summary and no fact".to_owned()
    } else {
        format!("the completions held nothing usable ({why})")
    })
}

/// The reflection call: insights over the episodes and (at most
/// [`MAX_REFLECTION_FACTS`]) facts, citing them or the session's messages by label.
fn reflect(
    chat: &dyn ChatModel,
    minter: &Minter,
    episodes: &[NewEpisode],
    facts: &[NewFact],
    mut records: HashMap<String, String>,
    report: &mut ConsolidationReport,
) -> Result<Vec<NewInsight>, ConsolidateError> {
    let record_id = |m: &WriteMeta| m.id.clone().unwrap_or_default();
    for (i, e) in episodes.iter().enumerate() {
        records.insert(prompts::episode_label(i), record_id(&e.meta));
    }
    let read = facts.len().min(MAX_REFLECTION_FACTS);
    for (i, f) in facts.iter().take(read).enumerate() {
        records.insert(prompts::fact_label(i), record_id(&f.meta));
    }
    let summaries: Vec<&str> = episodes.iter().map(|e| e.summary.as_str()).collect();
    let fact_texts: Vec<&str> = facts.iter().take(read).map(|f| f.text.as_str()).collect();
    report.calls += 1;
    let completion = chat.complete(&prompts::reflection(&summaries, &fact_texts))?;
    Ok(
        parse::reflection(&completion, &records, &mut report.skipped)?
            .into_iter()
            .map(|found| NewInsight {
                meta: minter.meta(MemoryProvenance::Reflection, "insight"),
                text: found.text,
                cites: found.cites,
            })
            .collect(),
    )
}

/// Whose session to consolidate: the user asked for, else the one user with messages in a
/// session of that id (a session id is per user: with several, the caller must name one).
fn session_owner(
    store: &Memory,
    session_id: &str,
    asked: Option<&str>,
) -> Result<String, ConsolidateError> {
    if let Some(user) = asked.filter(|u| !u.is_empty()) {
        return Ok(user.to_owned());
    }
    let messages = store.list_items(&crate::rules::listing::ItemFilter {
        session_id: Some(session_id.to_owned()),
        kind: Some(MemoryKind::Session),
        limit: Some(crate::rules::listing::MAX_LIST),
        ..crate::rules::listing::ItemFilter::default()
    })?;
    let mut users: Vec<String> = messages
        .iter()
        .map(|m| m.record().user_id.clone())
        .collect();
    users.sort();
    users.dedup();
    match users.as_slice() {
        [] => Err(not_found(session_id)),
        [one] => Ok(one.clone()),
        several => Err(MemoryError::Invalid {
            field: "userId",
            reason: format!(
                "session {session_id} exists for several users ({}): name the user",
                several.join(", ")
            ),
        }
        .into()),
    }
}

fn not_found(session_id: &str) -> ConsolidateError {
    MemoryError::NotFound {
        what: "session with messages",
        id: session_id.to_owned(),
    }
    .into()
}

/// Splits messages into runs of at most `per_call` messages and about `chars` characters
/// (a run holds at least one message).
fn chunks(messages: &[SessionMessage], per_call: usize, chars: usize) -> Vec<&[SessionMessage]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, m) in messages.iter().enumerate() {
        let len = m.content.plain_text().chars().count().min(chars);
        if i > start && (i - start >= per_call || size + len > chars) {
            out.push(&messages[start..i]);
            start = i;
            size = 0;
        }
        size += len;
    }
    if start < messages.len() {
        out.push(&messages[start..]);
    }
    out
}

/// At most `max` characters of `text`, marked when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
