//! Run analytics over the projection: a run's errors (recovered ones marked),
//! its slowest executions, tokens by node and held nodes ([`RunReport`], served
//! as `GET /api/runs/:id/report`, costed by [`crate::cost`]), and recent errors across runs with a `since`
//! filter ([`ErrorReport`]). The HTTP API and the MCP tools both read these, so
//! the viewer and a coding agent see the same facts.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};

use mindgate_pricing::{Cost, PriceTable, TokenCounts};

use crate::cost::{add_instance, run_cost, usage_is_inclusive};
use crate::error::Result;
use crate::model::{ErrorHit, RunFilter, RunState, RunSummary};
use crate::projection::{GraphNode, NodeState, RunGraph};
use crate::reader::RunStore;

/// Executions listed in [`RunReport::slowest`].
pub const REPORT_SLOWEST: usize = 5;
/// Most failed-node hits an [`ErrorReport`] looks at (before the `since` filter).
pub const MAX_ERROR_HITS: u32 = 1_000;

/// One error of a run: the latest error of one execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportError {
    /// Logical node.
    pub node_id: String,
    /// The execution that failed.
    pub instance_id: String,
    /// Error class.
    pub name: String,
    /// Error message (uncut).
    pub message: String,
    /// The node recovered: this execution finished `ok` anyway (a retry at its
    /// gate or an injected value), or an execution of the same node started
    /// after it finished `ok`.
    pub recovered: bool,
}

/// One finished execution, for the slowest list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlowExecution {
    /// Logical node.
    pub node_id: String,
    /// Execution.
    pub instance_id: String,
    /// Node kind.
    pub kind: String,
    /// Reported wall time (includes `heldMs`).
    pub duration_ms: Option<f64>,
    /// Time held at gates ([`crate::projection::GraphInstance::held_ms`]).
    pub held_ms: Option<f64>,
    /// Work time: wall time less held time ([`crate::projection::GraphInstance::work_ms`]).
    pub work_ms: Option<f64>,
    /// The execution's state.
    pub status: NodeState,
}

/// Tokens one node used over all its executions, and what they cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTokens {
    /// Logical node.
    pub node_id: String,
    /// Sum of `usage.inputTokens`.
    pub input_tokens: u64,
    /// Sum of `usage.outputTokens`.
    pub output_tokens: u64,
    /// Sum of `usage.cacheReadTokens`.
    pub cache_read_tokens: u64,
    /// Sum of `usage.cacheWriteTokens`.
    pub cache_write_tokens: u64,
    /// The models its executions named, sorted.
    pub models: Vec<String>,
    /// Some execution's usage is `inclusive` (counts its children's too): shown here,
    /// left out of the run's totals.
    pub inclusive: bool,
    /// What its usage cost.
    pub cost: Cost,
}

/// A run's token totals and their split by node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenReport {
    /// The run's input tokens (its counters).
    pub input_tokens: u64,
    /// The run's output tokens.
    pub output_tokens: u64,
    /// The run's cache-read tokens (inclusive usage left out).
    pub cache_read_tokens: u64,
    /// The run's cache-write tokens (inclusive usage left out).
    pub cache_write_tokens: u64,
    /// What the run's usage cost (inclusive usage left out).
    pub cost: Cost,
    /// Nodes that used tokens, most first (ties by node id).
    pub by_node: Vec<NodeTokens>,
}

/// `GET /api/runs/:id/report`: what went wrong and where the time and tokens went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// The run.
    pub run_id: String,
    /// The `error` of the run's `run.finished`, when its last event is one.
    pub run_error: Option<Value>,
    /// Every execution's error, in graph order.
    pub errors: Vec<ReportError>,
    /// `errors.len()`.
    pub error_count: usize,
    /// Errors not recovered.
    pub unrecovered_count: usize,
    /// The [`REPORT_SLOWEST`] longest finished executions, longest first.
    pub slowest: Vec<SlowExecution>,
    /// Token totals and by node.
    pub tokens: TokenReport,
    /// Nodes held at a gate right now.
    pub paused: Vec<String>,
    /// The run's held time and work time (the graph's, [`crate::RunTimes`]).
    #[serde(flatten)]
    pub times: crate::RunTimes,
}

/// `(inputTokens, outputTokens)` of a usage object (0 for a missing or non-integer field).
pub fn usage_tokens(usage: Option<&Value>) -> (u64, u64) {
    let get = |k: &str| {
        usage
            .and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    (get("inputTokens"), get("outputTokens"))
}

fn node_errors(node: &GraphNode, out: &mut Vec<ReportError>) {
    for (i, inst) in node.instances.iter().enumerate() {
        let Some(error) = &inst.error else {
            continue;
        };
        let recovered = inst.status == NodeState::Ok
            || node.instances[i + 1..]
                .iter()
                .any(|later| later.status == NodeState::Ok);
        out.push(ReportError {
            node_id: node.node_id.clone(),
            instance_id: inst.instance_id.clone(),
            name: error.name.clone(),
            message: error.message.clone(),
            recovered,
        });
    }
}

/// The report of a run from its summary, graph and finish error, costed with
/// `prices`. Pure.
pub fn run_report(
    run: &RunSummary,
    graph: &RunGraph,
    run_error: Option<Value>,
    prices: &PriceTable,
) -> RunReport {
    let mut errors = Vec::new();
    let mut executions = Vec::new();
    let mut by_node = Vec::new();
    for node in &graph.nodes {
        node_errors(node, &mut errors);
        let mut tokens = TokenCounts::default();
        let mut cost = Cost::default();
        let mut models: Vec<String> = Vec::new();
        let mut inclusive = false;
        for inst in &node.instances {
            add_instance(prices, inst, &mut tokens, &mut cost);
            inclusive |= usage_is_inclusive(inst.usage.as_ref());
            if let Some(model) = &inst.model
                && let Err(at) = models.binary_search(model)
            {
                models.insert(at, model.clone());
            }
            if inst.duration_ms.is_some() {
                executions.push((node, inst));
            }
        }
        if !tokens.is_zero() {
            by_node.push(NodeTokens {
                node_id: node.node_id.clone(),
                input_tokens: tokens.input,
                output_tokens: tokens.output,
                cache_read_tokens: tokens.cache_read,
                cache_write_tokens: tokens.cache_write,
                models,
                inclusive,
                cost,
            });
        }
    }
    let (run_tokens, run_cost) = run_cost(graph, prices);
    // Stable sort: equal durations keep graph order.
    executions.sort_by(|a, b| {
        b.1.duration_ms
            .unwrap_or(0.0)
            .total_cmp(&a.1.duration_ms.unwrap_or(0.0))
    });
    let slowest = executions
        .into_iter()
        .take(REPORT_SLOWEST)
        .map(|(n, i)| SlowExecution {
            node_id: n.node_id.clone(),
            instance_id: i.instance_id.clone(),
            kind: n.kind.clone(),
            duration_ms: i.duration_ms,
            held_ms: i.held_ms,
            work_ms: i.work_ms,
            status: i.status,
        })
        .collect();
    by_node.sort_by(|a, b| {
        (b.input_tokens.saturating_add(b.output_tokens))
            .cmp(&a.input_tokens.saturating_add(a.output_tokens))
            .then_with(|| a.node_id.cmp(&b.node_id))
    });
    let paused = graph
        .nodes
        .iter()
        .filter(|n| n.status == NodeState::Paused)
        .map(|n| n.node_id.clone())
        .collect();
    RunReport {
        run_id: run.id.clone(),
        times: graph.times,
        run_error,
        error_count: errors.len(),
        unrecovered_count: errors.iter().filter(|e| !e.recovered).count(),
        errors,
        slowest,
        tokens: TokenReport {
            input_tokens: run.usage.input_tokens,
            output_tokens: run.usage.output_tokens,
            cache_read_tokens: run_tokens.cache_read,
            cache_write_tokens: run_tokens.cache_write,
            cost: run_cost,
            by_node,
        },
        paused,
    }
}

/// A failed-node hit of [`ErrorReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorReportHit {
    /// The `node.error` event.
    #[serde(flatten)]
    pub hit: ErrorHit,
    /// A later `node.finished` of the same node reported `ok`.
    pub recovered: bool,
}

/// A failed run of [`ErrorReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedRun {
    /// The run.
    #[serde(flatten)]
    pub run: RunSummary,
    /// Its `run.finished` error, else `{name, message}` of its newest failed node.
    pub error: Option<Value>,
    /// `error` is the newest failed node's, not the run's own.
    #[serde(skip)]
    pub error_from_node: bool,
}

/// Recent errors across runs, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorReport {
    /// Failed nodes (`node.error` events) at or after `since`, at most `limit`.
    pub nodes: Vec<ErrorReportHit>,
    /// Runs with status `error` that finished (or last sent) at or after `since`.
    pub runs: Vec<FailedRun>,
    /// The filter applied, epoch ms.
    pub since: Option<i64>,
}

impl RunStore {
    /// The `error` of the run's `run.finished` event, when its last event is one
    /// (and the error is not `null`).
    pub fn run_finish_error(&self, run: &RunSummary) -> Result<Option<Value>> {
        let Some(last) = run.last_seq else {
            return Ok(None);
        };
        let Some(page) = self.events(&run.id, last.checked_sub(1), Some(1))? else {
            return Ok(None);
        };
        Ok(page
            .events
            .into_iter()
            .find(|e| e.type_name == "run.finished")
            .and_then(|ev| ev.payload_value().get("error").cloned())
            .filter(|e| !e.is_null()))
    }

    /// The report of one run (`None` if the run does not exist).
    pub fn run_report(&self, run_id: &str) -> Result<Option<RunReport>> {
        let Some(run) = self.get_run(run_id)? else {
            return Ok(None);
        };
        let Some(graph) = self.graph(run_id)? else {
            return Ok(None);
        };
        let run_error = self.run_finish_error(&run)?;
        Ok(Some(run_report(&run, &graph, run_error, &self.prices)))
    }

    /// Whether a `node.finished` of `node_id` after `seq` in the run reported `ok`.
    fn finished_ok_after(&self, run_id: &str, node_id: &str, seq: u64) -> Result<bool> {
        if let Some(pg) = self.postgres() {
            return pg.finished_ok_after(run_id, node_id, seq);
        }
        self.with_conn(|conn| {
            let code: Option<i64> = conn
                .prepare_cached("SELECT code FROM event_types WHERE name = 'node.finished'")?
                .query_row([], |r| r.get(0))
                .optional()?;
            let Some(code) = code else {
                return Ok(false);
            };
            let seq = i64::try_from(seq).unwrap_or(i64::MAX);
            let found: Option<i64> = conn
                .prepare_cached(
                    "SELECT 1 FROM events e JOIN runs r ON r.key = e.run_key \
                     WHERE r.id = ?1 AND e.seq > ?2 AND e.type = ?3 AND e.node_id = ?4 \
                     AND coalesce(json_extract(e.payload, '$.status'), 'ok') = 'ok' LIMIT 1",
                )?
                .query_row(params![run_id, seq, code, node_id], |r| r.get(0))
                .optional()?;
            Ok(found.is_some())
        })
    }

    /// Up to `limit` failed nodes and `limit` failed runs, newest first, only
    /// those at or after `since` (epoch ms) when given.
    pub fn error_report(&self, limit: u32, since: Option<i64>) -> Result<ErrorReport> {
        let limit = limit.max(1);
        let fetch = if since.is_some() {
            limit.saturating_mul(4).min(MAX_ERROR_HITS)
        } else {
            limit
        };
        let mut hits = self.recent_errors(fetch)?;
        if let Some(t) = since {
            hits.retain(|h| h.ts >= t);
        }
        hits.truncate(limit as usize);
        let mut nodes = Vec::with_capacity(hits.len());
        for hit in hits {
            let recovered = match &hit.node_id {
                Some(node) => self.finished_ok_after(&hit.run_id, node, hit.seq)?,
                None => false,
            };
            nodes.push(ErrorReportHit { hit, recovered });
        }

        let failed = self.list_runs_without_cost(&RunFilter {
            limit: Some(limit),
            status: Some(RunState::Error),
            ..RunFilter::default()
        })?;
        let mut runs = Vec::new();
        for run in failed.runs {
            let at = run.finished_at.unwrap_or(run.last_event_at);
            if since.is_some_and(|t| at < t) {
                continue;
            }
            let (error, error_from_node) = match self.run_finish_error(&run)? {
                Some(e) => (Some(e), false),
                None => match nodes.iter().find(|h| h.hit.run_id == run.id) {
                    Some(h) => (
                        Some(json!({"name": h.hit.name, "message": h.hit.message})),
                        true,
                    ),
                    None => (None, false),
                },
            };
            runs.push(FailedRun {
                run,
                error,
                error_from_node,
            });
        }
        Ok(ErrorReport { nodes, runs, since })
    }
}
