//! `mindgate usage`: token usage and cost across every coding-agent session on this machine.
//!
//! The report is [`mindgate_taskgraph::discover::usage_of_tasks`] over the sessions `tasks`
//! finds; this module only parses the flags and prints. The table splits input into fresh
//! input and cache writes, so its columns add up to `TOTAL`; `--json` keeps the project's
//! token convention (`input` includes `cache_write`).

use std::process::ExitCode;

use anyhow::Context;
use jiff::tz::TimeZone;
use mindgate_home::Home;
use mindgate_pricing::{PriceTable, format_usd};
use mindgate_taskgraph::discover::usage_of_tasks;
use mindgate_taskgraph::usage::{UsageBy, UsageQuery, UsageReport, UsageRow, since_ms};

use super::table::text_table;
use super::tasks::{clip, discovery_config, scan, thousands};
use crate::args::UsageArgs;

/// Prints the usage report.
pub fn run(args: &UsageArgs) -> anyhow::Result<ExitCode> {
    let config = discovery_config(&args.discovery);
    let prices = PriceTable::load(&Home::from_env().prices_file())?;
    let tz = time_zone(args.tz.as_deref())?;
    let since_ms = match args.since.as_deref() {
        None => None,
        Some(s) => Some(since_ms(s, &tz, jiff::Timestamp::now()).with_context(|| {
            format!(
                "--since {s}: give a span back from now (30m, 2h, 7d), an RFC 3339 time \
                 (2026-12-05T08:00:00Z) or a date (2026-12-05)"
            )
        })?),
    };
    let query = UsageQuery {
        by: args.by,
        since_ms,
        tz,
    };
    let tasks = scan(&config);
    let report = usage_of_tasks(tasks.iter().map(|(_, t)| t), &query, &prices);
    if args.json {
        super::write_stdout(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        super::write_stdout(&render(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The time zone `--tz` names, else the system's.
pub fn time_zone(name: Option<&str>) -> anyhow::Result<TimeZone> {
    match name {
        Some(n) if n.eq_ignore_ascii_case("utc") => Ok(TimeZone::UTC),
        Some(n) => TimeZone::get(n).with_context(|| format!("--tz {n}: not a known time zone")),
        None => Ok(TimeZone::system()),
    }
}

/// The table: one line per row, the total, and the models that had no price.
fn render(report: &UsageReport) -> String {
    if report.total.sessions == 0 {
        return "No token usage found in the coding-agent sessions on this machine.\n".to_owned();
    }
    let key = match report.by {
        UsageBy::Day => format!("DAY ({})", report.tz),
        UsageBy::Week => format!("WEEK OF ({})", report.tz),
        UsageBy::Month => format!("MONTH ({})", report.tz),
        other => other.as_str().to_uppercase(),
    };
    let header = [
        key.as_str(),
        "SESSIONS",
        "INPUT",
        "CACHE WRITE",
        "CACHE READ",
        "OUTPUT",
        "TOTAL",
        "COST",
        "MODELS",
    ];
    let mut rows: Vec<Vec<String>> = report.rows.iter().map(row_cells).collect();
    rows.push(row_cells(&report.total));
    let mut out = text_table(&header, &rows);
    out.push_str("INPUT excludes cache writes: the columns add up to TOTAL.\n");
    if !report.unpriced_models.is_empty() {
        out.push_str(&format!(
            "No price for {}: their tokens are counted, their cost is not (add them to prices.toml).\n",
            report.unpriced_models.join(", ")
        ));
    }
    out
}

fn row_cells(r: &UsageRow) -> Vec<String> {
    let t = &r.tokens;
    let key = match &r.title {
        Some(title) => format!("{} {}", clip(&r.key, 12), clip(title, 40)),
        None => clip(&r.key, 60),
    };
    vec![
        key,
        r.sessions.to_string(),
        thousands(t.input.saturating_sub(t.cache_write)),
        thousands(t.cache_write),
        thousands(t.cache_read),
        thousands(t.output),
        thousands(t.total),
        cost_cell(r),
        clip(&r.models.join(", "), 50),
    ]
}

/// `$1.23`; `≥ $1.23` when a model in the row had no price; `unpriced` when none had one.
fn cost_cell(r: &UsageRow) -> String {
    match r.cost.usd {
        Some(usd) => format_usd(usd),
        None if r.cost.priced_usd == 0.0 => "unpriced".to_owned(),
        None => format!("≥ {}", format_usd(r.cost.priced_usd)),
    }
}
