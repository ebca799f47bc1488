//! The contract suite against the SQLite backend (in memory, test embedder).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod contract;

use std::sync::Arc;

use mindgate_memory::time::ManualClock;
use mindgate_memory::{OpenOptions, SqliteMemory};

fn make(clock: Arc<ManualClock>) -> SqliteMemory {
    SqliteMemory::open_in_memory(
        OpenOptions::default()
            .clock(clock)
            .embedder(Arc::new(common::TestEmbedder::new())),
    )
    .unwrap()
}

contract_suite!(make);

#[test]
fn fact_at_names_believed_and_valid() {
    contract::fact_at_names_believed_and_valid(&make, &|s, id, as_of, known_at| {
        s.fact_at(id, as_of, known_at)
    });
}

#[test]
fn search_agrees_with_belief_at_every_instant() {
    contract::search_agrees_with_belief_at_every_instant(
        &make,
        &|s, id, as_of, known_at| s.fact_at(id, as_of, known_at),
        0x5eed_0001,
        60,
        14,
    );
}
