//! Plain data types the store reads and writes.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The lifecycle state of a run as the store sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Events are (or may still be) arriving.
    Running,
    /// `run.finished` with status `ok`.
    Ok,
    /// `run.finished` with status `error`.
    Error,
    /// `run.finished` with status `aborted`.
    Aborted,
    /// The app went away without finishing the run.
    Abandoned,
}

impl RunState {
    /// Every state, in declaration order.
    pub const ALL: &'static [RunState] = &[
        RunState::Running,
        RunState::Ok,
        RunState::Error,
        RunState::Aborted,
        RunState::Abandoned,
    ];

    /// The stored / wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Ok => "ok",
            RunState::Error => "error",
            RunState::Aborted => "aborted",
            RunState::Abandoned => "abandoned",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        RunState::ALL.iter().copied().find(|st| st.as_str() == s)
    }

    /// Whether the run has ended (any state but `running`).
    pub fn is_terminal(self) -> bool {
        self != RunState::Running
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Event, node and error counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Stored events.
    pub events: u64,
    /// Distinct logical nodes that emitted events.
    pub nodes: u64,
    /// `node.error` events.
    pub errors: u64,
}

/// A run's duration in ms, the one rule every surface shows (`docs/glossary.md`):
/// `finished_at - started_at` once the run ended (finished or abandoned); while it runs,
/// up to `now_ms`, the reader's clock — a run held at a gate keeps growing, it is not
/// frozen at its latest event. Never negative.
pub fn run_duration_ms(started_at: i64, finished_at: Option<i64>, now_ms: i64) -> i64 {
    finished_at
        .unwrap_or(now_ms)
        .saturating_sub(started_at)
        .max(0)
}

/// A run's work time in ms: its duration ([`run_duration_ms`]) less the time it was held
/// at gates (`held_ms`, the released holds), never below 0. While the run runs it grows
/// with the duration (work so far); the one rule the run list, run detail, `mindgate runs`
/// and the viewer's run bar show (`docs/glossary.md`).
pub fn run_work_ms(duration_ms: i64, held_ms: i64) -> i64 {
    duration_ms.saturating_sub(held_ms.max(0)).max(0)
}

/// Token usage summed over a run (non-inclusive `usage` only, so nothing counts twice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// One row of the run list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// Run id as the app chose it.
    pub id: String,
    /// Application name.
    pub app: String,
    /// Display name (`meta.name`, else the app name).
    pub name: String,
    /// Lifecycle state.
    pub status: RunState,
    /// Epoch ms of `run.started` (or of the first event).
    pub started_at: i64,
    /// Epoch ms of `run.finished` (or of abandonment).
    pub finished_at: Option<i64>,
    /// The run's duration ([`run_duration_ms`]): `finishedAt - startedAt`, or while it
    /// runs up to the moment it was read (so a held run's duration grows).
    pub duration_ms: Option<i64>,
    /// Time held at gates: the sum of its released holds (`exec.paused` to the matching
    /// `exec.resumed`), kept by the writer as events arrive.
    pub held_ms: i64,
    /// Work time ([`run_work_ms`]): `durationMs` less `heldMs`; grows while it runs.
    pub work_ms: Option<i64>,
    /// Counts.
    pub counts: Counts,
    /// Token usage.
    pub usage: UsageTotals,
    /// What the run's usage cost (read with the run: `GET /api/runs`, `GET /api/runs/:id`;
    /// absent from the summaries the live feed sends while the run is written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<mindgate_pricing::Cost>,
    /// Where the run came from: `live`, `import` or `demo`.
    pub source: String,
    /// Its thread ([`crate::threads::run_keys`]: meta `threadId`, `conversationId` or
    /// `sessionId`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// Its user (meta `userId`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Its tags (meta `tags`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// `run.started` metadata, as sent.
    pub meta: Option<Value>,
    /// The instrumentation library (`run.started.sdk`).
    pub sdk: Option<Value>,
    /// Highest stored `seq`.
    pub last_seq: Option<u64>,
    /// Epoch ms of the latest event.
    pub last_event_at: i64,
}

/// Which runs [`crate::RunStore::list_runs`] returns.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFilter {
    /// At most this many (default 50, capped at 1,000).
    pub limit: Option<u32>,
    /// Only runs started strictly before this epoch ms (pagination cursor).
    pub before: Option<i64>,
    /// Only runs in this state.
    pub status: Option<RunState>,
    /// Only runs of this app.
    pub app: Option<String>,
    /// Substring of the run id, name or app (case-insensitive).
    pub q: Option<String>,
    /// Only runs of this thread.
    pub thread: Option<String>,
    /// Only runs of this user.
    pub user: Option<String>,
    /// Only runs carrying this tag.
    pub tag: Option<String>,
    /// Only runs with a live annotation carrying this label.
    pub label: Option<String>,
    /// Only runs with a live annotation of this verdict.
    pub verdict: Option<Verdict>,
    /// Only runs with a live annotation scored at least this.
    pub min_score: Option<f64>,
    /// Only runs with a live annotation scored at most this.
    pub max_score: Option<f64>,
}

impl RunFilter {
    /// Default page size.
    pub const DEFAULT_LIMIT: u32 = 50;
    /// Largest page size.
    pub const MAX_LIMIT: u32 = 1_000;

    /// The effective limit.
    pub fn effective_limit(&self) -> u32 {
        self.limit
            .unwrap_or(Self::DEFAULT_LIMIT)
            .clamp(1, Self::MAX_LIMIT)
    }
}

/// A page of runs, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunList {
    /// The runs.
    pub runs: Vec<RunSummary>,
    /// Pass as `before` to get the next page; `None` when this was the last.
    pub next_before: Option<i64>,
}

/// One stored event. Serialises as the envelope the app sent
/// (`{gm, seq, ts, runId, type, payload, …}`; whitespace is not preserved).
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// Owning run.
    pub run_id: String,
    /// Sender sequence number.
    pub seq: u64,
    /// Sender wall clock, epoch ms.
    pub ts: i64,
    /// Envelope `type`.
    pub type_name: String,
    /// Logical node, when the event is about one.
    pub node_id: Option<String>,
    /// The payload JSON object text, as received (whitespace removed).
    pub payload: Box<RawValue>,
    /// Unknown envelope fields (a JSON object text), when there were any.
    pub extra: Option<Box<RawValue>>,
}

impl StoredEvent {
    /// The payload parsed into a JSON value.
    pub fn payload_value(&self) -> Value {
        serde_json::from_str(self.payload.get()).unwrap_or(Value::Null)
    }

    /// The envelope as one JSON text frame.
    pub fn envelope_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

impl Serialize for StoredEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let extra: Option<Map<String, Value>> = self
            .extra
            .as_ref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok());
        let mut map = s.serialize_map(Some(6 + extra.as_ref().map_or(0, Map::len)))?;
        map.serialize_entry("gm", &mindgate_protocol::PROTOCOL_VERSION)?;
        map.serialize_entry("seq", &self.seq)?;
        map.serialize_entry("ts", &self.ts)?;
        map.serialize_entry("runId", &self.run_id)?;
        map.serialize_entry("type", &self.type_name)?;
        map.serialize_entry("payload", &self.payload)?;
        if let Some(extra) = extra {
            for (k, v) in extra {
                if !matches!(
                    k.as_str(),
                    "gm" | "seq" | "ts" | "runId" | "type" | "payload"
                ) {
                    map.serialize_entry(&k, &v)?;
                }
            }
        }
        map.end()
    }
}

/// A page of events in `seq` order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventPage {
    /// The events (serialised as envelopes).
    pub events: Vec<StoredEvent>,
    /// Pass as `afterSeq` for the next page (the last `seq` returned, or the
    /// `afterSeq` asked for when nothing newer exists).
    pub next_after_seq: Option<u64>,
    /// Whether more events follow.
    pub has_more: bool,
}

/// A search hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventHit {
    /// Run.
    pub run_id: String,
    /// Event `seq`.
    pub seq: u64,
    /// Event time, epoch ms.
    pub ts: i64,
    /// Event type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Node, if any.
    pub node_id: Option<String>,
    /// The node's execution, if the event names one.
    pub instance_id: Option<String>,
    /// Up to ~120 characters of the event's text around the match (whitespace as spaces).
    pub snippet: String,
    /// Where the match is in `snippet`: `[start, end)` in characters (`null` when the
    /// match is in a part of the payload the snippet does not show).
    pub mark: Option<[usize; 2]>,
}

/// A recent `node.error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorHit {
    /// Run.
    pub run_id: String,
    /// Run display name.
    pub run_name: String,
    /// Event `seq`.
    pub seq: u64,
    /// Event time, epoch ms.
    pub ts: i64,
    /// Failing node.
    pub node_id: Option<String>,
    /// Error class.
    pub name: String,
    /// Error message.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::run_duration_ms;

    #[test]
    fn a_running_run_lasts_until_now_and_an_ended_one_until_it_ended() {
        // Held since its last event at 1_040: read at 61_000 it has run a minute, not 1.04 s.
        assert_eq!(run_duration_ms(1_000, None, 61_000), 60_000);
        assert_eq!(run_duration_ms(1_000, Some(2_040), 61_000), 1_040);
        // A clock behind the run's start never gives a negative duration.
        assert_eq!(run_duration_ms(5_000, None, 4_000), 0);
    }
}

/// A verdict: thumbs up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Good.
    Up,
    /// Bad.
    Down,
}

impl Verdict {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Up => "up",
            Verdict::Down => "down",
        }
    }

    /// Parses `up` / `down`.
    pub fn parse(text: &str) -> Option<Verdict> {
        match text {
            "up" => Some(Verdict::Up),
            "down" => Some(Verdict::Down),
            _ => None,
        }
    }
}
