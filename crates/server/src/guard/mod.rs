//! Request guards: the Host/Origin check (DNS rebinding, cross-site WebSocket
//! hijacking) and the bearer token for mutating requests.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use mindgate_errors::ErrorCode;

use crate::error::ApiError;
pub mod principal;

use crate::state::AppState;
use principal::{Principal, agent_refusal};

/// Whether `host` (a `Host` header value or an Origin's authority) names this
/// machine's loopback interface on `port`.
pub fn is_loopback_authority(authority: &str, port: u16) -> bool {
    let (host, got_port) = split_authority(authority);
    let host_ok = host.eq_ignore_ascii_case("localhost")
        || matches!(host, "[::1]" | "::1")
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    let port_ok = match got_port {
        Some(p) => p == port,
        None => port == 80,
    };
    host_ok && port_ok
}

fn split_authority(authority: &str) -> (&str, Option<u16>) {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        // [v6]:port
        if let Some(end) = rest.find(']') {
            let host = &authority[..end + 2];
            let port = rest[end + 1..]
                .strip_prefix(':')
                .and_then(|p| p.parse().ok());
            return (host, port);
        }
        return (authority, None);
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => match p.parse() {
            Ok(port) => (h, Some(port)),
            Err(_) => (authority, Some(0)),
        },
        _ => (authority, None),
    }
}

/// Whether `authority` (a `Host` value or an Origin's authority) names one of
/// `allowed` — `name` (on the server's `port`) or `name:port` entries, names
/// compared without case — or this machine's loopback interface on `port`.
pub fn is_allowed_authority(authority: &str, port: u16, allowed: &[String]) -> bool {
    if is_loopback_authority(authority, port) {
        return true;
    }
    let (host, got_port) = split_authority(authority);
    let got_port = got_port.unwrap_or(80);
    allowed.iter().any(|entry| {
        let (want_host, want_port) = split_authority(entry);
        want_host.eq_ignore_ascii_case(host) && want_port.unwrap_or(port) == got_port
    })
}

/// Checks `Host` and `Origin`. Returns the refusal message, if any.
///
/// `remote` is `None` for a local-only server: `Host` must be a loopback name on
/// `port` and `Origin`, when present, `http://` plus such a name. With remote
/// access on it holds the names remote clients may use (`--allowed-host`);
/// `Host` must then be a loopback name or one of them, and `Origin`, when
/// present, `http://` or `https://` plus a name that passes the same check.
pub fn check_host_origin(
    headers: &HeaderMap,
    port: u16,
    remote: Option<&[String]>,
) -> Result<(), String> {
    let allowed = remote.unwrap_or(&[]);
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return Err("missing Host header".to_owned());
    };
    if !is_allowed_authority(host, port, allowed) {
        return Err(match remote {
            None => format!(
                "Host '{host}' is not this server's loopback address (DNS rebinding protection)"
            ),
            Some(_) => format!(
                "Host '{host}' is not a loopback address or an --allowed-host of this server \
                 (DNS rebinding protection)"
            ),
        });
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let authority = match remote {
            None => origin.strip_prefix("http://"),
            Some(_) => origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://")),
        };
        let ok = authority.is_some_and(|a| is_allowed_authority(a, port, allowed));
        if !ok {
            return Err(format!(
                "Origin '{origin}' is not this server (cross-site requests are refused)"
            ));
        }
    }
    Ok(())
}

/// Constant-time comparison of two tokens.
pub fn token_matches(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer token of a request, if it carries one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::trim)
}

/// The `token` query parameter of a request, if it has one.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// Who a request acts for: the person with the control token, the agent with the agent
/// token (either as `Authorization: Bearer`, or `?token=` when `query` allows it), else
/// nobody.
fn principal_of(req: &Request, state: &AppState, query: bool) -> Principal {
    let carries = |token: &str| {
        bearer(req.headers()).is_some_and(|t| token_matches(t, token))
            || (query && query_token(req.uri().query()).is_some_and(|t| token_matches(t, token)))
    };
    if carries(&state.token) {
        Principal::Person
    } else if carries(&state.agent_token) {
        Principal::Agent
    } else {
        Principal::Anonymous
    }
}

/// The 403 of a request the agent token may not make (`None`: it may).
fn agent_forbidden(req: &Request) -> Option<Response> {
    let why = agent_refusal(req.method(), req.uri().path())?;
    tracing::info!(
        path = req.uri().path(),
        "agent token refused: a person's act"
    );
    Some(ApiError::new(ErrorCode::Forbidden, why).into_response())
}

/// Middleware: Host/Origin guard on everything; the token on mutating methods
/// and `/mcp`, and with remote access on, on every request but the viewer's
/// static files and `GET /ready`. The agent token passes where
/// [`agent_refusal`] allows it (403 elsewhere); every request goes on with its
/// [`Principal`] in its extensions.
pub async fn guard(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let remote = state
        .config
        .allow_remote
        .then_some(state.config.allowed_hosts.as_slice());
    if let Err(message) = check_host_origin(req.headers(), state.port, remote) {
        tracing::warn!(%message, "request refused by the host/origin guard");
        return ApiError::new(ErrorCode::ForbiddenHost, message).into_response();
    }
    if remote.is_some() {
        let read = matches!(*req.method(), Method::GET | Method::HEAD);
        let static_file = read && crate::assets::is_static_file(req.uri().path());
        // A load balancer's health check carries no token: `/ready` answers it (whether
        // this instance and its database serve, nothing more).
        let readiness = read && req.uri().path() == "/ready";
        let principal = principal_of(&req, &state, true);
        if principal == Principal::Agent
            && let Some(refused) = agent_forbidden(&req)
        {
            return refused;
        }
        req.extensions_mut().insert(principal);
        if !static_file && !readiness && principal == Principal::Anonymous {
            return ApiError::new(
                ErrorCode::Unauthorized,
                "remote access is on (--allow-remote): every request needs the viewer token, as \
                 `Authorization: Bearer <token>` or a `?token=<token>` query parameter (apps: \
                 ws://<host>:<port>/ingest?token=<token>)",
            )
            .into_response();
        }
        return next.run(req).await;
    }
    let mutating = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::DELETE | Method::PATCH
    );
    // MCP sessions can resume pauses: every `/mcp` request needs the token.
    let path = req.uri().path();
    let mcp = path == "/mcp" || path.starts_with("/mcp/");
    // OTLP exporters send no token: on a loopback-only server, trace exports (which only
    // add runs, and pass the Host/Origin check above) need none.
    let otlp_export = path == "/v1/traces";
    let principal = principal_of(&req, &state, false);
    if principal == Principal::Agent
        && let Some(refused) = agent_forbidden(&req)
    {
        return refused;
    }
    req.extensions_mut().insert(principal);
    if ((mutating && !otlp_export) || mcp) && principal == Principal::Anonymous {
        return ApiError::new(
            ErrorCode::Unauthorized,
            "this request changes state (or is an MCP request) and needs the viewer token: send \
             `Authorization: Bearer <token>` (the token is in the viewer URL and in \
             $MINDGATE_HOME/run/serve-<port>.json; agents use the agent token of \
             $MINDGATE_HOME/run/agent-<port>.json)",
        )
        .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = host {
            h.insert(
                header::HOST,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("x")),
            );
        }
        if let Some(v) = origin {
            h.insert(
                header::ORIGIN,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("x")),
            );
        }
        h
    }

    #[test]
    fn loopback_hosts_on_our_port_pass() {
        for host in ["127.0.0.1:4747", "localhost:4747", "[::1]:4747"] {
            assert!(
                check_host_origin(&headers(Some(host), None), 4747, None).is_ok(),
                "{host}"
            );
        }
        assert!(
            check_host_origin(
                &headers(Some("127.0.0.1:4747"), Some("http://localhost:4747")),
                4747,
                None
            )
            .is_ok()
        );
    }

    #[test]
    fn rebinding_and_foreign_origins_are_refused() {
        let cases = [
            (Some("evil.example:4747"), None),
            (Some("127.0.0.1:9999"), None),
            (None, None),
            (Some("127.0.0.1:4747"), Some("http://evil.example")),
            (Some("127.0.0.1:4747"), Some("null")),
            (Some("127.0.0.1:4747"), Some("https://127.0.0.1:4747")),
            (Some("127.0.0.1:4747"), Some("http://127.0.0.1:4748")),
            (Some("127.0.0.1.evil.example:4747"), None),
        ];
        for (host, origin) in cases {
            assert!(
                check_host_origin(&headers(host, origin), 4747, None).is_err(),
                "{host:?} {origin:?}"
            );
        }
    }

    #[test]
    fn remote_access_accepts_only_loopback_and_the_allowed_hosts() {
        let allowed = ["mg.lan".to_owned(), "10.0.0.5:8080".to_owned()];
        let remote = Some(&allowed[..]);
        for (host, origin) in [
            ("127.0.0.1:4747", None),
            ("MG.lan:4747", Some("http://mg.lan:4747")),
            ("mg.lan:4747", Some("https://mg.lan:4747")),
            ("10.0.0.5:8080", None),
        ] {
            assert!(
                check_host_origin(&headers(Some(host), origin), 4747, remote).is_ok(),
                "{host} {origin:?}"
            );
        }
        for (host, origin) in [
            // DNS rebinding: the attacker's name, with its own matching Origin.
            (
                Some("attacker.example:4747"),
                Some("http://attacker.example:4747"),
            ),
            (Some("attacker.example:4747"), None),
            (Some("mg.lan:4748"), None),
            (Some("10.0.0.5:4747"), None),
            (Some("mg.lan:4747"), Some("http://attacker.example:4747")),
            (None, None),
        ] {
            assert!(
                check_host_origin(&headers(host, origin), 4747, remote).is_err(),
                "{host:?} {origin:?}"
            );
        }
    }

    #[test]
    fn the_token_is_found_in_the_query() {
        assert_eq!(query_token(Some("a=1&token=abc")), Some("abc"));
        assert_eq!(query_token(Some("token=")), Some(""));
        assert_eq!(query_token(Some("xtoken=abc")), None);
        assert_eq!(query_token(None), None);
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abd", "abc"));
        assert!(!token_matches("ab", "abc"));
    }
}
