//! Small pure helpers shared by the readers and the graph builder.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::Value;

/// A small, fast, deterministic (unkeyed) hasher for the builder's internal maps, whose keys
/// are short ids or already-hashed values. Not DoS-resistant; inputs are local files.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        // murmur3's 64-bit finaliser.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        let x = (self.0 ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = x ^ (x >> 29);
    }
}

/// `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// `HashSet` with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

/// Hashes a JSON value structurally (no serialisation, no allocation).
pub fn hash_value<H: Hasher>(v: &Value, h: &mut H) {
    match v {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => h.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            h.write_u8(3);
            match n.as_f64() {
                Some(f) => h.write_u64(f.to_bits()),
                None => h.write(n.to_string().as_bytes()),
            }
        }
        Value::String(s) => {
            h.write_u8(4);
            h.write(s.as_bytes());
            h.write_u8(0xff);
        }
        Value::Array(a) => {
            h.write_u8(5);
            h.write_usize(a.len());
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(o) => {
            h.write_u8(6);
            h.write_usize(o.len());
            for (k, x) in o {
                h.write(k.as_bytes());
                h.write_u8(0xfe);
                hash_value(x, h);
            }
        }
    }
}

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

/// Truncates `s` to at most `max` characters (on a char boundary), appending `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((idx, _)) => {
            let mut out = String::with_capacity(idx + 3);
            out.push_str(&s[..idx]);
            out.push('…');
            out
        }
    }
}

/// The request a user message carries, for titles: `None` for a slash-command envelope
/// (`<command-name>/clear</command-name>…`, written by Claude Code when the user runs a
/// command), and the text after Codex Desktop's "# Files mentioned by the user" preamble
/// (its `## My request for Codex:` section).
///
/// ```
/// use mindgate_taskgraph::util::request_text;
/// assert_eq!(request_text("<command-name>/clear</command-name>"), None);
/// assert_eq!(
///     request_text("# Files mentioned by the user:\n\n## a.md: /a.md\n\n## My request for Codex:\nfix it"),
///     Some("fix it")
/// );
/// assert_eq!(request_text("  fix the bug "), Some("fix the bug"));
/// ```
pub fn request_text(text: &str) -> Option<&str> {
    let t = text.trim();
    if t.is_empty()
        || t.starts_with("<command-name>")
        || t.starts_with("<command-message>")
        || t.starts_with("<local-command")
    {
        return None;
    }
    if t.starts_with("# Files mentioned by the user") {
        const ASK: &str = "## My request for Codex:";
        let rest = t.find(ASK).map(|i| t[i + ASK.len()..].trim())?;
        return (!rest.is_empty()).then_some(rest);
    }
    Some(t)
}

/// The DSH/pi workspace slug of a working directory: separators become `-`, wrapped in `--…--`.
///
/// `/Users/kevin/Desktop/Nothing/Napkin` → `--Users-kevin-Desktop-Nothing-Napkin--`.
pub fn workspace_slug(cwd: &str) -> String {
    let trimmed = cwd.trim_start_matches(['/', '\\']);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

/// Renders a JSON value as display text: strings verbatim, arrays of content parts joined,
/// anything else as compact JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let mut out = String::new();
            for item in items {
                let part = match item {
                    Value::Object(o) => o
                        .get("text")
                        .or_else(|| o.get("content"))
                        .or_else(|| o.get("output"))
                        .map(value_text)
                        .unwrap_or_else(|| {
                            if o.get("type").and_then(Value::as_str) == Some("image") {
                                "[image]".to_owned()
                            } else {
                                item.to_string()
                            }
                        }),
                    other => value_text(other),
                };
                if !part.is_empty() {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&part);
                }
            }
            out
        }
        Value::Object(o) => o
            .get("text")
            .or_else(|| o.get("content"))
            .or_else(|| o.get("output"))
            .map(value_text)
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    }
}

/// First string found under any of `keys` in `v`.
pub fn str_field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

/// First unsigned integer found under any of `keys` (numbers or numeric strings).
pub fn u64_field(v: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| {
        let f = v.get(*k)?;
        f.as_u64()
            .or_else(|| {
                f.as_f64()
                    .filter(|x| *x >= 0.0 && x.is_finite())
                    .map(|x| x as u64)
            })
            .or_else(|| f.as_str().and_then(|s| s.trim().parse().ok()))
    })
}

/// Renders an error code (number or string) as a string.
pub fn code_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Parses a JSON-encoded arguments string into a value; non-JSON text stays a string.
pub fn parse_arguments(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if t.starts_with('{') || t.starts_with('[') {
                serde_json::from_str(t).unwrap_or_else(|_| v.clone())
            } else {
                v.clone()
            }
        }
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other.clone(),
    }
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

    #[test]
    fn slug_and_truncate() {
        assert_eq!(
            workspace_slug("/Users/kevin/Desktop/Nothing/Napkin"),
            "--Users-kevin-Desktop-Nothing-Napkin--"
        );
        assert_eq!(truncate_chars("héllo", 2), "hé…");
        assert_eq!(truncate_chars("hi", 2), "hi");
    }
}
