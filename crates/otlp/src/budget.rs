//! The decode budget: how much one attribute, one span and one request may hold,
//! counted while decoding (before anything is built of it), so that a request costs
//! memory in proportion to what it is allowed to hold, not to what it claims.
//!
//! A value is one `AnyValue`: an attribute's value and every element nested in it (an
//! array of 8,000,000 empty values is 8,000,001 values). Bytes are a value's encoded
//! size. A span over its budget, or past the request's, is rejected alone (counted in
//! the partial-success answer, with the attribute or limit named); the rest of the
//! request is stored. Limits: `docs/http-api.md` (Limits) and `docs/otlp.md`.

/// Most values in one attribute (its value and everything nested in it).
pub const MAX_ATTRIBUTE_VALUES: usize = 10_000;
/// Most encoded bytes of one attribute.
pub const MAX_ATTRIBUTE_BYTES: usize = 1024 * 1024;
/// Most values in one span (its attributes, its events' and links' attributes).
pub const MAX_SPAN_VALUES: usize = 50_000;
/// Most encoded bytes of one span.
pub const MAX_SPAN_BYTES: usize = 4 * 1024 * 1024;
/// Most values in one request.
pub const MAX_REQUEST_VALUES: usize = 1_000_000;
/// Most traces (runs) in one request: the spans of further traces are rejected (each
/// trace costs a run, a claim and a read of the store, whatever its size).
pub const MAX_REQUEST_TRACES: usize = 4_096;
/// Deepest nesting of arrays and key-value lists read (deeper is refused).
pub const MAX_VALUE_DEPTH: usize = 32;
/// Most JSON values (objects, arrays, strings, numbers, keys…) in one OTLP/JSON body,
/// counted before the body is parsed into a tree: the tree then costs at most a few
/// tens of bytes per value.
pub const MAX_JSON_VALUES: usize = 2_000_000;

/// What a request may still hold, and the current span's count.
#[derive(Debug)]
pub struct Budget {
    request_left: usize,
    span_values: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            request_left: MAX_REQUEST_VALUES,
            span_values: 0,
        }
    }
}

/// Why a span is over budget (the partial-success reason).
pub type OverBudget = String;

impl Budget {
    /// Starts counting a span of `bytes` encoded bytes.
    pub fn start_span(&mut self, name: &str, bytes: usize) -> Result<(), OverBudget> {
        self.span_values = 0;
        if bytes > MAX_SPAN_BYTES {
            return Err(format!(
                "span '{}' is {bytes} bytes, over the decode budget of {MAX_SPAN_BYTES} bytes a span",
                short(name)
            ));
        }
        Ok(())
    }

    /// Counts one attribute of the current span: `values` values in `bytes` bytes.
    pub fn attribute(
        &mut self,
        span: &str,
        key: &str,
        values: Option<usize>,
        bytes: usize,
    ) -> Result<(), OverBudget> {
        let Some(values) = values.filter(|v| *v <= MAX_ATTRIBUTE_VALUES) else {
            return Err(format!(
                "span '{}': attribute '{}' holds more than {MAX_ATTRIBUTE_VALUES} values \
                 (or nests deeper than {MAX_VALUE_DEPTH}), over the decode budget",
                short(span),
                short(key)
            ));
        };
        if bytes > MAX_ATTRIBUTE_BYTES {
            return Err(format!(
                "span '{}': attribute '{}' is {bytes} bytes, over the decode budget of \
                 {MAX_ATTRIBUTE_BYTES} bytes an attribute",
                short(span),
                short(key)
            ));
        }
        self.span_values += values;
        if self.span_values > MAX_SPAN_VALUES {
            return Err(format!(
                "span '{}' holds more than {MAX_SPAN_VALUES} attribute values, over the decode \
                 budget (at attribute '{}')",
                short(span),
                short(key)
            ));
        }
        Ok(())
    }

    /// Ends the current span: its values are taken from the request's budget.
    pub fn end_span(&mut self, span: &str) -> Result<(), OverBudget> {
        if self.span_values > self.request_left {
            self.request_left = 0;
            return Err(format!(
                "span '{}': the request's decode budget of {MAX_REQUEST_VALUES} attribute \
                 values is spent; send smaller batches",
                short(span)
            ));
        }
        self.request_left -= self.span_values;
        Ok(())
    }
}

fn short(s: &str) -> String {
    s.chars().take(64).collect()
}

/// Counts the values of a JSON `AnyValue` (`{"arrayValue": {"values": […]}}`,
/// `{"kvlistValue": {"values": [{"key", "value"}]}}`, scalars); `None` past
/// [`MAX_ATTRIBUTE_VALUES`] or [`MAX_VALUE_DEPTH`]. Stops counting as soon as it is over.
pub fn json_values(value: &serde_json::Value) -> Option<usize> {
    let mut count = 0;
    json_count(value, 0, &mut count).then_some(count)
}

fn json_count(value: &serde_json::Value, depth: usize, count: &mut usize) -> bool {
    *count += 1;
    if *count > MAX_ATTRIBUTE_VALUES || depth > MAX_VALUE_DEPTH {
        return false;
    }
    let nested = |key: &str| {
        value
            .get(key)
            .and_then(|v| v.get("values"))
            .and_then(serde_json::Value::as_array)
    };
    if let Some(items) = nested("arrayValue") {
        return items.iter().all(|v| json_count(v, depth + 1, count));
    }
    if let Some(items) = nested("kvlistValue") {
        return items.iter().all(|kv| match kv.get("value") {
            Some(v) => json_count(v, depth + 1, count),
            None => true,
        });
    }
    true
}

/// Counts the values of a JSON body without building them (no allocation per value);
/// `Err` when it is not JSON or holds more than [`MAX_JSON_VALUES`].
pub fn count_json_values(body: &[u8]) -> Result<usize, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut count = 0usize;
    let mut de = serde_json::Deserializer::from_slice(body);
    JsonCounter(&mut count).deserialize(&mut de)?;
    de.end()?;
    Ok(count)
}

struct JsonCounter<'a>(&'a mut usize);

impl JsonCounter<'_> {
    fn one<E: serde::de::Error>(&mut self) -> Result<(), E> {
        *self.0 += 1;
        if *self.0 > MAX_JSON_VALUES {
            return Err(E::custom(format!(
                "the JSON body holds more than {MAX_JSON_VALUES} values, over the decode budget; \
                 send smaller batches"
            )));
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for JsonCounter<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for JsonCounter<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> Result<(), E> {
        self.one()
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> Result<(), E> {
        self.one()
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> Result<(), E> {
        self.one()
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> Result<(), E> {
        self.one()
    }
    fn visit_str<E: serde::de::Error>(mut self, _: &str) -> Result<(), E> {
        self.one()
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.one()
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.one()?;
        while seq.next_element_seed(JsonCounter(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.one()?;
        while map.next_key_seed(JsonCounter(&mut *self.0))?.is_some() {
            map.next_value_seed(JsonCounter(&mut *self.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_attribute_over_its_values_is_refused_naming_it() {
        let mut b = Budget::default();
        b.start_span("s", 10).unwrap_or_default();
        let err = b
            .attribute("s", "huge", None, 10)
            .expect_err("over the budget");
        assert!(err.contains("'huge'") && err.contains("budget"), "{err}");
        assert!(b.attribute("s", "ok", Some(3), 10).is_ok());
    }

    #[test]
    fn the_request_budget_is_shared_by_its_spans() {
        let mut b = Budget {
            request_left: 5,
            span_values: 0,
        };
        assert!(b.start_span("a", 1).is_ok());
        assert!(b.attribute("a", "k", Some(4), 1).is_ok());
        assert!(b.end_span("a").is_ok());
        assert!(b.start_span("b", 1).is_ok());
        assert!(b.attribute("b", "k", Some(4), 1).is_ok());
        assert!(b.end_span("b").is_err());
    }

    #[test]
    fn json_values_are_counted_until_over() {
        let three = json!({"arrayValue": {"values": [{"intValue": 1}, {}]}});
        assert_eq!(json_values(&three), Some(3));
        let many = json!({"arrayValue": {"values": vec![json!({}); MAX_ATTRIBUTE_VALUES]}});
        assert_eq!(json_values(&many), None);
        let kv = json!({"kvlistValue": {"values": [{"key": "a", "value": {"stringValue": "x"}}]}});
        assert_eq!(json_values(&kv), Some(2));
    }

    #[test]
    fn a_json_body_is_counted_before_it_is_parsed() {
        assert_eq!(count_json_values(br#"{"a": [1, {"b": null}]}"#).unwrap(), 7);
        assert!(count_json_values(b"{").is_err());
        let big = format!("[{}0]", "0,".repeat(MAX_JSON_VALUES));
        let err = count_json_values(big.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("decode budget"), "{err}");
    }
}
