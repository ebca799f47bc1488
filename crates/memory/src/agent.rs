//! The agent-facing memory operations, shared by every surface: the MCP tools
//! (`block_append`, `fact_remember`, `fact_search`, …), the HTTP API under `/api/memory/`
//! and the `mindgate memory` CLI all deserialize these argument types and call these
//! functions, so a rule (the default provenance, scope resolution, what a hit shows, the
//! viewer link) lives here once.
//!
//! Argument types use the Graphorin tools' camelCase names; their JSON Schemas (the MCP
//! tools' input schemas) are generated from them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::answer::{HitView, SearchAnswer};
use crate::backend::{Memory, MemoryDb};
use crate::config::OpenOptions;
use crate::error::{MemoryError, Result};
pub use crate::route::{encode_component, entity_route, viewer_route};
use crate::rules::listing::ItemFilter;
use crate::store::*;
use crate::types::*;

/// Default `topK` of the agent search tools.
pub const DEFAULT_TOP_K: usize = 10;
/// Largest `topK` of the agent search tools.
pub const MAX_TOP_K: usize = 100;

/// Owner scope of a tool call: `userId` (or the surface's default user), and optionally an
/// agent and a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeArgs {
    /// Whose memory (default: the server's `--memory-user`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The agent writing or reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The session (conversation) writing or reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl ScopeArgs {
    /// The scope, with `default_user` when no `userId` was given; refused without either.
    pub fn resolve(&self, default_user: Option<&str>) -> Result<Scope> {
        let user = self
            .user_id
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .or(default_user.filter(|u| !u.trim().is_empty()))
            .ok_or_else(|| {
                MemoryError::invalid(
                    "userId",
                    "required (or start the server with --memory-user NAME)",
                )
            })?;
        Ok(Scope {
            user_id: user.to_owned(),
            agent_id: self.agent_id.clone().filter(|a| !a.is_empty()),
            session_id: self.session_id.clone().filter(|s| !s.is_empty()),
        })
    }
}

impl ScopeArgs {
    /// Refuses a `userId` other than `bound`: a surface bound to one memory user (an MCP
    /// server started with `--memory-user`, the agent token on a server started with it)
    /// acts for that user only. `None` binds nothing.
    pub fn check_bound(&self, bound: Option<&str>) -> Result<()> {
        check_user_bound(self.user_id.as_deref(), bound)
    }
}

/// Refuses `user_id` (when given) if it is not `bound` (see [`ScopeArgs::check_bound`]).
pub fn check_user_bound(user_id: Option<&str>, bound: Option<&str>) -> Result<()> {
    match (user_id.filter(|u| !u.is_empty()), bound) {
        (Some(asked), Some(bound)) if asked != bound => Err(MemoryError::invalid(
            "userId",
            format!(
                "this memory surface acts for user {bound:?} only (--memory-user); \
                 other users' memories are out of its reach"
            ),
        )),
        _ => Ok(()),
    }
}

/// Refuses a record of another user than `bound` as not found (`None` binds nothing): a
/// bound surface cannot tell another user's ids from unknown ones.
pub fn check_owner(store: &Memory, id: &str, bound: Option<&str>) -> Result<()> {
    let Some(bound) = bound else {
        return Ok(());
    };
    let item = store.get_item(id)?;
    if item.record().user_id == bound {
        Ok(())
    } else {
        Err(MemoryError::not_found("record", id))
    }
}

/// `fact_remember`: a fact to store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RememberArgs {
    /// Scope.
    #[serde(flatten)]
    pub scope: ScopeArgs,
    /// The statement, in plain words.
    pub text: String,
    /// Subject of the subject/predicate/object triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Relation of the triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<String>,
    /// Object of the triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// When it became true (ISO-8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// When it stopped being true (ISO-8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    /// Salience hint in [0, 1] (neutral 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<f64>,
    /// Confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Where it came from (default: `user` when a person writes, `agent` when the agent
    /// does; an agent may not claim `user`). A fact distilled from a conversation is
    /// `extraction`: it lands quarantined until a person validates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<MemoryProvenance>,
}

/// Refuses an agent's write that claims provenance `user`: only a person's write (the
/// control token, the CLI) speaks with the person's voice (first-party rank in recall).
/// The agent surfaces (MCP tools, HTTP with the agent token) check every write with it.
pub fn check_voice(by: Actor, provenance: Option<MemoryProvenance>) -> Result<()> {
    if by != Actor::User && provenance == Some(MemoryProvenance::User) {
        return Err(MemoryError::invalid(
            "provenance",
            "an agent's write cannot claim `user` (a person's word); use `agent` (the default), \
             `tool` or `extraction`",
        ));
    }
    Ok(())
}

impl RememberArgs {
    /// The store input, written by `by` in `scope`; refused when an agent claims `user`
    /// provenance ([`check_voice`]).
    pub fn into_new_fact(self, scope: Scope, by: Actor) -> Result<NewFact> {
        check_voice(by, self.provenance)?;
        Ok(NewFact {
            meta: WriteMeta {
                scope,
                id: None,
                sensitivity: Sensitivity::default(),
                tags: self.tags,
                provenance: self.provenance.or(MemoryProvenance::default_for(by)),
                by,
            },
            text: self.text,
            subject: self.subject,
            predicate: self.predicate,
            object: self.object,
            confidence: self.confidence,
            importance: self.importance,
            valid_from: self.valid_from,
            valid_to: self.valid_to,
            context: None,
        })
    }
}

/// `fact_supersede`: replace a live fact by a new version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupersedeArgs {
    /// The fact to replace.
    pub old_id: String,
    /// Why it is replaced.
    pub reason: String,
    /// The new version (its scope defaults to the caller's).
    #[serde(flatten)]
    pub fact: RememberArgs,
}

/// `fact_forget`: tombstone a fact.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForgetArgs {
    /// The fact.
    pub id: String,
    /// Why it is forgotten.
    pub reason: String,
}

/// `fact_history`: a record's versions and ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdArgs {
    /// The record id.
    pub id: String,
}

/// `fact_validate`: promote a quarantined record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValidateArgs {
    /// The quarantined record.
    pub id: String,
    /// Promote even text that looks like an injected instruction (recorded in the ledger).
    #[serde(default)]
    pub force: bool,
}

/// `fact_reject`: tombstone a quarantined record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RejectArgs {
    /// The record.
    pub id: String,
    /// Why it is rejected.
    pub reason: String,
}

/// `fact_search`, `recall_episodes`, `conversation_search`, `procedure_search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecallArgs {
    /// Scope (a `sessionId` narrows the search to one session).
    #[serde(flatten)]
    pub scope: ScopeArgs,
    /// What to look for, in plain words.
    pub query: String,
    /// Hits to return (default 10, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<usize>,
    /// Only records carrying every one of these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Valid time: what was true at this instant (ISO-8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Transaction time: what the store held at this instant (ISO-8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_at: Option<String>,
}

impl RecallArgs {
    /// Search options of one kind, in the resolved scope (quarantined rows never included:
    /// the agent tools are the action-driving recall path).
    pub fn options(
        &self,
        default_user: Option<&str>,
        kind: MemoryKind,
    ) -> Result<MemorySearchOptions> {
        let scope = self.scope.resolve(default_user)?;
        let top_k = self.top_k.unwrap_or(DEFAULT_TOP_K);
        if top_k == 0 || top_k > MAX_TOP_K {
            return Err(MemoryError::invalid(
                "topK",
                format!("between 1 and {MAX_TOP_K}"),
            ));
        }
        Ok(MemorySearchOptions {
            query: self.query.clone(),
            top_k: Some(top_k),
            tags: self.tags.clone(),
            as_of: self.as_of.clone(),
            known_at: self.known_at.clone(),
            user_id: Some(scope.user_id),
            agent_id: scope.agent_id,
            session_id: scope.session_id,
            kinds: Some(vec![kind]),
            ..MemorySearchOptions::default()
        })
    }
}

/// `block_append`: add text to the end of a working block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockAppendArgs {
    /// Scope.
    #[serde(flatten)]
    pub scope: ScopeArgs,
    /// The block's label.
    pub label: String,
    /// Text to append (include any separator you want, e.g. a leading newline).
    pub text: String,
}

/// `block_replace`: replace the first occurrence of a text in a working block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockReplaceArgs {
    /// Scope.
    #[serde(flatten)]
    pub scope: ScopeArgs,
    /// The block's label.
    pub label: String,
    /// The exact text to find.
    pub old: String,
    /// What to put in its place.
    pub new: String,
}

/// `block_rethink`: rewrite a working block's whole value (created when missing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockRethinkArgs {
    /// Scope.
    #[serde(flatten)]
    pub scope: ScopeArgs,
    /// The block's label.
    pub label: String,
    /// The new value.
    pub value: String,
    /// What the block is for (kept when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Character limit (kept when absent; default 2000 for a new block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub char_limit: Option<u32>,
}

/// `memory_status`: the user's counters and the active embedder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusArgs {
    /// Scope.
    #[serde(flatten)]
    pub scope: ScopeArgs,
}

/// What `memory_status` and `GET /api/memory/metadata` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    /// The user.
    pub user_id: String,
    /// Tier counters.
    pub metadata: MemoryMetadata,
    /// Live records of the user waiting in quarantine.
    pub quarantined: u64,
    /// The active embedder's id, if any (none: lexical search only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedder: Option<String>,
    /// The embedder the stored vectors belong to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_embedder: Option<String>,
}

/// `fact_remember`, under the conflict rule ([`crate::rules::conflicts::remember`]): a
/// fact whose provenance is not a person's that contradicts an active fact lands
/// quarantined, and its conflicts are stored with it (`conflictsWith`).
pub fn remember(
    store: &Memory,
    args: RememberArgs,
    default_user: Option<&str>,
    by: Actor,
) -> Result<Fact> {
    let scope = args.scope.resolve(default_user)?;
    let extra = &store.config().single_valued_predicates;
    crate::rules::conflicts::remember(store, args.into_new_fact(scope, by)?, extra)
}

/// A validation of a quarantined record; a validated fact's conflicts with the active facts
/// are found again and stored with it (`conflictsWith`, [`crate::rules::conflicts`]).
pub fn validate(store: &Memory, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
    let mut item = store.validate(id, force, by)?;
    if let MemoryItem::Fact(fact) = &mut item {
        let extra = &store.config().single_valued_predicates;
        crate::rules::conflicts::detect(store, fact, extra, by)?;
    }
    Ok(item)
}

/// `fact_supersede`: the new version inherits the old fact's owner unless told otherwise.
/// One that is not a person's of a person's fact is held for a person instead of
/// superseding it ([`crate::rules::conflicts::held_on_supersede`]: quarantined, with
/// `conflictsWith = [oldId]` and no `supersedes`).
pub fn supersede(
    store: &Memory,
    args: SupersedeArgs,
    default_user: Option<&str>,
    by: Actor,
) -> Result<Fact> {
    let old = store.semantic().get(&args.old_id)?;
    let scope = args
        .fact
        .scope
        .resolve(default_user.or(Some(old.record.user_id.as_str())))?;
    let reason = args.reason.clone();
    store
        .semantic()
        .supersede(&args.old_id, args.fact.into_new_fact(scope, by)?, &reason)
}

/// A search through the agent tools (one kind) by `by`, as hit views (the hits are
/// recalled by `by`: see [`crate::recall`]).
pub fn recall(
    store: &Memory,
    args: &RecallArgs,
    default_user: Option<&str>,
    kind: MemoryKind,
    by: Actor,
) -> Result<SearchAnswer> {
    let mut options = args.options(default_user, kind)?;
    options.recall_by = Some(by);
    crate::answer::answer(store, &options)
}

/// Any search (the HTTP API and the CLI: every option): its hits as views, the time
/// filters it applied and why nothing came back ([`crate::answer`]).
pub fn search(store: &Memory, options: &MemorySearchOptions) -> Result<SearchAnswer> {
    crate::answer::answer(store, options)
}

/// `block_append`.
pub fn block_append(
    store: &Memory,
    args: &BlockAppendArgs,
    default_user: Option<&str>,
    by: Actor,
) -> Result<Block> {
    let scope = args.scope.resolve(default_user)?;
    store
        .working()
        .append(&scope.user_id, &args.label, &args.text, by)
}

/// `block_replace`.
pub fn block_replace(
    store: &Memory,
    args: &BlockReplaceArgs,
    default_user: Option<&str>,
    by: Actor,
) -> Result<Block> {
    let scope = args.scope.resolve(default_user)?;
    store
        .working()
        .replace(&scope.user_id, &args.label, &args.old, &args.new, by)
}

/// `block_rethink`: the block keeps its description and limit unless new ones are given.
pub fn block_rethink(
    store: &Memory,
    args: &BlockRethinkArgs,
    default_user: Option<&str>,
    by: Actor,
) -> Result<Block> {
    let scope = args.scope.resolve(default_user)?;
    let current = match store.working().get(&scope.user_id, &args.label) {
        Ok(b) => Some(b),
        Err(MemoryError::NotFound { .. }) => None,
        Err(e) => return Err(e),
    };
    store.working().upsert(NewBlock {
        label: args.label.clone(),
        description: args
            .description
            .clone()
            .or_else(|| current.as_ref().and_then(|b| b.description.clone())),
        value: args.value.clone(),
        char_limit: args.char_limit.or(current.as_ref().map(|b| b.char_limit)),
        read_only: false,
        by,
        scope,
    })
}

/// A record's history: every version of a fact (its supersession chain) and the ledger of
/// all of them; for other records, the record and its ledger.
pub fn history(store: &Memory, id: &str) -> Result<RecordHistory> {
    let item = store.get_item(id)?;
    if let MemoryItem::Fact(_) = item {
        let h = store.semantic().history(id)?;
        return Ok(RecordHistory {
            chain: h.chain.into_iter().map(MemoryItem::Fact).collect(),
            events: h.events,
        });
    }
    Ok(RecordHistory {
        events: store.ledger(id)?,
        chain: vec![item],
    })
}

/// A record's versions and ledger (see [`history`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordHistory {
    /// Every version, oldest first.
    pub chain: Vec<MemoryItem>,
    /// Every ledger row about any version, in order.
    pub events: Vec<HistoryEntry>,
}

/// `memory_status`.
pub fn status(store: &Memory, user_id: &str) -> Result<StatusView> {
    let quarantined = store
        .quarantine_queue(Some(user_id), Some(crate::rules::listing::MAX_LIST))?
        .len();
    Ok(StatusView {
        user_id: user_id.to_owned(),
        metadata: store.metadata(user_id)?,
        quarantined: quarantined as u64,
        embedder: store.embedder_id().map(str::to_owned),
        stored_embedder: store.stored_embedder()?,
    })
}

/// Records of a kind (live, not superseded) of one user, for the inspector.
pub fn list_kind(
    store: &Memory,
    user_id: &str,
    kind: MemoryKind,
    include_quarantined: bool,
    limit: Option<usize>,
) -> Result<Vec<MemoryItem>> {
    store.list_items(&ItemFilter {
        user_id: Some(user_id.to_owned()),
        kind: Some(kind),
        status: (!include_quarantined).then_some(MemoryStatus::Active),
        limit,
        ..ItemFilter::default()
    })
}

/// A stable machine-readable code for an error (the `code` of HTTP and MCP errors).
pub fn error_code(e: &MemoryError) -> &'static str {
    match e {
        MemoryError::Invalid { .. } => "bad_argument",
        MemoryError::NotFound { .. } => "not_found",
        MemoryError::Duplicate(_) => "duplicate",
        MemoryError::ReadOnlyBlock { .. } => "read_only",
        MemoryError::OverLimit { .. } => "over_limit",
        MemoryError::Flagged(_) | MemoryError::FlaggedBlock { .. } => "flagged",
        MemoryError::Conflict(_) => "conflict",
        MemoryError::NotInducible { .. } => "not_inducible",
        MemoryError::EmbedderMismatch { .. } => "embedder_mismatch",
        MemoryError::Embed(_) => "embedder_failed",
        MemoryError::SchemaTooNew { .. } => "schema_too_new",
        MemoryError::Sqlite(_) | MemoryError::Postgres(_) | MemoryError::Io { .. } => {
            "storage_failed"
        }
        MemoryError::PostgresConnect { .. } => "storage_unreachable",
    }
}

/// Whether the error is the caller's (bad input, unknown id, a state conflict) rather than
/// the store's.
pub fn is_caller_error(e: &MemoryError) -> bool {
    !matches!(
        e,
        MemoryError::Embed(_)
            | MemoryError::SchemaTooNew { .. }
            | MemoryError::Sqlite(_)
            | MemoryError::Postgres(_)
            | MemoryError::PostgresConnect { .. }
            | MemoryError::Io { .. }
            | MemoryError::EmbedderMismatch { .. }
    )
}

/// Opens a memory store (an SQLite file or a PostgreSQL database) with the embedder the
/// home and the environment select (`mindgate-embed`'s rule: builtin unless a model is
/// imported or configured).
pub fn open_with_selected_embedder(home: &Path, db: &MemoryDb) -> Result<Memory> {
    let config = mindgate_embed::EmbedderConfig::from_env(home)?;
    let embedder = mindgate_embed::select(&config)?;
    let mut options = OpenOptions::default().embedder(Arc::from(embedder));
    options.config.single_valued_predicates = single_valued_from_env();
    Memory::open(db, options)
}

/// The single-valued predicates `MINDGATE_MEMORY_SINGLE_VALUED` adds to the defaults
/// (comma-separated; empty items dropped).
pub fn single_valued_from_env() -> Vec<String> {
    std::env::var("MINDGATE_MEMORY_SINGLE_VALUED")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A memory store opened on first use and then shared (the server's HTTP routes and its
/// `/mcp` tools hold one; `mindgate mcp` holds its own). A failed open (an unreachable
/// PostgreSQL server too) is retried on the next use, so fixing the cause (importing the
/// model, re-embedding, starting the database) needs no restart.
pub struct LazyMemory {
    home: PathBuf,
    db: MemoryDb,
    slot: Mutex<Option<Arc<Memory>>>,
}

impl std::fmt::Debug for LazyMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyMemory")
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}

impl LazyMemory {
    /// The store at `db`, with the embedder selected from `home` and the environment.
    pub fn new(home: &Path, db: MemoryDb) -> Self {
        Self {
            home: home.to_path_buf(),
            db,
            slot: Mutex::new(None),
        }
    }

    /// An already open store.
    pub fn ready(store: Arc<Memory>) -> Self {
        Self {
            home: PathBuf::new(),
            db: MemoryDb::Sqlite(PathBuf::new()),
            slot: Mutex::new(Some(store)),
        }
    }

    /// Where the store is.
    pub fn db(&self) -> &MemoryDb {
        &self.db
    }

    /// The store, opening it if needed (blocking: call from a blocking context).
    pub fn get(&self) -> Result<Arc<Memory>> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let store = Arc::new(open_with_selected_embedder(&self.home, &self.db)?);
        *slot = Some(store.clone());
        Ok(store)
    }
}
