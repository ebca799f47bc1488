//! Reading an OTLP/HTTP trace export: protobuf (the exporters' default) or JSON.
//!
//! Both decode into `opentelemetry-proto`'s `ExportTraceServiceRequest`. JSON goes
//! through a lenient pass first, for what real senders do and the generated serde
//! code refuses: base64 trace and span ids (the protobuf JSON mapping of `bytes`)
//! instead of hex, enum names (`"SPAN_KIND_CLIENT"`, `"STATUS_CODE_ERROR"`) instead
//! of integers. A span that still does not read (a wrong id length, a field of the
//! wrong type) is rejected on its own and counted, never the whole body: the OTLP
//! partial-success answer carries the count and the first reasons.

use base64::Engine;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use serde_json::{Map, Value};

use crate::budget::Budget;
use crate::error::DecodeError;

/// Most rejection reasons kept for the partial-success message.
const MAX_REASONS: usize = 3;

/// A decoded export: the spans that read, and what was rejected.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Decoded {
    /// The spans that read, grouped by resource and scope as sent.
    pub request: ExportTraceServiceRequest,
    /// Spans left out (bad ids, fields of the wrong type).
    pub rejected_spans: u64,
    /// The first few reasons, for the partial-success `errorMessage`.
    pub reasons: Vec<String>,
}

impl Decoded {
    fn reject(&mut self, reason: String) {
        self.rejected_spans += 1;
        if self.reasons.len() < MAX_REASONS {
            self.reasons.push(reason);
        }
    }

    /// How many spans were accepted.
    pub fn span_count(&self) -> usize {
        self.request
            .resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .map(|s| s.spans.len())
            .sum()
    }

    /// One line naming the rejected spans and the first reasons (empty when none was).
    pub fn error_message(&self) -> String {
        if self.rejected_spans == 0 {
            return String::new();
        }
        format!(
            "{} span(s) rejected: {}",
            self.rejected_spans,
            self.reasons.join("; ")
        )
    }
}

/// Decodes an OTLP/protobuf body under the decode budget ([`crate::budget`]): spans
/// over it, and spans with invalid ids, are rejected and counted.
pub fn decode_protobuf(body: &[u8]) -> Result<Decoded, DecodeError> {
    let read = crate::wire::read_request(body)?;
    let mut decoded = Decoded {
        request: read.request,
        ..Decoded::default()
    };
    for reason in read.rejected {
        decoded.reject(reason);
    }
    drop_invalid_ids(&mut decoded);
    Ok(decoded)
}

/// Decodes an OTLP/JSON body (see the module docs for what the lenient pass accepts).
/// Its values are counted before it is parsed ([`crate::budget::MAX_JSON_VALUES`]).
pub fn decode_json(body: &[u8]) -> Result<Decoded, DecodeError> {
    crate::budget::count_json_values(body).map_err(|e| {
        if e.is_data() {
            DecodeError::Shape(e.to_string())
        } else {
            DecodeError::Json(e)
        }
    })?;
    let value: Value = serde_json::from_slice(body).map_err(DecodeError::Json)?;
    decode_json_value(value)
}

/// [`decode_json`] over an already parsed JSON value (one line of a dump file).
pub fn decode_json_value(value: Value) -> Result<Decoded, DecodeError> {
    let Value::Object(mut top) = value else {
        return Err(DecodeError::Shape(
            "expected a JSON object with `resourceSpans`".to_owned(),
        ));
    };
    let mut decoded = Decoded::default();
    let mut budget = Budget::default();
    let resource_spans = match top.remove("resourceSpans") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(DecodeError::Shape(
                "`resourceSpans` must be an array".to_owned(),
            ));
        }
    };
    for item in resource_spans {
        let Value::Object(mut rs) = item else {
            return Err(DecodeError::Shape(
                "each `resourceSpans` entry must be an object".to_owned(),
            ));
        };
        let resource = match rs.remove("resource") {
            Some(v) if !v.is_null() => Some(
                serde_json::from_value::<Resource>(v)
                    .map_err(|e| DecodeError::Shape(format!("bad `resource`: {e}")))?,
            ),
            _ => None,
        };
        let schema_url = string_field(&mut rs, "schemaUrl");
        let scopes = rs
            .remove("scopeSpans")
            .or_else(|| rs.remove("instrumentationLibrarySpans"));
        let scopes = match scopes {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(DecodeError::Shape(
                    "`scopeSpans` must be an array".to_owned(),
                ));
            }
        };
        let mut scope_spans = Vec::with_capacity(scopes.len());
        for scope in scopes {
            let Value::Object(mut ss) = scope else {
                return Err(DecodeError::Shape(
                    "each `scopeSpans` entry must be an object".to_owned(),
                ));
            };
            let scope = match ss
                .remove("scope")
                .or_else(|| ss.remove("instrumentationLibrary"))
            {
                Some(v) if !v.is_null() => serde_json::from_value::<InstrumentationScope>(v).ok(),
                _ => None,
            };
            let schema_url = string_field(&mut ss, "schemaUrl");
            let spans = match ss.remove("spans") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items,
                Some(_) => {
                    return Err(DecodeError::Shape("`spans` must be an array".to_owned()));
                }
            };
            let mut out = Vec::with_capacity(spans.len());
            for span in spans {
                match lenient_span(span, &mut budget) {
                    Ok(span) => out.push(span),
                    Err(reason) => decoded.reject(reason),
                }
            }
            scope_spans.push(ScopeSpans {
                scope,
                spans: out,
                schema_url,
            });
        }
        decoded.request.resource_spans.push(ResourceSpans {
            resource,
            scope_spans,
            schema_url,
        });
    }
    drop_invalid_ids(&mut decoded);
    Ok(decoded)
}

fn string_field(map: &mut Map<String, Value>, key: &str) -> String {
    match map.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// One JSON span → a [`Span`], under the decode budget, fixing ids and enum names first.
fn lenient_span(span: Value, budget: &mut Budget) -> Result<Span, String> {
    let Value::Object(mut span) = span else {
        return Err("a span is not a JSON object".to_owned());
    };
    let name = span
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .chars()
        .take(64)
        .collect::<String>();
    span_budget(&span, &name, budget)?;
    for (key, bytes) in [("traceId", 16), ("spanId", 8), ("parentSpanId", 8)] {
        if let Some(v) = span.get_mut(key) {
            fix_id(v, bytes).map_err(|e| format!("span '{name}': {key} {e}"))?;
        }
    }
    if let Some(kind) = span.get_mut("kind") {
        fix_enum(kind, &SPAN_KINDS, "SPAN_KIND_");
    }
    if let Some(Value::Object(status)) = span.get_mut("status")
        && let Some(code) = status.get_mut("code")
    {
        fix_enum(code, &STATUS_CODES, "STATUS_CODE_");
    }
    if let Some(Value::Array(links)) = span.get_mut("links") {
        links.retain_mut(|link| {
            ["traceId", "spanId"]
                .iter()
                .zip([16, 8])
                .all(|(key, bytes)| link.get_mut(*key).is_none_or(|v| fix_id(v, bytes).is_ok()))
        });
    }
    serde_json::from_value::<Span>(Value::Object(span)).map_err(|e| format!("span '{name}': {e}"))
}

/// Counts a JSON span's attributes, its events' and links' against the budget.
fn span_budget(span: &Map<String, Value>, name: &str, budget: &mut Budget) -> Result<(), String> {
    budget.start_span(name, 0)?;
    let lists = span.get("attributes").into_iter().chain(
        ["events", "links"]
            .iter()
            .filter_map(|k| span.get(*k).and_then(Value::as_array))
            .flatten()
            .filter_map(|item| item.get("attributes")),
    );
    for list in lists {
        for kv in list.as_array().into_iter().flatten() {
            let key = kv.get("key").and_then(Value::as_str).unwrap_or("?");
            let value = kv.get("value").unwrap_or(&Value::Null);
            let values = crate::budget::json_values(value);
            budget.attribute(name, key, values, json_bytes(value, 0))?;
        }
    }
    budget.end_span(name)
}

/// About the encoded size of a JSON value (its strings and a few bytes per value).
fn json_bytes(value: &Value, depth: usize) -> usize {
    if depth > crate::budget::MAX_VALUE_DEPTH * 4 {
        return 0;
    }
    match value {
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(|v| json_bytes(v, depth + 1) + 1).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.len() + 3 + json_bytes(v, depth + 1))
            .sum(),
        _ => 8,
    }
}

const SPAN_KINDS: [&str; 6] = [
    "UNSPECIFIED",
    "INTERNAL",
    "SERVER",
    "CLIENT",
    "PRODUCER",
    "CONSUMER",
];
const STATUS_CODES: [&str; 3] = ["UNSET", "OK", "ERROR"];

/// An enum sent by name (`SPAN_KIND_CLIENT`, `CLIENT`, any case) → its number.
fn fix_enum(value: &mut Value, names: &[&str], prefix: &str) {
    if let Value::String(s) = value {
        let upper = s.to_ascii_uppercase();
        let bare = upper.strip_prefix(prefix).unwrap_or(&upper);
        *value = match names.iter().position(|n| *n == bare) {
            Some(i) => Value::from(i),
            None => match bare.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::from(0),
            },
        };
    }
}

/// An id as lowercase hex of `bytes` bytes: hex as the spec says, or base64 (the
/// protobuf JSON mapping some exporters use). Empty stays empty (no parent).
fn fix_id(value: &mut Value, bytes: usize) -> Result<(), String> {
    let Value::String(s) = value else {
        if value.is_null() {
            *value = Value::String(String::new());
            return Ok(());
        }
        return Err("is not a string".to_owned());
    };
    if s.is_empty() {
        return Ok(());
    }
    if s.len() == bytes * 2 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        *s = s.to_ascii_lowercase();
        return Ok(());
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(s.as_bytes())
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(s.as_bytes()))
        .map_err(|_| format!("'{}' is neither hex nor base64", truncate(s, 48)))?;
    if raw.len() != bytes {
        return Err(format!("is {} bytes, expected {bytes}", raw.len()));
    }
    *s = hex(&raw);
    Ok(())
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Removes spans whose trace or span id is not 16 / 8 non-zero bytes, or whose parent
/// id is neither empty nor 8 bytes (the spec calls them invalid).
fn drop_invalid_ids(decoded: &mut Decoded) {
    let mut reasons = Vec::new();
    for rs in &mut decoded.request.resource_spans {
        for ss in &mut rs.scope_spans {
            ss.spans.retain(|span| match id_problem(span) {
                None => true,
                Some(why) => {
                    reasons.push(format!("span '{}': {why}", truncate(&span.name, 64)));
                    false
                }
            });
        }
    }
    for reason in reasons {
        decoded.reject(reason);
    }
}

pub(crate) fn id_problem(span: &Span) -> Option<&'static str> {
    if span.trace_id.len() != 16 || span.trace_id.iter().all(|b| *b == 0) {
        return Some("traceId must be 16 non-zero bytes");
    }
    if span.span_id.len() != 8 || span.span_id.iter().all(|b| *b == 0) {
        return Some("spanId must be 8 non-zero bytes");
    }
    if !span.parent_span_id.is_empty() && span.parent_span_id.len() != 8 {
        return Some("parentSpanId must be empty or 8 bytes");
    }
    None
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use prost::Message;
    use serde_json::json;

    fn span(trace: &str, id: &str) -> Value {
        json!({"traceId": trace, "spanId": id, "name": "chat gpt-4o", "kind": "SPAN_KIND_CLIENT",
               "startTimeUnixNano": "1000000000", "endTimeUnixNano": 2000000000u64,
               "status": {"code": "STATUS_CODE_ERROR", "message": "boom"}})
    }

    fn body(spans: Vec<Value>) -> Value {
        json!({"resourceSpans": [{"resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "svc"}}]},
            "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]})
    }

    #[test]
    fn hex_and_base64_ids_and_enum_names_are_accepted() {
        let trace_b64 = base64::engine::general_purpose::STANDARD.encode([7u8; 16]);
        let span_b64 = base64::engine::general_purpose::STANDARD.encode([9u8; 8]);
        let d = decode_json_value(body(vec![
            span("0102030405060708090a0b0c0d0e0f10", "0102030405060708"),
            span(&trace_b64, &span_b64),
        ]))
        .unwrap();
        assert_eq!(d.rejected_spans, 0, "{:?}", d.reasons);
        let spans = &d.request.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[1].trace_id, vec![7u8; 16]);
        assert_eq!(spans[1].span_id, vec![9u8; 8]);
        assert_eq!(spans[0].kind, 3);
        assert_eq!(spans[0].status.as_ref().unwrap().code, 2);
        assert_eq!(spans[0].start_time_unix_nano, 1_000_000_000);
        assert_eq!(spans[0].end_time_unix_nano, 2_000_000_000);
    }

    #[test]
    fn a_bad_span_is_rejected_alone() {
        let mut bad_type = span("0102030405060708090a0b0c0d0e0f10", "0102030405060709");
        bad_type["name"] = json!(42);
        let d = decode_json_value(body(vec![
            span("0102030405060708090a0b0c0d0e0f10", "0102030405060708"),
            span("0102", "0102030405060708"),
            span("00000000000000000000000000000000", "0102030405060708"),
            bad_type,
            json!("not a span"),
        ]))
        .unwrap();
        assert_eq!(d.span_count(), 1);
        assert_eq!(d.rejected_spans, 4);
        assert!(d.error_message().starts_with("4 span(s) rejected: "));
    }

    #[test]
    fn malformed_bodies_are_errors() {
        assert!(matches!(
            decode_json(b"{not json"),
            Err(DecodeError::Json(_))
        ));
        assert!(matches!(decode_json(b"[1,2]"), Err(DecodeError::Shape(_))));
        assert!(matches!(
            decode_json(br#"{"resourceSpans": 3}"#),
            Err(DecodeError::Shape(_))
        ));
        assert!(matches!(
            decode_protobuf(&[0xff, 0xff, 0xff]),
            Err(DecodeError::Malformed(_))
        ));
        assert_eq!(decode_json(b"{}").unwrap().span_count(), 0);
    }

    #[test]
    fn protobuf_round_trip_drops_invalid_ids() {
        let good = Span {
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            name: "ok".into(),
            ..Span::default()
        };
        let bad = Span {
            trace_id: vec![1; 3],
            span_id: vec![2; 8],
            name: "bad".into(),
            ..Span::default()
        };
        let req = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: None,
                scope_spans: vec![ScopeSpans {
                    scope: None,
                    spans: vec![good, bad],
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
        };
        let d = decode_protobuf(&req.encode_to_vec()).unwrap();
        assert_eq!((d.span_count(), d.rejected_spans), (1, 1));
    }
}
