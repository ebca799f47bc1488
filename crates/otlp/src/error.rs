//! Why a body could not be read as an OTLP trace export.

/// A body that is not an OTLP `ExportTraceServiceRequest`.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The protobuf bytes do not decode.
    #[error("the body is not an OTLP/protobuf ExportTraceServiceRequest")]
    Protobuf(#[source] prost::DecodeError),
    /// The protobuf wire form is broken (read before decoding, under the budget).
    #[error("the body is not an OTLP/protobuf ExportTraceServiceRequest: {0}")]
    Malformed(String),
    /// The body is not JSON at all.
    #[error("the body is not JSON")]
    Json(#[source] serde_json::Error),
    /// JSON that is not shaped like an `ExportTraceServiceRequest`.
    #[error("the JSON body is not an OTLP ExportTraceServiceRequest: {0}")]
    Shape(String),
}

impl DecodeError {
    /// A stable camelCase code.
    pub fn code(&self) -> &'static str {
        match self {
            DecodeError::Protobuf(_) | DecodeError::Malformed(_) => "badProtobuf",
            DecodeError::Json(_) => "badJson",
            DecodeError::Shape(_) => "badShape",
        }
    }
}
