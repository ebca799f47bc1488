//! Limits of the HTTP listener: how many connections, from one address and in all, and
//! how long a request's headers may take.

use std::time::Duration;

/// Default cap on open HTTP connections (WebSockets and streams included).
/// Well under the usual 1,024 descriptors, which the store and logs also need.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Default cap on open connections from one client IP address.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;
/// Default time a client has to send a request's headers; also how long an
/// idle keep-alive connection stays open between requests.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Limits of the HTTP listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Most connections open at once; further ones get `503` and are closed.
    pub max_connections: usize,
    /// Most connections open at once from one client IP address.
    pub max_connections_per_ip: usize,
    /// Time allowed for a request's headers to arrive, and for an idle
    /// keep-alive connection to send its next request.
    pub header_read_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
        }
    }
}

impl HttpLimits {
    /// The defaults, overridden by `MINDGATE_MAX_CONNECTIONS`,
    /// `MINDGATE_MAX_CONNECTIONS_PER_IP` and `MINDGATE_HEADER_TIMEOUT_MS`
    /// (positive integers; anything else is ignored with a warning).
    pub fn from_env() -> HttpLimits {
        use mindgate_home::env;
        let mut limits = HttpLimits::default();
        if let Some(n) = env_number(env::MINDGATE_MAX_CONNECTIONS) {
            limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = env_number(env::MINDGATE_MAX_CONNECTIONS_PER_IP) {
            limits.max_connections_per_ip = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(ms) = env_number(env::MINDGATE_HEADER_TIMEOUT_MS) {
            limits.header_read_timeout = Duration::from_millis(ms);
        }
        limits
    }
}

fn env_number(name: &str) -> Option<u64> {
    let raw = std::env::var(name).ok()?;
    match raw.trim().parse::<u64>() {
        Ok(n) if n > 0 => Some(n),
        _ => {
            tracing::warn!(
                variable = name,
                value = %raw,
                "ignored: expected a positive integer"
            );
            None
        }
    }
}
