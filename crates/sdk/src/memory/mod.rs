//! A client for Mindgate's agent memory (`/api/memory/...` on `mindgate serve`) whose calls
//! show up in the live run graph.
//!
//! ```no_run
//! use mindgate_sdk::memory::{MemoryClient, RememberArgs, SearchOptions};
//!
//! # async fn demo() {
//! let memory = MemoryClient::from_env().user("alice");
//! mindgate_sdk::run("support", (), async {
//!     // A `custom` node `memory:remember` (input = the fact, output = the stored fact).
//!     if let Err(e) = memory.remember(&RememberArgs::new("Alice prefers window seats")).await {
//!         eprintln!("memory unavailable: {e}"); // the agent carries on
//!     }
//!     // A `retriever` node `memory:search` (input = the options, output = hits with signals).
//!     let hits = memory.search(&SearchOptions::new("seat preference")).await.unwrap_or_default();
//!     Ok::<_, mindgate_sdk::Aborted>(hits.len())
//! })
//! .await
//! .ok();
//! # }
//! ```
//!
//! * **Where**: the server of the SDK's viewer URL ([`crate::config::MINDGATE_URL`], …,
//!   `ws://127.0.0.1:4747/ingest` → `http://127.0.0.1:4747`), or [`MemoryClient::new`].
//! * **Token**: [`MemoryClient::token`], else a `token=` in the viewer URL, else the
//!   server's **agent** token file `$MINDGATE_HOME/run/agent-<port>.json` (`mindgate-home`),
//!   read at each call so a server started later is found. Never the person's control token
//!   file: the agent token writes as `agent` and cannot validate or reject memories. Writes
//!   need it; searches send it when found (an authenticated search recalls its facts, a
//!   tokenless one changes nothing).
//! * **In the run graph**: inside a run (outside one: the implicit run of the client given to
//!   [`MemoryClient::for_client`], else of the global client), [`MemoryClient::search`] is a
//!   `retriever` node `memory:search` (`search_episodes` / `search_procedures`:
//!   `memory:episode_search` / `memory:procedure_search`); `remember`, `supersede`,
//!   `forget`, `history`, `status`, the working blocks (`block`, `put_block`,
//!   `append_block`, `replace_block`), session messages (`push_message`, `messages`) and
//!   the `episodes` / `procedures` lists are `custom` nodes `memory:<op>`. They take gates like any node. With the SDK
//!   off they are plain HTTP calls.
//! * **Fail-open**: nothing panics or throws into the host. A failure (server down, `4xx`,
//!   `5xx`, a bad answer) is logged with `tracing` and returned as a [`MemoryError`]; use
//!   `unwrap_or_default()` for an empty result.

mod tiers;
mod types;

use std::time::Duration;

use mindgate_home::{Home, token_file};
use reqwest::{Method, RequestBuilder, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::Config;
use crate::error::Aborted;
use crate::{Node, NodeKind};

pub use tiers::{BlockArgs, PushReceipt};
pub use types::{History, MemoryHit, RememberArgs, SearchOptions};

/// Connect timeout of a memory call (the server is local).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Whole-request timeout of a memory call.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a memory call failed. Returned, never thrown: the host decides what to do.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The server URL could not be turned into an HTTP base URL.
    #[error("bad Mindgate server URL '{0}'")]
    BadUrl(String),
    /// The server could not be reached (not running, wrong port, timeout).
    #[error("cannot reach the Mindgate server at {url}")]
    Unreachable {
        /// The URL called.
        url: String,
        /// The transport error.
        #[source]
        source: reqwest::Error,
    },
    /// The memory API refused the call.
    #[error("memory API answered {status} ({code}): {message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// The error code (`bad_request`, `unauthorized`, `not_found`, …).
        code: String,
        /// The memory tools' finer reason (`bad_argument`, `flagged`, …), when given.
        reason: Option<String>,
        /// The server's message.
        message: String,
    },
    /// The answer was not the JSON the API documents.
    #[error("unexpected answer from the memory API at {url}")]
    BadAnswer {
        /// The URL called.
        url: String,
        /// The decoding error.
        #[source]
        source: reqwest::Error,
    },
    /// A write needs the agent token and none was found.
    #[error(
        "no agent token for {base}: pass MemoryClient::token, put token= in the viewer URL, \
         or run `mindgate serve` with the same MINDGATE_HOME (it writes run/agent-<port>.json)"
    )]
    NoToken {
        /// The server's base URL.
        base: String,
    },
    /// The run was aborted from the debugger while the call was held or in flight.
    #[error(transparent)]
    Aborted(#[from] Aborted),
}

/// A client for `/api/memory/...`. Cheap to clone; make one per process.
#[derive(Debug, Clone)]
pub struct MemoryClient {
    http: reqwest::Client,
    /// `http://host:port`, or the URL error to report on each call.
    base: Result<Url, String>,
    token: Option<String>,
    user_id: Option<String>,
    home: Option<Home>,
    /// The SDK client whose run graph shows the calls (`None`: the current run's, else the
    /// global client's).
    sdk: Option<crate::Client>,
}

impl MemoryClient {
    /// A client of the server at `url`: `http://host:port` or a viewer URL
    /// (`ws://host:port/ingest[?token=…]`). A bad URL makes every call return
    /// [`MemoryError::BadUrl`].
    pub fn new(url: &str) -> Self {
        let (base, token) = match base_url(url) {
            Some((base, token)) => (Ok(base), token),
            None => (Err(url.to_owned()), None),
        };
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .unwrap_or_default();
        MemoryClient {
            http,
            base,
            token,
            user_id: None,
            home: None,
            sdk: None,
        }
    }

    /// A client of the server the SDK reports to ([`Config::resolve_url`] of the environment).
    pub fn from_env() -> Self {
        MemoryClient::new(&Config::default().resolve_url())
    }

    /// A client of the server `client` reports to; its calls are nodes of `client`'s runs
    /// (outside a run: its implicit run).
    pub fn for_client(client: &crate::Client) -> Self {
        MemoryClient {
            sdk: Some(client.clone()),
            ..MemoryClient::new(client.url())
        }
    }

    /// The node builder of one call.
    fn node(&self, kind: NodeKind, name: &str) -> Node {
        match &self.sdk {
            Some(client) => client.node(kind, name),
            None => crate::node(kind, name),
        }
    }

    /// Uses this token (the agent token) for every call (beats the URL and the agent token
    /// file).
    #[must_use]
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The default owner (`userId`) of searches and writes that name none.
    #[must_use]
    pub fn user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }

    /// Looks for the server's agent token file in this Mindgate home (default:
    /// `MINDGATE_HOME`, …).
    #[must_use]
    pub fn home(mut self, home: Home) -> Self {
        self.home = Some(home);
        self
    }

    /// `GET /api/memory/search`: the hits, best first. A `retriever` node `memory:search`
    /// whose input is the options and whose output is the hits with their signals.
    pub async fn search(&self, options: &SearchOptions) -> Result<Vec<MemoryHit>, MemoryError> {
        let mut options = options.clone();
        if options.user_id.is_none() {
            options.user_id.clone_from(&self.user_id);
        }
        let pairs = options.query_pairs();
        let answer = self
            .node(NodeKind::Retriever, "memory:search")
            .input(&options)
            .call(|_| async {
                let url = self.url("/api/memory/search")?;
                let answer: SearchAnswer = self
                    .send(
                        self.authenticated(self.http.get(url.clone()).query(&pairs), &url),
                        &url,
                    )
                    .await?;
                Ok::<_, MemoryError>(answer.hits)
            })
            .await;
        logged("search", answer)
    }

    /// `POST /api/memory/facts`: stores a fact and returns it (`Fact`, as JSON). A `custom`
    /// node `memory:remember`.
    pub async fn remember(&self, fact: &RememberArgs) -> Result<Value, MemoryError> {
        let fact = self.owned(fact);
        let answer = self
            .node(NodeKind::Custom, "memory:remember")
            .input(&fact)
            .call(|_| self.write(Method::POST, "/api/memory/facts".to_owned(), &fact))
            .await;
        logged("remember", answer)
    }

    /// `POST /api/memory/records/:id/supersede`: a new version of fact `id`, returned. A
    /// `custom` node `memory:supersede`.
    pub async fn supersede(
        &self,
        id: &str,
        reason: &str,
        fact: &RememberArgs,
    ) -> Result<Value, MemoryError> {
        let fact = self.owned(fact);
        let body = types::SupersedeBody {
            reason,
            fact: &fact,
        };
        let path = format!("/api/memory/records/{}/supersede", segment(id));
        let answer = self
            .node(NodeKind::Custom, "memory:supersede")
            .input(&serde_json::json!({ "id": id, "reason": reason, "fact": &fact }))
            .call(|_| self.write(Method::POST, path.clone(), &body))
            .await;
        logged("supersede", answer)
    }

    /// `POST /api/memory/records/:id/forget`: tombstones record `id` (its history is kept).
    /// A `custom` node `memory:forget`.
    pub async fn forget(&self, id: &str, reason: &str) -> Result<(), MemoryError> {
        let path = format!("/api/memory/records/{}/forget", segment(id));
        let body = serde_json::json!({ "reason": reason });
        let answer = self
            .node(NodeKind::Custom, "memory:forget")
            .input(&serde_json::json!({ "id": id, "reason": reason }))
            .call(|_| self.write::<Value>(Method::POST, path.clone(), &body))
            .await;
        logged("forget", answer).map(|_| ())
    }

    /// `GET /api/memory/records/:id/history`: the supersession chain and the ledger. A
    /// `custom` node `memory:history`.
    pub async fn history(&self, id: &str) -> Result<History, MemoryError> {
        let path = format!("/api/memory/records/{}/history", segment(id));
        let answer = self
            .node(NodeKind::Custom, "memory:history")
            .input(&serde_json::json!({ "id": id }))
            .call(|_| self.read(&path, &[]))
            .await;
        logged("history", answer)
    }

    /// `GET /api/memory/metadata`: the store's `StatusView` (`{userId, metadata, quarantined,
    /// embedder, storedEmbedder}`), as JSON. A `custom` node `memory:status`.
    pub async fn status(&self) -> Result<Value, MemoryError> {
        let pairs: Vec<(&str, String)> =
            self.user_id.iter().map(|u| ("userId", u.clone())).collect();
        let answer = self
            .node(NodeKind::Custom, "memory:status")
            .input(&serde_json::json!({ "userId": self.user_id }))
            .call(|_| self.read("/api/memory/metadata", &pairs))
            .await;
        logged("status", answer)
    }

    /// `fact` with the client's user filled in when it names none.
    fn owned(&self, fact: &RememberArgs) -> RememberArgs {
        let mut fact = fact.clone();
        if fact.user_id.is_none() {
            fact.user_id.clone_from(&self.user_id);
        }
        fact
    }

    fn url(&self, path: &str) -> Result<Url, MemoryError> {
        let base = self
            .base
            .as_ref()
            .map_err(|u| MemoryError::BadUrl(u.clone()))?;
        base.join(path)
            .map_err(|_| MemoryError::BadUrl(format!("{base}{path}")))
    }

    async fn read<T: DeserializeOwned>(
        &self,
        path: &str,
        pairs: &[(&str, String)],
    ) -> Result<T, MemoryError> {
        let url = self.url(path)?;
        let request = self.authenticated(self.http.get(url.clone()).query(pairs), &url);
        self.send(request, &url).await
    }

    /// `request` with the agent token when one is found (reads work without one).
    fn authenticated(&self, request: RequestBuilder, url: &Url) -> RequestBuilder {
        match self.agent_token(url) {
            Ok(token) => request.bearer_auth(token),
            Err(_) => request,
        }
    }

    async fn write<T: DeserializeOwned>(
        &self,
        method: Method,
        path: String,
        body: &(impl Serialize + ?Sized),
    ) -> Result<T, MemoryError> {
        let url = self.url(&path)?;
        let token = self.agent_token(&url)?;
        let request = self
            .http
            .request(method, url.clone())
            .bearer_auth(token)
            .json(body);
        self.send(request, &url).await
    }

    /// The agent token: explicit, else from the URL, else the server's agent token file
    /// (never the person's control token file).
    fn agent_token(&self, url: &Url) -> Result<String, MemoryError> {
        if let Some(token) = &self.token {
            return Ok(token.clone());
        }
        let no_token = || MemoryError::NoToken {
            base: url.origin().ascii_serialization(),
        };
        let port = url.port_or_known_default().ok_or_else(no_token)?;
        let home = self.home.clone().unwrap_or_else(Home::from_env);
        token_file::read_agent(&home, port)
            .map(|file| file.token)
            .filter(|t| !t.is_empty())
            .ok_or_else(no_token)
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
        url: &Url,
    ) -> Result<T, MemoryError> {
        let shown = || {
            let mut url = url.clone();
            url.set_query(None);
            url.to_string()
        };
        let response = request
            .send()
            .await
            .map_err(|source| MemoryError::Unreachable {
                url: shown(),
                source,
            })?;
        let status = response.status();
        if !status.is_success() {
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
            return Err(MemoryError::Api {
                status: status.as_u16(),
                code: text("code").unwrap_or_else(|| "unknown".to_owned()),
                reason: text("reason"),
                message: text("error")
                    .unwrap_or_else(|| status.canonical_reason().unwrap_or("").to_owned()),
            });
        }
        response
            .json()
            .await
            .map_err(|source| MemoryError::BadAnswer {
                url: shown(),
                source,
            })
    }
}

/// `{hits: [...]}`
#[derive(serde::Deserialize)]
struct SearchAnswer {
    hits: Vec<MemoryHit>,
}

/// Logs a failed call (the host gets the error value, never a panic).
fn logged<T>(op: &str, answer: Result<T, MemoryError>) -> Result<T, MemoryError> {
    if let Err(e) = &answer {
        tracing::warn!(op, error = %chain(e), "mindgate memory call failed");
    }
    answer
}

/// An error and its causes on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A record id as one URL path segment (percent-encoded).
fn segment(id: &str) -> String {
    let mut url = match Url::parse("http://x/") {
        Ok(url) => url,
        Err(_) => return String::new(),
    };
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.push(id);
    }
    url.path().trim_start_matches('/').to_owned()
}

/// The `http(s)://host:port/` base of a server URL and the `token=` it carries.
fn base_url(url: &str) -> Option<(Url, Option<String>)> {
    let parsed = Url::parse(url.trim()).ok()?;
    let scheme = match parsed.scheme() {
        "ws" | "http" => "http",
        "wss" | "https" => "https",
        _ => return None,
    };
    let host = parsed.host_str()?;
    let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
    let token = parsed
        .query_pairs()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
        .filter(|t| !t.is_empty());
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let base = Url::parse(&format!("{scheme}://{host}{port}/")).ok()?;
    Some((base, token))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn viewer_urls_give_the_http_base_and_their_token() {
        let (base, token) = base_url("ws://127.0.0.1:4747/ingest?token=abc").unwrap();
        assert_eq!(base.as_str(), "http://127.0.0.1:4747/");
        assert_eq!(token.as_deref(), Some("abc"));
        let (base, token) = base_url("wss://example.org/ingest").unwrap();
        assert_eq!(base.as_str(), "https://example.org/");
        assert_eq!(token, None);
        assert!(base_url("ftp://x").is_none());
        assert!(base_url("not a url").is_none());
    }

    #[test]
    fn ids_are_one_escaped_segment() {
        assert_eq!(segment("fact_1"), "fact_1");
        assert_eq!(segment("a/b?c"), "a%2Fb%3Fc");
    }

    #[test]
    fn search_options_become_the_documented_query() {
        let mut options = SearchOptions::new("seat").top_k(3).user("alice");
        options.kinds = Some(vec!["semantic".into(), "episodic".into()]);
        options.include_quarantined = Some(true);
        options.vector_floor = Some(0.25);
        let pairs = options.query_pairs();
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("query"), Some("seat"));
        assert_eq!(get("topK"), Some("3"));
        assert_eq!(get("userId"), Some("alice"));
        assert_eq!(get("kinds"), Some("semantic,episodic"));
        assert_eq!(get("includeQuarantined"), Some("true"));
        assert_eq!(get("vectorFloor"), Some("0.25"));
        assert_eq!(get("mode"), None);
    }
}
