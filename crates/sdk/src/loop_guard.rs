//! Loop guard: hold an agent that makes the same tool call again, back-to-back.
//!
//! Rules (the GraphMind client's "loop hold v3"):
//! * per run and node kind, one streak `{nodeId, fingerprint, repeats, firstSeq, lastSeq}`;
//! * a watched `node.started` (kind `tool`, not allow-listed) with the same nodeId and
//!   input fingerprint extends the streak, anything else replaces it;
//! * the `before` gate holds with `reason: "loop"` when the node's streak reached the
//!   threshold; each count holds at most once, so a retry runs on;
//! * unwatched starts (an LLM step between two tool calls) touch no streak.
//!
//! The fingerprint is the first 32 hex digits of SHA-256 over the canonical JSON of
//! `[nodeId, input]` (keys sorted by UTF-16 code unit, no whitespace, integral floats
//! written as integers, ignored keys removed at every depth).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mindgate_protocol::{LoopInfo, NodeKind};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{LoopGuardConfig, LoopMode};

/// Runs whose streaks are kept (least recently used evicted first).
const MAX_RUNS: usize = 64;
/// Deepest input nesting the fingerprint reads.
const MAX_DEPTH: usize = 64;

#[derive(Debug)]
struct Streak {
    node_id: String,
    fingerprint: String,
    repeats: u64,
    first_seq: u64,
    last_seq: u64,
    tripped: bool,
    warned: bool,
}

/// What recording one start produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoopRecord {
    pub(crate) repeats: u64,
    pub(crate) at_threshold: bool,
}

type RunStreaks = (Arc<str>, HashMap<NodeKind, Streak>);

/// Streak bookkeeping. Never panics; a poisoned lock disables it.
#[derive(Debug)]
pub(crate) struct LoopGuard {
    config: LoopGuardConfig,
    runs: Mutex<Vec<RunStreaks>>,
    /// Some streak reached the threshold and has not held yet (lets gates skip the lock).
    pending: AtomicBool,
}

impl LoopGuard {
    pub(crate) fn new(config: LoopGuardConfig) -> Self {
        LoopGuard {
            config,
            runs: Mutex::new(Vec::new()),
            pending: AtomicBool::new(false),
        }
    }

    pub(crate) fn mode(&self) -> LoopMode {
        self.config.mode
    }

    pub(crate) fn threshold(&self) -> u32 {
        self.config.threshold
    }

    /// Whether some streak is waiting to hold (cheap; no lock).
    pub(crate) fn pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Whether starts of this node are watched.
    pub(crate) fn applies_to(&self, kind: NodeKind, node_id: &str, name: &str) -> bool {
        self.config.threshold > 0
            && self.config.mode != LoopMode::Off
            && kind == NodeKind::Tool
            && !self
                .config
                .allow_nodes
                .iter()
                .any(|a| a == node_id || a == name)
    }

    /// The fingerprint of a call.
    pub(crate) fn fingerprint(&self, node_id: &str, input: Option<&Value>) -> String {
        let mut text = String::with_capacity(64);
        text.push('[');
        write_string(&mut text, node_id);
        text.push(',');
        canon(
            &mut text,
            input.unwrap_or(&Value::Null),
            &self.config.ignore_keys,
            0,
        );
        text.push(']');
        let digest = Sha256::digest(text.as_bytes());
        let mut hex = String::with_capacity(32);
        for b in digest.iter().take(16) {
            hex.push_str(&format!("{b:02x}"));
        }
        hex
    }

    /// Records a watched `node.started` with its envelope `seq`.
    pub(crate) fn record(
        &self,
        run_id: &Arc<str>,
        kind: NodeKind,
        node_id: &str,
        fingerprint: String,
        seq: u64,
    ) -> Option<LoopRecord> {
        let mut runs = self.runs.lock().ok()?;
        let streaks = streaks_for(&mut runs, run_id);
        let streak = match streaks.get_mut(&kind) {
            Some(s) if s.node_id == node_id && s.fingerprint == fingerprint => {
                s.repeats += 1;
                s.last_seq = seq;
                s.tripped = false;
                s
            }
            _ => {
                streaks.insert(
                    kind,
                    Streak {
                        node_id: node_id.to_owned(),
                        fingerprint,
                        repeats: 1,
                        first_seq: seq,
                        last_seq: seq,
                        tripped: false,
                        warned: false,
                    },
                );
                streaks.get_mut(&kind)?
            }
        };
        let at_threshold = streak.repeats >= u64::from(self.config.threshold);
        if at_threshold {
            self.pending.store(true, Ordering::Release);
        }
        Some(LoopRecord {
            repeats: streak.repeats,
            at_threshold,
        })
    }

    /// At a `before` gate: the loop details when this node should hold for a loop.
    pub(crate) fn consult(&self, run_id: &str, kind: NodeKind, node_id: &str) -> Option<LoopInfo> {
        if self.config.mode != LoopMode::Pause
            || self.config.threshold == 0
            || !self.pending.load(Ordering::Acquire)
        {
            return None;
        }
        let threshold = u64::from(self.config.threshold);
        let mut runs = self.runs.lock().ok()?;
        let (_, streaks) = runs.iter_mut().find(|(r, _)| &**r == run_id)?;
        let s = streaks.get_mut(&kind)?;
        if s.node_id != node_id || s.tripped || s.repeats < threshold {
            return None;
        }
        s.tripped = true;
        let info = LoopInfo {
            repeats: s.repeats,
            first_seq: s.first_seq,
            last_seq: s.last_seq,
            fingerprint: s.fingerprint.clone(),
            kind: Some("repeat".to_owned()),
            period: None,
            laps: None,
            extra: Default::default(),
        };
        let still = runs
            .iter()
            .flat_map(|(_, streaks)| streaks.values())
            .any(|s| !s.tripped && s.repeats >= threshold);
        self.pending.store(still, Ordering::Release);
        Some(info)
    }

    /// True the first time only, per streak: the caller logs one warning.
    pub(crate) fn claim_warning(&self, run_id: &str, kind: NodeKind) -> bool {
        let Ok(mut runs) = self.runs.lock() else {
            return false;
        };
        let Some((_, streaks)) = runs.iter_mut().find(|(r, _)| &**r == run_id) else {
            return false;
        };
        match streaks.get_mut(&kind) {
            Some(s) if !s.warned => {
                s.warned = true;
                true
            }
            _ => false,
        }
    }

    /// Forgets a finished run.
    pub(crate) fn forget(&self, run_id: &str) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.retain(|(r, _)| &**r != run_id);
        }
    }
}

fn streaks_for<'a>(
    runs: &'a mut Vec<RunStreaks>,
    run_id: &Arc<str>,
) -> &'a mut HashMap<NodeKind, Streak> {
    // Least recently used first: move the run to the back.
    let entry = match runs.iter().position(|(r, _)| r == run_id) {
        Some(i) => runs.remove(i),
        None => {
            if runs.len() >= MAX_RUNS {
                runs.remove(0);
            }
            (run_id.clone(), HashMap::new())
        }
    };
    runs.push(entry);
    let last = runs.len() - 1;
    &mut runs[last].1
}

fn write_string(out: &mut String, s: &str) {
    match serde_json::to_string(s) {
        Ok(q) => out.push_str(&q),
        Err(_) => out.push_str("\"\""),
    }
}

fn canon(out: &mut String, v: &Value, ignore: &[String], depth: usize) {
    if depth > MAX_DEPTH {
        out.push_str("\"[depth]\"");
        return;
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                if !f.is_finite() {
                    out.push_str("null");
                } else if f.fract() == 0.0 && f.abs() < 1e21 {
                    out.push_str(&format!("{}", f as i128));
                } else {
                    out.push_str(&format!("{f}"));
                }
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canon(out, item, ignore, depth + 1);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map
                .keys()
                .filter(|k| !ignore.iter().any(|i| i == *k))
                .collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                if let Some(item) = map.get(*k) {
                    canon(out, item, ignore, depth + 1);
                }
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guard() -> LoopGuard {
        LoopGuard::new(LoopGuardConfig::default())
    }

    #[test]
    fn fingerprint_ignores_key_order_meta_and_float_spelling() {
        let g = guard();
        let a = g.fingerprint(
            "tool:x",
            Some(&json!({"a": 1, "b": 2.0, "_meta": {"p": 1}})),
        );
        let b = g.fingerprint("tool:x", Some(&json!({"b": 2, "a": 1})));
        assert_eq!(a, b);
        assert_eq!(a.len(), 32);
        assert_ne!(a, g.fingerprint("tool:y", Some(&json!({"b": 2, "a": 1}))));
        assert_ne!(a, g.fingerprint("tool:x", Some(&json!({"b": 3, "a": 1}))));
    }

    #[test]
    fn third_identical_call_trips_once() {
        let g = guard();
        let run: Arc<str> = Arc::from("r1");
        let fp = g.fingerprint("tool:x", Some(&json!({"q": 1})));
        for seq in 1..=2 {
            g.record(&run, NodeKind::Tool, "tool:x", fp.clone(), seq);
            assert!(g.consult("r1", NodeKind::Tool, "tool:x").is_none());
        }
        let rec = g.record(&run, NodeKind::Tool, "tool:x", fp.clone(), 3);
        assert_eq!(rec.map(|r| r.at_threshold), Some(true));
        let info = g
            .consult("r1", NodeKind::Tool, "tool:x")
            .map(|i| (i.repeats, i.first_seq, i.last_seq));
        assert_eq!(info, Some((3, 1, 3)));
        // Tripped: a retry (no new start) runs on.
        assert!(g.consult("r1", NodeKind::Tool, "tool:x").is_none());
        // A different call resets the streak.
        let other = g.fingerprint("tool:x", Some(&json!({"q": 2})));
        g.record(&run, NodeKind::Tool, "tool:x", other, 4);
        assert!(g.consult("r1", NodeKind::Tool, "tool:x").is_none());
    }

    #[test]
    fn only_tools_not_allow_listed_are_watched() {
        let cfg = LoopGuardConfig {
            allow_nodes: vec!["poll".to_owned()],
            ..Default::default()
        };
        let g = LoopGuard::new(cfg);
        assert!(g.applies_to(NodeKind::Tool, "tool:search", "search"));
        assert!(!g.applies_to(NodeKind::Llm, "llm:step", "step"));
        assert!(!g.applies_to(NodeKind::Tool, "tool:poll", "poll"));
    }

    #[test]
    fn runs_are_bounded() {
        let g = guard();
        for i in 0..(MAX_RUNS + 10) {
            let run: Arc<str> = Arc::from(format!("r{i}"));
            g.record(&run, NodeKind::Tool, "tool:x", "f".into(), 1);
        }
        assert_eq!(g.runs.lock().map(|r| r.len()).unwrap_or(0), MAX_RUNS);
    }
}
