//! The dataset tools: `dataset_add` (an agent's example taken from a run or one node
//! instance, recorded as an agent's), `dataset_list` and `dataset_show`
//! (`mindgate_store::datasets`).

use std::fmt::Write as _;

use mindgate_store::{AddExamples, Author, Dataset, Example, ExampleSource, RunStore};
use serde_json::json;

use crate::error::ToolError;
use crate::output::{Links, ToolOutput};
use crate::output_limits::cut_str;
use crate::params::{DatasetAddArgs, DatasetListArgs, DatasetShowArgs};
use crate::runs::check_id;

/// Most examples `dataset_show` returns.
pub const SHOW_EXAMPLES: usize = 50;
/// Longest value `dataset_show` prints in its text (characters).
const TEXT_VALUE_CHARS: usize = 200;

fn dataset_line(d: &Dataset) -> String {
    let mut s = format!("{} version {} ({} examples", d.name, d.version, d.examples);
    if d.version != d.latest {
        let _ = write!(s, "; newest version {}", d.latest);
    }
    s.push(')');
    s
}

fn example_line(e: &Example) -> String {
    let mut s = format!(
        "{}: input {}",
        e.id,
        cut_str(&e.input.to_string(), TEXT_VALUE_CHARS)
    );
    if let Some(x) = &e.expected {
        let _ = write!(
            s,
            ", expected {}",
            cut_str(&x.to_string(), TEXT_VALUE_CHARS)
        );
    }
    if let Some(src) = &e.source {
        let _ = write!(s, ", from run {}", src.run_id);
        if let Some(n) = &src.node_id {
            let _ = write!(s, " node {n}");
        }
    }
    s
}

/// `dataset_add`: the example a run (its agent input and final output) or a node
/// instance (its input and output) makes, added to a dataset as an agent's.
pub fn dataset_add(
    store: &RunStore,
    args: &DatasetAddArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    check_id("runId", &args.run_id)?;
    let add = AddExamples {
        from: Some(ExampleSource {
            run_id: args.run_id.clone(),
            node_id: args.node_id.clone().filter(|s| !s.is_empty()),
            instance_id: args.instance_id.clone().filter(|s| !s.is_empty()),
        }),
        metadata: args.metadata.clone().unwrap_or_default(),
        ..Default::default()
    };
    let mut author = Author::agent();
    author.name = Some("mcp".to_owned());
    // The tools read a SQLite file read-only; the write takes a connection of its own
    // (SQLite referees it against the server's writer).
    let (dataset, examples) = match store.database() {
        mindgate_store::Database::Sqlite(path) => {
            RunStore::open(&path)?.add_to_dataset(&args.dataset, add, author)?
        }
        mindgate_store::Database::Postgres(_) => {
            store.add_to_dataset(&args.dataset, add, author)?
        }
    };
    let mut text = format!("Added to {}\n", dataset_line(&dataset));
    for e in &examples {
        let _ = writeln!(text, "- {}", example_line(e));
    }
    let _ = write!(
        text,
        "{}\n(recorded as an agent's example; a person sees who added it)",
        links.run(&args.run_id)
    );
    Ok(ToolOutput::new(
        text,
        json!({ "dataset": dataset, "examples": examples }),
    ))
}

/// `dataset_list`: the datasets at their newest versions.
pub fn dataset_list(
    store: &RunStore,
    _args: &DatasetListArgs,
    _links: &Links,
) -> Result<ToolOutput, ToolError> {
    let datasets = store.list_datasets()?;
    let mut text = if datasets.is_empty() {
        "No datasets.".to_owned()
    } else {
        format!("{} dataset(s):\n", datasets.len())
    };
    for d in &datasets {
        let _ = writeln!(text, "- {}", dataset_line(d));
    }
    Ok(ToolOutput::new(text, json!({ "datasets": datasets })))
}

/// `dataset_show`: one version of a dataset (the newest by default) with its first
/// [`SHOW_EXAMPLES`] examples.
pub fn dataset_show(
    store: &RunStore,
    args: &DatasetShowArgs,
    _links: &Links,
) -> Result<ToolOutput, ToolError> {
    let (dataset, mut examples) = store.get_dataset(&args.dataset, args.version)?;
    let more = examples.len().saturating_sub(SHOW_EXAMPLES);
    examples.truncate(SHOW_EXAMPLES);
    let mut text = format!("{}\n", dataset_line(&dataset));
    for e in &examples {
        let _ = writeln!(text, "- {}", example_line(e));
    }
    if more > 0 {
        let _ = writeln!(
            text,
            "… {more} more (the HTTP API's GET /api/datasets/{}?version={} has them all)",
            dataset.name, dataset.version
        );
    }
    Ok(ToolOutput::new(
        text,
        json!({ "dataset": dataset, "examples": examples, "moreExamples": more }),
    ))
}
