//! The chat model consolidation asks: the [`ChatModel`] trait and its OpenAI-compatible
//! `/v1/chat/completions` client ([`OpenAiChat`]: OpenAI, Ollama, vLLM, llama.cpp, …).
//!
//! Blocking, over `mindgate-embed`'s OpenAI-compatible route client (its embedder's): the
//! memory store is synchronous, and ureq starts no runtime of its own, so the client can be
//! called from any thread (the server calls it from a blocking task).

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tracing::debug;

use mindgate_embed::openai::route::{Route, excerpt};
use mindgate_embed::openai::{Endpoint, EndpointError, EndpointVars};

use super::error::ConsolidateError;

/// Default time one completion may take (connect, send, answer): local models are slow.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest time a configuration may ask for.
pub const MAX_TIMEOUT: Duration = mindgate_embed::openai::endpoint::MAX_TIMEOUT;
/// Largest answer body read from the endpoint.
pub const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;
/// Largest completion text accepted (characters); a longer one is refused.
pub const MAX_COMPLETION_CHARS: usize = 64 * 1024;
/// `max_tokens` asked of the model per completion.
pub const MAX_COMPLETION_TOKENS: u32 = 4096;

/// The environment variables of the chat endpoint (names from [`mindgate_home::env`]).
pub const VARS: EndpointVars = EndpointVars {
    what: "chat model",
    url: mindgate_home::env::MINDGATE_CHAT_URL,
    model: mindgate_home::env::MINDGATE_CHAT_MODEL,
    api_key: mindgate_home::env::MINDGATE_CHAT_API_KEY,
    timeout_secs: Some(mindgate_home::env::MINDGATE_CHAT_TIMEOUT_SECS),
};

/// How to reach an OpenAI-compatible chat completions endpoint: the embedder's
/// [`Endpoint`], read and checked by the same code; its timeout defaults to
/// [`DEFAULT_TIMEOUT`].
pub type ChatConfig = Endpoint;

/// The configuration the environment gives ([`VARS`]): `None` when `MINDGATE_CHAT_URL` is
/// unset or empty (consolidation is off), an error when it is set but incomplete or
/// malformed.
pub fn config_from_env() -> Option<Result<ChatConfig, ConsolidateError>> {
    Endpoint::from_env(&VARS).map(|r| r.map_err(ConsolidateError::from))
}

impl From<EndpointError> for ConsolidateError {
    fn from(e: EndpointError) -> Self {
        ConsolidateError::Config(e.0)
    }
}

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRole {
    /// The instructions.
    System,
    /// The material to work on.
    User,
}

impl ChatRole {
    fn as_str(self) -> &'static str {
        match self {
            ChatRole::System => "system",
            ChatRole::User => "user",
        }
    }
}

/// One prompt message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: ChatRole,
    /// What is said.
    pub content: String,
}

/// A chat model that answers a prompt with one completion (the text of the first choice).
pub trait ChatModel: Send + Sync {
    /// The model's name, recorded with what it produced.
    fn model(&self) -> &str;
    /// One completion of `messages`, asking for a JSON object.
    fn complete(&self, messages: &[ChatMessage]) -> Result<String, ConsolidateError>;
}

/// The blocking client of an OpenAI-compatible `/chat/completions` endpoint.
#[derive(Debug)]
pub struct OpenAiChat {
    config: ChatConfig,
    route: Route,
}

impl OpenAiChat {
    /// A client of the configured endpoint (checked; no request is sent yet).
    pub fn new(config: ChatConfig) -> Result<Self, ConsolidateError> {
        let route = config.route("chat/completions", DEFAULT_TIMEOUT)?;
        Ok(Self { config, route })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.route.url()
    }
}

impl ChatModel for OpenAiChat {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn complete(&self, messages: &[ChatMessage]) -> Result<String, ConsolidateError> {
        let body = json!({
            "model": self.config.model,
            "messages": messages
                .iter()
                .map(|m| json!({ "role": m.role.as_str(), "content": m.content }))
                .collect::<Vec<_>>(),
            "temperature": 0,
            "max_tokens": MAX_COMPLETION_TOKENS,
            "response_format": { "type": "json_object" },
            "stream": false,
        });
        let text = self
            .route
            .post(&body, MAX_ANSWER_BYTES)
            .map_err(|e| ConsolidateError::Remote(e.0))?;
        let answer: CompletionAnswer = serde_json::from_str(&text).map_err(|err| {
            ConsolidateError::Remote(format!(
                "{} answered a body that is not a chat completion ({err}): {}",
                self.route.url(),
                excerpt(&text)
            ))
        })?;
        let Some(choice) = answer.choices.into_iter().next() else {
            return Err(ConsolidateError::Remote(format!(
                "{} answered a completion without choices",
                self.route.url()
            )));
        };
        let content = choice.message.and_then(|m| m.content).unwrap_or_default();
        debug!(
            endpoint = %self.route.url(),
            chars = content.chars().count(),
            finish_reason = choice.finish_reason.as_deref().unwrap_or("-"),
            "chat completion"
        );
        if content.chars().count() > MAX_COMPLETION_CHARS {
            return Err(ConsolidateError::Completion(format!(
                "the completion has more than {MAX_COMPLETION_CHARS} characters"
            )));
        }
        if choice.finish_reason.as_deref() == Some("length") {
            return Err(ConsolidateError::Completion(format!(
                "the completion was cut off at the model's output limit ({MAX_COMPLETION_TOKENS} tokens); \
                 consolidate fewer messages per call"
            )));
        }
        if content.trim().is_empty() {
            return Err(ConsolidateError::Completion(
                "the completion is empty".to_owned(),
            ));
        }
        Ok(content)
    }
}

#[derive(Deserialize)]
struct CompletionAnswer {
    #[serde(default)]
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<AnswerMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct AnswerMessage {
    #[serde(default)]
    content: Option<String>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_appends_the_route_once() {
        let c = ChatConfig::new("http://127.0.0.1:11434/v1/", "m");
        assert_eq!(
            OpenAiChat::new(c).unwrap().endpoint(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        let c = ChatConfig::new("https://h/v1/chat/completions", "m");
        assert_eq!(c.url("chat/completions"), "https://h/v1/chat/completions");
    }

    #[test]
    fn incomplete_or_malformed_environment_is_a_clear_error() {
        let values = |url: &str, model: Option<&str>, key: Option<&str>, secs: Option<&str>| {
            Endpoint::from_values(
                &VARS,
                url.to_owned(),
                model.map(str::to_owned),
                key.map(str::to_owned),
                secs.map(str::to_owned),
            )
            .map_err(ConsolidateError::from)
        };
        let err = values("http://h/v1", None, None, None).unwrap_err();
        assert!(err.to_string().contains(VARS.model), "{err}");
        let err = values("ftp://h", Some("m"), None, None).unwrap_err();
        assert!(err.to_string().contains(VARS.url), "{err}");
        let err = values("http://h/v1", Some("m"), None, Some("0")).unwrap_err();
        assert!(
            err.to_string()
                .contains(mindgate_home::env::MINDGATE_CHAT_TIMEOUT_SECS),
            "{err}"
        );
        let ok = values("http://h/v1", Some("m"), Some("secret-key"), Some("30")).unwrap();
        assert_eq!(ok.timeout, Some(Duration::from_secs(30)));
        assert!(
            !format!("{ok:?}").contains("secret-key"),
            "the key must not be logged"
        );
    }
}
