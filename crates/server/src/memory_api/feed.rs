//! `GET /api/memory/feed`: the memory ledger as Server-Sent Events.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::{Stream, StreamExt as _};
use serde::Deserialize;

use super::{ApiResult, mem};
use crate::request::query;
use crate::state::AppState;

/// Ledger rows sent per feed message batch.
const FEED_BATCH: usize = 200;
/// How often the feed looks for changes written by other processes (`mindgate mcp`).
const FEED_POLL: Duration = Duration::from_millis(250);

/// Query of `GET /api/memory/feed`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeedQuery {
    after: Option<i64>,
    /// The control token as `?token=` (the guard checks it; a browser's `EventSource` cannot
    /// send an `Authorization` header, and remote access needs the token on every read).
    #[serde(rename = "token")]
    _token: Option<String>,
}

/// `GET /api/memory/feed?after=SEQ`: Server-Sent Events, one `change` event (id = ledger
/// `seq`, data = the `HistoryEntry`) per ledger row after `after` (default: from now; a
/// reconnect's `Last-Event-ID` wins), whichever process wrote it.
pub(super) async fn feed(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: Result<Query<FeedQuery>, QueryRejection>,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let q = query(q)?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let start = match resume.or(q.after) {
        Some(seq) => seq.max(0),
        None => mem(&state, |m| m.ledger_head()).await?,
    };
    let lazy = state.memory.clone();
    let shutdown = state.shutdown.clone();
    let changed = state.memory_changed.clone();
    let stream = futures_util::stream::unfold(start, move |after| {
        let lazy = lazy.clone();
        let shutdown = shutdown.clone();
        let changed = changed.clone();
        async move {
            loop {
                let l = lazy.clone();
                let rows = tokio::task::spawn_blocking(move || {
                    l.get().and_then(|m| m.ledger_since(after, FEED_BATCH))
                })
                .await;
                match rows {
                    Ok(Ok(rows)) if !rows.is_empty() => {
                        let last = rows.last().map_or(after, |r| r.seq);
                        let events: Vec<Result<SseEvent, Infallible>> = rows
                            .iter()
                            .map(|r| {
                                Ok(SseEvent::default()
                                    .event("change")
                                    .id(r.seq.to_string())
                                    .data(serde_json::to_string(r).unwrap_or_default()))
                            })
                            .collect();
                        return Some((futures_util::stream::iter(events), last));
                    }
                    Ok(Err(e)) => tracing::debug!(error = %e, "memory feed read failed"),
                    _ => {}
                }
                tokio::select! {
                    () = shutdown.cancelled() => return None,
                    () = changed.notified() => {}
                    () = tokio::time::sleep(FEED_POLL) => {}
                }
            }
        }
    });
    Ok(Sse::new(stream.flatten()).keep_alive(KeepAlive::default()))
}
