//! Reading a selected row, once for both backends: a backend's row type implements
//! [`Columns`] (a typed read of the `i`-th column) and the row shapes of the crate
//! ([`ItemRow`], [`GraphEntity`], and beside this module [`crate::working::BlockRow`]) are
//! built from it, so the column order a `SELECT` names is written down once.

use crate::rules::row::ItemRow;
use crate::time::format_ms;
use crate::types::*;

/// A column value both backends decode: the types the memory tables store.
pub(crate) trait Column:
    rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>
{
}

impl<T> Column for T where T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a> {}

/// One selected row of a backend, read column by column.
pub(crate) trait Columns {
    /// The backend's error for a column that is missing or of another type.
    type Error;
    /// The value of the `i`-th selected column.
    fn get<T: Column>(&self, i: usize) -> Result<T, Self::Error>;
}

/// The entity columns [`entity_from`] reads, in order.
pub(crate) const ENTITY_COLUMNS: &str =
    "id, user_id, name, normalized_name, merged_into, created_at, updated_at";

/// An entity selected with [`ENTITY_COLUMNS`].
pub(crate) fn entity_from<R: Columns>(r: &R) -> Result<GraphEntity, R::Error> {
    let created: i64 = r.get(5)?;
    let updated: Option<i64> = r.get(6)?;
    Ok(GraphEntity {
        id: r.get(0)?,
        user_id: r.get(1)?,
        name: r.get(2)?,
        normalized_name: r.get(3)?,
        merged_into: r.get(4)?,
        created_at: format_ms(created),
        updated_at: updated.map(format_ms),
    })
}

/// An item row selected with the backend's `ITEM_COLUMNS` (the columns of `memory_items`
/// in table order, JSON read as text).
pub(crate) fn item_from<R: Columns>(r: &R) -> Result<ItemRow, R::Error> {
    Ok(ItemRow {
        rowid: r.get(0)?,
        id: r.get(1)?,
        kind: r.get(2)?,
        user_id: r.get(3)?,
        agent_id: r.get(4)?,
        session_id: r.get(5)?,
        sensitivity: r.get(6)?,
        text: r.get(7)?,
        tags_json: r.get(8)?,
        provenance: r.get(9)?,
        status: r.get(10)?,
        quarantine_reason: r.get(11)?,
        active_since: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
        deleted_at: r.get(15)?,
        delete_reason: r.get(16)?,
        archived_at: r.get(17)?,
        importance: r.get(18)?,
        confidence: r.get(19)?,
        strength: r.get(20)?,
        last_accessed_at: r.get(21)?,
        valid_from: r.get(22)?,
        valid_to: r.get(23)?,
        supersedes: r.get(24)?,
        superseded_by: r.get(25)?,
        superseded_at: r.get(26)?,
        subject: r.get(27)?,
        predicate: r.get(28)?,
        object: r.get(29)?,
        started_at: r.get(30)?,
        ended_at: r.get(31)?,
        priority: r.get(32)?,
        success_count: r.get(33)?,
        salience: r.get(34)?,
        sequence: r.get(35)?,
        body_json: r.get(36)?,
        conflicts_json: r.get(37)?,
        conflict_decision_json: r.get(38)?,
    })
}

/// The ledger columns [`history_from`] reads, in order (`detail_json` as text).
pub(crate) const HISTORY_COLUMNS: &str = "seq, at, subject_id, action, actor, reason";

/// A ledger row selected with [`HISTORY_COLUMNS`] followed by its detail as text: an actor
/// the vocabulary does not know reads as the default, a detail that is not JSON as none.
pub(crate) fn history_from<R: Columns>(r: &R) -> Result<HistoryEntry, R::Error> {
    let actor: String = r.get(4)?;
    let detail: Option<String> = r.get(6)?;
    let at: i64 = r.get(1)?;
    Ok(HistoryEntry {
        seq: r.get(0)?,
        at: format_ms(at),
        subject_id: r.get(2)?,
        action: r.get(3)?,
        actor: Actor::parse(&actor).unwrap_or_default(),
        reason: r.get(5)?,
        detail: detail.and_then(|d| serde_json::from_str(&d).ok()),
    })
}
