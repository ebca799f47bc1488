//! Reading loosely typed JSON fields of session records: display text of content parts,
//! the first string or number under alternative keys, error codes, tool arguments.

use serde_json::Value;

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
