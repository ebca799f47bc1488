//! Session memory: the conversation log, one row per message with a per-session sequence.

use rusqlite::params;

use crate::error::Result;
use crate::rules::session::PushedMessage;
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{self, ITEM_COLUMNS};
use crate::store::SessionMemory;
use crate::time::format_ms;
use crate::types::*;

pub(crate) struct Session<'a>(pub &'a SqliteMemory);

/// Most messages one `list` returns.
const MAX_LIST: usize = 10_000;

impl SessionMemory for Session<'_> {
    fn push(&self, scope: &Scope, message: &Message, by: Actor) -> Result<PushReceipt> {
        let pushed = PushedMessage::new(scope, message)?;
        let s = self.0;
        let vector = match pushed.embeddable() {
            Some(text) => s.embed_all(&[text])?.pop().flatten(),
            None => None,
        };
        s.write(|tx, now| {
            let last: Option<i64> = tx.query_row(
                "SELECT MAX(sequence) FROM memory_items WHERE kind = 'session' AND session_id = ?1 AND user_id = ?2",
                params![pushed.session_id, scope.user_id],
                |r| r.get(0),
            )?;
            let sequence = last.unwrap_or(0) + 1;
            let stored = items::insert(tx, now, "msg", pushed.insert(scope, by, sequence))?;
            if let (Some(key), Some(v)) = (&s.embedder_key, &vector) {
                SqliteMemory::store_vector(tx, key, stored.rowid, v)?;
            }
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
        items::check_id("userId", user_id)?;
        items::check_id("sessionId", session_id)?;
        let limit = limit.unwrap_or(MAX_LIST).min(MAX_LIST);
        let after = i64::try_from(after_sequence.unwrap_or(0)).unwrap_or(i64::MAX);
        let conn = self.0.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = 'session' AND i.session_id = ?1 \
             AND i.user_id = ?4 AND i.sequence > ?2 AND i.deleted_at IS NULL ORDER BY i.sequence LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![session_id, after, limit as i64, user_id],
            crate::sqlite::items::item_from_row,
        )?;
        let mut out = Vec::new();
        for row in rows {
            if let MemoryItem::Message(m) = row?.to_item()? {
                out.push(m);
            }
        }
        Ok(out)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Session))
    }
}
