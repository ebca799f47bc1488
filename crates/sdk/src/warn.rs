//! One rate-limited `tracing` warning per key: internal failures degrade quietly.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Emits at most one warning per key per interval.
#[derive(Debug)]
pub(crate) struct Warner {
    interval: Duration,
    last: Mutex<HashMap<&'static str, Instant>>,
}

/// Keys kept before the map is cleared (bounded memory).
const MAX_KEYS: usize = 256;

impl Warner {
    pub(crate) fn new(interval: Duration) -> Self {
        Warner {
            interval,
            last: Mutex::new(HashMap::new()),
        }
    }

    /// Logs `message` unless a warning with `key` was logged within the interval.
    /// Returns whether it logged.
    pub(crate) fn warn(&self, key: &'static str, message: &dyn std::fmt::Display) -> bool {
        let now = Instant::now();
        let Ok(mut last) = self.last.lock() else {
            return false;
        };
        if let Some(at) = last.get(key)
            && now.duration_since(*at) < self.interval
        {
            return false;
        }
        if last.len() >= MAX_KEYS {
            last.clear();
        }
        last.insert(key, now);
        drop(last);
        tracing::warn!(target: "mindgate_sdk", key, "mindgate: {message}");
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn second_warning_is_suppressed() {
        let w = Warner::new(Duration::from_secs(60));
        assert!(w.warn("k", &"first"));
        assert!(!w.warn("k", &"second"));
        assert!(w.warn("other", &"third"));
    }
}
