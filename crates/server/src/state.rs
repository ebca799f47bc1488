//! The state every handler shares.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mindgate_store::{Committed, RunStore, Writer};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::ServeConfig;
use crate::hub::Hub;

/// Capacity (in commits) of the live feed before slow subscribers lag and re-read.
pub const FEED_CAPACITY: usize = 4_096;

/// Counters exposed by `GET /health`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Frames dropped as invalid.
    pub invalid_frames: AtomicU64,
    /// Events refused by run claims.
    pub refused_events: AtomicU64,
    /// Events handed to the writer.
    pub accepted_events: AtomicU64,
}

impl Stats {
    /// Adds one to a counter.
    pub fn bump(counter: &AtomicU64) -> u64 {
        counter.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Shared server state.
#[derive(Clone)]
pub struct AppState {
    /// Apps, claims, pauses, breakpoints.
    pub hub: Arc<Hub>,
    /// Reads.
    pub store: Arc<RunStore>,
    /// Writes.
    pub writer: Writer,
    /// Committed batches, for live subscribers.
    pub feed: broadcast::Sender<Arc<Committed>>,
    /// The per-start control token.
    pub token: Arc<str>,
    /// Settings.
    pub config: Arc<ServeConfig>,
    /// The bound port (for the Origin check).
    pub port: u16,
    /// Cancelled on shutdown.
    pub shutdown: CancellationToken,
    /// WebSocket tasks, awaited on shutdown.
    pub tasks: TaskTracker,
    /// Counters.
    pub stats: Arc<Stats>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}
