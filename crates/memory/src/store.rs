//! The memory-store contract: the seed's sub-stores as traits, so the CLI, the MCP and
//! HTTP surfaces and the viewer all call one core, and a second backend can run the same
//! contract suite unchanged.
//!
//! Rules every backend keeps:
//! - append-only: forget, reject and prune write `deletedAt` tombstones; every change is a
//!   row in the history ledger (what, when, why, by whom);
//! - the trust gate (`crate::trust`) decides each write's status; quarantined rows never
//!   come back from a search without `includeQuarantined`;
//! - every search filter is applied before `topK`.

use crate::error::Result;
use crate::types::*;

/// Working memory: labelled, char-bounded blocks.
pub trait WorkingMemory {
    /// Live blocks of a user, by label.
    fn list(&self, user_id: &str) -> Result<Vec<Block>>;
    /// One live block.
    fn get(&self, user_id: &str, label: &str) -> Result<Block>;
    /// Creates the block or replaces its value (refused on a read-only block, or over the
    /// limit with the limit in the message).
    fn upsert(&self, block: NewBlock) -> Result<Block>;
    /// Appends text to the value.
    fn append(&self, user_id: &str, label: &str, text: &str, by: Actor) -> Result<Block>;
    /// Replaces the first occurrence of `old` in the value by `new`.
    fn replace(&self, user_id: &str, label: &str, old: &str, new: &str, by: Actor)
    -> Result<Block>;
    /// Tombstones the block.
    fn delete(&self, user_id: &str, label: &str, by: Actor) -> Result<()>;
}

/// Session memory: the conversation log.
pub trait SessionMemory {
    /// Stores a message at the end of the user's session (`scope.sessionId` is required).
    /// A session id is per user: two users' sessions of one id are two logs, each with its
    /// own sequence.
    fn push(&self, scope: &Scope, message: &Message, by: Actor) -> Result<PushReceipt>;
    /// Messages of `user_id`'s session in order, after `after_sequence`, at most `limit`
    /// (another user's messages of the same session id never).
    fn list(
        &self,
        user_id: &str,
        session_id: &str,
        after_sequence: Option<u64>,
        limit: Option<usize>,
    ) -> Result<Vec<SessionMessage>>;
    /// Searches messages (kinds fixed to `session`).
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>>;
}

/// Episodic memory.
pub trait EpisodicMemory {
    /// Stores an episode.
    fn put(&self, episode: NewEpisode) -> Result<Episode>;
    /// One episode (tombstoned ones too).
    fn get(&self, id: &str) -> Result<Episode>;
    /// Searches episodes (kinds fixed to `episodic`).
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>>;
}

/// Semantic memory: facts with valid time, supersession and history.
///
/// `remember` and `remember_many_unchecked` are the tier's raw writes: the trust gate
/// applies, the **conflict rule does not** (a contradicting fact that is not a person's is
/// not held, no `conflictsWith` is stored). A fact someone sends — HTTP, MCP, the CLI —
/// is remembered with [`crate::agent::remember`] ([`crate::rules::conflicts::remember`],
/// which writes through `remember` / `remember_quarantined`); the raw writes serve that
/// rule, the benchmarks' bulk loads and tests (`tests/surfaces_remember_under_the_rule.rs`
/// fails when a surface crate calls them).
pub trait SemanticMemory {
    /// Stores a fact under the trust gate only, without the conflict rule (see the trait's
    /// head; surfaces use [`crate::rules::conflicts::remember`]).
    fn remember(&self, fact: NewFact) -> Result<Fact>;
    /// Stores many facts in one transaction (embedded in one batch) under the trust gate
    /// only: **no conflict check** — a fact contradicting an active one, or another of
    /// the batch, is stored as the gate decides, with no `conflictsWith`. For bulk loads
    /// whose facts carry no single-valued triple (the LoCoMo and synthetic benchmarks) and
    /// tests; never for facts a person or an agent sends (those go through
    /// [`crate::rules::conflicts::remember`], one at a time).
    fn remember_many_unchecked(&self, facts: Vec<NewFact>) -> Result<Vec<Fact>>;
    /// Stores a fact that arrives quarantined with `reason` whatever the trust gate decides
    /// (a rule held it back before it was written:
    /// [`crate::rules::conflicts::remember`]); the gate's own reasons come first.
    fn remember_quarantined(&self, fact: NewFact, reason: &str) -> Result<Fact>;
    /// One fact (superseded or tombstoned ones too).
    fn get(&self, id: &str) -> Result<Fact>;
    /// Searches facts (kinds fixed to `semantic`).
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>>;
    /// Replaces a live fact by a new one; the old keeps its row with `supersededBy`. A new
    /// version that is not a person's of a fact that is (provenance `user`) is not applied:
    /// it is stored quarantined with `conflictsWith = [old_id]` for a person to decide
    /// ([`crate::rules::conflicts::held_on_supersede`]); the old fact stays current.
    fn supersede(&self, old_id: &str, new: NewFact, reason: &str) -> Result<Fact>;
    /// Tombstones a fact.
    fn forget(&self, id: &str, reason: &str, by: Actor) -> Result<()>;
    /// The fact's whole supersession chain (both ways) and its ledger.
    fn history(&self, id: &str) -> Result<FactHistory>;
}

/// Procedural memory: authored rules and induced procedures.
pub trait ProceduralMemory {
    /// Stores a rule (an induced procedure when `provenance` is `induction`).
    fn add(&self, rule: NewRule) -> Result<Rule>;
    /// One rule.
    fn get(&self, id: &str) -> Result<Rule>;
    /// Live rules of a user, highest priority first; quarantined ones only when asked.
    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Rule>>;
    /// Tombstones a rule.
    fn remove(&self, id: &str, by: Actor) -> Result<()>;
    /// Records a verified reuse; a quarantined induced procedure is promoted once its
    /// success count reaches the configured threshold (unless its text is flagged).
    fn record_outcome(&self, id: &str, success: bool, by: Actor) -> Result<Rule>;
}

/// Shared memory: records attached to other agents.
pub trait SharedMemory {
    /// Shares a live record with an agent.
    fn attach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()>;
    /// Stops sharing it.
    fn detach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()>;
    /// Live, active records shared with an agent.
    fn list_for(&self, agent_id: &str) -> Result<Vec<MemoryItem>>;
}

/// Insights: synthesised observations with citations and salience votes.
pub trait InsightMemory {
    /// Persists an insight (needs ≥ 1 citation, each naming a live record); lands
    /// quarantined with provenance `reflection` unless told otherwise.
    fn add(&self, insight: NewInsight) -> Result<Insight>;
    /// One insight.
    fn get(&self, id: &str) -> Result<Insight>;
    /// Adds `delta` to the salience; at ≤ 0 the insight is soft-deleted.
    fn vote(&self, id: &str, delta: i64, by: Actor) -> Result<Insight>;
    /// Live insights of a user.
    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Insight>>;
}

/// The entity graph.
pub trait EntityGraph {
    /// The canonical (root) entity for a name, minted if none matches.
    fn resolve(&self, user_id: &str, name: &str) -> Result<GraphEntity>;
    /// One entity.
    fn get(&self, id: &str) -> Result<GraphEntity>;
    /// Entities of a user (roots and merged).
    fn list(&self, user_id: &str) -> Result<Vec<GraphEntity>>;
    /// Merges `from` (and everything merged into it) into the root of `into`.
    fn merge(&self, from: &str, into: &str, by: Actor) -> Result<GraphEntity>;
    /// Undoes the latest merge of `id`, restoring exactly what it changed.
    fn unmerge(&self, id: &str, by: Actor) -> Result<GraphEntity>;
    /// Ids of live facts whose subject or object resolves to the entity's root.
    fn facts_for(&self, entity_id: &str) -> Result<Vec<String>>;
}

/// The whole store.
pub trait MemoryStore {
    /// Working memory.
    fn working(&self) -> impl WorkingMemory + '_;
    /// Session memory.
    fn session(&self) -> impl SessionMemory + '_;
    /// Episodic memory.
    fn episodic(&self) -> impl EpisodicMemory + '_;
    /// Semantic memory.
    fn semantic(&self) -> impl SemanticMemory + '_;
    /// Procedural memory.
    fn procedural(&self) -> impl ProceduralMemory + '_;
    /// Shared memory.
    fn shared(&self) -> impl SharedMemory + '_;
    /// Insights.
    fn insights(&self) -> impl InsightMemory + '_;
    /// The entity graph.
    fn entities(&self) -> impl EntityGraph + '_;

    /// Searches every kind the options name (default: all searchable kinds).
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>>;
    /// Any record by id (tombstoned, superseded and quarantined ones too).
    fn get_item(&self, id: &str) -> Result<MemoryItem>;
    /// Re-checks a quarantined record and promotes it to `active`. Flagged text is refused
    /// unless `force`, and a forced promotion records who forced it.
    fn validate(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem>;
    /// Tombstones a record with a reason (quarantine review).
    fn reject(&self, id: &str, reason: &str, by: Actor) -> Result<()>;
    /// Stores `with` as the conflicts of fact `id` (`crate::rules::conflicts`; empty clears
    /// them), with a `conflict` ledger row when there are any; in the write transaction,
    /// the facts of `with` no longer current (forgotten, rejected or superseded since they
    /// were found) are left out. With `hold` (a fact just remembered), a fact whose
    /// provenance is not a person's is held in quarantine for what is left, or released
    /// when nothing is (`crate::rules::conflicts::store`). Answers the conflicts stored.
    fn store_conflicts(
        &self,
        id: &str,
        with: &[String],
        hold: bool,
        by: Actor,
    ) -> Result<Vec<String>>;
    /// A person's decision on fact `id`'s open conflicts (`crate::rules::conflicts::decide`);
    /// refused for any actor but a person.
    fn decide_conflict(&self, id: &str, args: &DecideArgs, by: Actor) -> Result<ConflictOutcome>;
    /// Every ledger row about a record, block or entity, in order.
    fn ledger(&self, subject_id: &str) -> Result<Vec<HistoryEntry>>;
    /// Tier counters of a user.
    fn metadata(&self, user_id: &str) -> Result<MemoryMetadata>;
}

// A boxed sub-store is one: what lets a handle over either backend return one type.

impl<T: WorkingMemory + ?Sized> WorkingMemory for Box<T> {
    fn list(&self, user_id: &str) -> Result<Vec<Block>> {
        (**self).list(user_id)
    }
    fn get(&self, user_id: &str, label: &str) -> Result<Block> {
        (**self).get(user_id, label)
    }
    fn upsert(&self, block: NewBlock) -> Result<Block> {
        (**self).upsert(block)
    }
    fn append(&self, user_id: &str, label: &str, text: &str, by: Actor) -> Result<Block> {
        (**self).append(user_id, label, text, by)
    }
    fn replace(
        &self,
        user_id: &str,
        label: &str,
        old: &str,
        new: &str,
        by: Actor,
    ) -> Result<Block> {
        (**self).replace(user_id, label, old, new, by)
    }
    fn delete(&self, user_id: &str, label: &str, by: Actor) -> Result<()> {
        (**self).delete(user_id, label, by)
    }
}

impl<T: SessionMemory + ?Sized> SessionMemory for Box<T> {
    fn push(&self, scope: &Scope, message: &Message, by: Actor) -> Result<PushReceipt> {
        (**self).push(scope, message, by)
    }
    fn list(
        &self,
        user_id: &str,
        session_id: &str,
        after_sequence: Option<u64>,
        limit: Option<usize>,
    ) -> Result<Vec<SessionMessage>> {
        (**self).list(user_id, session_id, after_sequence, limit)
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        (**self).search(options)
    }
}

impl<T: EpisodicMemory + ?Sized> EpisodicMemory for Box<T> {
    fn put(&self, episode: NewEpisode) -> Result<Episode> {
        (**self).put(episode)
    }
    fn get(&self, id: &str) -> Result<Episode> {
        (**self).get(id)
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        (**self).search(options)
    }
}

impl<T: SemanticMemory + ?Sized> SemanticMemory for Box<T> {
    fn remember(&self, fact: NewFact) -> Result<Fact> {
        (**self).remember(fact)
    }
    fn remember_many_unchecked(&self, facts: Vec<NewFact>) -> Result<Vec<Fact>> {
        (**self).remember_many_unchecked(facts)
    }
    fn remember_quarantined(&self, fact: NewFact, reason: &str) -> Result<Fact> {
        (**self).remember_quarantined(fact, reason)
    }
    fn get(&self, id: &str) -> Result<Fact> {
        (**self).get(id)
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        (**self).search(options)
    }
    fn supersede(&self, old_id: &str, new: NewFact, reason: &str) -> Result<Fact> {
        (**self).supersede(old_id, new, reason)
    }
    fn forget(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        (**self).forget(id, reason, by)
    }
    fn history(&self, id: &str) -> Result<FactHistory> {
        (**self).history(id)
    }
}

impl<T: ProceduralMemory + ?Sized> ProceduralMemory for Box<T> {
    fn add(&self, rule: NewRule) -> Result<Rule> {
        (**self).add(rule)
    }
    fn get(&self, id: &str) -> Result<Rule> {
        (**self).get(id)
    }
    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Rule>> {
        (**self).list(user_id, include_quarantined)
    }
    fn remove(&self, id: &str, by: Actor) -> Result<()> {
        (**self).remove(id, by)
    }
    fn record_outcome(&self, id: &str, success: bool, by: Actor) -> Result<Rule> {
        (**self).record_outcome(id, success, by)
    }
}

impl<T: SharedMemory + ?Sized> SharedMemory for Box<T> {
    fn attach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        (**self).attach(record_id, agent_id, by)
    }
    fn detach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        (**self).detach(record_id, agent_id, by)
    }
    fn list_for(&self, agent_id: &str) -> Result<Vec<MemoryItem>> {
        (**self).list_for(agent_id)
    }
}

impl<T: InsightMemory + ?Sized> InsightMemory for Box<T> {
    fn add(&self, insight: NewInsight) -> Result<Insight> {
        (**self).add(insight)
    }
    fn get(&self, id: &str) -> Result<Insight> {
        (**self).get(id)
    }
    fn vote(&self, id: &str, delta: i64, by: Actor) -> Result<Insight> {
        (**self).vote(id, delta, by)
    }
    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Insight>> {
        (**self).list(user_id, include_quarantined)
    }
}

impl<T: EntityGraph + ?Sized> EntityGraph for Box<T> {
    fn resolve(&self, user_id: &str, name: &str) -> Result<GraphEntity> {
        (**self).resolve(user_id, name)
    }
    fn get(&self, id: &str) -> Result<GraphEntity> {
        (**self).get(id)
    }
    fn list(&self, user_id: &str) -> Result<Vec<GraphEntity>> {
        (**self).list(user_id)
    }
    fn merge(&self, from: &str, into: &str, by: Actor) -> Result<GraphEntity> {
        (**self).merge(from, into, by)
    }
    fn unmerge(&self, id: &str, by: Actor) -> Result<GraphEntity> {
        (**self).unmerge(id, by)
    }
    fn facts_for(&self, entity_id: &str) -> Result<Vec<String>> {
        (**self).facts_for(entity_id)
    }
}
