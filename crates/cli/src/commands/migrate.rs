//! `mindgate migrate`: bring the run database's schema up to this build's.

use std::process::ExitCode;

use anyhow::Context;
use mindgate_home::Home;

use crate::args::MigrateArgs;
use crate::db_arg::RunDb;

/// Migrates the database named by `--db` / `MINDGATE_DB` (default the home's file).
pub fn run(args: &MigrateArgs) -> anyhow::Result<ExitCode> {
    let database = RunDb::or_default(args.db.as_ref(), || Home::from_env().run_db());
    let report = mindgate_store::migrate(&database)
        .with_context(|| format!("cannot migrate the run database {database}"))?;
    if args.json {
        let body = serde_json::json!({
            "database": database.to_string(),
            "from": report.from,
            "to": report.to,
            "applied": report.applied,
        });
        super::write_stdout(&format!("{body}\n"))?;
    } else if report.applied.is_empty() {
        super::write_stdout(&format!(
            "{database}: schema version {} is current\n",
            report.to
        ))?;
    } else {
        let applied: Vec<String> = report.applied.iter().map(i64::to_string).collect();
        super::write_stdout(&format!(
            "{database}: schema version {} -> {} (applied {})\n",
            report.from,
            report.to,
            applied.join(", ")
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
