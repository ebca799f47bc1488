//! The episodic tier's rule: what a new episode may be.

use crate::error::{MemoryError, Result};
use crate::rules::row::{ItemRow, check_text, check_unit};
use crate::time::parse_time;
use crate::types::*;

/// Validates a new episode and builds its row.
pub(crate) fn episode_row(episode: &NewEpisode) -> Result<ItemRow> {
    check_text("summary", &episode.summary)?;
    check_unit("importance", episode.importance)?;
    let started = parse_time("startedAt", &episode.started_at)?;
    let ended = parse_time("endedAt", &episode.ended_at)?;
    if ended < started {
        return Err(MemoryError::invalid(
            "endedAt",
            "must not be before startedAt",
        ));
    }
    Ok(ItemRow {
        kind: MemoryKind::Episodic.as_str().to_owned(),
        text: episode.summary.clone(),
        importance: episode.importance,
        started_at: Some(started),
        ended_at: Some(ended),
        ..ItemRow::default()
    })
}
