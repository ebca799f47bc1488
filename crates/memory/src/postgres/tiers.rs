//! The record tiers in PostgreSQL: session log, episodes, facts (supersession, history),
//! rules (outcomes, promotion), sharing, insights, and quarantine review. Validation and
//! row building are the SQLite tiers' own functions; only the statements are here.

use postgres::{GenericClient, Transaction};
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::postgres::PgMemory;
use crate::postgres::entities::link_fact;
use crate::postgres::items::ItemRows;
use crate::postgres::items::{
    ITEM_COLUMNS, item_from_row, ledger_append, ledger_for, load, load_kind, query_rows, tombstone,
};
use crate::rules::episodic::episode_row;
use crate::rules::insights::{insight_insert, prepare as prepare_insight};
use crate::rules::procedural::rule_row;
use crate::rules::row::{
    Insert, ItemRow, check_id, episode_of, fact_of, index_text, insight_of, rule_of,
};
use crate::rules::semantic::{check_supersedable, fact_row, next_version};
use crate::rules::session::PushedMessage;
use crate::rules::writes::{
    check_vote, fact_chain, link_supersession, quarantine_if_flagged, record_outcome, validate,
    vote,
};
use crate::store::{
    EpisodicMemory, InsightMemory, ProceduralMemory, SemanticMemory, SessionMemory, SharedMemory,
};
use crate::time::format_ms;
use crate::types::*;

/// Most messages one `list` returns.
const MAX_LIST: usize = 10_000;

pub(crate) struct Session<'a>(pub &'a PgMemory);
pub(crate) struct Episodic<'a>(pub &'a PgMemory);
pub(crate) struct Semantic<'a>(pub &'a PgMemory);
pub(crate) struct Procedural<'a>(pub &'a PgMemory);
pub(crate) struct Shared<'a>(pub &'a PgMemory);
pub(crate) struct Insights<'a>(pub &'a PgMemory);

impl PgMemory {
    /// Inserts a row with its vector.
    pub(super) fn insert_with_vector(
        &self,
        tx: &mut Transaction<'_>,
        now: i64,
        prefix: &str,
        ins: Insert,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let stored = crate::postgres::items::insert(tx, now, prefix, ins)?;
        self.store_vector(tx, stored.rowid, vector)?;
        Ok(stored)
    }

    /// Inserts a validated fact row with its vector and entity links.
    pub(super) fn insert_fact(
        &self,
        tx: &mut Transaction<'_>,
        now: i64,
        fact: &NewFact,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let ins = Insert {
            row,
            meta: fact.meta.clone(),
            detail: None,
        };
        let stored = self.insert_with_vector(tx, now, "fact", ins, vector)?;
        link_fact(tx, now, &stored, self.resolver())?;
        Ok(stored)
    }

    /// Inserts a prepared insight once each citation names a live record of its user.
    pub(super) fn insert_insight(
        &self,
        tx: &mut Transaction<'_>,
        now: i64,
        text: &str,
        cites: &[String],
        meta: &WriteMeta,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow> {
        let ins = insight_insert(text, cites, meta, |c| load(tx, c))?;
        self.insert_with_vector(tx, now, "insight", ins, vector)
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

impl EpisodicMemory for Episodic<'_> {
    fn put(&self, episode: NewEpisode) -> Result<Episode> {
        let row = episode_row(&episode)?;
        let s = self.0;
        let vector = s.embed_one(&episode.summary)?;
        let stored = s.write(|tx, now| {
            let ins = Insert {
                row,
                meta: episode.meta.clone(),
                detail: None,
            };
            s.insert_with_vector(tx, now, "episode", ins, vector.as_deref())
        })?;
        episode_of(stored.to_item()?)
    }

    fn get(&self, id: &str) -> Result<Episode> {
        episode_of(load_kind(&mut *self.0.lock(), id, MemoryKind::Episodic, "episode")?.to_item()?)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Episodic))
    }
}

impl SemanticMemory for Semantic<'_> {
    fn remember(&self, fact: NewFact) -> Result<Fact> {
        let mut facts = self.remember_many(vec![fact])?;
        facts
            .pop()
            .ok_or_else(|| MemoryError::Conflict("nothing was stored".to_owned()))
    }

    fn remember_many(&self, facts: Vec<NewFact>) -> Result<Vec<Fact>> {
        let s = self.0;
        let rows = facts.iter().map(fact_row).collect::<Result<Vec<_>>>()?;
        let indexed: Vec<String> = rows.iter().map(index_text).collect();
        let texts: Vec<&str> = indexed.iter().map(String::as_str).collect();
        let vectors = s.embed_all(&texts)?;
        let stored = s.write(|tx, now| {
            let mut out = Vec::with_capacity(rows.len());
            for ((fact, row), vector) in facts.iter().zip(rows).zip(&vectors) {
                out.push(s.insert_fact(tx, now, fact, row, vector.as_deref())?);
            }
            Ok(out)
        })?;
        stored
            .iter()
            .map(|r| r.to_item().and_then(fact_of))
            .collect()
    }

    fn get(&self, id: &str) -> Result<Fact> {
        fact_of(load_kind(&mut *self.0.lock(), id, MemoryKind::Semantic, "fact")?.to_item()?)
    }

    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.search_kinds(options, Some(MemoryKind::Semantic))
    }

    fn supersede(&self, old_id: &str, new: NewFact, reason: &str) -> Result<Fact> {
        let s = self.0;
        let row = fact_row(&new)?;
        let vector = s.embed_one(&index_text(&row))?;
        let stored = s.write(|tx, now| {
            let old = load_kind(tx, old_id, MemoryKind::Semantic, "fact")?;
            check_supersedable(&old, &new)?;
            let row = next_version(&old, row);
            let stored = s.insert_fact(tx, now, &new, row, vector.as_deref())?;
            link_supersession(
                &mut ItemRows(tx),
                now,
                &old,
                &stored.id,
                reason,
                new.meta.by,
            )?;
            Ok(stored.id)
        })?;
        self.get(&stored)
    }

    fn forget(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let row = load_kind(tx, id, MemoryKind::Semantic, "fact")?;
            tombstone(tx, now, &row, "forget", reason, by)
        })
    }

    fn history(&self, id: &str) -> Result<FactHistory> {
        let mut client = self.0.lock();
        let c = &mut *client;
        let start = load_kind(c, id, MemoryKind::Semantic, "fact")?;
        let chain = fact_chain(start, |id| load(c, id))?;
        let mut events = Vec::new();
        for row in &chain {
            events.extend(ledger_for(c, &row.id)?);
        }
        events.sort_by_key(|e| e.seq);
        let chain = chain
            .iter()
            .map(|r| r.to_item().and_then(fact_of))
            .collect::<Result<Vec<_>>>()?;
        Ok(FactHistory { chain, events })
    }
}

/// Live records of a user of one kind, quarantined ones when asked, in `order`.
fn list_kind(
    c: &mut impl GenericClient,
    kind: MemoryKind,
    user_id: &str,
    include_quarantined: bool,
    order: &str,
) -> Result<Vec<MemoryItem>> {
    check_id("userId", user_id)?;
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.kind = $1 AND i.user_id = $2 \
         AND i.deleted_at IS NULL AND ($3 OR i.status = 'active') ORDER BY {order} NULLS LAST, i.rowid"
    );
    query_rows(c, &sql, &[&kind.as_str(), &user_id, &include_quarantined])?
        .iter()
        .map(ItemRow::to_item)
        .collect()
}

impl ProceduralMemory for Procedural<'_> {
    fn add(&self, rule: NewRule) -> Result<Rule> {
        let (row, scanned) = rule_row(&rule)?;
        let s = self.0;
        let vector = s.embed_one(&rule.text)?;
        let stored = s.write(|tx, now| {
            let ins = Insert {
                row,
                meta: rule.meta.clone(),
                detail: None,
            };
            let stored = s.insert_with_vector(tx, now, "rule", ins, vector.as_deref())?;
            // Steps and conditions are scanned too: flagged ones quarantine the rule.
            quarantine_if_flagged(&mut ItemRows(tx), now, &stored, &scanned, rule.meta.by)?;
            Ok(stored.id)
        })?;
        self.get(&stored)
    }

    fn get(&self, id: &str) -> Result<Rule> {
        rule_of(load_kind(&mut *self.0.lock(), id, MemoryKind::Procedural, "rule")?.to_item()?)
    }

    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Rule>> {
        list_kind(
            &mut *self.0.lock(),
            MemoryKind::Procedural,
            user_id,
            include_quarantined,
            "i.priority DESC",
        )?
        .into_iter()
        .map(rule_of)
        .collect()
    }

    fn remove(&self, id: &str, by: Actor) -> Result<()> {
        self.0.write(|tx, now| {
            let row = load_kind(tx, id, MemoryKind::Procedural, "rule")?;
            tombstone(tx, now, &row, "forget", "removed", by)
        })
    }

    fn record_outcome(&self, id: &str, success: bool, by: Actor) -> Result<Rule> {
        let threshold = i64::from(self.0.config.promote_after_successes);
        self.0.write(|tx, now| {
            let row = load_kind(tx, id, MemoryKind::Procedural, "rule")?;
            record_outcome(&mut ItemRows(tx), now, &row, success, by, threshold)
        })?;
        self.get(id)
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

impl InsightMemory for Insights<'_> {
    fn add(&self, insight: NewInsight) -> Result<Insight> {
        let (cites, meta) = prepare_insight(&insight)?;
        let s = self.0;
        let vector = s.embed_one(&insight.text)?;
        let id = s.write(|tx, now| {
            Ok(
                s.insert_insight(tx, now, &insight.text, &cites, &meta, vector.as_deref())?
                    .id,
            )
        })?;
        self.get(&id)
    }

    fn get(&self, id: &str) -> Result<Insight> {
        insight_of(load_kind(&mut *self.0.lock(), id, MemoryKind::Insight, "insight")?.to_item()?)
    }

    fn vote(&self, id: &str, delta: i64, by: Actor) -> Result<Insight> {
        check_vote(delta)?;
        self.0.write(|tx, now| {
            let row = load_kind(tx, id, MemoryKind::Insight, "insight")?;
            vote(&mut ItemRows(tx), now, &row, delta, by)
        })?;
        self.get(id)
    }

    fn list(&self, user_id: &str, include_quarantined: bool) -> Result<Vec<Insight>> {
        list_kind(
            &mut *self.0.lock(),
            MemoryKind::Insight,
            user_id,
            include_quarantined,
            "i.salience DESC",
        )?
        .into_iter()
        .map(insight_of)
        .collect()
    }
}
