//! One route of an OpenAI-compatible API over HTTP: the wire both of Mindgate's clients
//! share — the embeddings here and the chat completions of `mindgate-memory`'s
//! consolidation. A JSON POST with an optional bearer key, a bounded answer, and errors that
//! say which endpoint failed and how (timeout, oversized answer, transport, HTTP status with
//! the body's `error.message`).

use std::time::Duration;

use serde::Deserialize;

pub use super::route_url;

/// Why a request to an OpenAI-compatible route failed; its text names the endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RouteError(pub String);

/// A blocking client of one route (ureq: it starts no runtime of its own, so it can be
/// called from any thread, a tokio worker's included).
#[derive(Debug)]
pub struct Route {
    url: String,
    api_key: Option<String>,
    timeout: Duration,
    agent: ureq::Agent,
}

impl Route {
    /// A client of `url` (no request is sent yet); every request gives up after `timeout`.
    pub fn new(url: String, api_key: Option<String>, timeout: Duration) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            url,
            api_key,
            timeout,
            agent,
        }
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` as JSON and returns the text of a 2xx answer of at most `limit` bytes.
    pub fn post(&self, body: &serde_json::Value, limit: u64) -> Result<String, RouteError> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Accept", "application/json")
            .content_type("application/json");
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.to_string())
            .map_err(|err| self.transport_error(err))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(|err| self.transport_error(err))?;
        if !(200..300).contains(&status) {
            return Err(RouteError(format!(
                "{} answered HTTP {status}: {}",
                self.url,
                error_message(&text)
            )));
        }
        Ok(text)
    }

    fn transport_error(&self, err: ureq::Error) -> RouteError {
        RouteError(match err {
            ureq::Error::Timeout(_) => {
                format!("{} did not answer within {:?}", self.url, self.timeout)
            }
            ureq::Error::BodyExceedsLimit(limit) => {
                format!("{} answered more than {limit} bytes", self.url)
            }
            other => format!("request to {} failed: {other}", self.url),
        })
    }
}

/// The `error.message` of an OpenAI-style error body, else an excerpt of the body.
pub fn error_message(body: &str) -> String {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: ErrorDetail,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ErrorDetail {
        Object { message: String },
        Text(String),
    }
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(ErrorBody {
            error: ErrorDetail::Object { message } | ErrorDetail::Text(message),
        }) => message,
        Err(_) => excerpt(body),
    }
}

/// At most 200 characters of a body, for error messages (`(empty body)` for none).
pub fn excerpt(body: &str) -> String {
    const MAX: usize = 200;
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return "(empty body)".to_owned();
    }
    match trimmed.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_summarised() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key","type":"auth"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message(""), "(empty body)");
        assert_eq!(error_message(&"x".repeat(500)).chars().count(), 201);
    }
}
