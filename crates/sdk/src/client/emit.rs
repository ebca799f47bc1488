//! Emitting events: each is serialised once into its frame, assigned its `seq`
//! and appended to the replay buffer (also the send queue), kept within the
//! payload budget; the implicit run and the loop-guard warnings.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mindgate_protocol::{Envelope, Message, NodeKind, RunStarted, SdkInfo};
use serde_json::{Map, Value};

use super::{SDK_NAME, SDK_VERSION, Shared};
use crate::buffer::{Frame, PLACEHOLDER_HEAD};
use crate::clock::now_ms;
use crate::config::{LoopMode, MAX_PAYLOAD_BYTES};
use crate::ids;
use crate::run::RunRef;
use crate::shrink::shrink_payload;

pub(super) fn sdk_info() -> SdkInfo {
    SdkInfo {
        name: SDK_NAME.to_owned(),
        version: SDK_VERSION.to_owned(),
        extra: Map::new(),
    }
}

pub(super) fn run_started(app: &str, meta: Map<String, Value>) -> Message {
    Message::RunStarted(RunStarted {
        app: app.to_owned(),
        sdk: sdk_info(),
        meta: Some(meta),
        extra: Map::new(),
    })
}

/// The frame [`Envelope::to_json`] would write for `message` in `run` with `seq` 0,
/// built without the envelope's flattening serialiser (the hot path of `emit`).
fn frame_text(run: &RunRef, ts: i64, message: &Message) -> Option<String> {
    use std::io::Write;
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(PLACEHOLDER_HEAD.as_bytes());
    write!(buf, "\"ts\":{ts},\"runId\":{}", run.id_json()).ok()?;
    let start = buf.len();
    // `{"type":…,"payload":…}` continues the envelope: its brace becomes a comma.
    serde_json::to_writer(&mut buf, message).ok()?;
    match buf.get_mut(start) {
        Some(b) if *b == b'{' => *b = b',',
        _ => return None,
    }
    String::from_utf8(buf).ok()
}

impl Shared {
    /// Starts the transport thread once (lazy connect).
    pub(crate) fn ensure_started(self: &Arc<Self>) {
        if !self.enabled || self.started.load(Ordering::Acquire) {
            return;
        }
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        crate::transport::spawn(self.clone());
    }

    /// The client's implicit run, created (and announced) on first use.
    pub(crate) fn implicit_run(self: &Arc<Self>) -> RunRef {
        if let Some(run) = self.implicit.get() {
            return run.clone();
        }
        let mut fresh = false;
        let run = self
            .implicit
            .get_or_init(|| {
                fresh = true;
                RunRef::new(ids::new_run_id(), "implicit")
            })
            .clone();
        if fresh {
            let mut meta = self.config.meta.clone().unwrap_or_default();
            meta.insert("name".to_owned(), Value::String("implicit".to_owned()));
            meta.insert("implicit".to_owned(), Value::Bool(true));
            self.emit(&run, run_started(&self.config.app_name, meta));
        }
        run
    }

    /// Serialises `message` for `run`, assigns its `seq` and appends it to the
    /// replay buffer (which is also the send queue). Never fails loudly.
    pub(crate) fn emit(self: &Arc<Self>, run: &RunRef, message: Message) -> Option<u64> {
        if !self.enabled {
            return None;
        }
        self.ensure_started();
        let ts = now_ms();
        let mut text = match frame_text(run, ts, &message) {
            Some(text) => text,
            None => Envelope::new(run.id().as_ref(), 0, message.clone())
                .with_ts(ts)
                .to_json(),
        };
        if text.len() > MAX_PAYLOAD_BYTES {
            let envelope = Envelope::new(run.id().as_ref(), 0, message).with_ts(ts);
            text = self.within_budget(&envelope, text);
        }
        if !text.starts_with(PLACEHOLDER_HEAD) {
            self.warner
                .warn("emit", &"an event could not be serialised; it was dropped");
            return None;
        }
        let (seq, wake) = {
            let Ok(mut core) = self.core.lock() else {
                self.warner
                    .warn("emit-lock", &"event buffer unavailable; events are dropped");
                return None;
            };
            let seq = core.seq;
            core.seq += 1;
            core.ring.push(Arc::new(Frame {
                seq,
                run_id: run.id().clone(),
                text,
            }));
            (seq, core.ring.has_pending())
        };
        if wake {
            self.wake.notify_one();
        }
        Some(seq)
    }

    /// Shrinks an oversized payload (see [`crate::shrink`]).
    fn within_budget(&self, envelope: &Envelope, text: String) -> String {
        let value = envelope.to_value();
        let Some(payload) = value.get("payload") else {
            return text;
        };
        let bytes = serde_json::to_string(payload)
            .map(|p| p.len())
            .unwrap_or(text.len());
        if bytes <= MAX_PAYLOAD_BYTES {
            return text;
        }
        let shrunk = shrink_payload(payload, bytes, MAX_PAYLOAD_BYTES);
        let head = Envelope::new(
            envelope.run_id.clone(),
            0,
            Message::GraphHint(mindgate_protocol::GraphHint {
                nodes: Vec::new(),
                gap: None,
                extra: Map::new(),
            }),
        )
        .with_ts(envelope.ts);
        // Same envelope, other type: splice the type name and the shrunk payload.
        let Ok(payload_text) = serde_json::to_string(&shrunk) else {
            return text;
        };
        let Ok(type_text) = serde_json::to_string(envelope.type_name()) else {
            return text;
        };
        let Ok(run_text) = serde_json::to_string(&head.run_id) else {
            return text;
        };
        self.warner.warn(
            "payload-budget",
            &format!(
                "a {} event of {bytes} bytes was shrunk (the viewer stores at most {} KB per payload)",
                envelope.type_name(),
                MAX_PAYLOAD_BYTES / 1024
            ),
        );
        format!(
            "{PLACEHOLDER_HEAD}\"ts\":{},\"runId\":{run_text},\"type\":{type_text},\"payload\":{payload_text}}}",
            head.ts
        )
    }

    /// Logs one warning per streak when the loop guard will not hold.
    pub(crate) fn loop_warning(&self, run: &RunRef, kind: NodeKind, node_id: &str, repeats: u64) {
        let holds =
            self.loop_guard.mode() == LoopMode::Pause && self.attached.load(Ordering::Acquire);
        if holds || !self.loop_guard.claim_warning(run.id(), kind) {
            return;
        }
        let because = if self.loop_guard.mode() == LoopMode::Warn {
            "the loop guard is in warn mode, so it is not held"
        } else {
            "no debugger is attached to hold it (run `mindgate serve` to pause it there)"
        };
        self.warner.warn(
            "loop",
            &format!(
                "possible loop: {node_id} was called {repeats} times in a row with identical \
                 input (threshold {}); {because}",
                self.loop_guard.threshold()
            ),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn fast_frame_matches_the_envelope_serialiser() {
        let run = RunRef::new("run_\"odd\"".into(), "n");
        let message = Message::NodeStarted(mindgate_protocol::NodeStarted {
            node_id: "tool:x".into(),
            parent_id: None,
            kind: NodeKind::Tool,
            name: "x".into(),
            instance_id: "i".into(),
            input: Some(serde_json::json!({"q": "é\n", "n": [1, 2.5]})),
            collapsed: None,
            redaction: None,
            extra: Map::new(),
        });
        let fast = frame_text(&run, 1234, &message).unwrap();
        let slow = Envelope::new(run.id().as_ref(), 0, message)
            .with_ts(1234)
            .to_json();
        assert_eq!(fast, slow);
    }
}
