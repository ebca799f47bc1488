//! A run's counters, advanced one stored event at a time: the one rule the writer (live
//! runs) and an import (a run file, whose header's counters are not trusted) both use.

use std::collections::HashSet;

use crate::ingest::{EventFacts, NewEvent};
use crate::model::{Counts, UsageTotals};

/// Counts one stored event of a run: its events, the distinct logical nodes that emitted
/// events (`nodes` holds those seen), its `node.error` events and its non-inclusive usage.
pub(crate) fn count_event(
    counts: &mut Counts,
    usage: &mut UsageTotals,
    nodes: &mut HashSet<String>,
    event: &NewEvent,
) {
    counts.events += 1;
    if let Some(node) = &event.node_id
        && !nodes.contains(node)
    {
        nodes.insert(node.clone());
        counts.nodes += 1;
    }
    match &event.facts {
        EventFacts::NodeError => counts.errors += 1,
        EventFacts::Usage { input, output } => {
            usage.input_tokens = usage.input_tokens.saturating_add(*input);
            usage.output_tokens = usage.output_tokens.saturating_add(*output);
        }
        EventFacts::RunStarted { .. } | EventFacts::RunFinished { .. } | EventFacts::Plain => {}
    }
}
