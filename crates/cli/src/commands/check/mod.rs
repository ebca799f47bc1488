//! `mindgate check <RUN> --baseline <RUN|FILE.jsonl> [--rules FILE]`: a new run checked
//! against a baseline (a stored run, or a run exported with `export --jsonl`) by the rules
//! of a TOML file ([`rules`]; a default set without one), over the store's node details and
//! diff engine. Exit 0 when every rule holds, 1 when one fails, 2 on a usage error. The
//! result is stored with the run as an annotation of kind `check` (written by the rule of
//! [`super::write_route`]), so the viewer and `export` show it.

mod evaluate;
mod junit;
mod rules;

use std::fmt::Write as _;
use std::io::BufRead as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use mindgate_home::Home;
use mindgate_mcp::output::Links;
use mindgate_store::{
    AnnotationFilter, AnnotationKind, Database, NewAnnotation, RunFilter, RunImport, RunStore,
    StoredEvent,
};
use serde_json::json;

use super::write_route::WriteRoute;
use super::write_stdout;
use crate::args::CheckArgs;
use crate::db_arg::RunDb;
use evaluate::{RuleOutcome, Subject, evaluate};
use rules::Rules;

/// A baseline exported to a file, imported into a temporary store for the check.
struct FileBaseline {
    store: RunStore,
    run_id: String,
    _dir: tempfile::TempDir,
}

/// Runs `mindgate check`.
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let rules = match &args.rules {
        Some(file) => Rules::load(file)?,
        None => Rules::default_set(),
    };
    let home = Home::from_env();
    let db = RunDb::or_default(args.db.as_ref(), || home.run_db());
    let store = super::export::open_store(&db)?;
    let run_id = pick_run(&store, &db, args)?;
    wait_until_finished(&store, &run_id, args.wait)?;
    let file = baseline_file(&args.baseline, &store)?;
    let (base_store, base_id) = match &file {
        Some(f) => (&f.store, f.run_id.clone()),
        None => (
            &store,
            super::run_ids::resolve_run_id(&store, &db, &args.baseline)?,
        ),
    };
    let new = subject(&store, &run_id)?;
    let base = subject(base_store, &base_id)?;
    let diff = mindgate_store::diff::diff_events(
        &base_id,
        &events(base_store, &base_id)?,
        &run_id,
        &events(&store, &run_id)?,
        store.prices(),
    );
    let outcomes = evaluate(&rules, &new, &base, &diff);
    let passed = outcomes.iter().all(|o| o.passed);
    let route = WriteRoute::for_database(&db, &home);
    let links = match &route {
        Ok(WriteRoute::Server(client)) => Links::for_port(client.port()),
        _ => Links::for_port(mindgate_home::DEFAULT_PORT),
    };
    let link = |node: Option<&str>| match node {
        Some(n) => links.node(&run_id, n),
        None => links.run(&run_id),
    };
    let baseline_name = match &file {
        Some(_) => format!("{} (run {base_id})", args.baseline),
        None => base_id.clone(),
    };
    let result = json!({
        "passed": passed,
        "runId": run_id,
        "baseline": {"runId": base_id, "file": file.as_ref().map(|_| args.baseline.clone())},
        "rules": outcomes,
        "rulesFile": args.rules.as_ref().map(|p| p.display().to_string()),
        "firstDivergence": diff.first_divergence,
    });
    if let Some(path) = &args.junit {
        std::fs::write(
            path,
            junit::report(&run_id, &baseline_name, &outcomes, link),
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&result)?))?;
    } else {
        write_stdout(&human(&run_id, &baseline_name, &outcomes, &diff, &link))?;
    }
    store_result(route, &run_id, result);
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The run to check: the one named, or with `--app NAME --latest` the newest of the app.
fn pick_run(store: &RunStore, db: &Database, args: &CheckArgs) -> anyhow::Result<String> {
    match (&args.run_id, &args.app) {
        (Some(run), None) => super::run_ids::resolve_run_id(store, db, run),
        (None, Some(app)) if args.latest => {
            let newest = store.list_runs(&RunFilter {
                app: Some(app.clone()),
                limit: Some(1),
                ..RunFilter::default()
            })?;
            match newest.runs.into_iter().next() {
                Some(run) => Ok(run.id),
                None => bail!("no run of app {app} in {db}"),
            }
        }
        (None, Some(_)) => bail!("--app needs --latest (the newest run of the app)"),
        (Some(_), Some(_)) => bail!("give a run id or --app NAME --latest, not both"),
        (None, None) => bail!("give the run to check: a run id, or --app NAME --latest"),
    }
}

/// Waits (at most `wait` seconds) for a running run to finish; refuses one still running.
fn wait_until_finished(store: &RunStore, run_id: &str, wait: u64) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(wait);
    loop {
        let run = store.get_run(run_id)?.context("the run went away")?;
        if run.status.is_terminal() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "run {run_id} is still running: check it when it has finished, or pass \
                 --wait SECONDS to wait for it"
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A baseline given as a file: imported into a temporary store (`None`: a run id).
fn baseline_file(given: &str, store: &RunStore) -> anyhow::Result<Option<FileBaseline>> {
    let path = Path::new(given);
    if !path.is_file() {
        if store.get_run(given)?.is_none() && (given.ends_with(".jsonl") || given.contains('/')) {
            bail!("baseline {given}: no such file (nor a stored run)");
        }
        return Ok(None);
    }
    let dir = tempfile::tempdir().context("cannot make a temporary directory")?;
    let db = dir.path().join("baseline.db");
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {given}"))?;
    let mut lines = std::io::BufReader::new(file).lines();
    let header = lines.next().transpose()?.unwrap_or_default();
    let not_export = |e: &dyn std::fmt::Display| {
        anyhow::anyhow!("baseline {given} is not a run export (`mindgate export --jsonl`): {e}")
    };
    let mut import = RunImport::begin(&db, &header, None).map_err(|e| not_export(&e))?;
    for (i, line) in lines.enumerate() {
        let line = line?;
        if !line.trim().is_empty() {
            import
                .add_line(i as u64 + 2, &line)
                .map_err(|e| not_export(&e))?;
        }
    }
    let report = import.finish().map_err(|e| not_export(&e))?;
    let store = RunStore::open(&db)?;
    Ok(Some(FileBaseline {
        store,
        run_id: report.run_id,
        _dir: dir,
    }))
}

fn subject(store: &RunStore, run_id: &str) -> anyhow::Result<Subject> {
    let summary = store
        .get_run(run_id)?
        .with_context(|| format!("no run {run_id}"))?;
    let projection = store
        .projection(run_id)?
        .with_context(|| format!("no run {run_id}"))?;
    let (_, details) = projection.into_details();
    let annotations = store.list_annotations(&AnnotationFilter {
        run_id: Some(run_id.to_owned()),
        ..AnnotationFilter::default()
    })?;
    Ok(Subject {
        summary,
        details,
        annotations,
    })
}

fn events(store: &RunStore, run_id: &str) -> anyhow::Result<Vec<StoredEvent>> {
    let mut out = Vec::new();
    let mut after = None;
    while let Some(page) = store.events(run_id, after, Some(mindgate_store::MAX_EVENT_PAGE))? {
        out.extend(page.events);
        if !page.has_more {
            break;
        }
        after = page.next_after_seq;
    }
    Ok(out)
}

fn human(
    run_id: &str,
    baseline: &str,
    outcomes: &[RuleOutcome],
    diff: &mindgate_store::RunDiff,
    link: &dyn Fn(Option<&str>) -> String,
) -> String {
    let mut o = format!("check run {run_id} against baseline {baseline}\n");
    for r in outcomes {
        let mark = if r.passed { "PASS" } else { "FAIL" };
        let _ = writeln!(o, "  {mark}  {}: {}", r.name, r.message);
        if !r.passed {
            let _ = writeln!(o, "        {}", link(r.node_id.as_deref()));
        }
    }
    if let Some(d) = &diff.first_divergence {
        let _ = writeln!(o, "first divergence: {} ({:?})", d.node_id, d.difference);
    }
    let failed = outcomes.iter().filter(|r| !r.passed).count();
    if failed == 0 {
        let _ = writeln!(o, "passed: {} rule(s)", outcomes.len());
    } else {
        let _ = writeln!(o, "FAILED: {failed} of {} rule(s)", outcomes.len());
    }
    o
}

/// Stores the result with the run (an annotation of kind `check`); a failure to store is
/// reported and does not change the check's exit status.
fn store_result(route: anyhow::Result<WriteRoute>, run_id: &str, result: serde_json::Value) {
    let new = NewAnnotation {
        run_id: run_id.to_owned(),
        kind: AnnotationKind::Check,
        check: Some(result),
        ..NewAnnotation::default()
    };
    let stored = route.and_then(|route| super::annotate::write(&route, new));
    if let Err(e) = stored {
        eprintln!("warning: the check's result was not stored with the run: {e:#}");
    }
}
