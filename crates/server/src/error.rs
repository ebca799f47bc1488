//! The server's error type and its HTTP form.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mindgate_errors::{ErrorCode, error_chain};
use serde::{Deserialize, Serialize};

/// Who holds a database lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// Server process id.
    pub pid: u32,
    /// Port it listens on.
    pub port: u16,
}

/// Failures starting or running the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] mindgate_store::StoreError),
    /// Joining the instances on the shared PostgreSQL database failed.
    #[error(transparent)]
    Cluster(#[from] mindgate_cluster::ClusterError),
    /// Binding the socket failed.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The port is taken (by another Mindgate, when its token file says so).
    #[error("cannot listen on {addr}: the port is already in use{}", describe_port_holder(.holder.as_ref()))]
    AddrInUse {
        /// The address.
        addr: std::net::SocketAddr,
        /// The Mindgate server found in the home's token file for that port, if any.
        holder: Option<mindgate_home::TokenFile>,
    },
    /// Another server has the database.
    #[error(
        "database {} is in use by another Mindgate server{} (one server per database: stop it, \
         or start this one with another --db or MINDGATE_HOME)",
        .db.display(),
        describe_db_holder(.holder.as_ref())
    )]
    DatabaseInUse {
        /// The database.
        db: std::path::PathBuf,
        /// The holder named in the lock file, if it could be read.
        holder: Option<LockHolder>,
    },
    /// Creating or locking the database lock file failed.
    #[error("cannot lock {}", .path.display())]
    Lock {
        /// The lock file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `allow_remote` without any host name remote clients may use.
    #[error(
        "--allow-remote on {0} needs --allowed-host NAME (repeatable): the host name or address \
         remote clients use to reach this server; requests naming any other Host are refused"
    )]
    NoAllowedHosts(std::net::IpAddr),
    /// A non-loopback address without `allow_remote`.
    #[error("refusing to listen on non-loopback address {0} without --allow-remote")]
    RemoteNotAllowed(std::net::IpAddr),
    /// Writing the token file failed.
    #[error(transparent)]
    TokenFile(#[from] mindgate_home::TokenFileError),
    /// The price file (`<home>/prices.toml`) cannot be used.
    #[error(transparent)]
    Prices(#[from] mindgate_pricing::PricesFileError),
    /// The HTTP server failed.
    #[error("server failed: {0}")]
    Serve(std::io::Error),
}

fn describe_port_holder(holder: Option<&mindgate_home::TokenFile>) -> String {
    match holder {
        // Not its URL: that carries the control token.
        Some(h) => format!(" by mindgate serve (pid {}, port {})", h.pid, h.port),
        None => " (by another program, or a Mindgate server with another MINDGATE_HOME)".to_owned(),
    }
}

fn describe_db_holder(holder: Option<&LockHolder>) -> String {
    match holder {
        Some(h) => format!(" (pid {}, port {})", h.pid, h.port),
        None => String::new(),
    }
}

/// An HTTP error: a code of the shared vocabulary ([`ErrorCode`]) and a clear message, sent
/// with the code's status as `{"error": message, "code": code}`.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// What kind of failure (it sets the status).
    pub code: ErrorCode,
    /// Message.
    pub message: String,
    /// A finer, route-specific reason (`"reason"` in the body), when the route gives one.
    pub reason: Option<&'static str>,
}

impl ApiError {
    /// Builds an error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            reason: None,
        }
    }

    /// The same error with a finer, route-specific reason (`"reason"` in the body, e.g.
    /// the memory API's `duplicate`, `flagged`, `over_limit`).
    pub fn with_reason(mut self, reason: &'static str) -> ApiError {
        self.reason = Some(reason);
        self
    }

    /// `not_found` (404).
    pub fn not_found(message: impl Into<String>) -> ApiError {
        Self::new(ErrorCode::NotFound, message)
    }

    /// `bad_request` (400).
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// `internal` (500).
    pub fn internal(message: impl Into<String>) -> ApiError {
        Self::new(ErrorCode::Internal, message)
    }

    /// The HTTP status of the answer.
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

impl From<mindgate_store::StoreError> for ApiError {
    fn from(e: mindgate_store::StoreError) -> Self {
        let message = error_chain(&e);
        tracing::error!(error = %message, "store error");
        ApiError::new(e.code(), message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = self.code.http_body(&self.message);
        if let (Some(reason), Some(obj)) = (self.reason, body.as_object_mut()) {
            obj.insert("reason".to_owned(), serde_json::Value::from(reason));
        }
        (self.status(), Json(body)).into_response()
    }
}
