//! `mindgate demo`: a thin call into `mindgate_sdk::demo`.

use std::process::ExitCode;

use mindgate_sdk::demo::{DemoOptions, RunEnd, run_demo};

use crate::args::DemoArgs;

/// Runs the scripted demo agent and prints one line per milestone.
pub fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let options = DemoOptions {
        url: args.url.clone(),
        runs: usize::from(args.runs),
        ..DemoOptions::default()
    };
    let report = run_demo(options, |line| println!("{line}"))?;
    let count = |end: RunEnd| report.runs.iter().filter(|r| **r == end).count();
    println!(
        "demo finished: {} ok, {} error, {} aborted",
        count(RunEnd::Ok),
        count(RunEnd::Error),
        count(RunEnd::Aborted)
    );
    Ok(ExitCode::SUCCESS)
}
