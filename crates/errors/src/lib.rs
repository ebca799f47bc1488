//! One error vocabulary for every view of Mindgate: the HTTP API, the MCP tools and the
//! viewer feed (`/ws/ui`) answer a failure with one of these codes, mapped here once to an
//! HTTP status and to each surface's JSON shape. The libraries say which code each of their
//! errors is (`StoreError::code`, `mindgate_taskgraph::Error::code`, `MemoryError::code`), so
//! a view never decides it again.
//!
//! | surface | shape |
//! | --- | --- |
//! | HTTP | status [`ErrorCode::http_status`], body [`ErrorCode::http_body`]: `{"error": message, "code": code}` |
//! | MCP tool result | `isError: true`, structured [`ErrorCode::tool_content`]: `{"error": {"code", "message"}}` |
//! | viewer feed | [`ErrorCode::feed_message`]: `{"type": "error", "code", "message", "requestId"?}` |
//!
//! ```
//! use mindgate_errors::ErrorCode;
//!
//! assert_eq!(ErrorCode::NotFound.http_status(), 404);
//! assert_eq!(ErrorCode::NotFound.as_str(), "not_found");
//! let body = ErrorCode::TooLarge.http_body("the file is over 256 MiB");
//! assert_eq!(body["code"], "too_large");
//! assert_eq!(body["error"], "the file is over 256 MiB");
//! ```

mod string_enum;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What kind of failure an answer reports, the same on every surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request is malformed: a bad argument, query, body, id or frame.
    BadRequest,
    /// The request changes state (or controls a run) and lacks the control token.
    Unauthorized,
    /// The `Host` or `Origin` header names a site this server does not serve (DNS
    /// rebinding, cross-site requests).
    ForbiddenHost,
    /// The request names something this server may not read (a path outside the session
    /// folders).
    Forbidden,
    /// No such run, node, instance, pause, task or route.
    NotFound,
    /// The route exists but not with this method.
    MethodNotAllowed,
    /// The request conflicts with the current state (a pause already taken or refused).
    Conflict,
    /// The input (a file, a body, a decoded stream) is over its size limit.
    TooLarge,
    /// Something the answer needs is not there right now (no database yet, no running
    /// server, too many connections or graph builds at once); retry later.
    Unavailable,
    /// Mindgate failed; the message says where (and the log has more).
    Internal,
}

impl ErrorCode {
    /// Every code, in the order the documentation lists them.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::BadRequest,
        ErrorCode::Unauthorized,
        ErrorCode::ForbiddenHost,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::Conflict,
        ErrorCode::TooLarge,
        ErrorCode::Unavailable,
        ErrorCode::Internal,
    ];

    /// The code as it is sent (`snake_case`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::ForbiddenHost => "forbidden_host",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::Conflict => "conflict",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
        }
    }

    /// The HTTP status of an answer with this code.
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorCode::BadRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::ForbiddenHost | ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::Conflict => 409,
            ErrorCode::TooLarge => 413,
            ErrorCode::Unavailable => 503,
            ErrorCode::Internal => 500,
        }
    }

    /// The code that best describes an HTTP error status another server answered (a
    /// status this vocabulary does not use maps to its class: 4xx `bad_request`, else
    /// `internal`).
    pub const fn from_http_status(status: u16) -> ErrorCode {
        match status {
            401 => ErrorCode::Unauthorized,
            403 => ErrorCode::Forbidden,
            404 => ErrorCode::NotFound,
            405 => ErrorCode::MethodNotAllowed,
            409 => ErrorCode::Conflict,
            413 => ErrorCode::TooLarge,
            429 | 502..=504 => ErrorCode::Unavailable,
            400..=499 => ErrorCode::BadRequest,
            _ => ErrorCode::Internal,
        }
    }

    /// Parses a code as sent (`"not_found"`).
    pub fn parse(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }

    /// The HTTP body of an error answer: `{"error": message, "code": code}`.
    pub fn http_body(self, message: &str) -> Value {
        json!({ "error": message, "code": self.as_str() })
    }

    /// The structured content of an MCP tool error: `{"error": {"code", "message"}}`.
    pub fn tool_content(self, message: &str) -> Value {
        json!({ "error": { "code": self.as_str(), "message": message } })
    }

    /// A viewer-feed error message: `{"type": "error", "code", "message", "requestId"?}`.
    pub fn feed_message(self, message: &str, request_id: Option<&Value>) -> Value {
        let mut v = json!({ "type": "error", "code": self.as_str(), "message": message });
        if let (Some(id), Some(obj)) = (request_id, v.as_object_mut()) {
            obj.insert("requestId".to_owned(), id.clone());
        }
        v
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error and its causes as one line, `outer: cause: root cause` — how a view shows a
/// library error whose message leaves its source's text to the source (the libraries'
/// errors never repeat their cause in their own message).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let part = e.to_string();
        // A cause that an outer message already quotes is not written twice.
        if !text.ends_with(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_name_serde_and_status() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(Value::String(code.as_str().to_owned()))
            );
            let back = ErrorCode::from_http_status(code.http_status());
            // 403 is shared by forbidden_host and forbidden; every other status is one code.
            if code != ErrorCode::ForbiddenHost {
                assert_eq!(back, code, "{code}");
            }
        }
        assert_eq!(ErrorCode::from_http_status(418), ErrorCode::BadRequest);
        assert_eq!(ErrorCode::from_http_status(502), ErrorCode::Unavailable);
        assert_eq!(ErrorCode::from_http_status(200), ErrorCode::Internal);
    }

    #[test]
    fn each_surface_carries_the_code_and_the_message() {
        let m = "no run with id `x`";
        assert_eq!(
            ErrorCode::NotFound.http_body(m),
            json!({"error": m, "code": "not_found"})
        );
        assert_eq!(
            ErrorCode::NotFound.tool_content(m),
            json!({"error": {"code": "not_found", "message": m}})
        );
        assert_eq!(
            ErrorCode::Unauthorized.feed_message(m, Some(&json!(7))),
            json!({"type": "error", "code": "unauthorized", "message": m, "requestId": 7})
        );
        assert!(
            ErrorCode::BadRequest
                .feed_message(m, None)
                .get("requestId")
                .is_none()
        );
    }

    #[test]
    fn the_chain_names_each_cause_once() {
        #[derive(Debug)]
        struct Outer(std::io::Error, bool);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                if self.1 {
                    write!(f, "cannot read x: {}", self.0)
                } else {
                    f.write_str("cannot read x")
                }
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = || std::io::Error::other("disk on fire");
        assert_eq!(
            error_chain(&Outer(io(), false)),
            "cannot read x: disk on fire"
        );
        assert_eq!(
            error_chain(&Outer(io(), true)),
            "cannot read x: disk on fire"
        );
    }
}
