//! The record tiers in PostgreSQL: the session log and sharing (their own statements),
//! the `memory_items` statements ([`ItemTable`]) and transaction ([`ItemStore`]) the
//! shared tiers of [`crate::tiers`] run over, and quarantine review.

use postgres::GenericClient;
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::postgres::items::ItemRows;
use crate::postgres::items::{
    ITEM_COLUMNS, item_from_row, ledger_append, ledger_for, load, query_rows,
};
use crate::postgres::{PgMemory, entities, meta, set_meta};
use crate::rules::row::{Insert, ItemRow, check_id};
use crate::rules::session::PushedMessage;
use crate::rules::writes::{ItemWrites, validate};
use crate::store::{SessionMemory, SharedMemory};
use crate::tiers::{ItemStore, ItemTable};
use crate::time::format_ms;
use crate::types::*;

/// Most messages one `list` returns.
const MAX_LIST: usize = 10_000;

pub(crate) struct Session<'a>(pub &'a PgMemory);
pub(crate) struct Shared<'a>(pub &'a PgMemory);

impl PgMemory {
    /// Inserts a row with its vector.
    pub(super) fn insert_with_vector(
        &self,
        c: &mut impl GenericClient,
        now: i64,
        prefix: &str,
        ins: Insert,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let stored = crate::postgres::items::insert(c, now, prefix, ins)?;
        self.store_vector(c, stored.rowid, vector)?;
        Ok(stored)
    }

    /// Re-checks a quarantined record and promotes it.
    pub(crate) fn validate_item(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        self.write(|tx, now| {
            let row = load(tx, id)?.ok_or_else(|| MemoryError::not_found("record", id))?;
            validate(&mut ItemRows(tx), now, &row, force, by)?;
            load(tx, id)?
                .ok_or_else(|| MemoryError::not_found("record", id))?
                .to_item()
        })
    }
}

impl SessionMemory for Session<'_> {
    fn push(&self, scope: &Scope, message: &Message, by: Actor) -> Result<PushReceipt> {
        let pushed = PushedMessage::new(scope, message)?;
        let s = self.0;
        let vector = match pushed.embeddable() {
            Some(text) => s.embed_one(text)?,
            None => None,
        };
        s.write(|tx, now| {
            let last: Option<i64> = tx
                .query_one(
                    "SELECT MAX(sequence) FROM memory_items WHERE kind = 'session' AND session_id = $1 AND user_id = $2",
                    &[&pushed.session_id, &scope.user_id],
                )?
                .try_get(0)?;
            let sequence = last.unwrap_or(0) + 1;
            let ins = pushed.insert(scope, by, sequence);
            let stored = s.insert_with_vector(tx, now, "msg", ins, vector.as_deref())?;
            Ok(PushReceipt {
                message_id: stored.id,
                sequence: u64::try_from(sequence).unwrap_or(0),
                persisted_at: format_ms(now),
            })
        })
    }

    fn list(
        &self,
        user_id: &str,
        session_id: &str,
        after_sequence: Option<u64>,
        limit: Option<usize>,
    ) -> Result<Vec<SessionMessage>> {
        check_id("userId", user_id)?;
        check_id("sessionId", session_id)?;
        let limit = i64::try_from(limit.unwrap_or(MAX_LIST).min(MAX_LIST)).unwrap_or(0);
        let after = i64::try_from(after_sequence.unwrap_or(0)).unwrap_or(i64::MAX);
        let rows = query_rows(
            &mut *self.0.lock(),
            &format!(
                "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = 'session' AND i.session_id = $1 \
                 AND i.user_id = $4 AND i.sequence > $2 AND i.deleted_at IS NULL ORDER BY i.sequence LIMIT $3"
            ),
            &[&session_id, &after, &limit, &user_id],
        )?;
        let mut out = Vec::new();
        for row in rows {
            if let MemoryItem::Message(m) = row.to_item()? {
                out.push(m);
            }
        }
        Ok(out)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Session))
    }
}

/// The item table of one PostgreSQL client (a write transaction when writing).
struct Items<'a, C: GenericClient> {
    store: &'a PgMemory,
    rows: ItemRows<'a, C>,
}

impl<C: GenericClient> ItemTable for Items<'_, C> {
    fn load(&mut self, id: &str) -> Result<Option<ItemRow>> {
        load(self.rows.0, id)
    }

    fn list_live(
        &mut self,
        kind: MemoryKind,
        user_id: &str,
        include_quarantined: bool,
        order: &str,
    ) -> Result<Vec<ItemRow>> {
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = $1 AND i.user_id = $2 \
             AND i.deleted_at IS NULL AND ($3 OR i.status = 'active') \
             ORDER BY {order} DESC NULLS LAST, i.rowid"
        );
        query_rows(
            self.rows.0,
            &sql,
            &[&kind.as_str(), &user_id, &include_quarantined],
        )
    }

    fn ledger_for(&mut self, subject_id: &str) -> Result<Vec<HistoryEntry>> {
        ledger_for(self.rows.0, subject_id)
    }

    fn insert(
        &mut self,
        now: i64,
        prefix: &str,
        ins: Insert,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        self.store
            .insert_with_vector(self.rows.0, now, prefix, ins, vector)
    }

    fn link_fact(&mut self, now: i64, row: &ItemRow) -> Result<()> {
        entities::link_fact(self.rows.0, now, row, self.store.resolver())
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        meta(self.rows.0, key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        set_meta(self.rows.0, key, value)
    }

    fn writes(&mut self) -> &mut dyn ItemWrites {
        &mut self.rows
    }
}

impl ItemStore for PgMemory {
    fn embed_all(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        PgMemory::embed_all(self, texts)
    }

    fn search_kinds(
        &self,
        options: &MemorySearchOptions,
        fixed: Option<MemoryKind>,
    ) -> Result<Vec<MemoryHit>> {
        PgMemory::search_kinds(self, options, fixed)
    }

    fn promote_after_successes(&self) -> u32 {
        self.config.promote_after_successes
    }

    fn read_items<T>(&self, f: impl FnOnce(&mut dyn ItemTable) -> Result<T>) -> Result<T> {
        let mut client = self.lock();
        f(&mut Items {
            store: self,
            rows: ItemRows(&mut *client),
        })
    }

    fn write_items<T>(&self, f: impl FnOnce(&mut dyn ItemTable, i64) -> Result<T>) -> Result<T> {
        self.write(|tx, now| {
            f(
                &mut Items {
                    store: self,
                    rows: ItemRows(tx),
                },
                now,
            )
        })
    }
}

fn share_subject(record_id: &str, agent_id: &str) -> String {
    format!("share:{record_id}:{agent_id}")
}

impl SharedMemory for Shared<'_> {
    fn attach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        check_id("agentId", agent_id)?;
        self.0.write(|tx, now| {
            let row = load(tx, record_id)?
                .ok_or_else(|| MemoryError::not_found("record", record_id))?;
            if row.deleted_at.is_some() || row.superseded_by.is_some() {
                return Err(MemoryError::Conflict(format!("record {record_id} is not live")));
            }
            let added = tx.execute(
                "INSERT INTO shared_attachments (item_id, agent_id, attached_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (item_id, agent_id) WHERE detached_at IS NULL DO NOTHING",
                &[&record_id, &agent_id, &now],
            )?;
            if added == 0 {
                return Err(MemoryError::Conflict(format!(
                    "record {record_id} is already shared with {agent_id}"
                )));
            }
            ledger_append(tx, now, &share_subject(record_id, agent_id), "attach", by, None, None)?;
            ledger_append(tx, now, record_id, "attach", by, None, Some(json!({ "agentId": agent_id })))
        })
    }

    fn detach(&self, record_id: &str, agent_id: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let n = tx.execute(
                "UPDATE shared_attachments SET detached_at = $1 WHERE item_id = $2 AND agent_id = $3 AND detached_at IS NULL",
                &[&now, &record_id, &agent_id],
            )?;
            if n == 0 {
                return Err(MemoryError::not_found(
                    "attachment",
                    share_subject(record_id, agent_id),
                ));
            }
            ledger_append(tx, now, &share_subject(record_id, agent_id), "detach", by, None, None)?;
            ledger_append(tx, now, record_id, "detach", by, None, Some(json!({ "agentId": agent_id })))
        })
    }

    fn list_for(&self, agent_id: &str) -> Result<Vec<MemoryItem>> {
        check_id("agentId", agent_id)?;
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM shared_attachments s JOIN memory_items i ON i.id = s.item_id \
             WHERE s.agent_id = $1 AND s.detached_at IS NULL AND i.deleted_at IS NULL \
             AND i.superseded_by IS NULL AND i.status = 'active' ORDER BY s.rowid"
        );
        self.0
            .lock()
            .query(&sql, &[&agent_id])?
            .iter()
            .map(|r| item_from_row(r)?.to_item())
            .collect()
    }
}
