//! Quarantine review: validate (re-check and promote) and reject (tombstone).

use crate::error::{MemoryError, Result};
use crate::rules::writes::{check_reject_reason, validate};
use crate::sqlite::SqliteMemory;
use crate::sqlite::items;
use crate::sqlite::items::tombstone;
use crate::types::*;

impl SqliteMemory {
    pub(crate) fn validate_item(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        self.write(|tx, now| {
            let row = items::load(tx, id)?.ok_or_else(|| MemoryError::not_found("record", id))?;
            validate(&mut items::ItemRows(tx), now, &row, force, by)?;
            items::load(tx, id)?
                .ok_or_else(|| MemoryError::not_found("record", id))?
                .to_item()
        })
    }

    pub(crate) fn reject_item(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        check_reject_reason(reason)?;
        self.write(|tx, now| {
            let row = items::load(tx, id)?.ok_or_else(|| MemoryError::not_found("record", id))?;
            tombstone(tx, now, &row, "reject", reason, by)
        })
    }
}
