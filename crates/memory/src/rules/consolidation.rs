//! The write of a consolidation, once for both backends: its episodes, facts and
//! insights, the session's consolidation mark and `lastConsolidatedAt`, in one backend
//! transaction — all or nothing. Every record is checked (and embedded) before the
//! transaction; the mark read before the chat calls must still be the stored one, so a
//! consolidation racing another of the same session (on any instance) writes nothing.

use crate::error::{MemoryError, Result};
use crate::rules::row::{ItemRow, index_text};
use crate::rules::{episodic, insights, semantic};
use crate::time::format_ms;
use crate::types::*;

/// What one consolidation writes.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsolidationBatch {
    /// The session consolidated.
    pub session_id: String,
    /// Its user (a session id is per user).
    pub user_id: String,
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

/// The `memory_meta` key of a user's session mark.
pub(crate) fn mark_key(user_id: &str, session_id: &str) -> String {
    format!("consolidated:{}", serde_json::json!([user_id, session_id]))
}

/// The key of a session's mark before sessions were per user (a session then had one
/// owner: consolidating a session of two users was refused).
fn legacy_mark_key(session_id: &str) -> String {
    format!("consolidated:{session_id}")
}

/// The mark of `user_id`'s session read through `meta`: its own, else the session's mark
/// from before sessions were per user.
pub(crate) fn read_mark(
    user_id: &str,
    session_id: &str,
    mut meta: impl FnMut(&str) -> Result<Option<String>>,
) -> Result<Option<u64>> {
    match parse_mark(meta(&mark_key(user_id, session_id))?) {
        Some(mark) => Ok(Some(mark)),
        None => Ok(parse_mark(meta(&legacy_mark_key(session_id))?)),
    }
}

/// A stored mark's value as a sequence.
pub(crate) fn parse_mark(value: Option<String>) -> Option<u64> {
    value.and_then(|v| v.parse().ok())
}

/// The writes a consolidation makes inside one backend transaction.
pub(crate) trait ConsolidationWrites {
    /// A `memory_meta` value.
    fn meta(&mut self, key: &str) -> Result<Option<String>>;
    /// Sets a `memory_meta` value.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
    /// Inserts a validated episode row with its vector.
    fn insert_episode(
        &mut self,
        now: i64,
        meta: &WriteMeta,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow>;
    /// Inserts a validated fact row with its vector and entity links.
    fn insert_fact(
        &mut self,
        now: i64,
        fact: &NewFact,
        row: ItemRow,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow>;
    /// Inserts a prepared insight once each citation names a live record of its user.
    fn insert_insight(
        &mut self,
        now: i64,
        text: &str,
        cites: &[String],
        meta: &WriteMeta,
        vector: Option<&[f32]>,
    ) -> Result<ItemRow>;
}

/// A batch checked and embedded, ready for [`write`].
pub(crate) struct Prepared {
    batch: ConsolidationBatch,
    episode_rows: Vec<ItemRow>,
    fact_rows: Vec<ItemRow>,
    insights: Vec<(Vec<String>, WriteMeta)>,
    vectors: Vec<Option<Vec<f32>>>,
}

/// Checks every record of `batch` and embeds them all with `embed_all` (before any
/// transaction: a refusal writes nothing).
pub(crate) fn prepare(
    batch: ConsolidationBatch,
    embed_all: impl FnOnce(&[&str]) -> Result<Vec<Option<Vec<f32>>>>,
) -> Result<Prepared> {
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
    texts.extend(fact_rows.iter().map(index_text));
    texts.extend(batch.insights.iter().map(|i| i.text.clone()));
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embed_all(&refs)?;
    Ok(Prepared {
        batch,
        episode_rows,
        fact_rows,
        insights: prepared,
        vectors,
    })
}

/// Writes a prepared consolidation at `now` through `db` (inside the caller's
/// transaction), refusing it when the session's mark moved since it was read.
pub(crate) fn write(
    db: &mut dyn ConsolidationWrites,
    now: i64,
    prepared: Prepared,
) -> Result<Vec<ItemRow>> {
    let Prepared {
        batch,
        episode_rows,
        fact_rows,
        insights,
        vectors,
    } = prepared;
    let key = mark_key(&batch.user_id, &batch.session_id);
    if read_mark(&batch.user_id, &batch.session_id, |k| db.meta(k))? != batch.seen_mark {
        return Err(MemoryError::Conflict(format!(
            "session {} was consolidated by another call meanwhile; nothing was written, run it again",
            batch.session_id
        )));
    }
    let mut vectors = vectors.into_iter();
    let mut rows = Vec::new();
    for (episode, row) in batch.episodes.iter().zip(episode_rows) {
        let vector = vectors.next().flatten();
        rows.push(db.insert_episode(now, &episode.meta, row, vector.as_deref())?);
    }
    for (fact, row) in batch.facts.iter().zip(fact_rows) {
        let vector = vectors.next().flatten();
        rows.push(db.insert_fact(now, fact, row, vector.as_deref())?);
    }
    for (insight, (cites, meta)) in batch.insights.iter().zip(&insights) {
        let vector = vectors.next().flatten();
        rows.push(db.insert_insight(now, &insight.text, cites, meta, vector.as_deref())?);
    }
    db.set_meta(&key, &batch.new_mark.to_string())?;
    db.set_meta("lastConsolidatedAt", &format_ms(now))?;
    Ok(rows)
}

/// The written rows as typed records, by tier.
pub(crate) fn written(rows: Vec<ItemRow>) -> Result<ConsolidationWritten> {
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
