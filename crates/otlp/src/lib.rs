//! OpenTelemetry traces in: OTLP/HTTP export bodies become the events of live runs.
//!
//! * [`decode`] reads an `ExportTraceServiceRequest` from protobuf or JSON (with a
//!   lenient pass for base64 ids and enum names), rejecting bad spans one by one.
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
pub mod live;
pub mod mapping;
mod order;
mod wire;

pub use decode::{Decoded, decode_json, decode_json_value, decode_protobuf};
pub use error::DecodeError;
pub use live::{
    Batch, EventSink, RUN_PREFIX, SOURCE, StoredTrace, TraceSpans, TraceState, Tracker,
    TrackerConfig, run_id_of, split_by_trace,
};
pub use mapping::{SpanNode, map_span};
pub use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
pub use prost::Message as ProstMessage;
