//! The updates the tiers' rules make to stored records, written once over a backend's
//! statements ([`ItemWrites`]): tombstoning, supersession links, quarantining a flagged
//! rule and counting a rule's outcomes up to its promotion.

use serde_json::{Value, json};

use crate::error::{MemoryError, Result};
use crate::rules::insights::START_SALIENCE;
use crate::rules::row::{ItemRow, MAX_TEXT_CHARS};
use crate::trust;
use crate::types::*;

/// The statements on `memory_items` and the ledger the write rules run, in one backend
/// transaction.
pub(crate) trait ItemWrites {
    /// Appends one ledger row.
    fn ledger(
        &mut self,
        now: i64,
        subject_id: &str,
        action: &str,
        by: Actor,
        reason: Option<&str>,
        detail: Option<Value>,
    ) -> Result<()>;
    /// Sets the row's tombstone (`deleted_at`, `delete_reason`).
    fn mark_deleted(&mut self, rowid: i64, reason: &str, now: i64) -> Result<()>;
    /// Names the row's newer version (`superseded_by`, `superseded_at`).
    fn mark_superseded(&mut self, rowid: i64, by_id: &str, now: i64) -> Result<()>;
    /// Moves a row to quarantine with `reason` (out of retrieval).
    fn quarantine(&mut self, rowid: i64, reason: &str) -> Result<()>;
    /// Sets a rule's success counter.
    fn set_success_count(&mut self, rowid: i64, count: i64, now: i64) -> Result<()>;
    /// Makes a quarantined row active from `now`.
    fn activate(&mut self, rowid: i64, now: i64) -> Result<()>;
    /// Makes a row held for a reason that no longer holds active from `now`, clearing the
    /// reason (a conflict hold whose contradicted facts went away before it was stored:
    /// `rules::conflicts::store`); a validation keeps the reason, a release does not.
    fn release(&mut self, rowid: i64, now: i64) -> Result<()>;
    /// Sets an insight's salience.
    fn set_salience(&mut self, rowid: i64, salience: i64, now: i64) -> Result<()>;
    /// Stores a fact's conflicts (`conflicts_json`, a JSON array; none: no conflict) and
    /// clears any decision on earlier ones.
    fn set_conflicts(&mut self, rowid: i64, conflicts_json: Option<&str>) -> Result<()>;
    /// Stores a person's decision on a fact's conflicts (JSON).
    fn set_conflict_decision(&mut self, rowid: i64, decision_json: &str, now: i64) -> Result<()>;
    /// Names the fact a stored fact supersedes (a conflict decided as "supersede the old one").
    fn set_supersedes(&mut self, rowid: i64, old_id: &str, now: i64) -> Result<()>;
}

/// Writes a tombstone on a live row, with the ledger row.
pub(crate) fn tombstone(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    row: &ItemRow,
    action: &str,
    reason: &str,
    by: Actor,
) -> Result<()> {
    if row.deleted_at.is_some() {
        return Err(MemoryError::Conflict(format!(
            "record {} is already deleted",
            row.id
        )));
    }
    if reason.chars().count() > MAX_TEXT_CHARS {
        return Err(MemoryError::invalid("reason", "too long"));
    }
    w.mark_deleted(row.rowid, reason, now)?;
    w.ledger(now, &row.id, action, by, Some(reason), None)
}

/// Links `old` to its new version `new_id` and records both sides in the ledger.
pub(crate) fn link_supersession(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    old: &ItemRow,
    new_id: &str,
    reason: &str,
    by: Actor,
) -> Result<()> {
    w.mark_superseded(old.rowid, new_id, now)?;
    w.ledger(
        now,
        &old.id,
        "superseded",
        by,
        Some(reason),
        Some(json!({ "by": new_id })),
    )?;
    w.ledger(
        now,
        new_id,
        "supersede",
        by,
        Some(reason),
        Some(json!({ "supersedes": old.id })),
    )
}

/// Quarantines a rule just stored active when the text the gate scans (its text, steps
/// and condition: everything that would drive an action) is flagged.
pub(crate) fn quarantine_if_flagged(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    stored: &ItemRow,
    scanned: &str,
    by: Actor,
) -> Result<()> {
    let flags = trust::scan(scanned);
    if flags.is_empty() || stored.status() != MemoryStatus::Active {
        return Ok(());
    }
    let reason = format!("flagged: {}", flags.join(", "));
    w.quarantine(stored.rowid, &reason)?;
    w.ledger(
        now,
        &stored.id,
        "quarantine",
        by,
        Some(&reason),
        Some(json!({ "flags": flags })),
    )
}

/// Counts one outcome of rule `row`; an induced, quarantined rule whose successes reach
/// `threshold` is promoted unless its text is flagged — and only when a person reports the
/// outcome: an agent's outcomes count, but only a person moves a quarantined rule to
/// active (an agent that reports its own reuses could otherwise promote what it induced).
pub(crate) fn record_outcome(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    row: &ItemRow,
    success: bool,
    by: Actor,
    threshold: i64,
) -> Result<()> {
    let id = &row.id;
    if row.deleted_at.is_some() {
        return Err(MemoryError::Conflict(format!("rule {id} is deleted")));
    }
    let count = row.success_count.unwrap_or(0) + i64::from(success);
    w.set_success_count(row.rowid, count, now)?;
    w.ledger(
        now,
        id,
        "outcome",
        by,
        None,
        Some(json!({ "success": success, "successCount": count })),
    )?;
    let induced = row.provenance() == Some(MemoryProvenance::Induction);
    if success
        && by == Actor::User
        && induced
        && row.status() == MemoryStatus::Quarantined
        && count >= threshold
        && trust::scan(&row.text).is_empty()
    {
        w.activate(row.rowid, now)?;
        w.ledger(
            now,
            id,
            "promote",
            by,
            Some("demonstrated success"),
            Some(json!({ "successCount": count, "threshold": threshold })),
        )?;
    }
    Ok(())
}

/// Promotes quarantined `row` after a person's review: refused when it is deleted or
/// already active, and when its text is flagged unless `force` (who forced it and the flags
/// go in the ledger).
pub(crate) fn validate(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    row: &ItemRow,
    force: bool,
    by: Actor,
) -> Result<()> {
    let id = &row.id;
    if row.deleted_at.is_some() {
        return Err(MemoryError::Conflict(format!("record {id} is deleted")));
    }
    if row.status() == MemoryStatus::Active {
        return Err(MemoryError::Conflict(format!(
            "record {id} is not quarantined"
        )));
    }
    let flags = trust::scan(&row.text);
    if !flags.is_empty() && !force {
        return Err(MemoryError::Flagged(flags.join(", ")));
    }
    w.activate(row.rowid, now)?;
    let detail = if flags.is_empty() {
        json!({ "forced": false })
    } else {
        json!({ "forced": true, "forcedBy": by.as_str(), "flags": flags })
    };
    w.ledger(
        now,
        id,
        "validate",
        by,
        row.quarantine_reason.as_deref(),
        Some(detail),
    )
}

/// A rejection needs a reason (it is the tombstone's).
pub(crate) fn check_reject_reason(reason: &str) -> Result<()> {
    if reason.trim().is_empty() {
        return Err(MemoryError::invalid("reason", "a rejection needs a reason"));
    }
    Ok(())
}

/// Checks a vote's step: non-zero, at most 100 either way.
pub(crate) fn check_vote(delta: i64) -> Result<()> {
    if delta == 0 || delta.abs() > 100 {
        return Err(MemoryError::invalid(
            "delta",
            "must be a non-zero step of at most 100",
        ));
    }
    Ok(())
}

/// Moves insight `row`'s salience by `delta`; at zero or below the insight is pruned
/// (tombstoned).
pub(crate) fn vote(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    row: &ItemRow,
    delta: i64,
    by: Actor,
) -> Result<()> {
    if row.deleted_at.is_some() {
        return Err(MemoryError::Conflict(format!(
            "insight {} is pruned",
            row.id
        )));
    }
    let salience = row.salience.unwrap_or(START_SALIENCE) + delta;
    w.set_salience(row.rowid, salience, now)?;
    w.ledger(
        now,
        &row.id,
        "vote",
        by,
        None,
        Some(json!({ "delta": delta, "salience": salience })),
    )?;
    if salience <= 0 {
        tombstone(w, now, row, "prune", "salience fell to zero", by)?;
    }
    Ok(())
}

/// The supersession chain through `start`, oldest first: `load` reads a record by id; a
/// missing link or a loop ends the walk.
pub(crate) fn fact_chain(
    start: ItemRow,
    mut load: impl FnMut(&str) -> Result<Option<ItemRow>>,
) -> Result<Vec<ItemRow>> {
    let mut seen = std::collections::HashSet::new();
    seen.insert(start.id.clone());
    let mut chain = Vec::new();
    let mut cursor = start.supersedes.clone();
    while let Some(prev) = cursor {
        let Some(row) = load(&prev)? else { break };
        if !seen.insert(row.id.clone()) {
            break;
        }
        cursor = row.supersedes.clone();
        chain.push(row);
    }
    chain.reverse();
    let mut cursor = start.superseded_by.clone();
    chain.push(start);
    while let Some(next) = cursor {
        let Some(row) = load(&next)? else { break };
        if !seen.insert(row.id.clone()) {
            break;
        }
        cursor = row.superseded_by.clone();
        chain.push(row);
    }
    Ok(chain)
}
