//! Readable durations, one formatter for every view (the CLI tables, the MCP tools' text).

/// How a [`duration`] is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationStyle {
    /// Tables: `450ms`, `12.3s`, `3m 05s`, `1h 02m`; negative durations read as `0ms`.
    Compact,
    /// Prose: `12.5 ms`, `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`; a negative or
    /// non-finite duration reads as `?`.
    Spaced,
}

/// `ms` milliseconds as a person reads them: milliseconds below a second, tenths of a second
/// below a minute, minutes and seconds below an hour, then hours and minutes.
pub fn duration(ms: f64, style: DurationStyle) -> String {
    let ms = match style {
        DurationStyle::Compact if ms.is_nan() || ms < 0.0 => 0.0,
        DurationStyle::Spaced if !ms.is_finite() || ms < 0.0 => return "?".to_owned(),
        _ => ms,
    };
    let (unit_ms, unit_s, unit_m, unit_h, sep) = match style {
        DurationStyle::Compact => ("ms", "s", "m", "h", ""),
        DurationStyle::Spaced => ("ms", "s", "min", "h", " "),
    };
    if ms < 1_000.0 {
        let shown = match style {
            // Compact durations come from whole milliseconds.
            DurationStyle::Compact => format!("{}", ms.trunc() as u64),
            DurationStyle::Spaced if ms.fract() == 0.0 => format!("{ms:.0}"),
            DurationStyle::Spaced => format!("{ms:.1}"),
        };
        return format!("{shown}{sep}{unit_ms}");
    }
    let s = ms / 1_000.0;
    if s < 60.0 {
        return format!("{s:.1}{sep}{unit_s}");
    }
    let total = s as u64;
    if total < 3_600 {
        return format!("{}{sep}{unit_m} {:02}{sep}{unit_s}", total / 60, total % 60);
    }
    format!(
        "{}{sep}{unit_h} {:02}{sep}{unit_m}",
        total / 3_600,
        (total % 3_600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact() {
        let d = |ms: i64| duration(ms as f64, DurationStyle::Compact);
        assert_eq!(d(-5), "0ms");
        assert_eq!(d(450), "450ms");
        assert_eq!(d(12_345), "12.3s");
        assert_eq!(d(185_000), "3m 05s");
        assert_eq!(d(3_720_000), "1h 02m");
    }

    #[test]
    fn spaced() {
        let d = |ms: f64| duration(ms, DurationStyle::Spaced);
        assert_eq!(d(12.5), "12.5 ms");
        assert_eq!(d(850.0), "850 ms");
        assert_eq!(d(12_340.0), "12.3 s");
        assert_eq!(d(245_000.0), "4 min 05 s");
        assert_eq!(d(7_380_000.0), "2 h 03 min");
        assert_eq!(d(f64::NAN), "?");
        assert_eq!(d(-1.0), "?");
    }
}
