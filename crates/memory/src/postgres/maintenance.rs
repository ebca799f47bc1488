//! Maintenance on PostgreSQL: the reads and writes the shared pass of
//! [`crate::maintenance`] runs over, in one transaction under the store's write lock.

use postgres::Transaction;
use serde_json::Value;

use crate::error::Result;
use crate::maintenance::{self, MaintenanceReport, MaintenanceWrites};
use crate::postgres::PgMemory;
use crate::postgres::items::{ITEM_COLUMNS, ledger_append, query_rows};
use crate::rules::row::ItemRow;
use crate::types::Actor;

struct Writes<'a, 'c>(&'a mut Transaction<'c>);

impl MaintenanceWrites for Writes<'_, '_> {
    fn live_facts(&mut self, user_id: &str) -> Result<Vec<ItemRow>> {
        query_rows(
            self.0,
            &format!(
                "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.user_id = $1 AND i.kind = 'semantic' \
                 AND i.deleted_at IS NULL AND i.superseded_by IS NULL AND i.archived_at IS NULL ORDER BY i.rowid"
            ),
            &[&user_id],
        )
    }

    fn archive(&mut self, now: i64, row: &ItemRow, action: &str, detail: Value) -> Result<()> {
        self.0.execute(
            "UPDATE memory_items SET archived_at = $1, updated_at = $1 WHERE rowid = $2",
            &[&now, &row.rowid],
        )?;
        ledger_append(
            self.0,
            now,
            &row.id,
            action,
            Actor::Maintenance,
            None,
            Some(detail),
        )
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        crate::postgres::set_meta(self.0, key, value)
    }
}

impl PgMemory {
    /// Runs decay and capacity eviction over one user's live facts (see
    /// [`crate::maintenance`]); archived facts keep their rows, each archive is a ledger
    /// row.
    pub fn maintain(&self, user_id: &str) -> Result<MaintenanceReport> {
        maintenance::check_user(user_id)?;
        let config = self.parts.config.maintenance.clone();
        self.write(|tx, now| maintenance::maintain(&mut Writes(tx), now, user_id, &config))
    }
}
