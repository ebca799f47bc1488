//! The write of a consolidation: its episodes, facts and insights, the session's
//! consolidation mark and `lastConsolidatedAt`, in one transaction — all or nothing.

use rusqlite::{OptionalExtension, params};

use crate::error::{MemoryError, Result};
use crate::sqlite::items::{self, ItemRow};
use crate::sqlite::{SqliteMemory, episodic, insights, semantic};
use crate::time::format_ms;
use crate::types::*;

/// What one consolidation writes.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsolidationBatch {
    /// The session consolidated.
    pub session_id: String,
    /// The session's mark read before the chat calls (the last sequence consolidated);
    /// the write is refused when another consolidation moved it meanwhile.
    pub seen_mark: Option<u64>,
    /// The last sequence this consolidation covers.
    pub new_mark: u64,
    /// Episodes (their ids chosen by the caller, so that insights can cite them).
    pub episodes: Vec<NewEpisode>,
    /// Facts (ids chosen by the caller too).
    pub facts: Vec<NewFact>,
    /// Insights citing the episodes, facts or the session's messages.
    pub insights: Vec<NewInsight>,
}

/// What it wrote.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsolidationWritten {
    pub episodes: Vec<Episode>,
    pub facts: Vec<Fact>,
    pub insights: Vec<Insight>,
}

fn mark_key(session_id: &str) -> String {
    format!("consolidated:{session_id}")
}

impl SqliteMemory {
    /// The last message sequence of a session already consolidated, if any.
    pub(crate) fn consolidation_mark(&self, session_id: &str) -> Result<Option<u64>> {
        let value: Option<String> = self
            .lock()
            .query_row(
                "SELECT value FROM memory_meta WHERE key = ?1",
                params![mark_key(session_id)],
                |r| r.get(0),
            )
            .optional()?;
        Ok(value.and_then(|v| v.parse().ok()))
    }

    /// Writes a consolidation in one transaction: every record is checked (and embedded)
    /// first; any refusal writes nothing.
    pub(crate) fn write_consolidation(
        &self,
        batch: ConsolidationBatch,
    ) -> Result<ConsolidationWritten> {
        let episode_rows = batch
            .episodes
            .iter()
            .map(episodic::episode_row)
            .collect::<Result<Vec<_>>>()?;
        let fact_rows = batch
            .facts
            .iter()
            .map(semantic::fact_row)
            .collect::<Result<Vec<_>>>()?;
        let prepared = batch
            .insights
            .iter()
            .map(insights::prepare)
            .collect::<Result<Vec<_>>>()?;
        let mut texts: Vec<String> = batch.episodes.iter().map(|e| e.summary.clone()).collect();
        texts.extend(fact_rows.iter().map(items::index_text));
        texts.extend(batch.insights.iter().map(|i| i.text.clone()));
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut vectors = self.embed_all(&refs)?.into_iter();
        let episode_vectors: Vec<_> = vectors.by_ref().take(episode_rows.len()).collect();
        let fact_vectors: Vec<_> = vectors.by_ref().take(fact_rows.len()).collect();
        let insight_vectors: Vec<_> = vectors.collect();

        let rows: Vec<ItemRow> = self.write(|tx, now| {
            let key = mark_key(&batch.session_id);
            let current: Option<String> = tx
                .query_row(
                    "SELECT value FROM memory_meta WHERE key = ?1",
                    params![key],
                    |r| r.get(0),
                )
                .optional()?;
            if current.and_then(|v| v.parse::<u64>().ok()) != batch.seen_mark {
                return Err(MemoryError::Conflict(format!(
                    "session {} was consolidated by another call meanwhile; nothing was written, run it again",
                    batch.session_id
                )));
            }
            let mut rows = Vec::new();
            for ((episode, row), vector) in batch.episodes.iter().zip(episode_rows).zip(&episode_vectors) {
                rows.push(self.insert_episode(tx, now, &episode.meta, row, vector.as_deref())?);
            }
            for ((fact, row), vector) in batch.facts.iter().zip(fact_rows).zip(&fact_vectors) {
                rows.push(self.insert_fact(tx, now, fact, row, vector.as_deref())?);
            }
            for ((insight, (cites, meta)), vector) in
                batch.insights.iter().zip(&prepared).zip(&insight_vectors)
            {
                rows.push(self.insert_insight(
                    tx,
                    now,
                    &insight.text,
                    cites,
                    meta,
                    vector.as_deref(),
                )?);
            }
            tx.execute(
                "INSERT OR REPLACE INTO memory_meta (key, value) VALUES (?1, ?2)",
                params![key, batch.new_mark.to_string()],
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO memory_meta (key, value) VALUES ('lastConsolidatedAt', ?1)",
                params![format_ms(now)],
            )?;
            Ok(rows)
        })?;
        let mut written = ConsolidationWritten::default();
        for row in rows {
            match row.to_item()? {
                MemoryItem::Episode(e) => written.episodes.push(e),
                MemoryItem::Fact(f) => written.facts.push(f),
                MemoryItem::Insight(i) => written.insights.push(i),
                other => {
                    return Err(MemoryError::Conflict(format!(
                        "consolidation stored an unexpected {} record",
                        other.record().kind
                    )));
                }
            }
        }
        Ok(written)
    }
}
