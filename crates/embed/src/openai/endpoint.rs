//! Where an OpenAI-compatible API is and how to call it — the configuration the embedder
//! ([`super::OpenAiConfig`]) and consolidation's chat model share, read from the
//! environment and checked once: the base URL (`http://` or `https://`), the model name,
//! an optional bearer key (never logged) and an optional timeout.

use std::time::Duration;

/// Longest time one request may be given (a configured timeout above it is refused).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// The environment variables that configure one endpoint, and what its model is (for
/// messages: `"embedding model"`, `"chat model"`).
#[derive(Debug, Clone, Copy)]
pub struct EndpointVars {
    /// What the model does, named in messages.
    pub what: &'static str,
    /// The base URL's variable.
    pub url: &'static str,
    /// The model name's variable.
    pub model: &'static str,
    /// The bearer key's variable.
    pub api_key: &'static str,
    /// The timeout's variable (whole seconds), if the endpoint has one.
    pub timeout_secs: Option<&'static str>,
}

/// A configuration that is incomplete or malformed; the message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EndpointError(pub String);

/// How to reach an OpenAI-compatible API.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`; the
    /// route (`/embeddings`, `/chat/completions`) is appended unless it already ends with it.
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// Bearer token, if the endpoint needs one (never logged).
    pub api_key: Option<String>,
    /// Time one request may take; `None`: the route's default.
    pub timeout: Option<Duration>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Endpoint {
    /// An endpoint with no key and the route's default timeout.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: None,
        }
    }

    /// The endpoint the environment gives: `None` when the URL variable is unset or empty
    /// (the feature is off), an error when it is set but the rest is incomplete or
    /// malformed.
    pub fn from_env(vars: &EndpointVars) -> Option<Result<Self, EndpointError>> {
        let var = mindgate_home::env::value;
        let url = var(vars.url)?;
        Some(Self::from_values(
            vars,
            url,
            var(vars.model),
            var(vars.api_key),
            vars.timeout_secs.and_then(var),
        ))
    }

    /// The endpoint from the variables' values (what [`Endpoint::from_env`] reads),
    /// trimmed and checked.
    pub fn from_values(
        vars: &EndpointVars,
        url: String,
        model: Option<String>,
        api_key: Option<String>,
        timeout_secs: Option<String>,
    ) -> Result<Self, EndpointError> {
        let url = url.trim().to_owned();
        if !has_http_scheme(&url) {
            return Err(EndpointError(format!(
                "{} must start with http:// or https://, not {url:?}",
                vars.url
            )));
        }
        let model = model
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                EndpointError(format!(
                    "{} is set but {} is not: name the {}",
                    vars.url, vars.model, vars.what
                ))
            })?;
        let timeout = match (timeout_secs, vars.timeout_secs) {
            (Some(t), Some(name)) => Some(parse_timeout(name, &t)?),
            _ => None,
        };
        Ok(Self {
            base_url: url,
            model,
            api_key: api_key.map(|k| k.trim().to_owned()),
            timeout,
        })
    }

    /// Checks an endpoint built in code: an `http(s)` URL and a model name.
    pub fn check(&self) -> Result<(), EndpointError> {
        if !has_http_scheme(&self.base_url) {
            return Err(EndpointError(format!(
                "the endpoint URL must start with http:// or https://, not {:?}",
                self.base_url
            )));
        }
        if self.model.trim().is_empty() {
            return Err(EndpointError("the endpoint needs a model name".to_owned()));
        }
        Ok(())
    }

    /// The full URL of `route` (`embeddings`, `chat/completions`).
    pub fn url(&self, route: &str) -> String {
        super::route_url(&self.base_url, route)
    }

    /// The timeout, or `default` when none is configured.
    pub fn timeout_or(&self, default: Duration) -> Duration {
        self.timeout.unwrap_or(default)
    }

    /// A client of `route` (checked first; no request is sent yet).
    #[cfg(feature = "openai")]
    pub fn route(
        &self,
        route: &str,
        default_timeout: Duration,
    ) -> Result<super::route::Route, EndpointError> {
        self.check()?;
        Ok(super::route::Route::new(
            self.url(route),
            self.api_key.clone(),
            self.timeout_or(default_timeout),
        ))
    }
}

fn has_http_scheme(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

fn parse_timeout(name: &str, text: &str) -> Result<Duration, EndpointError> {
    text.trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
        .filter(|d| !d.is_zero() && *d <= MAX_TIMEOUT)
        .ok_or_else(|| {
            EndpointError(format!(
                "{name} must be a whole number of seconds from 1 to {}, not {text:?}",
                MAX_TIMEOUT.as_secs()
            ))
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const VARS: EndpointVars = EndpointVars {
        what: "test model",
        url: "T_URL",
        model: "T_MODEL",
        api_key: "T_KEY",
        timeout_secs: Some("T_TIMEOUT"),
    };

    #[test]
    fn values_are_trimmed_checked_and_the_key_never_shown() {
        let err = Endpoint::from_values(&VARS, "ftp://h".into(), Some("m".into()), None, None)
            .unwrap_err();
        assert!(err.0.contains("T_URL"), "{err}");
        let err = Endpoint::from_values(&VARS, "http://h".into(), Some("  ".into()), None, None)
            .unwrap_err();
        assert!(
            err.0.contains("T_MODEL") && err.0.contains("test model"),
            "{err}"
        );
        let err = Endpoint::from_values(
            &VARS,
            "http://h".into(),
            Some("m".into()),
            None,
            Some("3601".into()),
        )
        .unwrap_err();
        assert!(err.0.contains("T_TIMEOUT"), "{err}");
        let ok = Endpoint::from_values(
            &VARS,
            " https://h/v1 ".into(),
            Some(" m ".into()),
            Some(" secret-key ".into()),
            Some("30".into()),
        )
        .unwrap();
        assert_eq!(ok.base_url, "https://h/v1");
        assert_eq!(ok.model, "m");
        assert_eq!(ok.api_key.as_deref(), Some("secret-key"));
        assert_eq!(ok.timeout, Some(Duration::from_secs(30)));
        assert!(!format!("{ok:?}").contains("secret-key"));
    }

    #[test]
    fn an_endpoint_without_a_timeout_variable_ignores_none() {
        let vars = EndpointVars {
            timeout_secs: None,
            ..VARS
        };
        let ok =
            Endpoint::from_values(&vars, "http://h".into(), Some("m".into()), None, None).unwrap();
        assert_eq!(
            ok.timeout_or(Duration::from_secs(7)),
            Duration::from_secs(7)
        );
        assert!(Endpoint::new("h", "m").check().is_err());
        assert!(Endpoint::new("http://h", "").check().is_err());
    }
}
