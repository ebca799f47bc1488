//! `POST /api/runs/{runId}/replay`: arm a replay of a finished run up to a step
//! (the hub does the replaying, see `hub::ReplayPlan` and `docs/replay.md`).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use mindgate_errors::ErrorCode;
use mindgate_store::RunState;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ApiError;
use crate::hub::{ReplayMatch, ReplayPlan};
use crate::request::body;
use crate::runs_api::{blocking, run_not_found};
use crate::state::AppState;

/// Body of a replay request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayBody {
    /// The step to replay up to.
    node_id: String,
    /// Which instance of it (its `instanceId`); the first when absent.
    instance: Option<String>,
    /// Which run replays it: `name` (default: same app and run name), `app`, `next`.
    #[serde(rename = "match")]
    matching: Option<ReplayMatch>,
}

/// Arms the replay and answers what was armed (`replayOf`, `nodeId`,
/// `instanceId`, `injectedSteps`, `app`, `runName`, `match`).
pub async fn replay(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
    b: Result<Json<ReplayBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(b)?;
    if b.node_id.is_empty() {
        return Err(ApiError::bad_request("nodeId must not be empty"));
    }
    let r = run_id.clone();
    let found = blocking(&state, move |s| {
        Ok(match s.get_run(&r)? {
            None => None,
            Some(run) if run.status == RunState::Running => Some((run, None)),
            Some(run) => {
                let events = s.all_events(&r)?;
                Some((run, events))
            }
        })
    })
    .await?;
    let Some((run, events)) = found else {
        return Err(run_not_found(&run_id));
    };
    let Some(events) = events else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("run {run_id} is still running: replay starts from a finished run"),
        ));
    };
    let decoded = events.iter().filter_map(|e| {
        matches!(e.type_name.as_str(), "node.started" | "node.finished")
            .then(|| serde_json::from_str::<Value>(e.payload.get()).ok())
            .flatten()
            .map(|p| (e.seq, e.type_name.as_str(), p))
    });
    let run_name = run
        .meta
        .as_ref()
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str);
    let plan = ReplayPlan::from_events(
        &run.id,
        &run.app,
        run_name,
        decoded,
        &b.node_id,
        b.instance.as_deref(),
        b.matching.unwrap_or(ReplayMatch::Name),
    )
    .map_err(|e| ApiError::not_found(e.to_string()))?;
    let summary = state.hub.arm_replay(plan);
    tracing::info!(run = %run_id, node = %b.node_id, "replay armed");
    Ok(Json(summary).into_response())
}
