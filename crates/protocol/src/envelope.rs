//! The envelope every frame travels in, and how to build and serialise one.

use serde::Serialize;
use serde_json::Value;

use crate::PROTOCOL_VERSION;
use crate::extra::Extra;
use crate::message::Message;

/// One frame of a known type: `{gm, seq, ts, runId, type, payload}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    /// Protocol major version (always [`PROTOCOL_VERSION`] once parsed).
    pub gm: u32,
    /// Per-sender monotonically increasing counter; replays keep it.
    pub seq: u64,
    /// Sender wall clock, epoch milliseconds.
    pub ts: i64,
    /// Owning run, or [`crate::WILDCARD_RUN_ID`].
    #[serde(rename = "runId")]
    pub run_id: String,
    /// The typed `type` + `payload`.
    #[serde(flatten)]
    pub message: Message,
    /// Unknown envelope fields, kept as received.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Envelope {
    /// Builds an envelope stamped with the current wall clock.
    ///
    /// ```
    /// use mindgate_protocol::{Envelope, Message, ModeSet, RunMode, WILDCARD_RUN_ID};
    /// let env = Envelope::new(WILDCARD_RUN_ID, 7, Message::ModeSet(ModeSet {
    ///     mode: RunMode::Step, extra: Default::default() }));
    /// assert!(env.to_json().contains(r#""type":"mode.set""#));
    /// ```
    pub fn new(run_id: impl Into<String>, seq: u64, message: Message) -> Self {
        Envelope {
            gm: PROTOCOL_VERSION,
            seq,
            ts: now_ms(),
            run_id: run_id.into(),
            message,
            extra: Extra::new(),
        }
    }

    /// Replaces the timestamp.
    #[must_use]
    pub fn with_ts(mut self, ts: i64) -> Self {
        self.ts = ts;
        self
    }

    /// The envelope `type` string.
    pub fn type_name(&self) -> &'static str {
        self.message.type_name()
    }

    /// Serialises to one JSON text frame. Never fails.
    pub fn to_json(&self) -> String {
        to_json_or_marker(self)
    }

    /// Serialises to a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A valid envelope whose `type` this version does not know (forward compatibility).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpaqueEnvelope {
    /// Protocol major version.
    pub gm: u32,
    /// Sender sequence number.
    pub seq: u64,
    /// Sender wall clock, epoch ms.
    pub ts: i64,
    /// Owning run.
    #[serde(rename = "runId")]
    pub run_id: String,
    /// The unknown type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The payload, untouched.
    pub payload: Extra,
    /// Unknown envelope fields.
    #[serde(flatten)]
    pub extra: Extra,
}

impl OpaqueEnvelope {
    /// Serialises to one JSON text frame. Never fails.
    pub fn to_json(&self) -> String {
        to_json_or_marker(self)
    }
}

fn to_json_or_marker<T: Serialize>(value: &T) -> String {
    // Serialising these types cannot fail (string keys only, no custom impls),
    // but the signature promises a frame, so degrade to a marker rather than panic.
    serde_json::to_string(value)
        .unwrap_or_else(|e| format!(r#"{{"error":{}}}"#, Value::String(e.to_string())))
}

/// The current wall clock in epoch milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
