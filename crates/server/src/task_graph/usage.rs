//! `GET /task-graph/api/usage?by=…&since=…&tz=…`: token usage and cost across every
//! discovered session and its subagent sessions (each once) — the report `mindgate usage`
//! prints ([`mindgate_taskgraph::discover::usage_of_tasks`]), for the Tasks page's Usage view.
//!
//! `by`: `day` (default), `week`, `month`, `session`, `agent`, `model`, `project`. `since`:
//! Unix ms, an RFC 3339 time, a date (midnight in `tz`) or a span back from now (`7d`). `tz`: an IANA time zone name
//! (default `UTC`; the page sends the browser's).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use jiff::tz::TimeZone;
use mindgate_taskgraph::discover::usage_of_tasks;
use mindgate_taskgraph::usage::{UsageBy, UsageQuery, since_ms};
use serde::Deserialize;

use super::{TaskGraphs, blocking};
use crate::error::ApiError;

/// The route's query.
#[derive(Debug, Default, Deserialize)]
pub(super) struct UsageParams {
    by: Option<String>,
    since: Option<String>,
    tz: Option<String>,
}

/// The usage report as JSON.
pub(super) async fn usage(
    State(tg): State<Arc<TaskGraphs>>,
    q: Result<Query<UsageParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let query = usage_query(&q)?;
    let report = blocking(move || {
        let tasks = tg.refresh();
        Ok(usage_of_tasks(&tasks, &query, &tg.prices))
    })
    .await?;
    Ok(axum::Json(report).into_response())
}

fn usage_query(q: &UsageParams) -> Result<UsageQuery, ApiError> {
    let by = match q.by.as_deref().map(str::trim) {
        None | Some("") => UsageBy::Day,
        Some(s) => UsageBy::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "query parameter `by` must be one of day, week, month, session, agent, model, \
                 project; got `{s}`"
            ))
        })?,
    };
    let tz = match q.tz.as_deref().map(str::trim) {
        None | Some("") => TimeZone::UTC,
        Some(name) => TimeZone::get(name).map_err(|_| {
            ApiError::bad_request(format!(
                "query parameter `tz` must be an IANA time zone name, got `{name}`"
            ))
        })?,
    };
    let since_ms = match q.since.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(s) => Some(since_ms(s, &tz, jiff::Timestamp::now()).ok_or_else(|| {
            ApiError::bad_request(format!(
                "query parameter `since` must be Unix milliseconds, an RFC 3339 time, a date \
                 (2026-12-05) or a span back from now (7d), got `{s}`"
            ))
        })?),
    };
    Ok(UsageQuery { by, since_ms, tz })
}
