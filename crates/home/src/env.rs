//! Names of the environment variables a Mindgate process reads (the SDK's, which an
//! instrumented app reads, live in `mindgate-sdk`; the coding agents' homes in
//! `mindgate-taskgraph`). Every one is listed in `docs/configuration.md`.

/// Mindgate's home directory (databases, token files, models). Default `~/.mindgate`.
pub const MINDGATE_HOME: &str = "MINDGATE_HOME";
/// The run database of `serve`, `migrate`, `diff`, `export`, `import` and `mcp` when `--db`
/// is not given:
/// a SQLite file path or a `postgres://` URL.
pub const MINDGATE_DB: &str = "MINDGATE_DB";
/// The control token of `serve` instead of a random one per start: give every instance
/// of a team hub the same (16–256 of `A-Z a-z 0-9 - . _ ~`), so the viewer
/// URL and the apps' `?token=` work whichever instance the balancer picks.
pub const MINDGATE_TOKEN: &str = "MINDGATE_TOKEN";
/// `tracing` filter for the logs on standard error (e.g. `info`, `mindgate_server=debug`).
pub const MINDGATE_LOG: &str = "MINDGATE_LOG";
/// Present and not empty: no ANSI colour codes in the logs (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";
/// Most HTTP connections `serve` keeps open at once (default 512).
pub const MINDGATE_MAX_CONNECTIONS: &str = "MINDGATE_MAX_CONNECTIONS";
/// Most HTTP connections from one client IP address (default 256).
pub const MINDGATE_MAX_CONNECTIONS_PER_IP: &str = "MINDGATE_MAX_CONNECTIONS_PER_IP";
/// Milliseconds a client has to send request headers, and an idle keep-alive connection to
/// send its next request (default 10,000).
pub const MINDGATE_HEADER_TIMEOUT_MS: &str = "MINDGATE_HEADER_TIMEOUT_MS";
/// Forces an embedder: `builtin`, `minilm` or `openai`.
pub const MINDGATE_EMBEDDER: &str = "MINDGATE_EMBEDDER";
/// A MiniLM model directory used instead of the imported one.
pub const MINDGATE_MINILM_DIR: &str = "MINDGATE_MINILM_DIR";
/// Base URL of an OpenAI-compatible embeddings API (selects that embedder).
pub const MINDGATE_EMBED_URL: &str = "MINDGATE_EMBED_URL";
/// Model name sent to the OpenAI-compatible API.
pub const MINDGATE_EMBED_MODEL: &str = "MINDGATE_EMBED_MODEL";
/// Bearer token for the OpenAI-compatible API (optional).
pub const MINDGATE_EMBED_API_KEY: &str = "MINDGATE_EMBED_API_KEY";
/// Vector dimension of the OpenAI-compatible model (optional).
pub const MINDGATE_EMBED_DIM: &str = "MINDGATE_EMBED_DIM";
/// `<query>,<document>`: the `input_type` sent with queries and with stored texts to an
/// OpenAI-compatible embeddings API that tells them apart (optional; unset: none sent).
pub const MINDGATE_EMBED_INPUT_TYPE: &str = "MINDGATE_EMBED_INPUT_TYPE";
/// Base URL of an OpenAI-compatible chat completions API (e.g. `http://127.0.0.1:11434/v1`
/// for Ollama): enables memory consolidation.
pub const MINDGATE_CHAT_URL: &str = "MINDGATE_CHAT_URL";
/// Chat model name sent to the OpenAI-compatible API (required with `MINDGATE_CHAT_URL`).
pub const MINDGATE_CHAT_MODEL: &str = "MINDGATE_CHAT_MODEL";
/// Bearer token for the chat API (optional: local servers such as Ollama need none).
pub const MINDGATE_CHAT_API_KEY: &str = "MINDGATE_CHAT_API_KEY";
/// Seconds one chat completion may take (default 120).
pub const MINDGATE_CHAT_TIMEOUT_SECS: &str = "MINDGATE_CHAT_TIMEOUT_SECS";

/// The value of the environment variable `name` when it is set and not blank: how every
/// Mindgate setting read from the environment treats an empty variable (as unset).
pub fn value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
