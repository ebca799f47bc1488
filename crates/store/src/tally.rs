//! A run's counters, advanced one stored event at a time: the one rule the writer (live
//! runs) and an import (a run file, whose header's counters are not trusted) both use.

use std::collections::{HashMap, HashSet};

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
        EventFacts::RunStarted { .. }
        | EventFacts::RunFinished { .. }
        | EventFacts::Paused { .. }
        | EventFacts::Resumed { .. }
        | EventFacts::Plain => {}
    }
}

/// Most holds of one run tracked (open, and released); a run that opens more (no real app does)
/// has the extra ones left out of its held time.
pub(crate) const MAX_OPEN_HOLDS: usize = 10_000;

/// What one stored event did to a run's held time ([`HoldClock::on_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HoldChange {
    /// Nothing (not a hold event, or a hold began).
    None,
    /// A hold was released after this many ms: add them to the run's held time.
    Released(i64),
    /// A hold this clock did not see begin was released (it began before the writer
    /// loaded the run): its start is in the stored `exec.paused` event of `pause_id`.
    UnknownStart {
        /// The released hold.
        pause_id: String,
        /// When it was released (the `exec.resumed` event's `ts`).
        at: i64,
    },
}

/// A run's open holds, advanced one stored event at a time: the one rule the writer and
/// an import use for the run row's held time, matching the projection's
/// ([`crate::projection::RunTimes::held_ms`]): a hold lasts from `exec.paused` to the
/// `exec.resumed` with its `pauseId`, never below 0; a hold released twice counts once.
#[derive(Debug, Default, Clone)]
pub(crate) struct HoldClock {
    /// Holds begun and not released: pause id → `ts` of its `exec.paused`.
    open: HashMap<String, i64>,
    /// Holds released (a second `exec.resumed` of one counts nothing).
    released: HashSet<String>,
}

impl HoldClock {
    /// Folds one stored event in.
    pub(crate) fn on_event(&mut self, event: &NewEvent) -> HoldChange {
        match &event.facts {
            EventFacts::Paused { pause_id } => {
                self.released.remove(pause_id);
                if self.open.len() < MAX_OPEN_HOLDS || self.open.contains_key(pause_id) {
                    self.open.insert(pause_id.clone(), event.ts);
                }
                HoldChange::None
            }
            EventFacts::Resumed { pause_id } => {
                if self.released.contains(pause_id) {
                    return HoldChange::None;
                }
                if self.released.len() < MAX_OPEN_HOLDS {
                    self.released.insert(pause_id.clone());
                }
                match self.open.remove(pause_id) {
                    Some(since) => HoldChange::Released(held_between(since, event.ts)),
                    None => HoldChange::UnknownStart {
                        pause_id: pause_id.clone(),
                        at: event.ts,
                    },
                }
            }
            _ => HoldChange::None,
        }
    }
}

/// The ms of a hold from `since` to `until`, never below 0.
pub(crate) fn held_between(since: i64, until: i64) -> i64 {
    until.saturating_sub(since).max(0)
}
