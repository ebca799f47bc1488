//! The `diff_runs` tool: two runs compared by the store ([`RunStore::diff_runs`]), shaped
//! and bounded for a model, with deep links to the viewer's diff view and nodes.

use std::fmt::Write as _;

use mindgate_store::diff::{Difference, JsonChange, NodeDiff, RunDiff};
use mindgate_store::{DiffError, RunStore};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::output::{Links, ToolOutput};
use crate::output_limits::{cut_str, one_line, preview};
use crate::params::DiffRunsArgs;

/// Nodes that differ listed by `diff_runs` (the rest are counted).
pub const DIFF_MAX_NODES: usize = 50;
/// JSON changes listed per node.
pub const DIFF_MAX_CHANGES: usize = 10;
/// Characters of each changed value.
pub const DIFF_VALUE_CHARS: usize = 300;

fn label(d: Difference) -> &'static str {
    match d {
        Difference::OnlyInA => "only in A",
        Difference::OnlyInB => "only in B",
        Difference::Instances => "instance count",
        Difference::Status => "status",
        Difference::Input => "input",
        Difference::Output => "output",
        Difference::Error => "error",
    }
}

fn change_value(c: &JsonChange) -> Value {
    json!({
        "instance": c.instance,
        "field": c.field,
        "op": c.op,
        "path": c.path,
        "a": c.a.as_ref().map(|v| preview(v, DIFF_VALUE_CHARS).0),
        "b": c.b.as_ref().map(|v| preview(v, DIFF_VALUE_CHARS).0),
    })
}

fn node_value(n: &NodeDiff, diff: &RunDiff, links: &Links) -> Value {
    let link_of = |run: &str| links.node(run, &n.node_id);
    json!({
        "nodeId": n.node_id,
        "kind": n.kind,
        "a": n.a,
        "b": n.b,
        "differences": n.differences,
        "changes": n.changes.iter().take(DIFF_MAX_CHANGES).map(change_value).collect::<Vec<_>>(),
        "moreChanges": n.changes.len().saturating_sub(DIFF_MAX_CHANGES) + n.more_changes,
        "linkA": n.a.as_ref().map(|_| link_of(&diff.a.run_id)),
        "linkB": n.b.as_ref().map(|_| link_of(&diff.b.run_id)),
    })
}

fn check_id(field: &'static str, v: &str) -> Result<(), ToolError> {
    if v.trim().is_empty() {
        return Err(ToolError::bad(field, "must not be empty"));
    }
    if v.len() > 1_024 {
        return Err(ToolError::bad(field, "is longer than 1024 bytes"));
    }
    Ok(())
}

/// `diff_runs`: where two runs part, and what differs node by node.
pub fn diff_runs(
    store: &RunStore,
    args: &DiffRunsArgs,
    links: &Links,
) -> Result<ToolOutput, ToolError> {
    check_id("runA", &args.run_a)?;
    check_id("runB", &args.run_b)?;
    let diff = match store.diff_runs(&args.run_a, &args.run_b) {
        Ok(diff) => diff,
        Err(DiffError::NotFound(run_id)) => return Err(ToolError::UnknownRun { run_id }),
        Err(DiffError::Store(e)) => return Err(e.into()),
    };
    let link = links.diff(&diff.a.run_id, &diff.b.run_id);
    let mut text = String::new();
    for (name, side) in [("A", &diff.a), ("B", &diff.b)] {
        let _ = writeln!(
            text,
            "{name}: {} \"{}\" — {}, {} nodes, cost {}",
            side.run_id,
            cut_str(&side.name, 80),
            side.status,
            side.nodes,
            side.cost
        );
    }
    match &diff.first_divergence {
        Some(d) => {
            let _ = write!(
                text,
                "First divergence: {} ({}",
                d.node_id,
                label(d.difference)
            );
            if let Some(i) = d.instance {
                let _ = write!(text, ", instance {}", i + 1);
            }
            if let Some(seq) = d.seq {
                let _ = write!(text, ", seq {seq}");
            }
            text.push_str(").\n");
        }
        None => {
            text.push_str("No divergence: the runs did the same (inputs, outputs, statuses).\n")
        }
    }
    let differing: Vec<&NodeDiff> = diff
        .nodes
        .iter()
        .filter(|n| !n.differences.is_empty())
        .collect();
    if !differing.is_empty() {
        let _ = writeln!(text, "{} node(s) differ:", differing.len());
    }
    for n in differing.iter().take(DIFF_MAX_NODES) {
        let what: Vec<&str> = n.differences.iter().map(|d| label(*d)).collect();
        let _ = writeln!(text, "- {}: {}", n.node_id, what.join(", "));
        for c in n.changes.iter().take(3) {
            let show = |v: &Option<Value>| {
                v.as_ref()
                    .map_or_else(|| "∅".to_owned(), |v| one_line(v, 80))
            };
            let _ = writeln!(
                text,
                "    {} {} {}: {} → {}",
                c.field,
                serde_json::to_string(&c.op)
                    .unwrap_or_default()
                    .trim_matches('"'),
                if c.path.is_empty() {
                    "(whole value)"
                } else {
                    &c.path
                },
                show(&c.a),
                show(&c.b)
            );
        }
    }
    if differing.len() > DIFF_MAX_NODES {
        let _ = writeln!(text, "… and {} more.", differing.len() - DIFF_MAX_NODES);
    }
    let _ = write!(text, "Side by side in the viewer: {link}");
    let nodes: Vec<Value> = differing
        .iter()
        .take(DIFF_MAX_NODES)
        .map(|n| node_value(n, &diff, links))
        .collect();
    let value = json!({
        "a": diff.a,
        "b": diff.b,
        "firstDivergence": diff.first_divergence,
        "onlyInA": diff.only_in_a,
        "onlyInB": diff.only_in_b,
        "sameNodes": diff.nodes.len() - differing.len(),
        "differingNodes": nodes,
        "moreDifferingNodes": differing.len().saturating_sub(DIFF_MAX_NODES),
        "link": link,
    });
    Ok(ToolOutput::new(text, value))
}
