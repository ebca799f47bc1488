//! The task page's views of one task, each computed by `mindgate_taskgraph` (one function per
//! figure): the turn-level overview the page opens on, one turn's detail graph loaded when the
//! turn opens, and the session's waterfall.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /task-graph/api/task/overview?id=…` | [`TaskOverview`](mindgate_taskgraph::TaskOverview): turns with times, counts, failures, retries, tokens, cost, waiting, subagents; the critical path as work and waiting segments; totals with subagents counted once |
//! | `GET /task-graph/api/task/turn?id=…&turn=…` | one turn (`phase-3` or `3`): the task node, the turn's nodes and edges, the path inside it |
//! | `GET /task-graph/api/task/timeline?id=…` | `{bars}`: every LLM step and call on the time axis, with its turn, path and waiting flags |

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use mindgate_taskgraph::{GraphTree, TaskGraph, TaskOverview, TaskSummary};
use serde_json::json;

use super::{IdQuery, TaskGraphs, Tg, blocking, query};
use crate::error::ApiError;

impl TaskGraphs {
    /// `f` over a task's typed graph and its children's graphs: the live view's when the
    /// session is followed, else the cached build. Blocking.
    fn with_tree<R>(
        &self,
        t: &TaskSummary,
        f: impl FnOnce(&TaskGraph, &[GraphTree]) -> R,
    ) -> Result<R, ApiError> {
        if let Some(l) = self.live_of(&t.path) {
            return Ok(l.with_graph_and_children(f));
        }
        let tree: Arc<GraphTree> = self.load_tree(t)?;
        Ok(f(&tree.graph, &tree.children))
    }

    /// The overview of task `t` as JSON text (a followed session's graph and children as
    /// they are now; computed once per version, or per read of an unchanged session).
    pub(super) fn overview_json(&self, t: &TaskSummary) -> Result<Arc<str>, ApiError> {
        let text = |ov: &TaskOverview| {
            serde_json::to_string(ov)
                .map(Arc::from)
                .map_err(|e| ApiError::internal(e.to_string()))
        };
        if let Some(l) = self.live_of(&t.path) {
            return text(&l.overview(&self.prices));
        }
        let cached = self.load_cached(t)?;
        if let Some(o) = cached.overview_text.get() {
            return Ok(o.clone());
        }
        // Made once: a live view opened meanwhile waits for this one rather than making its own.
        let ov = cached.overview.get_or_init(|| {
            Arc::new(mindgate_taskgraph::overview(
                &cached.tree.graph,
                &cached.tree.children,
                &self.prices,
            ))
        });
        let json = text(ov)?;
        Ok(cached.overview_text.get_or_init(|| json).clone())
    }

    /// `f` over turn `turn` of task `t` (`None`: no such turn), through the graph's turn
    /// index (built once per read of an unchanged file, or per live version), so opening a
    /// turn costs that turn, not a scan of the whole graph. Blocking.
    pub(super) fn with_turn<R>(
        &self,
        t: &TaskSummary,
        turn: &str,
        f: impl FnOnce(Option<mindgate_taskgraph::graph::overview::TurnDetail<'_>>) -> R,
    ) -> Result<R, ApiError> {
        if let Some(l) = self.live_of(&t.path) {
            return Ok(l.with_turn(turn, f));
        }
        let c = self.load_cached(t)?;
        let index = c
            .turns
            .get_or_init(|| Arc::new(mindgate_taskgraph::TurnIndex::new(&c.tree.graph)));
        Ok(f(index.detail(&c.tree.graph, turn)))
    }
}

type Q = Result<Query<IdQuery>, axum::extract::rejection::QueryRejection>;

pub(super) async fn overview(State(tg): Tg, q: Q) -> Result<Response, ApiError> {
    let id = query(q).id()?;
    let body = blocking(move || {
        let t = tg.find(&id)?;
        tg.overview_json(&t)
    })
    .await?;
    Ok(super::json_text(body))
}

pub(super) async fn turn(State(tg): Tg, q: Q) -> Result<Response, ApiError> {
    let q = query(q);
    let id = q.id()?;
    let Some(turn) = q.turn.filter(|t| !t.trim().is_empty()) else {
        return Err(ApiError::bad_request("missing query parameter `turn`"));
    };
    let body = blocking(move || {
        let t = tg.find(&id)?;
        tg.with_turn(&t, &turn, |d| match d {
            Some(d) => serde_json::to_value(d).map_err(|e| ApiError::internal(e.to_string())),
            None => Err(ApiError::not_found(format!(
                "session `{}` has no turn `{}`",
                t.id,
                turn.trim()
            ))),
        })?
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

pub(super) async fn timeline(State(tg): Tg, q: Q) -> Result<Response, ApiError> {
    let id = query(q).id()?;
    let body = blocking(move || {
        let t = tg.find(&id)?;
        tg.with_tree(&t, |g, _| {
            json!({
                "session_id": g.session_id,
                "start_time": g.start_time,
                "end_time": g.end_time,
                "bars": mindgate_taskgraph::timeline(g),
            })
        })
    })
    .await?;
    Ok(axum::Json(body).into_response())
}
