//! Redactions for snapshots: values that change on every run (times, ids, ports, tokens)
//! are replaced by placeholders, so a snapshot holds only what the code decides.

use serde_json::Value;

/// Replaces, anywhere in `value`, the value of every object field whose name is in `fields`
/// with `"[name]"` (`null` stays `null`, so optional fields keep their shape).
pub fn fields(value: &mut Value, names: &[&str]) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if names.contains(&key.as_str()) {
                    if !v.is_null() {
                        *v = Value::String(format!("[{key}]"));
                    }
                } else {
                    fields(v, names);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| fields(v, names)),
        _ => {}
    }
}

/// Replaces every occurrence of `needle` inside the strings of `value` with `placeholder`
/// (a port in a URL, a temporary directory in a path).
pub fn text(value: &mut Value, needle: &str, placeholder: &str) {
    if needle.is_empty() {
        return;
    }
    match value {
        Value::String(s) if s.contains(needle) => *s = s.replace(needle, placeholder),
        Value::Object(map) => map.values_mut().for_each(|v| text(v, needle, placeholder)),
        Value::Array(items) => items.iter_mut().for_each(|v| text(v, needle, placeholder)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn named_fields_are_replaced_at_any_depth_and_nulls_stay() {
        let mut v = json!({"id": "r-93", "at": 5, "gone": null,
            "items": [{"startedAt": 17, "name": "keep"}]});
        fields(&mut v, &["id", "startedAt", "gone"]);
        assert_eq!(
            v,
            json!({"id": "[id]", "at": 5, "gone": null,
                "items": [{"startedAt": "[startedAt]", "name": "keep"}]})
        );
    }

    #[test]
    fn text_is_replaced_inside_strings() {
        let mut v = json!({"link": "http://127.0.0.1:4811/#/run/r", "n": [":4811"]});
        text(&mut v, ":4811", ":[port]");
        assert_eq!(
            v,
            json!({"link": "http://127.0.0.1:[port]/#/run/r", "n": [":[port]"]})
        );
    }
}
