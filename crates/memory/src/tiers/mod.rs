//! The item tiers (session, episodic, semantic, procedural, shared, insights) and the write of a
//! consolidation, once for both backends: each rule runs over a backend's
//! `memory_items` statements ([`ItemTable`]) inside its write transaction, and a backend
//! ([`crate::sqlite`], [`crate::postgres`]) provides only those statements and its
//! transaction ([`ItemStore`]), as it does for [`crate::working`] and
//! [`crate::entity_writes`].

mod consolidation;
mod episodic;
mod insights;
mod procedural;
mod review;
mod semantic;
mod session;
mod shared;

pub(crate) use consolidation::{consolidation_mark, write_consolidation};
pub(crate) use episodic::Episodic;
pub(crate) use insights::Insights;
pub(crate) use procedural::Procedural;
pub(crate) use review::{
    decide_conflict, get_item, ledger, metadata, reject_item, store_conflicts, validate_item,
};
pub(crate) use semantic::Semantic;
pub(crate) use session::Session;
pub(crate) use shared::Shared;

use crate::entity_writes::EntityStore;
use crate::error::Result;
use crate::rules::insights::insight_insert;
use crate::rules::row::{Insert, ItemRow};
use crate::rules::writes::ItemWrites;
use crate::store::MemoryStore;
use crate::types::*;
use crate::working::BlockStore;

/// The statements on `memory_items` (and its tags, text index, vectors, entity links,
/// ledger and `memory_meta`) the tiers' rules run, on one backend connection: inside the
/// store's write transaction when writing.
pub(crate) trait ItemTable {
    /// The row with `id`, in any state.
    fn load(&mut self, id: &str) -> Result<Option<ItemRow>>;
    /// Live rows of `user_id` of one kind (quarantined ones too when asked), ordered by
    /// `order` (a column, descending, absent values last), then oldest first.
    fn list_live(
        &mut self,
        kind: MemoryKind,
        user_id: &str,
        include_quarantined: bool,
        order: &str,
    ) -> Result<Vec<ItemRow>>;
    /// Every ledger row about `subject_id`, in order.
    fn ledger_for(&mut self, subject_id: &str) -> Result<Vec<HistoryEntry>>;
    /// Inserts what [`crate::rules::row::prepare_insert`] accepts (row, tags, text index,
    /// ledger rows) and its vector under the store's embedder. Returns the stored row.
    fn insert(
        &mut self,
        now: i64,
        prefix: &str,
        ins: Insert,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow>;
    /// Links a stored fact's subject and object to their root entities
    /// ([`crate::entity_writes::link_fact`] with the store's resolver).
    fn link_fact(&mut self, now: i64, row: &ItemRow) -> Result<()>;
    /// The `memory_meta` value of `key`.
    fn meta(&mut self, key: &str) -> Result<Option<String>>;
    /// Sets the `memory_meta` value of `key`.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
    /// The last sequence of `user_id`'s session, if it has a message.
    fn last_sequence(&mut self, user_id: &str, session_id: &str) -> Result<Option<i64>>;
    /// Live messages of `user_id`'s session after sequence `after`, in order, at most `limit`.
    fn session_messages(
        &mut self,
        user_id: &str,
        session_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<ItemRow>>;
    /// Shares a record with an agent from `now`; false when it is shared already.
    fn attach(&mut self, record_id: &str, agent_id: &str, now: i64) -> Result<bool>;
    /// Ends a live share at `now`; false when there is none.
    fn detach(&mut self, record_id: &str, agent_id: &str, now: i64) -> Result<bool>;
    /// Live, active records shared with `agent_id`, in the order they were shared.
    fn shared_with(&mut self, agent_id: &str) -> Result<Vec<ItemRow>>;
    /// Live, active, current, unarchived records of `user_id` of one kind.
    fn count_live(&mut self, user_id: &str, kind: MemoryKind) -> Result<i64>;
    /// Live session messages of `user_id`.
    fn count_messages(&mut self, user_id: &str) -> Result<i64>;
    /// Live working blocks of `user_id`.
    fn count_blocks(&mut self, user_id: &str) -> Result<i64>;
    /// The updates of [`crate::rules::writes`] on this connection.
    fn writes(&mut self) -> &mut dyn ItemWrites;
}

/// A backend's item store: its embedder, its search and its connection.
pub(crate) trait ItemStore {
    /// Embeds `texts` in batches (none when no embedder is active).
    fn embed_all(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>>;
    /// Searches the kind `fixed` (or the options' kinds): [`crate::search::search`].
    fn search_kinds(
        &self,
        options: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>>;
    /// Successes after which a quarantined rule is promoted.
    fn promote_after_successes(&self) -> u32;
    /// Runs `f` over the store's connection (no transaction: reads).
    fn read_items<T>(&self, f: impl FnOnce(&mut dyn ItemTable) -> Result<T>) -> Result<T>;
    /// Runs `f` in one write transaction at the instant `now` it is given.
    fn write_items<T>(&self, f: impl FnOnce(&mut dyn ItemTable, i64) -> Result<T>) -> Result<T>;
}

/// A backend with the item, block and entity statements is a whole [`MemoryStore`]: the
/// tiers, working memory, the entity graph, search and review are the rules above, once.
impl<S: ItemStore + BlockStore + EntityStore> MemoryStore for S {
    fn working(&self) -> impl crate::store::WorkingMemory + '_ {
        crate::working::Working(self)
    }
    fn session(&self) -> impl crate::store::SessionMemory + '_ {
        Session(self)
    }
    fn episodic(&self) -> impl crate::store::EpisodicMemory + '_ {
        Episodic(self)
    }
    fn semantic(&self) -> impl crate::store::SemanticMemory + '_ {
        Semantic(self)
    }
    fn procedural(&self) -> impl crate::store::ProceduralMemory + '_ {
        Procedural(self)
    }
    fn shared(&self) -> impl crate::store::SharedMemory + '_ {
        Shared(self)
    }
    fn insights(&self) -> impl crate::store::InsightMemory + '_ {
        Insights(self)
    }
    fn entities(&self) -> impl crate::store::EntityGraph + '_ {
        crate::entity_writes::Entities(self)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.search_kinds(options, None)
    }

    fn get_item(&self, id: &str) -> Result<MemoryItem> {
        get_item(self, id)
    }

    fn validate(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        validate_item(self, id, force, by)
    }

    fn reject(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        reject_item(self, id, reason, by)
    }

    fn store_conflicts(
        &self,
        id: &str,
        with: &[String],
        hold: bool,
        by: Actor,
    ) -> Result<Vec<String>> {
        store_conflicts(self, id, with, hold, by)
    }

    fn decide_conflict(&self, id: &str, args: &DecideArgs, by: Actor) -> Result<ConflictOutcome> {
        decide_conflict(self, id, args, by)
    }

    fn ledger(&self, subject_id: &str) -> Result<Vec<HistoryEntry>> {
        ledger(self, subject_id)
    }

    fn metadata(&self, user_id: &str) -> Result<MemoryMetadata> {
        metadata(self, user_id)
    }
}

/// The vector of one text (none when no embedder is active).
fn embed_one(store: &impl ItemStore, text: &str) -> Result<Option<Vec<f32>>> {
    Ok(store.embed_all(&[text])?.pop().flatten())
}

/// Loads one row by id and kind, or a `NotFound` error naming `what`.
fn load_kind(
    db: &mut dyn ItemTable,
    id: &str,
    kind: MemoryKind,
    what: &'static str,
) -> Result<ItemRow> {
    match db.load(id)? {
        Some(row) if row.kind() == Some(kind) => Ok(row),
        _ => Err(crate::error::MemoryError::not_found(what, id)),
    }
}

/// Inserts a validated episode row with its vector.
pub(crate) fn insert_episode(
    db: &mut dyn ItemTable,
    now: i64,
    meta: &WriteMeta,
    row: ItemRow,
    vector: Option<&[f32]>,
) -> Result<ItemRow> {
    let ins = Insert {
        row,
        meta: meta.clone(),
        detail: None,
    };
    db.insert(now, "episode", ins, vector)
}

/// Inserts a validated fact row with its vector and entity links.
pub(crate) fn insert_fact(
    db: &mut dyn ItemTable,
    now: i64,
    fact: &NewFact,
    mut row: ItemRow,
    vector: Option<&[f32]>,
) -> Result<ItemRow> {
    row.kind = MemoryKind::Semantic.as_str().to_owned();
    let ins = Insert {
        row,
        meta: fact.meta.clone(),
        detail: None,
    };
    let stored = db.insert(now, "fact", ins, vector)?;
    db.link_fact(now, &stored)?;
    Ok(stored)
}

/// Inserts a prepared insight once each citation names a live record of its user.
pub(crate) fn insert_insight(
    db: &mut dyn ItemTable,
    now: i64,
    text: &str,
    cites: &[String],
    meta: &WriteMeta,
    vector: Option<&[f32]>,
) -> Result<ItemRow> {
    let ins = insight_insert(text, cites, meta, |c| db.load(c))?;
    db.insert(now, "insight", ins, vector)
}
