//! The session tier: messages pushed in sequence per user and session (with their vector
//! when they have text), listed after a sequence, searched.

use crate::error::Result;
use crate::rules::row::check_id;
use crate::rules::session::PushedMessage;
use crate::store::SessionMemory;
use crate::tiers::{ItemStore, embed_one};
use crate::time::format_ms;
use crate::types::*;

/// Most messages one `list` returns.
const MAX_LIST: usize = 10_000;

/// The session tier of a store.
pub(crate) struct Session<'a, S>(pub &'a S);

impl<S: ItemStore> SessionMemory for Session<'_, S> {
    fn push(&self, scope: &Scope, message: &Message, by: Actor) -> Result<PushReceipt> {
        let pushed = PushedMessage::new(scope, message)?;
        let vector = match pushed.embeddable() {
            Some(text) => embed_one(self.0, text)?,
            None => None,
        };
        self.0.write_items(|db, now| {
            let last = db.last_sequence(&scope.user_id, &pushed.session_id)?;
            let sequence = last.unwrap_or(0) + 1;
            let ins = pushed.insert(scope, by, sequence);
            let stored = db.insert(now, "msg", ins, vector.as_deref())?;
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
        let rows = self
            .0
            .read_items(|db| db.session_messages(user_id, session_id, after, limit))?;
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
