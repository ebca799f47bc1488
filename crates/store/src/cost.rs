//! What runs cost: each instance's token usage priced by its model
//! ([`mindgate_pricing::PriceTable`]), summed per node, run and app.
//!
//! An instance's model is the one its events name ([`crate::projection::model_of_started`],
//! [`crate::projection::model_of_finished`]). Usage flagged `inclusive` (it counts its
//! children's too) is shown on its node but left out of the run's and app's totals, like the
//! run's token counters, so nothing is counted twice. The rules: `docs/cost.md`.
//!
//! Nothing is stored: a run's cost is read from its events, and kept in memory by run
//! state, so a finished run is read once per process (and a new `prices.toml` re-prices
//! every run).

use std::collections::BTreeMap;

use mindgate_pricing::{Cost, PriceTable, TokenCounts};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::model::{RunFilter, RunSummary};
use crate::projection::{GraphInstance, RunGraph, RunProjection};
use crate::reader::{COST_CACHE_RUNS, RunStore};

/// Most runs [`RunStore::app_costs`] adds up (the newest).
pub const MAX_APP_COST_RUNS: u32 = RunFilter::MAX_LIMIT;

/// The token counts of a usage object (0 for a missing or non-integer field).
/// `inputTokens` is taken to exclude the cached prompt tokens, which
/// `cacheReadTokens` and `cacheWriteTokens` count apart.
pub fn usage_counts(usage: Option<&Value>) -> TokenCounts {
    let get = |k: &str| {
        usage
            .and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    TokenCounts {
        input: get("inputTokens"),
        output: get("outputTokens"),
        cache_read: get("cacheReadTokens"),
        cache_write: get("cacheWriteTokens"),
    }
}

/// Whether a usage object says it includes its children's usage.
pub fn usage_is_inclusive(usage: Option<&Value>) -> bool {
    usage
        .and_then(|u| u.get("inclusive"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// Adds one instance's usage to `tokens` and `cost`.
pub(crate) fn add_instance(
    prices: &PriceTable,
    inst: &GraphInstance,
    tokens: &mut TokenCounts,
    cost: &mut Cost,
) {
    let counts = usage_counts(inst.usage.as_ref());
    tokens.add(&counts);
    cost.add(prices, inst.model.as_deref(), &counts);
}

/// A run's tokens and cost from its graph: every instance's usage except the
/// `inclusive` ones. Pure.
pub fn run_cost(graph: &RunGraph, prices: &PriceTable) -> (TokenCounts, Cost) {
    let mut tokens = TokenCounts::default();
    let mut cost = Cost::default();
    for inst in graph.nodes.iter().flat_map(|n| &n.instances) {
        if !usage_is_inclusive(inst.usage.as_ref()) {
            add_instance(prices, inst, &mut tokens, &mut cost);
        }
    }
    (tokens, cost)
}

/// One app's runs and what they cost ([`RunStore::app_costs`], `GET /api/apps`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppCost {
    /// Application name.
    pub app: String,
    /// Runs counted.
    pub run_count: u64,
    /// Their tokens (inclusive usage left out).
    pub tokens: TokenCounts,
    /// Their cost.
    pub cost: Cost,
}

/// `GET /api/apps`: what each app's runs cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppCosts {
    /// Apps by name.
    pub apps: Vec<AppCost>,
    /// Only the newest [`MAX_APP_COST_RUNS`] runs were counted: older ones exist.
    pub truncated: bool,
}

impl RunStore {
    /// The graph of a run built from its `node.started` and `node.finished` events only:
    /// the same instances, models and usage as [`RunStore::graph`], for less reading.
    fn usage_graph(&self, run_id: &str) -> Result<Option<RunGraph>> {
        if let Some(pg) = self.postgres() {
            let mut projection = RunProjection::for_graph(run_id);
            let found = pg.for_each_event(
                run_id,
                Some(&["node.started", "node.finished"]),
                |type_name, seq, ts, payload| projection.apply_event(type_name, seq, ts, payload),
            )?;
            return Ok(found.map(|()| projection.into_graph()));
        }
        self.with_conn(|conn| {
            let key: Option<i64> = rusqlite::OptionalExtension::optional(
                conn.prepare_cached("SELECT key FROM runs WHERE id = ?1")?
                    .query_row([run_id], |r| r.get(0)),
            )?;
            let Some(key) = key else {
                return Ok(None);
            };
            let mut projection = RunProjection::for_graph(run_id);
            let mut stmt = conn.prepare_cached(
                "SELECT e.seq, e.ts, t.name, e.payload FROM events e \
                 JOIN event_types t ON t.code = e.type \
                 WHERE e.run_key = ?1 AND t.name IN ('node.started', 'node.finished') \
                 ORDER BY e.seq",
            )?;
            let mut rows = stmt.query([key])?;
            while let Some(row) = rows.next()? {
                let seq: i64 = row.get(0)?;
                let ts: i64 = row.get(1)?;
                let type_name: String = row.get(2)?;
                let payload = row.get_ref(3)?.as_str().map_err(|e| StoreError::Corrupt {
                    run_id: run_id.to_owned(),
                    message: format!("payload of seq {seq} is not text: {e}"),
                })?;
                projection.apply_event(&type_name, seq.max(0) as u64, ts, payload);
            }
            Ok(Some(projection.into_graph()))
        })
    }

    /// What a run's usage cost (`None` if the run does not exist).
    pub fn run_cost(&self, run_id: &str) -> Result<Option<Cost>> {
        match self.get_run(run_id)? {
            Some(run) => Ok(Some(self.usage_of(&run)?.1)),
            None => Ok(None),
        }
    }

    /// The tokens and cost of `run` ([`run_cost`] over its usage graph), from the cache
    /// when the run has not changed since they were read.
    pub(crate) fn usage_of(&self, run: &RunSummary) -> Result<(TokenCounts, Cost)> {
        let state = (run.counts.events, run.last_seq);
        {
            let runs = self.costs.runs.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((at, tokens, cost)) = runs.get(&run.id)
                && *at == state
            {
                return Ok((*tokens, cost.clone()));
            }
        }
        let (tokens, cost) = match self.usage_graph(&run.id)? {
            Some(graph) => run_cost(&graph, &self.prices),
            None => (TokenCounts::default(), Cost::default()),
        };
        let mut runs = self.costs.runs.lock().unwrap_or_else(|p| p.into_inner());
        if runs.len() >= COST_CACHE_RUNS {
            runs.clear();
        }
        runs.insert(run.id.clone(), (state, tokens, cost.clone()));
        Ok((tokens, cost))
    }

    /// What each app's runs cost: the newest [`MAX_APP_COST_RUNS`] runs, by app name.
    pub fn app_costs(&self) -> Result<AppCosts> {
        let list = self.list_runs_without_cost(&RunFilter {
            limit: Some(MAX_APP_COST_RUNS),
            ..RunFilter::default()
        })?;
        let mut apps: BTreeMap<String, AppCost> = BTreeMap::new();
        for run in &list.runs {
            let (tokens, cost) = self.usage_of(run)?;
            let app = apps.entry(run.app.clone()).or_insert_with(|| AppCost {
                app: run.app.clone(),
                run_count: 0,
                tokens: TokenCounts::default(),
                cost: Cost::default(),
            });
            app.run_count += 1;
            app.tokens.add(&tokens);
            app.cost.merge(&cost);
        }
        Ok(AppCosts {
            apps: apps.into_values().collect(),
            truncated: list.next_before.is_some(),
        })
    }
}
