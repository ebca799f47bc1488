//! Shared memory: live records attached to other agents (attachments end with a
//! detach, never deleted), each change in the ledger of the share and of the record.

use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::rules::row::check_id;
use crate::store::SharedMemory;
use crate::tiers::ItemStore;
use crate::types::*;

/// The shared tier of a store.
pub(crate) struct Shared<'a, S>(pub &'a S);

/// The ledger subject of one share.
fn share_subject(record_id: &str, agent_id: &str) -> String {
    format!("share:{record_id}:{agent_id}")
}

impl<S: ItemStore> SharedMemory for Shared<'_, S> {
    fn attach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        check_id("agentId", agent_id)?;
        self.0.write_items(|db, now| {
            let row = db
                .load(record_id)?
                .ok_or_else(|| MemoryError::not_found("record", record_id))?;
            if row.deleted_at.is_some() || row.superseded_by.is_some() {
                return Err(MemoryError::Conflict(format!(
                    "record {record_id} is not live"
                )));
            }
            if !db.attach(record_id, agent_id, now)? {
                return Err(MemoryError::Conflict(format!(
                    "record {record_id} is already shared with {agent_id}"
                )));
            }
            let subject = share_subject(record_id, agent_id);
            let ledger = db.writes();
            ledger.ledger(now, &subject, "attach", by, None, None)?;
            let detail = json!({ "agentId": agent_id });
            ledger.ledger(now, record_id, "attach", by, None, Some(detail))
        })
    }

    fn detach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        self.0.write_items(|db, now| {
            let subject = share_subject(record_id, agent_id);
            if !db.detach(record_id, agent_id, now)? {
                return Err(MemoryError::not_found("attachment", subject));
            }
            let ledger = db.writes();
            ledger.ledger(now, &subject, "detach", by, None, None)?;
            let detail = json!({ "agentId": agent_id });
            ledger.ledger(now, record_id, "detach", by, None, Some(detail))
        })
    }

    fn list_for(&self, agent_id: &str) -> Result<Vec<MemoryItem>> {
        check_id("agentId", agent_id)?;
        let rows = self.0.read_items(|db| db.shared_with(agent_id))?;
        rows.iter().map(|row| row.to_item()).collect()
    }
}
