//! OTLP attributes as JSON: the form the mapping reads and the events carry.

use base64::Engine;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use serde_json::{Map, Value};

/// Deepest `arrayValue` / `kvlistValue` nesting converted; deeper values become `null`
/// (the protocol parser refuses frames nested past its own limit).
const MAX_NESTING: usize = 16;

/// A span's (or resource's) attributes, keyed by name, values as JSON.
pub type Attrs = Map<String, Value>;

/// Converts an attribute list (later duplicates win, as the spec allows either).
pub fn to_json(list: &[KeyValue]) -> Attrs {
    let mut map = Map::with_capacity(list.len());
    for kv in list {
        map.insert(kv.key.clone(), any_to_json(kv.value.as_ref(), 0));
    }
    map
}

/// One `AnyValue` as JSON: bytes as base64, an empty value as `null`.
pub fn any_to_json(value: Option<&AnyValue>, depth: usize) -> Value {
    let Some(inner) = value.and_then(|v| v.value.as_ref()) else {
        return Value::Null;
    };
    if depth >= MAX_NESTING {
        return Value::Null;
    }
    match inner {
        any_value::Value::StringValue(s) => Value::String(s.clone()),
        any_value::Value::BoolValue(b) => Value::Bool(*b),
        any_value::Value::IntValue(i) => Value::from(*i),
        any_value::Value::DoubleValue(d) => {
            serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number)
        }
        any_value::Value::ArrayValue(a) => Value::Array(
            a.values
                .iter()
                .map(|v| any_to_json(Some(v), depth + 1))
                .collect(),
        ),
        any_value::Value::KvlistValue(kv) => Value::Object(
            kv.values
                .iter()
                .map(|kv| (kv.key.clone(), any_to_json(kv.value.as_ref(), depth + 1)))
                .collect(),
        ),
        any_value::Value::BytesValue(b) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        #[allow(unreachable_patterns)]
        _ => Value::Null,
    }
}

/// A non-empty string attribute.
pub fn str_of<'a>(attrs: &'a Attrs, key: &str) -> Option<&'a str> {
    attrs
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

/// The first non-empty string among `keys`.
pub fn first_str<'a>(attrs: &'a Attrs, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| str_of(attrs, k))
}

/// A non-negative count: an integer, a whole double, or a numeric string.
pub fn count_of(attrs: &Attrs, key: &str) -> Option<u64> {
    match attrs.get(key)? {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The first count among `keys`.
pub fn first_count(attrs: &Attrs, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| count_of(attrs, k))
}

/// A value that may have been sent as a JSON string (GenAI messages, tool arguments):
/// the parsed JSON when the string holds an object or array, else the value itself.
pub fn json_or_value(value: &Value) -> Value {
    if let Value::String(s) = value {
        let t = s.trim_start();
        if (t.starts_with('{') || t.starts_with('['))
            && let Ok(parsed) = serde_json::from_str::<Value>(s)
        {
            return parsed;
        }
    }
    value.clone()
}

/// The first present attribute among `keys`, JSON strings parsed.
pub fn first_json(attrs: &Attrs, keys: &[&str]) -> Option<Value> {
    keys.iter()
        .find_map(|k| attrs.get(*k).filter(|v| !v.is_null()))
        .map(json_or_value)
}
