//! The server's error type and its HTTP form.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Failures starting or running the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] mindgate_store::StoreError),
    /// Binding the socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// A non-loopback address without `allow_remote`.
    #[error("refusing to listen on non-loopback address {0} without --allow-remote")]
    RemoteNotAllowed(std::net::IpAddr),
    /// Writing the token file failed.
    #[error("cannot write token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The HTTP server failed.
    #[error("server failed: {0}")]
    Serve(std::io::Error),
}

/// An HTTP error: a status and a clear message, sent as `{"error": "..."}`.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// Status code.
    pub status: StatusCode,
    /// Message.
    pub message: String,
}

impl ApiError {
    /// Builds an error.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 400.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 500.
    pub fn internal(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl From<mindgate_store::StoreError> for ApiError {
    fn from(e: mindgate_store::StoreError) -> Self {
        tracing::error!(error = %e, "store error");
        ApiError::internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}
