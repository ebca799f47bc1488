//! Small time helpers: readable timestamps and durations, and `since` parsing.

use mindgate_taskgraph::format::DurationStyle;

use crate::error::ToolError;
use crate::params::SinceArg;

/// `2024-05-01T12:30:00Z` for an epoch-ms time (UTC, second precision; `?` when out of range).
pub fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min` (the task graph's spaced duration).
pub fn duration(ms: f64) -> String {
    mindgate_taskgraph::format::duration(ms, DurationStyle::Spaced)
}

/// Resolves a `since` argument to epoch ms, relative to `now_ms`, by the one reading of
/// `since` ([`mindgate_taskgraph::timestamp::since_ms`]; dates at UTC midnight).
pub fn resolve_since(since: &SinceArg, now_ms: i64) -> Result<i64, ToolError> {
    match since {
        SinceArg::Millis(ms) => Ok(*ms),
        SinceArg::Text(text) => {
            let t = text.trim();
            let now =
                jiff::Timestamp::from_millisecond(now_ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            mindgate_taskgraph::timestamp::since_ms(t, &jiff::tz::TimeZone::UTC, now).ok_or_else(|| {
                ToolError::bad(
                    "since",
                    format!(
                        "`{t}` is not epoch milliseconds, an RFC 3339 time, a date, or a span like 30m, 2h, 7d"
                    ),
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_formats_known_instants() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_714_566_600_000), "2024-05-01T12:30:00Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(12.5), "12.5 ms");
        assert_eq!(duration(850.0), "850 ms");
        assert_eq!(duration(12_340.0), "12.3 s");
        assert_eq!(duration(245_000.0), "4 min 05 s");
        assert_eq!(duration(7_380_000.0), "2 h 03 min");
        assert_eq!(duration(f64::NAN), "?");
    }

    #[test]
    fn since_accepts_millis_spans_and_rfc3339() {
        let now = 10_000_000;
        assert_eq!(resolve_since(&SinceArg::Millis(5), now), Ok(5));
        assert_eq!(
            resolve_since(&SinceArg::Text("2h".into()), now),
            Ok(now - 7_200_000)
        );
        assert_eq!(
            resolve_since(&SinceArg::Text("30m".into()), now),
            Ok(now - 1_800_000)
        );
        assert_eq!(resolve_since(&SinceArg::Text("123".into()), now), Ok(123));
        assert_eq!(
            resolve_since(&SinceArg::Text("2024-05-01T12:30:00Z".into()), now),
            Ok(1_714_566_600_000)
        );
        assert_eq!(
            resolve_since(&SinceArg::Text("1w".into()), now),
            Ok(now - 7 * 86_400_000)
        );
        assert_eq!(
            resolve_since(&SinceArg::Text("1970-01-01".into()), now),
            Ok(0)
        );
        let err = resolve_since(&SinceArg::Text("yesterday".into()), now);
        assert!(matches!(
            err,
            Err(ToolError::BadArgument { field: "since", .. })
        ));
    }
}
