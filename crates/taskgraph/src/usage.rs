//! Token usage and cost across sessions: what `mindgate usage`, the Tasks page's Usage view and
//! `GET /task-graph/api/usage` show.
//!
//! Each session graph is reduced once, when the catalog reads it, to [`SessionUsage`]: its LLM
//! steps' tokens grouped by model and by the quarter hour the step started ([`UsageSlice`]). A
//! [`UsageReport`] groups those slices by day, week, month (in a time zone the caller names),
//! session, agent, model or project, and prices each slice with the one pricing rule of a task
//! graph ([`crate::graph::price`]: cache reads and writes priced apart, unknown models named
//! and never guessed). Every session counts once, whether it is listed on its own or only
//! known as a subagent inside its parent, so the report's totals are the sum of the sessions'
//! own figures (`summary.tokens`, [`crate::graph::graph_cost`]).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use mindgate_pricing::{Cost, PriceTable};
use serde::Serialize;

use crate::graph::{GraphTree, NodeMeta, StepTokens, TaskGraph, TokenTotals, price};
use crate::session::Agent;
pub use crate::timestamp::since_ms;

/// Slices are a quarter of an hour long: every time zone's offset is a multiple of it, so a
/// slice never straddles a day in any zone.
const SLICE_MS: i64 = 900_000;

/// The tokens one session spent with one model in one quarter of an hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UsageSlice {
    /// Start of the quarter hour (Unix ms) the steps started in; `None` for steps without a
    /// time.
    pub start_ms: Option<i64>,
    /// Index into [`SessionUsage::models`].
    pub model: usize,
    /// Tokens by kind.
    pub tokens: StepTokens,
}

/// One session's usage, as the catalog keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionUsage {
    /// Session id.
    pub session_id: String,
    /// Title.
    pub title: String,
    /// The agent that wrote it.
    pub agent: Option<Agent>,
    /// The project: the recorded working directory, else the workspace folder.
    pub project: String,
    /// Models named by the steps (`unknown` for steps that named none).
    pub models: Vec<String>,
    /// The slices, by time then model.
    pub slices: Vec<UsageSlice>,
}

impl SessionUsage {
    /// The usage graph `g` records: every LLM step's tokens, by the quarter hour it started and its
    /// model (the same tokens `g.summary.tokens` and `g.meta.tokens.by_model` sum).
    pub fn of_graph(g: &TaskGraph, agent: Option<Agent>) -> Self {
        let mut grouped: BTreeMap<(Option<i64>, &str), StepTokens> = BTreeMap::new();
        for n in &g.nodes {
            let NodeMeta::Agent(m) = &n.meta else {
                continue;
            };
            if m.tokens == StepTokens::default() {
                continue;
            }
            let start = n
                .start_time
                .or(g.start_time)
                .map(|t| t - t.rem_euclid(SLICE_MS));
            let model = m.model.as_deref().unwrap_or("unknown");
            add_tokens(grouped.entry((start, model)).or_default(), m.tokens);
        }
        let models: Vec<String> = grouped
            .keys()
            .map(|(_, m)| *m)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let slices = grouped
            .into_iter()
            .map(|((start_ms, model), tokens)| UsageSlice {
                start_ms,
                model: models.iter().position(|m| m == model).unwrap_or(0),
                tokens,
            })
            .collect();
        SessionUsage {
            session_id: g.session_id.to_string(),
            title: g.title.clone(),
            agent,
            project: g.cwd.clone().unwrap_or_else(|| g.workspace.clone()),
            models,
            slices,
        }
    }

    /// The usage of every session in `tree` (the session first, then its subagent sessions
    /// depth first), each session once.
    pub fn of_tree(tree: &GraphTree, agent: Option<Agent>) -> Vec<Self> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![tree];
        while let Some(t) = stack.pop() {
            if seen.insert(t.graph.session_id.as_str()) {
                out.push(Self::of_graph(&t.graph, agent));
            }
            stack.extend(t.children.iter().rev());
        }
        out
    }
}

fn add_tokens(to: &mut StepTokens, t: StepTokens) {
    to.input = to.input.saturating_add(t.input);
    to.output = to.output.saturating_add(t.output);
    to.cache_read = to.cache_read.saturating_add(t.cache_read);
    to.cache_write = to.cache_write.saturating_add(t.cache_write);
}

/// How a [`UsageReport`] groups its rows (the CLI's `--by`, the HTTP `by`, MCP's `by`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum UsageBy {
    /// Calendar day in the report's time zone (`2026-12-05`).
    #[default]
    Day,
    /// ISO week, named by its Monday (`2026-11-30`).
    Week,
    /// Calendar month (`2026-12`).
    Month,
    /// Session id.
    Session,
    /// The agent that wrote the session.
    Agent,
    /// Model.
    Model,
    /// Project (working directory).
    Project,
}

impl UsageBy {
    /// Every grouping, as the flags and the query name them.
    pub const ALL: [UsageBy; 7] = [
        UsageBy::Day,
        UsageBy::Week,
        UsageBy::Month,
        UsageBy::Session,
        UsageBy::Agent,
        UsageBy::Model,
        UsageBy::Project,
    ];

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageBy::Day => "day",
            UsageBy::Week => "week",
            UsageBy::Month => "month",
            UsageBy::Session => "session",
            UsageBy::Agent => "agent",
            UsageBy::Model => "model",
            UsageBy::Project => "project",
        }
    }

    /// Parses a lower-case name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.as_str() == s)
    }

    fn is_period(self) -> bool {
        matches!(self, UsageBy::Day | UsageBy::Week | UsageBy::Month)
    }
}

/// What to report.
#[derive(Debug, Clone)]
pub struct UsageQuery {
    /// Grouping.
    pub by: UsageBy,
    /// Only steps that started at or after this time (Unix ms), to the quarter hour: a slice
    /// is kept when it ends after `since`.
    pub since_ms: Option<i64>,
    /// The time zone days, weeks and months are counted in.
    pub tz: TimeZone,
}

/// One row of a usage report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageRow {
    /// The group: a date, session id, agent, model or project (`(no time)` for steps that
    /// carry no time).
    pub key: String,
    /// For a session row, its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Sessions with usage in the row.
    pub sessions: u64,
    /// Tokens by kind (`cache_write` is part of `input`; `total = input + output +
    /// cache_read`, the project's convention).
    pub tokens: TokenTotals,
    /// What they cost; `usd` is `null` when a model had no price, `unpricedModels` names it
    /// (the cost object is camel-cased as everywhere in the API).
    pub cost: Cost,
    /// Models used in the row.
    pub models: Vec<String>,
}

impl UsageRow {
    fn new(key: String) -> Self {
        UsageRow {
            key,
            title: None,
            sessions: 0,
            tokens: TokenTotals::default(),
            cost: Cost::default(),
            models: Vec::new(),
        }
    }
}

/// Usage across sessions, grouped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageReport {
    /// The grouping.
    pub by: UsageBy,
    /// The time zone periods are counted in.
    pub tz: String,
    /// The `since` filter applied (Unix ms), if any.
    pub since_ms: Option<i64>,
    /// Rows: periods oldest first; other groupings by cost, then tokens, highest first.
    pub rows: Vec<UsageRow>,
    /// Every row summed (`key` is `total`).
    pub total: UsageRow,
    /// Models with usage and no price (their tokens are counted, their cost is not guessed).
    pub unpriced_models: Vec<String>,
}

/// Groups the usage of `sessions` (each session id counted once) as `query` asks, priced at
/// `prices`.
pub fn usage_report<'a>(
    sessions: impl IntoIterator<Item = &'a SessionUsage>,
    query: &UsageQuery,
    prices: &PriceTable,
) -> UsageReport {
    let mut rows: BTreeMap<String, (UsageRow, BTreeSet<&str>, BTreeSet<&str>)> = BTreeMap::new();
    let mut total = UsageRow::new("total".into());
    let mut total_sessions: HashSet<&str> = HashSet::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for s in sessions {
        if !seen.insert(s.session_id.as_str()) {
            continue;
        }
        for slice in &s.slices {
            if let Some(since) = query.since_ms
                && slice.start_ms.is_none_or(|start| start + SLICE_MS <= since)
            {
                continue;
            }
            let model = s.models.get(slice.model).map_or("unknown", String::as_str);
            let key = row_key(s, model, slice.start_ms, query);
            let (row, models, in_row) = rows.entry(key).or_insert_with_key(|k| {
                (UsageRow::new(k.clone()), BTreeSet::new(), BTreeSet::new())
            });
            if query.by == UsageBy::Session {
                row.title = Some(s.title.clone());
            }
            let cost = price(prices, Some(model), slice.tokens);
            row.tokens.add_counts(slice.tokens);
            row.cost.merge(&cost);
            models.insert(model);
            in_row.insert(s.session_id.as_str());
            total.tokens.add_counts(slice.tokens);
            total.cost.merge(&cost);
            total_sessions.insert(s.session_id.as_str());
        }
    }
    let mut rows: Vec<UsageRow> = rows
        .into_values()
        .map(|(mut row, models, in_row)| {
            row.models = models.into_iter().map(str::to_owned).collect();
            row.sessions = in_row.len() as u64;
            row
        })
        .collect();
    if !query.by.is_period() {
        rows.sort_by(|a, b| {
            b.cost
                .priced_usd
                .total_cmp(&a.cost.priced_usd)
                .then(b.tokens.total.cmp(&a.tokens.total))
                .then_with(|| a.key.cmp(&b.key))
        });
    }
    total.sessions = total_sessions.len() as u64;
    let mut all_models: BTreeSet<String> = BTreeSet::new();
    for r in &rows {
        all_models.extend(r.models.iter().cloned());
    }
    total.models = all_models.into_iter().collect();
    UsageReport {
        by: query.by,
        tz: query.tz.iana_name().unwrap_or("UTC").to_owned(),
        since_ms: query.since_ms,
        unpriced_models: total.cost.unpriced_models.clone(),
        rows,
        total,
    }
}

/// The row a slice falls in.
fn row_key(s: &SessionUsage, model: &str, start_ms: Option<i64>, query: &UsageQuery) -> String {
    match query.by {
        UsageBy::Session => s.session_id.clone(),
        UsageBy::Agent => s.agent.map_or("unknown", Agent::as_str).to_owned(),
        UsageBy::Model => model.to_owned(),
        UsageBy::Project => s.project.clone(),
        UsageBy::Day | UsageBy::Week | UsageBy::Month => start_ms
            .and_then(|ms| period_key(ms, query.by, &query.tz))
            .unwrap_or_else(|| "(no time)".to_owned()),
    }
}

/// The day, week (its Monday) or month `ms` falls in, in `tz`.
fn period_key(ms: i64, by: UsageBy, tz: &TimeZone) -> Option<String> {
    let date = Timestamp::from_millisecond(ms)
        .ok()?
        .to_zoned(tz.clone())
        .date();
    Some(match by {
        UsageBy::Week => {
            let back = i64::from(date.weekday().to_monday_zero_offset());
            date.checked_sub(jiff::Span::new().days(back))
                .ok()?
                .to_string()
        }
        UsageBy::Month => format!("{:04}-{:02}", date.year(), date.month()),
        _ => date.to_string(),
    })
}
