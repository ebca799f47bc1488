//! Timestamps in session files: RFC 3339 strings and numbers (ms or seconds) as Unix
//! milliseconds.

use serde_json::Value;

/// Parses an RFC 3339 / ISO 8601 timestamp (`2025-01-02T03:04:05.123Z`,
/// `2025-01-02T03:04:05+02:00`, `2025-01-02 03:04:05`) into Unix milliseconds.
///
/// Returns `None` for anything it cannot read; never panics.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    if b.len() < 10 {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        let mut v: i64 = 0;
        for &c in part {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        Some(v)
    };
    let year = num(0, 4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let month = num(5, 2)?;
    let day = num(8, 2)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let hour = num(11, 2)?;
    if b.get(13) != Some(&b':') {
        return None;
    }
    let minute = num(14, 2)?;
    let mut i = 16;
    let mut second = 0;
    if b.get(16) == Some(&b':') {
        second = num(17, 2)?;
        i = 19;
    }
    ms += ((hour * 60 + minute) * 60 + second) * 1000;
    if b.get(i) == Some(&b'.') || b.get(i) == Some(&b',') {
        i += 1;
        let mut frac_ms = 0i64;
        let mut digits = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if digits < 3 {
                frac_ms = frac_ms * 10 + i64::from(c - b'0');
            }
            digits += 1;
            i += 1;
        }
        while digits < 3 {
            frac_ms *= 10;
            digits += 1;
        }
        ms += frac_ms;
    }
    match b.get(i) {
        None | Some(b'Z' | b'z') => Some(ms),
        Some(sign @ (b'+' | b'-')) => {
            let oh = num(i + 1, 2)?;
            let om = match b.get(i + 3) {
                Some(b':') => num(i + 4, 2)?,
                Some(_) => num(i + 3, 2)?,
                None => 0,
            };
            let off = (oh * 60 + om) * 60_000;
            Some(if *sign == b'+' { ms - off } else { ms + off })
        }
        Some(_) => None,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Reads a timestamp that may be a number (ms, or seconds when small) or an RFC 3339 string.
pub fn time_value_ms(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => {
            let f = n.as_f64()?;
            if !f.is_finite() {
                return None;
            }
            // Heuristic: values below 10^11 are seconds (10^11 ms is 1973).
            let ms = if f.abs() < 1e11 { f * 1000.0 } else { f };
            Some(ms as i64)
        }
        Value::String(s) => parse_rfc3339_ms(s).or_else(|| s.trim().parse::<i64>().ok()),
        _ => None,
    }
}

/// The time `since` names, as Unix ms: a number of ms, an RFC 3339 time, a date (its
/// midnight in `tz`), or a span back from `now` (`7d`, `12h`, `30m`, ISO 8601 `P7D`). `None`
/// when it is none of these. The one reading of `since` everywhere: `mindgate usage` and
/// `runs`, the usage route, and MCP's `get_usage` and `get_errors`.
pub fn since_ms(since: &str, tz: &jiff::tz::TimeZone, now: jiff::Timestamp) -> Option<i64> {
    let s = since.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return Some(ms);
    }
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t.as_millisecond());
    }
    if let Ok(date) = s.parse::<jiff::civil::Date>() {
        return Some(date.to_zoned(tz.clone()).ok()?.timestamp().as_millisecond());
    }
    let span = s.parse::<jiff::Span>().ok()?;
    let back = span
        .to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .ok()?;
    Some(now.checked_sub(back).ok()?.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_timestamps() {
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_ms("2026-08-24T00:00:00.5Z"),
            Some(1_787_529_600_500)
        );
        assert_eq!(
            parse_rfc3339_ms("2026-08-24T02:00:00+02:00"),
            parse_rfc3339_ms("2026-08-24T00:00:00Z")
        );
        assert_eq!(parse_rfc3339_ms("garbage"), None);
        assert_eq!(parse_rfc3339_ms("2026-13-01T00:00:00Z"), None);
    }
}
