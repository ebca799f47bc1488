//! OpenTelemetry traces in: OTLP/HTTP export bodies become the events of live runs.
//!
//! * [`decode`] reads an `ExportTraceServiceRequest` from protobuf or JSON (with a
//!   lenient pass for base64 ids and enum names), rejecting bad spans one by one;
//!   [`export`] reads a request into compact spans grouped by trace (its body kept as
//!   sent, each span decoded only when its events are built), what the live rules take.
//! * [`mapping`] is the one mapping of a span to a node (kind, stable `nodeId`, model,
//!   input, output, usage) over the GenAI, OpenInference, Traceloop, Vercel AI SDK and
//!   pydantic-ai conventions.
//! * [`live`] applies the live rules (a run per trace, placeholder parents, pending-span
//!   twins, duplicates, the quiet timeout) and yields [`mindgate_store::NewEvent`]s, so
//!   spans are stored as ordinary protocol events (`source: "otlp"`) and every view reads
//!   them unchanged.
//!
//! The server's `POST /v1/traces` and `mindgate import` are its two callers. Rules and
//! figures: `docs/otlp.md`.

pub mod attrs;
pub mod budget;
pub mod decode;
mod error;
pub mod export;
pub mod live;
pub mod mapping;
mod naming;
mod order;
mod wire;

pub use decode::{Decoded, decode_json, decode_json_value, decode_protobuf};
pub use error::DecodeError;
pub use export::{Export, TraceSpans, read_protobuf, read_request};
pub use live::{
    Batch, EventSink, RUN_PREFIX, SOURCE, StoredTrace, TraceState, Tracker, TrackerConfig,
    run_id_of,
};
pub use mapping::{SpanNode, map_span};
pub use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
pub use prost::Message as ProstMessage;
pub use prost::bytes::Bytes;
