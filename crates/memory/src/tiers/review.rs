//! The store-wide operations of [`crate::store::MemoryStore`] that are not a tier's: a
//! record by id, quarantine review (validate re-checks and promotes, reject tombstones),
//! a subject's ledger and a user's counts.

use crate::error::{MemoryError, Result};
use crate::rules::conflicts;
use crate::rules::row::ItemRow;
use crate::rules::writes::{check_reject_reason, tombstone, validate};
use crate::tiers::{ItemStore, ItemTable};
use crate::types::*;

/// The row with `id`, or a `NotFound` error.
fn load_record(db: &mut dyn ItemTable, id: &str) -> Result<ItemRow> {
    db.load(id)?
        .ok_or_else(|| MemoryError::not_found("record", id))
}

/// Any record by id, in any state.
pub(crate) fn get_item(store: &impl ItemStore, id: &str) -> Result<MemoryItem> {
    store.read_items(|db| load_record(db, id))?.to_item()
}

/// Re-checks a quarantined record and promotes it (`force`: past the trust gate); a fact
/// whose conflicts wait for a person is refused for any other actor
/// ([`crate::rules::conflicts::check_validator`]).
pub(crate) fn validate_item(
    store: &impl ItemStore,
    id: &str,
    force: bool,
    by: Actor,
) -> Result<MemoryItem> {
    store.write_items(|db, now| {
        let row = load_record(db, id)?;
        conflicts::check_validator(&row, by)?;
        validate(db.writes(), now, &row, force, by)?;
        load_record(db, id)?.to_item()
    })
}

/// Rejects a record: a tombstone with the reviewer's reason.
pub(crate) fn reject_item(store: &impl ItemStore, id: &str, reason: &str, by: Actor) -> Result<()> {
    check_reject_reason(reason)?;
    store.write_items(|db, now| {
        let row = load_record(db, id)?;
        tombstone(db.writes(), now, &row, "reject", reason, by)
    })
}

/// Stores `with` as fact `id`'s conflicts, holding (or releasing) a fact just remembered
/// with `hold` ([`crate::rules::conflicts::store`]); the rows of `with` are read in the
/// same transaction, so a fact forgotten, rejected or superseded since it was found is
/// left out. Answers the conflicts stored.
pub(crate) fn store_conflicts(
    store: &impl ItemStore,
    id: &str,
    with: &[String],
    hold: bool,
    by: Actor,
) -> Result<Vec<String>> {
    store.write_items(|db, now| {
        let row = load_record(db, id)?;
        let mut olds = Vec::with_capacity(with.len());
        for other in with {
            if let Some(old) = db.load(other)? {
                olds.push(old);
            }
        }
        conflicts::store(db.writes(), now, &row, &olds, hold, by)
    })
}

/// A person's decision on fact `id`'s open conflicts ([`crate::rules::conflicts::decide`]),
/// in one write transaction; answers the facts after it.
pub(crate) fn decide_conflict(
    store: &impl ItemStore,
    id: &str,
    args: &DecideArgs,
    by: Actor,
) -> Result<ConflictOutcome> {
    store.write_items(|db, now| {
        let new = load_record(db, id)?;
        let with = conflicts::open_conflicts(&new)?;
        let olds = with
            .iter()
            .map(|o| load_record(db, o))
            .collect::<Result<Vec<_>>>()?;
        let decided = conflicts::decide(db.writes(), now, (&new, olds.as_slice()), args, by)?;
        Ok(ConflictOutcome {
            decided,
            fact: load_fact(db, id)?,
            others: with
                .iter()
                .map(|o| load_fact(db, o))
                .collect::<Result<Vec<_>>>()?,
        })
    })
}

/// The fact with `id`, or an error naming what it is not.
fn load_fact(db: &mut dyn ItemTable, id: &str) -> Result<Fact> {
    match load_record(db, id)?.to_item()? {
        MemoryItem::Fact(f) => Ok(f),
        _ => Err(MemoryError::invalid("id", format!("{id} is not a fact"))),
    }
}

/// Every ledger row about `subject_id`, in order.
pub(crate) fn ledger(store: &impl ItemStore, subject_id: &str) -> Result<Vec<HistoryEntry>> {
    store.read_items(|db| db.ledger_for(subject_id))
}

/// A user's counts: live active facts, episodes and rules, messages, blocks, and when the
/// store was last consolidated.
pub(crate) fn metadata(store: &impl ItemStore, user_id: &str) -> Result<MemoryMetadata> {
    store.read_items(|db| {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(MemoryMetadata {
            fact_count: count(db.count_live(user_id, MemoryKind::Semantic)?),
            episode_count: count(db.count_live(user_id, MemoryKind::Episodic)?),
            message_count: count(db.count_messages(user_id)?),
            active_rule_count: count(db.count_live(user_id, MemoryKind::Procedural)?),
            working_block_count: count(db.count_blocks(user_id)?),
            last_consolidated_at: db.meta("lastConsolidatedAt")?,
            tags: None,
        })
    })
}
