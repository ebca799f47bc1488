//! One export request's spans in compact form, grouped by trace.
//!
//! A request of 250,000 small spans is about 15 MB of protobuf; decoded into
//! `opentelemetry-proto` structs (and their attributes into JSON) it was held at over ten
//! times that until the last event was written. Here the body is kept as it came (one
//! shared [`Bytes`]) and each span is a [`SpanRef`] of 32 bytes: its ids, its start time
//! and where its encoded form lies. A span is decoded in full only when its events are
//! built ([`SpanRef`] → [`Incoming`]), one at a time, and dropped after, so a request
//! costs its body plus a few tens of bytes a span (figures: `docs/otlp.md`).
//!
//! The decode budget ([`crate::budget`]) is counted while the body is walked, before a
//! span is decoded; spans over it, and spans with invalid ids, are rejected one by one.

use std::collections::HashMap;
use std::sync::Arc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use prost::bytes::Bytes;

use crate::attrs::{Attrs, str_of, to_json};
use crate::decode::Decoded;
use crate::error::DecodeError;
use crate::naming::{RunKeys, SDK_NAME, THREAD_ATTRIBUTES, USER_ATTRIBUTES, clip, span_key};
use crate::wire::{Item, walk};
use mindgate_store::MAX_NAME_BYTES;

/// Most rejection reasons kept for the partial-success message.
const MAX_REASONS: usize = 3;

/// Where spans come from: their resource's app, SDK and run keys, and their scope.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub(crate) app: Arc<str>,
    pub(crate) sdk: Arc<(String, String)>,
    pub(crate) resource_keys: Arc<RunKeys>,
    pub(crate) scope: Arc<str>,
}

/// One span of a request before its events are built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpanRef {
    /// Its span id.
    pub(crate) id: u64,
    /// Its parent's span id (`0`: none; ids are never all zero).
    pub(crate) parent: u64,
    /// Where its encoded form begins in the body, and its length.
    at: u32,
    len: u32,
    /// Its [`Origin`] in the request.
    origin: u32,
    /// Whether an attribute of it names the run's thread or user.
    pub(crate) names_keys: bool,
}

/// A span decoded for its events, with what the mapping needs of its origin.
pub(crate) struct Incoming {
    pub(crate) span: Span,
    pub(crate) attrs: Attrs,
    pub(crate) origin: Origin,
}

/// One request's spans of one trace, in the order sent.
#[derive(Debug)]
pub struct TraceSpans {
    trace: [u8; 16],
    body: Bytes,
    origins: Arc<Vec<Origin>>,
    pub(crate) spans: Vec<SpanRef>,
    earliest_ns: u64,
}

impl TraceSpans {
    /// The trace id.
    pub fn trace(&self) -> [u8; 16] {
        self.trace
    }

    /// The run id of the trace.
    pub fn run_id(&self) -> String {
        crate::naming::run_id_of(&self.trace)
    }

    /// How many spans.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The earliest start among the spans (epoch ns).
    pub(crate) fn earliest_ns(&self) -> u64 {
        self.earliest_ns
    }

    pub(crate) fn origin(&self, span: &SpanRef) -> Origin {
        match self.origins.get(span.origin as usize) {
            Some(origin) => origin.clone(),
            None => Origin::unknown(),
        }
    }

    /// The first span's origin (the run's app and SDK).
    pub(crate) fn first_origin(&self) -> Origin {
        self.spans
            .first()
            .map_or_else(Origin::unknown, |s| self.origin(s))
    }

    /// The app name of the run (`service.name` of the first span's resource).
    pub fn app(&self) -> Arc<str> {
        self.first_origin().app
    }

    /// Decodes one span in full (it read when the request was walked; `Err` only if the
    /// body changed, which it cannot: the reason is then the span's rejection).
    pub(crate) fn decode(&self, span: &SpanRef) -> Result<Incoming, String> {
        let start = span.at as usize;
        let bytes = self
            .body
            .get(start..start + span.len as usize)
            .ok_or_else(|| "a span lies outside its request".to_owned())?;
        let decoded = Span::decode(bytes).map_err(|e| format!("a span does not decode: {e}"))?;
        Ok(Incoming {
            attrs: to_json(&decoded.attributes),
            span: decoded,
            origin: self.origin(span),
        })
    }
}

impl Origin {
    fn unknown() -> Origin {
        Origin {
            app: Arc::from(SDK_NAME),
            sdk: Arc::new((SDK_NAME.to_owned(), String::new())),
            resource_keys: Arc::default(),
            scope: Arc::from(""),
        }
    }

    fn of(resource: Option<&Resource>, scope: Option<InstrumentationScope>) -> Origin {
        let resource = resource.map(|r| to_json(&r.attributes)).unwrap_or_default();
        let app = clip(
            str_of(&resource, "service.name").unwrap_or(SDK_NAME),
            MAX_NAME_BYTES,
        );
        Origin {
            app: Arc::from(app.as_str()),
            sdk: Arc::new((
                str_of(&resource, "telemetry.sdk.language")
                    .map_or_else(|| SDK_NAME.to_owned(), |l| format!("{SDK_NAME}-{l}")),
                str_of(&resource, "telemetry.sdk.version")
                    .unwrap_or("")
                    .to_owned(),
            )),
            resource_keys: Arc::new(RunKeys::of(&resource)),
            scope: Arc::from(scope.map(|s| s.name).unwrap_or_default()),
        }
    }
}

/// A read export: its spans grouped by trace (in trace-id order), and what was rejected.
#[derive(Debug, Default)]
pub struct Export {
    /// One group per trace, in trace-id order, the spans of each as sent.
    pub traces: Vec<TraceSpans>,
    /// Spans left out (over the decode budget, invalid ids, fields of the wrong type).
    pub rejected_spans: u64,
    /// The first few reasons, for the partial-success `errorMessage`.
    pub reasons: Vec<String>,
}

impl Export {
    fn reject(&mut self, reason: String) {
        self.rejected_spans += 1;
        if self.reasons.len() < MAX_REASONS {
            self.reasons.push(reason);
        }
    }

    /// How many spans were accepted.
    pub fn span_count(&self) -> usize {
        self.traces.iter().map(TraceSpans::len).sum()
    }
}

/// Reads an OTLP/protobuf body into compact spans grouped by trace, under the decode
/// budget. The body is kept (shared by the groups) until the last group is dropped.
pub fn read_protobuf(body: Bytes) -> Result<Export, DecodeError> {
    let mut export = Export::default();
    let mut origins: Vec<Origin> = Vec::new();
    let mut by_trace: HashMap<[u8; 16], Vec<SpanRef>> = HashMap::new();
    let mut earliest: HashMap<[u8; 16], u64> = HashMap::new();
    let mut resource: Option<Resource> = None;
    let base = body.as_ptr() as usize;
    walk(&body, |item| {
        match item {
            Item::Resource(r) => {
                resource = r;
                origins.push(Origin::of(resource.as_ref(), None));
            }
            Item::Scope(scope) => origins.push(Origin::of(resource.as_ref(), scope)),
            Item::Rejected(reason) => export.reject(reason),
            Item::Span(bytes) => {
                let span = Span::decode(bytes).map_err(DecodeError::Protobuf)?;
                if let Some(why) = crate::decode::id_problem(&span) {
                    let name: String = span.name.chars().take(64).collect();
                    export.reject(format!("span '{name}': {why}"));
                    return Ok(());
                }
                let (Ok(at), Ok(len), Ok(origin), Ok(trace)) = (
                    u32::try_from(bytes.as_ptr() as usize - base),
                    u32::try_from(bytes.len()),
                    u32::try_from(origins.len().saturating_sub(1)),
                    <[u8; 16]>::try_from(span.trace_id.as_slice()),
                ) else {
                    export.reject("a span lies past 4 GiB of body".to_owned());
                    return Ok(());
                };
                let start = earliest.entry(trace).or_insert(u64::MAX);
                *start = (*start).min(span.start_time_unix_nano);
                by_trace.entry(trace).or_default().push(SpanRef {
                    id: span_key(&span.span_id),
                    parent: span_key(&span.parent_span_id),
                    at,
                    len,
                    origin,
                    names_keys: span.attributes.iter().any(|kv| {
                        THREAD_ATTRIBUTES.contains(&kv.key.as_str())
                            || USER_ATTRIBUTES.contains(&kv.key.as_str())
                    }),
                });
            }
        }
        Ok(())
    })?;
    let origins = Arc::new(origins);
    export.traces = by_trace
        .into_iter()
        .map(|(trace, mut spans)| {
            spans.shrink_to_fit();
            TraceSpans {
                trace,
                body: body.clone(),
                origins: Arc::clone(&origins),
                spans,
                earliest_ns: earliest.get(&trace).copied().unwrap_or(0),
            }
        })
        .collect();
    export.traces.sort_unstable_by_key(TraceSpans::trace);
    Ok(export)
}

/// Reads an already decoded request (OTLP/JSON, `mindgate import`) the same way: it is
/// encoded once and read like a protobuf body.
pub fn read_request(request: &ExportTraceServiceRequest) -> Result<Export, DecodeError> {
    read_protobuf(Bytes::from(request.encode_to_vec()))
}

impl Decoded {
    /// The decoded request in compact form, its rejections carried over.
    pub fn into_export(self) -> Result<Export, DecodeError> {
        let Decoded {
            request,
            rejected_spans,
            reasons,
        } = self;
        let body = Bytes::from(request.encode_to_vec());
        drop(request);
        let mut export = read_protobuf(body)?;
        export.rejected_spans += rejected_spans;
        let mut all = reasons;
        all.append(&mut export.reasons);
        all.truncate(MAX_REASONS);
        export.reasons = all;
        Ok(export)
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};

    fn span(trace: u8, id: u8, parent: Option<u8>, name: &str) -> Span {
        Span {
            trace_id: vec![trace; 16],
            span_id: vec![id; 8],
            parent_span_id: parent.map(|p| vec![p; 8]).unwrap_or_default(),
            name: name.to_owned(),
            start_time_unix_nano: u64::from(id) * 1_000_000,
            ..Span::default()
        }
    }

    fn body(spans: Vec<Span>) -> Bytes {
        let service = KeyValue {
            key: "service.name".to_owned(),
            value: Some(AnyValue {
                value: Some(any_value::Value::StringValue("svc".to_owned())),
            }),
            ..KeyValue::default()
        };
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![service],
                    ..Resource::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "lib".to_owned(),
                        ..InstrumentationScope::default()
                    }),
                    spans,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
        };
        Bytes::from(request.encode_to_vec())
    }

    #[test]
    fn spans_are_grouped_by_trace_and_decoded_from_the_body_when_asked() {
        let mut bad = span(9, 1, None, "bad id");
        bad.span_id = vec![0; 8];
        let export = read_protobuf(body(vec![
            span(2, 3, Some(4), "b child"),
            span(1, 1, None, "a root"),
            bad,
            span(2, 4, None, "b root"),
        ]))
        .unwrap();
        assert_eq!((export.span_count(), export.rejected_spans), (3, 1));
        assert!(
            export.reasons[0].contains("'bad id'"),
            "{:?}",
            export.reasons
        );
        let traces: Vec<[u8; 16]> = export.traces.iter().map(TraceSpans::trace).collect();
        assert_eq!(traces, vec![[1; 16], [2; 16]], "in trace-id order");
        let b = &export.traces[1];
        assert_eq!((b.len(), b.earliest_ns()), (2, 3_000_000));
        assert_eq!(
            (b.spans[0].id, b.spans[0].parent),
            (0x0303_0303_0303_0303, 0x0404_0404_0404_0404)
        );
        let child = b.decode(&b.spans[0]).unwrap();
        assert_eq!(child.span.name, "b child");
        assert_eq!((&*child.origin.app, &*child.origin.scope), ("svc", "lib"));
    }

    #[test]
    fn a_span_over_the_decode_budget_is_rejected_before_it_is_decoded() {
        let mut huge = span(1, 2, Some(1), "huge");
        let empties = vec![AnyValue::default(); crate::budget::MAX_ATTRIBUTE_VALUES + 1];
        huge.attributes.push(KeyValue {
            key: "many".to_owned(),
            value: Some(AnyValue {
                value: Some(any_value::Value::ArrayValue(
                    opentelemetry_proto::tonic::common::v1::ArrayValue { values: empties },
                )),
            }),
            ..KeyValue::default()
        });
        let export = read_protobuf(body(vec![span(1, 1, None, "root"), huge])).unwrap();
        assert_eq!((export.span_count(), export.rejected_spans), (1, 1));
        assert!(export.reasons[0].contains("'many'"), "{:?}", export.reasons);
    }
}
