//! The state every handler shares.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use mindgate_store::{Committed, Refusal, RunStore, Writer};
use serde_json::{Map, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::ServeConfig;
use crate::hub::{Hub, HubRefusal};

/// Capacity (in commits) of the live feed before slow subscribers lag and re-read.
pub const FEED_CAPACITY: usize = 4_096;

/// Why `/ingest` dropped a frame it could parse (each one is counted in
/// `/health.dropped` and, rate-limited, told to the app as `ingest.refused`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// `seq` above 2^63−1 (the store's integers).
    SeqOutOfRange,
    /// `runId` over its size limit.
    RunIdTooLong,
    /// A `nodeId` / `parentId` / `instanceId` / `pauseId` over its size limit.
    IdTooLong,
    /// A name (node, app, run, `hello.sdk`) over its size limit.
    NameTooLong,
    /// An unknown envelope `type` over its size limit.
    TypeTooLong,
    /// An event addressed to runId `"*"` (reserved for handshake and controls).
    WildcardRunId,
    /// A control (`exec.resume`, `breakpoint.*`, `mode.set`) sent on `/ingest`.
    ControlOnIngest,
    /// A second `hello` (or a `hello.ack`) on an attached connection.
    RepeatedHello,
    /// An event for a run another connection owns.
    RunClaim,
    /// An `exec.paused` beyond the held-gate limits.
    PauseLimit,
    /// An event opening a run beyond the per-connection unfinished-run limit.
    RunLimit,
    /// A connection refused because too many others had not sent `hello` yet.
    PendingHelloLimit,
}

impl Dropped {
    /// Every reason, in the order of [`Stats::dropped`].
    pub const ALL: [Dropped; 12] = [
        Dropped::SeqOutOfRange,
        Dropped::RunIdTooLong,
        Dropped::IdTooLong,
        Dropped::NameTooLong,
        Dropped::TypeTooLong,
        Dropped::WildcardRunId,
        Dropped::ControlOnIngest,
        Dropped::RepeatedHello,
        Dropped::RunClaim,
        Dropped::PauseLimit,
        Dropped::RunLimit,
        Dropped::PendingHelloLimit,
    ];

    /// Position in [`Dropped::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// A stable camelCase code (the `/health.dropped` key and the notice's `code`).
    pub fn code(self) -> &'static str {
        match self {
            Dropped::SeqOutOfRange => "seqOutOfRange",
            Dropped::RunIdTooLong => "runIdTooLong",
            Dropped::IdTooLong => "idTooLong",
            Dropped::NameTooLong => "nameTooLong",
            Dropped::TypeTooLong => "typeTooLong",
            Dropped::WildcardRunId => "wildcardRunId",
            Dropped::ControlOnIngest => "controlOnIngest",
            Dropped::RepeatedHello => "repeatedHello",
            Dropped::RunClaim => "runClaim",
            Dropped::PauseLimit => "pauseLimit",
            Dropped::RunLimit => "runLimit",
            Dropped::PendingHelloLimit => "pendingHelloLimit",
        }
    }
}

impl From<Refusal> for Dropped {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::SeqOutOfRange => Dropped::SeqOutOfRange,
            Refusal::RunIdTooLong => Dropped::RunIdTooLong,
            Refusal::IdTooLong(_) => Dropped::IdTooLong,
            Refusal::NameTooLong(_) => Dropped::NameTooLong,
            Refusal::TypeTooLong => Dropped::TypeTooLong,
        }
    }
}

impl From<HubRefusal> for Dropped {
    fn from(r: HubRefusal) -> Self {
        match r {
            HubRefusal::PauseLimit => Dropped::PauseLimit,
            HubRefusal::RunLimit => Dropped::RunLimit,
        }
    }
}

/// Counters exposed by `GET /health`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Frames dropped as invalid.
    pub invalid_frames: AtomicU64,
    /// Events refused by run claims.
    pub refused_events: AtomicU64,
    /// Events handed to the writer.
    pub accepted_events: AtomicU64,
    /// Frames dropped by reason, indexed by [`Dropped::index`].
    pub dropped: [AtomicU64; Dropped::ALL.len()],
    /// `/ingest` connections that have not sent `hello` yet.
    pub pending_hellos: AtomicUsize,
}

impl Stats {
    /// Adds one to a counter.
    pub fn bump(counter: &AtomicU64) -> u64 {
        counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Counts one dropped frame; returns the new total for that reason.
    pub fn drop_frame(&self, why: Dropped) -> u64 {
        self.dropped
            .get(why.index())
            .map_or(0, |c| c.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Dropped frames so far for one reason.
    pub fn dropped_count(&self, why: Dropped) -> u64 {
        self.dropped
            .get(why.index())
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// `{code: count}` for every reason (the `/health.dropped` object).
    pub fn dropped_json(&self) -> Value {
        let map: Map<String, Value> = Dropped::ALL
            .iter()
            .map(|d| (d.code().to_owned(), Value::from(self.dropped_count(*d))))
            .collect();
        Value::Object(map)
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
    /// The agent token ([`crate::guard::principal`]), derived from the control token.
    pub agent_token: Arc<str>,
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
    /// The shared live projections of the runs `/ws/ui` viewers follow as graphs.
    pub live_graphs: Arc<crate::live_graphs::LiveGraphs>,
    /// Shared, bounded graph builds for `GET /api/runs/{id}/graph`.
    pub graph_reads: Arc<crate::graph_reads::GraphReads>,
    /// The agent-memory store (`/api/memory/…` and the `/mcp` memory tools), opened on
    /// first use.
    pub memory: Arc<mindgate_memory::agent::LazyMemory>,
    /// The live state of OTLP traces (`POST /v1/traces`).
    pub otlp: Arc<crate::otlp_traces::OtlpTraces>,
    /// Woken after a memory mutation through this server (the memory feed).
    pub memory_changed: Arc<tokio::sync::Notify>,
    /// The coding-agent sessions (`/task-graph/api/…`, and the task a procedure is induced
    /// from).
    pub(crate) task_graphs: Arc<crate::task_graph::TaskGraphs>,
}

impl AppState {
    /// The ingest counters of `/health` beyond the basic ones: `dropped`
    /// (by reason) and `store` (rows the writer refused or isolated).
    pub fn ingest_health(&self) -> Value {
        let w = self.writer.stats();
        serde_json::json!({
            "dropped": self.stats.dropped_json(),
            "store": {
                "refusedRows": w.refused_rows,
                "failedRows": w.failed_rows,
                "isolatedBatches": w.isolated_batches,
            },
        })
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}
