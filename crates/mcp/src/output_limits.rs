//! Keeping tool output small: previews of JSON values and of text.
//!
//! A model's context is precious, so no tool returns unbounded data. Strings
//! are cut at a character limit with a marker saying how much was left out;
//! long arrays and objects keep their first entries; deep nesting is elided.

use serde_json::{Map, Value};

/// Most characters of readable text one tool result carries.
pub const MAX_TEXT_CHARS: usize = 16_000;
/// Most characters of serialised structured content one tool result carries.
pub const MAX_STRUCTURED_CHARS: usize = 64_000;
/// Most characters of an id, path or other echoed input inside an error
/// message.
pub const MAX_ECHO_CHARS: usize = 200;
/// Most characters of one error message, whatever produced it (a tool, or
/// the argument parser, or the protocol layer).
pub const MAX_ERROR_CHARS: usize = 2_000;
/// Array items kept by a preview.
pub const MAX_ITEMS: usize = 50;
/// Object keys kept by a preview.
pub const MAX_KEYS: usize = 100;
/// Nesting kept by a preview.
pub const MAX_DEPTH: usize = 12;

/// Cuts `s` to at most `max` characters, appending `…[+N chars]` when cut.
pub fn cut(s: &str, max: usize) -> (String, bool) {
    let total = s.chars().count();
    if total <= max {
        return (s.to_owned(), false);
    }
    let kept: String = s.chars().take(max).collect();
    (format!("{kept}…[+{} chars]", total - max), true)
}

/// Cuts `s` so that the result, marker included, has at most `max` characters.
pub fn cut_within(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    // The marker `…[+N chars]` takes at most 30 characters.
    cut_str(s, max.saturating_sub(30))
}

/// [`cut`] without the flag.
pub fn cut_str(s: &str, max: usize) -> String {
    cut(s, max).0
}

/// A preview of `v` whose strings hold at most `max_chars` characters; also
/// returns whether anything was left out.
pub fn preview(v: &Value, max_chars: usize) -> (Value, bool) {
    let mut truncated = false;
    let out = walk(v, max_chars, 0, &mut truncated);
    (out, truncated)
}

fn walk(v: &Value, max: usize, depth: usize, truncated: &mut bool) -> Value {
    match v {
        Value::String(s) => {
            let (c, t) = cut(s, max);
            *truncated |= t;
            Value::String(c)
        }
        Value::Array(items) if depth >= MAX_DEPTH => {
            *truncated = true;
            Value::String(format!("[… {} items]", items.len()))
        }
        Value::Object(map) if depth >= MAX_DEPTH => {
            *truncated = true;
            Value::String(format!("{{… {} keys}}", map.len()))
        }
        Value::Array(items) => {
            let mut out: Vec<Value> = items
                .iter()
                .take(MAX_ITEMS)
                .map(|i| walk(i, max, depth + 1, truncated))
                .collect();
            if items.len() > MAX_ITEMS {
                *truncated = true;
                out.push(Value::String(format!(
                    "…[+{} more items]",
                    items.len() - MAX_ITEMS
                )));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, val) in map.iter().take(MAX_KEYS) {
                out.insert(k.clone(), walk(val, max, depth + 1, truncated));
            }
            if map.len() > MAX_KEYS {
                *truncated = true;
                out.insert(
                    "…".to_owned(),
                    Value::String(format!("+{} more keys", map.len() - MAX_KEYS)),
                );
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Shrinks `v` until its compact JSON text fits `budget` characters: first by
/// cutting strings ever shorter, finally by replacing it with a cut string of
/// its JSON text. Returns whether anything was left out.
pub fn fit(v: Value, budget: usize) -> (Value, bool) {
    if json_len(&v) <= budget {
        return (v, false);
    }
    for max in [2_000, 500, 120, 40] {
        let (p, _) = preview(&v, max);
        if json_len(&p) <= budget {
            return (p, true);
        }
    }
    let text = serde_json::to_string(&v).unwrap_or_default();
    (Value::String(cut_str(&text, budget)), true)
}

/// Length of the compact JSON text of `v`.
pub fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

/// A one-line rendering of `v` for readable text, at most `max` characters.
pub fn one_line(v: &Value, max: usize) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    cut_str(&flat, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cut_keeps_short_text_and_marks_long_text() {
        assert_eq!(cut("héllo", 5), ("héllo".to_owned(), false));
        assert_eq!(cut("héllo!", 5), ("héllo…[+1 chars]".to_owned(), true));
    }

    #[test]
    fn preview_cuts_strings_arrays_and_depth() {
        let long = "x".repeat(300);
        let items: Vec<u32> = (0..60).collect();
        let mut deep = json!(1);
        for _ in 0..20 {
            deep = json!([deep]);
        }
        let v = json!({"s": long, "a": items, "d": deep, "n": 3});
        let (p, t) = preview(&v, 100);
        assert!(t);
        assert_eq!(
            p["s"].as_str().map(|s| s.ends_with("…[+200 chars]")),
            Some(true)
        );
        assert_eq!(p["a"].as_array().map(Vec::len), Some(MAX_ITEMS + 1));
        assert_eq!(p["a"][MAX_ITEMS], "…[+10 more items]");
        assert_eq!(p["n"], 3);
        assert!(
            serde_json::to_string(&p["d"])
                .unwrap_or_default()
                .contains("[… 1 items]")
        );
    }

    #[test]
    fn preview_of_small_value_is_identity() {
        let v = json!({"q": "x", "k": [1, 2, {"z": null}]});
        assert_eq!(preview(&v, 10), (v.clone(), false));
    }

    #[test]
    fn fit_respects_budget() {
        let v = json!({"big": "y".repeat(50_000), "list": vec!["z".repeat(1_000); 40]});
        let (p, t) = fit(v, 10_000);
        assert!(t);
        assert!(json_len(&p) <= 10_000, "{}", json_len(&p));
        let small = json!({"a": 1});
        assert_eq!(fit(small.clone(), 100), (small, false));
    }

    #[test]
    fn one_line_flattens_newlines() {
        assert_eq!(one_line(&json!("a\nb"), 10), "a b");
        assert_eq!(one_line(&json!({"k": 1}), 3), "{\"k…[+4 chars]");
    }
}
