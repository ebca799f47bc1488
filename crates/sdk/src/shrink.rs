//! The payload budget: payloads over [`MAX_PAYLOAD_BYTES`](crate::config::MAX_PAYLOAD_BYTES)
//! are shrunk before they are buffered, so what the SDK sends is what the viewer stores.
//!
//! The shrink keeps the payload a valid event of its type: strings are cut
//! (with [`TRUNCATION_SUFFIX`]), long arrays and wide objects are trimmed,
//! free-form JSON fields (`input`, `output`, `meta`, …) that are still too big
//! are replaced by a marker object `{"__graphmindTruncated": true, "bytes", "preview"}`,
//! and the payload itself gets `"__graphmindTruncated": true` plus `originalBytes`.

use serde_json::{Map, Value};

/// Appended to a string that had to be cut.
pub const TRUNCATION_SUFFIX: &str = "…[mindgate: truncated]";
/// Marker key set on a shrunk payload and on replaced values.
pub const TRUNCATED_KEY: &str = "__graphmindTruncated";
/// Characters kept in previews and cut strings on the first pass.
const PREVIEW_CHARS: usize = 2_000;
/// Items kept from an array on the first pass.
const MAX_ITEMS: usize = 256;
/// Depth below which nested values are summarised.
const MAX_DEPTH: usize = 8;
/// Fields whose value is free-form JSON and may be replaced by a marker.
const FREE_FORM: &[&str] = &["input", "output", "meta", "detail", "principal", "edited"];

/// Shrinks `payload` (whose compact JSON is `bytes` long) under `budget` bytes.
pub fn shrink_payload(payload: &Value, bytes: usize, budget: usize) -> Value {
    let Value::Object(map) = payload else {
        return marker(payload, bytes);
    };
    let mut out = map.clone();
    // Pass 1: shrink the biggest fields first, type-preservingly.
    let mut sizes: Vec<(String, usize)> =
        out.iter().map(|(k, v)| (k.clone(), json_len(v))).collect();
    sizes.sort_by_key(|s| std::cmp::Reverse(s.1));
    let mut total = bytes;
    for (key, size) in &sizes {
        if total <= budget {
            break;
        }
        if let Some(v) = out.get_mut(key) {
            *v = shrink_value(v, PREVIEW_CHARS, MAX_ITEMS, 0);
            let now = json_len(v);
            total = total.saturating_sub(size.saturating_sub(now));
        }
    }
    // Pass 2: replace free-form fields that are still big.
    for key in FREE_FORM {
        if total <= budget {
            break;
        }
        if let Some(v) = out.get_mut(*key) {
            let size = json_len(v);
            if size > PREVIEW_CHARS {
                *v = marker(v, size);
                total = total.saturating_sub(size.saturating_sub(json_len(v)));
            }
        }
    }
    // Pass 3: everything much smaller.
    if total > budget {
        for v in out.values_mut() {
            *v = shrink_value(v, 256, 32, 2);
        }
    }
    out.insert(TRUNCATED_KEY.to_owned(), Value::Bool(true));
    out.insert("originalBytes".to_owned(), Value::from(bytes as u64));
    Value::Object(out)
}

fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map(|s| s.len()).unwrap_or(0)
}

fn marker(v: &Value, bytes: usize) -> Value {
    let text = serde_json::to_string(v).unwrap_or_default();
    let mut m = Map::new();
    m.insert(TRUNCATED_KEY.to_owned(), Value::Bool(true));
    m.insert("bytes".to_owned(), Value::from(bytes as u64));
    m.insert(
        "preview".to_owned(),
        Value::String(cut(&text, PREVIEW_CHARS)),
    );
    Value::Object(m)
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}{TRUNCATION_SUFFIX}", &text[..i]),
        None => text.to_owned(),
    }
}

fn shrink_value(v: &Value, max_chars: usize, max_items: usize, depth: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cut(s, max_chars)),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Value::Array(Vec::new());
            }
            Value::Array(
                items
                    .iter()
                    .take(max_items)
                    .map(|i| shrink_value(i, max_chars, max_items, depth + 1))
                    .collect(),
            )
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Value::Object(Map::new());
            }
            Value::Object(
                map.iter()
                    .take(max_items)
                    .map(|(k, i)| (k.clone(), shrink_value(i, max_chars, max_items, depth + 1)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use mindgate_protocol::{Envelope, Message, ParseResult};
    use serde_json::json;

    #[test]
    fn big_output_becomes_valid_smaller_payload() {
        let big = "x".repeat(600 * 1024);
        let payload = json!({"nodeId": "tool:a", "instanceId": "i", "output": {"text": big},
                             "durationMs": 1.0, "status": "ok"});
        let bytes = json_len(&payload);
        let out = shrink_payload(&payload, bytes, 512 * 1024);
        assert!(json_len(&out) < 512 * 1024);
        assert_eq!(out[TRUNCATED_KEY], json!(true));
        assert_eq!(out["originalBytes"], json!(bytes));
        // Still a valid node.finished.
        let msg: Message =
            serde_json::from_value(json!({"type": "node.finished", "payload": out})).unwrap();
        let env = Envelope::new("r", 1, msg);
        assert!(matches!(
            mindgate_protocol::parse_envelope(&env.to_json()),
            ParseResult::Ok(_)
        ));
    }

    #[test]
    fn many_deltas_are_trimmed_but_keep_type() {
        let deltas: Vec<Value> = (0..20_000)
            .map(|i| json!({"t": "text", "v": format!("token number {i} with padding ......")}))
            .collect();
        let payload = json!({"nodeId": "llm:step", "deltas": deltas});
        let bytes = json_len(&payload);
        let out = shrink_payload(&payload, bytes, 512 * 1024);
        assert!(json_len(&out) < 512 * 1024);
        let msg: Result<Message, _> =
            serde_json::from_value(json!({"type": "node.token", "payload": out}));
        assert!(msg.is_ok());
    }

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("héllo", 2), format!("hé{TRUNCATION_SUFFIX}"));
        assert_eq!(cut("hi", 5), "hi");
    }
}
