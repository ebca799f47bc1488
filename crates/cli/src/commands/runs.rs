//! `mindgate runs`: the stored runs, newest first.
//!
//! Every figure is the run list's ([`RunStore::list_runs`], what `GET /api/runs` serves and
//! the viewer's run list shows): nothing is counted here. `--since` pages through that list
//! until the runs are older than asked.

use std::process::ExitCode;

use anyhow::Context as _;
use mindgate_home::Home;
use mindgate_store::{RunFilter, RunState, RunStore, RunSummary};

use super::export::open_store;
use super::tasks::{clip, datetime, duration, one_line};
use super::write_stdout;
use crate::args::{RunStatusArg, RunsArgs};
use crate::db_arg::RunDb;

/// Runs `mindgate runs`.
pub fn run(args: &RunsArgs) -> anyhow::Result<ExitCode> {
    let db = RunDb::or_default(args.db.as_ref(), || Home::from_env().run_db());
    let since = args
        .since
        .as_deref()
        .map(|s| since_millis(s, jiff::Timestamp::now()))
        .transpose()?;
    let store = open_store(&db)?;
    let runs = list(&store, args, since)?;
    if args.json {
        let mut text = serde_json::to_string_pretty(&runs)?;
        text.push('\n');
        write_stdout(&text)?;
    } else if runs.is_empty() {
        write_stdout(&format!(
            "No runs{} in {db}. Start `mindgate serve` and connect an app, or run `mindgate demo`.\n",
            if args.status.is_some()
                || args.app.is_some()
                || args.thread.is_some()
                || args.user.is_some()
                || args.tag.is_some()
                || since.is_some()
            {
                " match"
            } else {
                ""
            }
        ))?;
    } else {
        write_stdout(&table(&runs))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn state(status: RunStatusArg) -> RunState {
    match status {
        RunStatusArg::Running => RunState::Running,
        RunStatusArg::Ok => RunState::Ok,
        RunStatusArg::Error => RunState::Error,
        RunStatusArg::Aborted => RunState::Aborted,
        RunStatusArg::Abandoned => RunState::Abandoned,
    }
}

/// At most `args.limit` runs of the run list with the filters of `args`, newest first.
fn list(store: &RunStore, args: &RunsArgs, since: Option<i64>) -> anyhow::Result<Vec<RunSummary>> {
    let want = args.limit as usize;
    let mut filter = RunFilter {
        limit: Some(args.limit.clamp(1, RunFilter::MAX_LIMIT)),
        status: args.status.map(state),
        app: args.app.clone(),
        thread: args.thread.clone(),
        user: args.user.clone(),
        tag: args.tag.clone(),
        label: args.label.clone(),
        ..RunFilter::default()
    };
    let mut runs = Vec::new();
    while runs.len() < want {
        let page = store.list_runs(&filter).context("cannot list the runs")?;
        let mut older = false;
        for run in page.runs {
            if since.is_some_and(|s| run.started_at < s) {
                older = true;
                break;
            }
            if runs.len() < want {
                runs.push(run);
            }
        }
        match page.next_before {
            Some(before) if !older => filter.before = Some(before),
            _ => break,
        }
    }
    Ok(runs)
}

/// The epoch ms `--since WHEN` names, `now` being the current time: a span back from now
/// (`90s`, `30m`, `2h`, `7d`, `1w`, or ISO 8601 `PT2H`), an RFC 3339 time, or a date (UTC).
pub fn since_millis(when: &str, now: jiff::Timestamp) -> anyhow::Result<i64> {
    // The one reading of `since` (`mindgate usage` and MCP share it); dates at UTC midnight.
    mindgate_taskgraph::timestamp::since_ms(when, &jiff::tz::TimeZone::UTC, now).with_context(
        || {
            format!(
                "--since {}: give a span back from now (30m, 2h, 7d), an RFC 3339 time \
             (2026-12-05T08:00:00Z), a date (2026-12-05) or Unix milliseconds",
                when.trim()
            )
        },
    )
}

fn tokens(run: &RunSummary) -> String {
    let total = run
        .usage
        .input_tokens
        .saturating_add(run.usage.output_tokens);
    if total == 0 {
        "-".to_owned()
    } else {
        total.to_string()
    }
}

/// The time the run was held at gates (its duration includes it; work time is the rest).
fn held(run: &RunSummary) -> String {
    if run.held_ms > 0 {
        duration(run.held_ms)
    } else {
        "-".to_owned()
    }
}

fn cost(run: &RunSummary) -> String {
    run.cost
        .as_ref()
        .map_or_else(|| "-".to_owned(), super::diff::cost)
}

/// The table `mindgate runs` prints.
fn table(runs: &[RunSummary]) -> String {
    let header = [
        "ID",
        "APP",
        "NAME",
        "STATUS",
        "START (UTC)",
        "DURATION",
        "HELD",
        "EVENTS",
        "ERRORS",
        "TOKENS",
        "COST",
    ];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                clip(&r.id, 40),
                clip(&one_line(&r.app), 24),
                clip(&one_line(&r.name), 40),
                r.status.as_str().to_owned(),
                datetime(r.started_at),
                r.duration_ms.map_or_else(|| "-".to_owned(), duration),
                held(r),
                r.counts.events.to_string(),
                r.counts.errors.to_string(),
                tokens(r),
                cost(r),
            ]
        })
        .collect();
    super::table::text_table(&header, &rows)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_spans_times_and_dates() {
        let now: jiff::Timestamp = "2026-12-05T08:00:00Z".parse().unwrap();
        let at = |s: &str| since_millis(s, now).unwrap();
        assert_eq!(at("2h"), now.as_millisecond() - 7_200_000);
        assert_eq!(at("30m"), now.as_millisecond() - 1_800_000);
        assert_eq!(at("7d"), now.as_millisecond() - 7 * 86_400_000);
        assert_eq!(at("PT1H"), now.as_millisecond() - 3_600_000);
        assert_eq!(at("2026-12-05T07:00:00Z"), now.as_millisecond() - 3_600_000);
        assert_eq!(at("2026-12-05"), now.as_millisecond() - 8 * 3_600_000);
        assert!(since_millis("yesterday-ish", now).is_err());
    }
}
