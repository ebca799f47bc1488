//! The record tiers in PostgreSQL: the `memory_items` statements ([`ItemTable`]) and transaction ([`ItemStore`]) the
//! shared tiers of [`crate::tiers`] run over, and quarantine review.

use postgres::GenericClient;

use crate::entity_writes::EntityStore;
use crate::error::Result;
use crate::postgres::items::ItemRows;
use crate::postgres::items::{ITEM_COLUMNS, ledger_for, load, query_rows};
use crate::postgres::{PgMemory, entities, meta, set_meta};
use crate::rules::row::{Insert, ItemRow};
use crate::rules::writes::ItemWrites;
use crate::tiers::{ItemStore, ItemTable};
use crate::types::*;

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
}

/// The count a `SELECT COUNT(*)` answers.
fn count(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<i64> {
    Ok(c.query_one(sql, params)?.try_get(0)?)
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

    fn last_sequence(&mut self, user_id: &str, session_id: &str) -> Result<Option<i64>> {
        Ok(self
            .rows
            .0
            .query_one(
                "SELECT MAX(sequence) FROM memory_items WHERE kind = 'session' \
                 AND session_id = $1 AND user_id = $2",
                &[&session_id, &user_id],
            )?
            .try_get(0)?)
    }

    fn session_messages(
        &mut self,
        user_id: &str,
        session_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<ItemRow>> {
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = 'session' \
             AND i.session_id = $1 AND i.user_id = $4 AND i.sequence > $2 \
             AND i.deleted_at IS NULL ORDER BY i.sequence LIMIT $3"
        );
        query_rows(self.rows.0, &sql, &[&session_id, &after, &limit, &user_id])
    }

    fn attach(&mut self, record_id: &str, agent_id: &str, now: i64) -> Result<bool> {
        let added = self.rows.0.execute(
            "INSERT INTO shared_attachments (item_id, agent_id, attached_at) VALUES ($1, $2, $3) \
             ON CONFLICT (item_id, agent_id) WHERE detached_at IS NULL DO NOTHING",
            &[&record_id, &agent_id, &now],
        )?;
        Ok(added > 0)
    }

    fn detach(&mut self, record_id: &str, agent_id: &str, now: i64) -> Result<bool> {
        let ended = self.rows.0.execute(
            "UPDATE shared_attachments SET detached_at = $1 WHERE item_id = $2 AND agent_id = $3 \
             AND detached_at IS NULL",
            &[&now, &record_id, &agent_id],
        )?;
        Ok(ended > 0)
    }

    fn shared_with(&mut self, agent_id: &str) -> Result<Vec<ItemRow>> {
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM shared_attachments s JOIN memory_items i ON i.id = s.item_id \
             WHERE s.agent_id = $1 AND s.detached_at IS NULL AND i.deleted_at IS NULL \
             AND i.superseded_by IS NULL AND i.status = 'active' ORDER BY s.rowid"
        );
        query_rows(self.rows.0, &sql, &[&agent_id])
    }

    fn count_live(&mut self, user_id: &str, kind: MemoryKind) -> Result<i64> {
        count(
            self.rows.0,
            "SELECT COUNT(*) FROM memory_items WHERE user_id = $1 AND kind = $2 \
             AND deleted_at IS NULL AND superseded_by IS NULL AND status = 'active' \
             AND archived_at IS NULL",
            &[&user_id, &kind.as_str()],
        )
    }

    fn count_messages(&mut self, user_id: &str) -> Result<i64> {
        count(
            self.rows.0,
            "SELECT COUNT(*) FROM memory_items WHERE user_id = $1 AND kind = 'session' \
             AND deleted_at IS NULL",
            &[&user_id],
        )
    }

    fn count_blocks(&mut self, user_id: &str) -> Result<i64> {
        count(
            self.rows.0,
            "SELECT COUNT(*) FROM working_blocks WHERE user_id = $1 AND deleted_at IS NULL",
            &[&user_id],
        )
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
        self.parts.config.promote_after_successes
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
