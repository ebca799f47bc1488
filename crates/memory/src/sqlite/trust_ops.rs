//! Quarantine review: validate (re-check and promote) and reject (tombstone).

use rusqlite::params;
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::sqlite::items;
use crate::sqlite::semantic::tombstone;
use crate::sqlite::{SqliteMemory, ledger};
use crate::trust;
use crate::types::*;

impl SqliteMemory {
    pub(crate) fn validate_item(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        self.write(|tx, now| {
            let row = items::load(tx, id)?.ok_or_else(|| MemoryError::not_found("record", id))?;
            if row.deleted_at.is_some() {
                return Err(MemoryError::Conflict(format!("record {id} is deleted")));
            }
            if row.status() == MemoryStatus::Active {
                return Err(MemoryError::Conflict(format!("record {id} is not quarantined")));
            }
            let flags = trust::scan(&row.text);
            if !flags.is_empty() && !force {
                return Err(MemoryError::Flagged(flags.join(", ")));
            }
            tx.execute(
                "UPDATE memory_items SET status = 'active', active_since = ?1, updated_at = ?1 WHERE rowid = ?2",
                params![now, row.rowid],
            )?;
            let detail = if flags.is_empty() {
                json!({ "forced": false })
            } else {
                json!({ "forced": true, "forcedBy": by.as_str(), "flags": flags })
            };
            ledger::append(tx, now, id, "validate", by, row.quarantine_reason.as_deref(), Some(detail))?;
            items::load(tx, id)?.ok_or_else(|| MemoryError::not_found("record", id))?.to_item()
        })
    }

    pub(crate) fn reject_item(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        if reason.trim().is_empty() {
            return Err(MemoryError::invalid("reason", "a rejection needs a reason"));
        }
        self.write(|tx, now| {
            let row = items::load(tx, id)?.ok_or_else(|| MemoryError::not_found("record", id))?;
            tombstone(tx, now, &row, "reject", reason, by)
        })
    }
}
