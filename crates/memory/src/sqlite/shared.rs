//! Shared memory: records attached to other agents (attachments are tombstoned, never
//! deleted).

use rusqlite::params;

use crate::error::{MemoryError, Result};
use crate::sqlite::items::{self, ITEM_COLUMNS, check_id};
use crate::sqlite::{SqliteMemory, ledger};
use crate::store::SharedMemory;
use crate::types::*;

pub(crate) struct Shared<'a>(pub &'a SqliteMemory);

fn subject(record_id: &str, agent_id: &str) -> String {
    format!("share:{record_id}:{agent_id}")
}

impl SharedMemory for Shared<'_> {
    fn attach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        check_id("agentId", agent_id)?;
        self.0.write(|tx, now| {
            let row = items::load(tx, record_id)?.ok_or_else(|| MemoryError::not_found("record", record_id))?;
            if row.deleted_at.is_some() || row.superseded_by.is_some() {
                return Err(MemoryError::Conflict(format!("record {record_id} is not live")));
            }
            let added = tx.execute(
                "INSERT OR IGNORE INTO shared_attachments (item_id, agent_id, attached_at) VALUES (?1, ?2, ?3)",
                params![record_id, agent_id, now],
            )?;
            if added == 0 {
                return Err(MemoryError::Conflict(format!("record {record_id} is already shared with {agent_id}")));
            }
            ledger::append(tx, now, &subject(record_id, agent_id), "attach", by, None, None)?;
            ledger::append(tx, now, record_id, "attach", by, None, Some(serde_json::json!({ "agentId": agent_id })))
        })
    }

    fn detach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let n = tx.execute(
                "UPDATE shared_attachments SET detached_at = ?1 WHERE item_id = ?2 AND agent_id = ?3 AND detached_at IS NULL",
                params![now, record_id, agent_id],
            )?;
            if n == 0 {
                return Err(MemoryError::not_found("attachment", subject(record_id, agent_id)));
            }
            ledger::append(tx, now, &subject(record_id, agent_id), "detach", by, None, None)?;
            ledger::append(tx, now, record_id, "detach", by, None, Some(serde_json::json!({ "agentId": agent_id })))
        })
    }

    fn list_for(&self, agent_id: &str) -> Result<Vec<MemoryItem>> {
        check_id("agentId", agent_id)?;
        let conn = self.0.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM shared_attachments s JOIN memory_items i ON i.id = s.item_id \
             WHERE s.agent_id = ?1 AND s.detached_at IS NULL AND i.deleted_at IS NULL \
             AND i.superseded_by IS NULL AND i.status = 'active' ORDER BY s.rowid"
        ))?;
        let rows = stmt.query_map(params![agent_id], crate::sqlite::items::item_from_row)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row?.to_item()?);
        }
        Ok(out)
    }
}
