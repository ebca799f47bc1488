//! `mindgate diff <RUN_A> <RUN_B>`: two runs side by side ([`RunStore::diff_runs`]).

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use mindgate_home::Home;
use mindgate_store::diff::{Difference, NodeSide, RunDiff, RunSide};
use mindgate_store::{Cost, DiffError, RunStore, TokenCounts};

use super::export::open_store;
use super::write_stdout;
use crate::args::DiffArgs;
use crate::db_arg::RunDb;

/// Runs `mindgate diff`: exit 0 when the runs did the same, 1 when they diverge.
pub fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let db = RunDb::or_default(args.db.as_ref(), || Home::from_env().run_db());
    let store: RunStore = open_store(&db)?;
    let run_a = super::run_ids::resolve_run_id(&store, &db, &args.run_a)?;
    let run_b = super::run_ids::resolve_run_id(&store, &db, &args.run_b)?;
    let diff = match store.diff_runs(&run_a, &run_b) {
        Ok(diff) => diff,
        Err(DiffError::NotFound(id)) => anyhow::bail!("run {id} not found in {db}"),
        Err(e) => return Err(e).context("cannot compare the runs"),
    };
    if args.json {
        let mut text = serde_json::to_string_pretty(&diff)?;
        text.push('\n');
        write_stdout(&text)?;
    } else {
        write_stdout(&render(&diff))?;
    }
    Ok(if diff.first_divergence.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// How a difference reads in the table.
pub fn difference_label(difference: Difference) -> &'static str {
    match difference {
        Difference::OnlyInA => "only in A",
        Difference::OnlyInB => "only in B",
        Difference::Instances => "instances",
        Difference::Status => "status",
        Difference::Input => "input",
        Difference::Output => "output",
        Difference::Error => "error",
    }
}

fn tokens(t: &TokenCounts) -> String {
    let total = t.input + t.output + t.cache_read + t.cache_write;
    if total == 0 {
        "-".to_owned()
    } else {
        total.to_string()
    }
}

/// A cost as the CLI tables print it: `-` for nothing, `unpriced` when a model has no price.
pub(crate) fn cost(c: &Cost) -> String {
    match c.usd {
        Some(usd) if usd == 0.0 && c.unpriced_models.is_empty() => "-".to_owned(),
        Some(usd) => mindgate_pricing::format_usd(usd),
        None => "unpriced".to_owned(),
    }
}

fn millis(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |ms| format!("{ms:.0}"))
}

fn run_line(o: &mut String, label: &str, run: &RunSide) {
    let _ = writeln!(
        o,
        "{label}  {}  {:?}  {}  {} ms  {} nodes  {} tokens  {}",
        run.run_id,
        run.name,
        run.status,
        run.duration_ms
            .map_or_else(|| "-".to_owned(), |d| d.to_string()),
        run.nodes,
        tokens(&run.tokens),
        run.cost
    );
}

fn side_cells(side: Option<&NodeSide>) -> [String; 5] {
    match side {
        Some(s) => [
            s.instances.to_string(),
            format!("{:?}", s.status).to_lowercase(),
            millis(s.duration_ms),
            tokens(&s.tokens),
            cost(&s.cost),
        ],
        None => [
            "-".to_owned(),
            "absent".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
        ],
    }
}

/// The table `mindgate diff` prints.
pub fn render(diff: &RunDiff) -> String {
    let mut o = String::new();
    run_line(&mut o, "A", &diff.a);
    run_line(&mut o, "B", &diff.b);
    match &diff.first_divergence {
        Some(d) => {
            let _ = write!(
                o,
                "first divergence: {} ({}",
                d.node_id,
                difference_label(d.difference)
            );
            if let Some(i) = d.instance {
                let _ = write!(o, ", instance {}", i + 1);
            }
            if let Some(seq) = d.seq {
                let _ = write!(o, ", seq {seq}");
            }
            o.push_str(")\n");
        }
        None => o.push_str("no divergence: the runs did the same\n"),
    }
    o.push('\n');
    let width = diff
        .nodes
        .iter()
        .map(|n| n.node_id.chars().count() + 1)
        .max()
        .unwrap_or(4)
        .clamp(5, 48);
    let header = [
        "NODE", "A#", "A STATUS", "A MS", "A TOK", "A COST", "B#", "B STATUS", "B MS", "B TOK",
        "B COST", "DIFFERS",
    ];
    let widths = [width, 3, 8, 7, 7, 9, 3, 8, 7, 7, 9, 0];
    let mut row = |cells: &[String]| {
        let mut line = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let _ = write!(line, "{cell:<w$}");
        }
        o.push_str(line.trim_end());
        o.push('\n');
    };
    row(&header.map(str::to_owned));
    let first = diff.first_divergence.as_ref().map(|d| d.node_id.as_str());
    for node in &diff.nodes {
        let marker = if Some(node.node_id.as_str()) == first {
            ">"
        } else {
            " "
        };
        let mut name: String = node.node_id.chars().take(width - 1).collect();
        name.insert_str(0, marker);
        let mut cells = vec![name];
        cells.extend(side_cells(node.a.as_ref()));
        cells.extend(side_cells(node.b.as_ref()));
        let differs: Vec<&str> = node
            .differences
            .iter()
            .map(|d| difference_label(*d))
            .collect();
        cells.push(differs.join(", "));
        row(&cells);
    }
    for node in diff.nodes.iter().filter(|n| !n.changes.is_empty()) {
        let _ = writeln!(o, "\n{}:", node.node_id);
        for change in &node.changes {
            let show = |v: &Option<serde_json::Value>| {
                v.as_ref().map_or_else(String::new, |v| {
                    let text = v.to_string();
                    if text.chars().count() > 60 {
                        format!("{}…", text.chars().take(60).collect::<String>())
                    } else {
                        text
                    }
                })
            };
            let path = if change.path.is_empty() {
                "(whole value)"
            } else {
                &change.path
            };
            let _ = writeln!(
                o,
                "  #{} {} {:?} {path}: {} → {}",
                change.instance + 1,
                change.field,
                change.op,
                show(&change.a),
                show(&change.b)
            );
        }
        if node.more_changes > 0 {
            let _ = writeln!(o, "  … {} more", node.more_changes);
        }
    }
    o
}
