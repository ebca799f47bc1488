//! Connections and the pool, all made with the URL's TLS settings, and connection errors
//! that say why in words.

use std::time::Duration;

use postgres::Client;
use r2d2_postgres::PostgresConnectionManager;
use r2d2_postgres::r2d2;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::url::PostgresUrl;

/// A bounded pool of connections to one database.
pub type Pool = r2d2::Pool<PostgresConnectionManager<MakeRustlsConnect>>;

/// A connection borrowed from a [`Pool`].
pub type PooledClient = r2d2::PooledConnection<PostgresConnectionManager<MakeRustlsConnect>>;

/// Why the pool could not be built or lend a connection.
pub type PoolError = r2d2::Error;

/// A connection that could not be made: names the database (never its password); its
/// source says why, with what to change when the cause is TLS.
#[derive(Debug, thiserror::Error)]
#[error("cannot reach the PostgreSQL database {database}")]
pub struct ConnectError {
    database: String,
    #[source]
    cause: ConnectCause,
}

/// Why a connection failed: the driver's error and its causes on one line, and a hint.
#[derive(Debug, thiserror::Error)]
#[error("{text}")]
pub struct ConnectCause {
    text: String,
    error: postgres::Error,
}

impl ConnectError {
    /// The database, password hidden.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The driver's error.
    pub fn postgres_error(&self) -> &postgres::Error {
        &self.cause.error
    }
}

/// Opens one connection with the URL's TLS settings.
pub fn connect(url: &PostgresUrl) -> Result<Client, ConnectError> {
    url.config()
        .connect(url.tls().connector())
        .map_err(|error| ConnectError {
            database: url.to_string(),
            cause: ConnectCause {
                text: explain(&error, url),
                error,
            },
        })
}

/// How a [`Pool`] is sized.
#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    /// Most connections open at once.
    pub max_size: u32,
    /// Connections kept open while idle.
    pub min_idle: Option<u32>,
    /// How long a caller waits for a free connection.
    pub wait: Duration,
}

/// A pool of connections to `url` (made with its TLS settings).
pub fn pool(url: &PostgresUrl, settings: PoolSettings) -> Result<Pool, PoolError> {
    let manager = PostgresConnectionManager::new(url.config().clone(), url.tls().connector());
    r2d2::Pool::builder()
        .max_size(settings.max_size)
        .min_idle(settings.min_idle)
        .connection_timeout(settings.wait)
        .build(manager)
}

/// The driver's error and its causes in one line, and what to change when the cause is
/// the connection's security.
fn explain(error: &postgres::Error, url: &PostgresUrl) -> String {
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    let text = parts.join(": ");
    match tls_hint(&text, url) {
        Some(hint) => format!("{text} ({hint})"),
        None => text,
    }
}

fn tls_hint(text: &str, url: &PostgresUrl) -> Option<String> {
    let mode = url.ssl_mode();
    if text.contains("UnknownIssuer") || text.contains("BadSignature") {
        return Some(format!(
            "sslmode={mode}: the server's certificate is not signed by a trusted CA; name its CA with sslrootcert=/path/ca.pem"
        ));
    }
    if text.contains("NotValidForName") {
        return Some(format!(
            "sslmode={mode}: the server's certificate does not name host {}; connect by a name it holds, or use sslmode=verify-ca",
            url.target()
        ));
    }
    if text.contains("server does not support TLS") {
        return Some(format!(
            "sslmode={mode}: the server does not offer TLS; enable ssl on the server or use sslmode=prefer"
        ));
    }
    if text.contains("no encryption") {
        return Some(format!(
            "sslmode={mode}: the server accepts only encrypted connections; use sslmode=require or stronger"
        ));
    }
    None
}
