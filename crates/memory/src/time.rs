//! Clocks and ISO-8601 timestamps. The store keeps times as epoch milliseconds.

use std::sync::atomic::{AtomicI64, Ordering};

use jiff::Timestamp;

use crate::error::{MemoryError, Result};

/// Where the store reads "now" from: the system clock, or an injected one in tests and
/// deterministic maintenance.
pub trait Clock: Send + Sync {
    /// Now, in epoch milliseconds.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        Timestamp::now().as_millisecond()
    }
}

/// A clock that only moves when told to (tests, replays, maintenance dry runs).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `ms`.
    pub fn at(ms: i64) -> Self {
        Self(AtomicI64::new(ms))
    }

    /// A clock standing at an ISO-8601 instant.
    pub fn at_iso(text: &str) -> Result<Self> {
        Ok(Self::at(parse_time("clock", text)?))
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
}

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// Parses an ISO-8601 instant (`2023-05-08T13:56:00Z`, with any offset), a civil date-time
/// (`2023-05-08T13:56:00`, read as UTC) or a date (`2023-05-08`, midnight UTC).
pub fn parse_time(field: &'static str, text: &str) -> Result<i64> {
    let text = text.trim();
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Ok(ts.as_millisecond());
    }
    if let Ok(dt) = text.parse::<jiff::civil::DateTime>()
        && let Ok(zoned) = dt.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(zoned.timestamp().as_millisecond());
    }
    if let Ok(date) = text.parse::<jiff::civil::Date>()
        && let Ok(zoned) = date.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(zoned.timestamp().as_millisecond());
    }
    Err(MemoryError::invalid(
        field,
        format!("{text:?} is not an ISO-8601 date or instant"),
    ))
}

/// Parses an optional ISO-8601 value.
pub fn parse_opt(field: &'static str, text: Option<&str>) -> Result<Option<i64>> {
    text.map(|t| parse_time(field, t)).transpose()
}

/// Formats epoch milliseconds as RFC 3339 UTC with millisecond precision.
pub fn format_ms(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(ts) => format!("{ts:.3}"),
        Err(_) => ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_instants_dates_and_round_trips() {
        let ms = parse_time("t", "2023-05-08T13:56:00Z").unwrap();
        assert_eq!(format_ms(ms), "2023-05-08T13:56:00.000Z");
        assert_eq!(parse_time("t", "2023-05-08T15:56:00+02:00").unwrap(), ms);
        assert_eq!(parse_time("t", "2023-05-08T13:56:00").unwrap(), ms);
        assert_eq!(
            parse_time("t", "2023-05-08").unwrap(),
            ms - (13 * 3600 + 56 * 60) * 1000
        );
        assert!(parse_time("t", "yesterday").is_err());
        assert!(parse_time("t", "2023-13-40").is_err());
    }
}
