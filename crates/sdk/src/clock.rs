//! Time helpers shared by the client, nodes and the transport.

use std::time::Duration;

/// Wall clock in epoch milliseconds (0 if the clock is before 1970).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A duration in (fractional) milliseconds.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A duration in milliseconds, or `None` when it is zero.
pub(crate) fn ms_if_any(d: Duration) -> Option<f64> {
    (!d.is_zero()).then(|| ms(d))
}
