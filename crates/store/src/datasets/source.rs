//! What an example taken from a stored run says, computed once here for every surface:
//! a node instance's input and output, or a whole run's agent input and final output.
//! `mindgate check` reads the run's final output by the same function ([`final_output`]).

use serde_json::Value;

use super::{ExampleSource, NewExample, bad};
use crate::error::Result;
use crate::projection::{InstanceDetail, NodeDetail};

fn started(i: &InstanceDetail) -> i64 {
    i.summary.started_at.unwrap_or(i64::MAX)
}

fn is_root(n: &NodeDetail) -> bool {
    n.parent_id.is_none() && !n.hinted
}

/// The instance of the picked nodes that finished last with an output.
fn last_output<'a>(
    details: &'a [NodeDetail],
    pick: &dyn Fn(&NodeDetail) -> bool,
) -> Option<&'a Value> {
    details
        .iter()
        .filter(|n| pick(n))
        .flat_map(|n| n.instances.iter())
        .filter(|i| i.output.is_some())
        .max_by_key(|i| (i.summary.finished_at, i.summary.started_at))
        .and_then(|i| i.output.as_ref())
}

/// The instance of the picked nodes that started first with an input.
fn first_input<'a>(
    details: &'a [NodeDetail],
    pick: &dyn Fn(&NodeDetail) -> bool,
) -> Option<&'a Value> {
    details
        .iter()
        .filter(|n| pick(n))
        .flat_map(|n| n.instances.iter())
        .filter(|i| i.input.is_some())
        .min_by_key(|i| (started(i), i.summary.finished_at))
        .and_then(|i| i.input.as_ref())
}

/// A run's final output: the output of the root node instance that finished last, else
/// (a root without one, as a `graphmind` run's agent node) of the instance that finished
/// last with an output.
pub fn final_output(details: &[NodeDetail]) -> Option<&Value> {
    last_output(details, &is_root).or_else(|| last_output(details, &|_| true))
}

/// A run's agent input: the input of the root node instance that started first, else of
/// the instance that started first with an input.
pub fn agent_input(details: &[NodeDetail]) -> Option<&Value> {
    first_input(details, &is_root).or_else(|| first_input(details, &|_| true))
}

/// The example a run, or one node instance of it, makes: `details` are the run's node
/// details. For a node, its input and output (the instance `instance`, else its last
/// one); for the run, its agent input and final output. Refused when there is no such
/// node or instance, or no input to take.
pub fn example_of(
    run_id: &str,
    details: &[NodeDetail],
    node_id: Option<&str>,
    instance_id: Option<&str>,
) -> Result<NewExample> {
    let (input, expected, source) = match node_id {
        None => {
            if instance_id.is_some() {
                return Err(bad("instanceId needs nodeId"));
            }
            let input = agent_input(details)
                .ok_or_else(|| bad(format!("run {run_id} has no agent input to take")))?;
            let source = ExampleSource {
                run_id: run_id.to_owned(),
                node_id: None,
                instance_id: None,
            };
            (input, final_output(details), source)
        }
        Some(node) => {
            let detail = details
                .iter()
                .find(|n| n.node_id == node)
                .ok_or_else(|| bad(format!("run {run_id} has no node {node}")))?;
            let instance = match instance_id {
                Some(id) => detail
                    .instances
                    .iter()
                    .find(|i| i.summary.instance_id == id)
                    .ok_or_else(|| bad(format!("node {node} has no instance {id}")))?,
                None => detail
                    .instances
                    .iter()
                    .max_by_key(|i| (started(i), i.summary.finished_at))
                    .ok_or_else(|| bad(format!("node {node} never ran")))?,
            };
            let input = instance.input.as_ref().ok_or_else(|| {
                bad(format!(
                    "instance {} of node {node} has no input to take",
                    instance.summary.instance_id
                ))
            })?;
            let source = ExampleSource {
                run_id: run_id.to_owned(),
                node_id: Some(node.to_owned()),
                instance_id: Some(instance.summary.instance_id.clone()),
            };
            (input, instance.output.as_ref(), source)
        }
    };
    Ok(NewExample {
        input: input.clone(),
        expected: expected.cloned().filter(|e| !e.is_null()),
        metadata: serde_json::Map::new(),
        source: Some(source),
    })
}
