//! Instrument Rust AI agents for the Mindgate live debugger.
//!
//! The SDK speaks the GraphMind wire protocol v1 (through `mindgate-protocol`),
//! so Rust runs render in the same viewer as Python and TypeScript ones. Wrap a
//! run, your model calls and your tools; start `mindgate serve`; debug live:
//! pause at breakpoints, step, retry a node, inject its output, abort the run.
//!
//! ```no_run
//! use mindgate_sdk::{run, step, tool, Aborted};
//!
//! #[derive(Debug, thiserror::Error)]
//! enum AgentError {
//!     #[error(transparent)]
//!     Aborted(#[from] Aborted),
//!     #[error("tool failed: {0}")]
//!     Tool(String),
//! }
//!
//! # async fn demo() -> Result<(), AgentError> {
//! run("handle-ticket", serde_json::json!({"ticket": 42}), async {
//!     let plan: String = step()
//!         .input(&"find a flight to Oslo")
//!         .call(|ctx| async move {
//!             ctx.token("Searching ");
//!             ctx.token("flights…");
//!             ctx.usage(12, 3);
//!             Ok::<_, AgentError>("search_flights".to_owned())
//!         })
//!         .await?;
//!     let flights: Vec<String> = tool("search_flights")
//!         .input(&serde_json::json!({"to": "OSL"}))
//!         .call(|_| async { Ok::<_, AgentError>(vec!["SK123".to_owned()]) })
//!         .await?;
//!     let _ = (plan, flights);
//!     Ok::<_, AgentError>(())
//! })
//! .await
//! # }
//! ```
//!
//! # What happens where
//! * [`run`] opens a run through a tokio task-local: everything inside, however
//!   deep, is attributed to it; concurrent runs stay separate; events outside any
//!   run go to one implicit run. Use [`in_current_run`] across `tokio::spawn`.
//! * [`node`] / [`tool`] / [`llm`] / [`step`] build a node; [`Node::call`] runs one
//!   instance of it with `before` / `after` / `error` gates and the four actions
//!   (continue, retry, inject, abort). Abort cancels the run's token and returns
//!   [`Aborted`] through your own error type (`E: From<Aborted>`).
//! * [`NodeCtx`] streams tokens (batched every ~34 ms into `node.token`) and usage.
//! * The [`Client`] connects lazily in a background thread, replays its ring buffer
//!   (2,000 events, drop-oldest, original `seq`) on attach, and fails open: off
//!   (`MINDGATE_DISABLED=1`) it opens no socket; detached, gates are a load and a
//!   branch; on disconnect every held gate continues at once.
//!
//! Configuration and every environment variable live in [`config`].

pub mod config;
pub mod demo;
pub mod memory;

mod buffer;
mod client;
mod clock;
mod error;
mod gate;
mod ids;
mod loop_guard;
mod run;
mod run_options;
mod session;
mod shrink;
mod transport;
mod warn;

use std::future::Future;
use std::sync::OnceLock;

pub use client::node::{Node, NodeCtx, chain, custom, hint, llm, node, retriever, step, tool};
pub use client::scope::{current_run, in_current_run};
pub use client::{Client, Gate, SDK_NAME, SDK_VERSION, Stats};
pub use config::{Config, LoopGuardConfig, LoopMode};
pub use error::{Aborted, DemoError};
pub use gate::{Decision, GateNode, InjectCheck};
pub use ids::{LLM_STEP_NODE_ID, new_run_id, next_id};
pub use mindgate_protocol::{HintNode, NodeKind, PausePoint, TokenChannel, Usage};
pub use run::{Outcome, RunHandle, error_info};
pub use run_options::RunOptions;
pub use shrink::{TRUNCATED_KEY, TRUNCATION_SUFFIX};
pub use transport::CAPABILITIES;

static GLOBAL: OnceLock<Client> = OnceLock::new();

/// Configures the process-wide client. Returns `false` (and changes nothing) when
/// it already exists — call this before the first run or node.
pub fn init(config: Config) -> bool {
    let mut fresh = false;
    GLOBAL.get_or_init(|| {
        fresh = true;
        Client::new(config)
    });
    fresh
}

/// The process-wide client (created from the environment on first use).
pub fn global() -> &'static Client {
    GLOBAL.get_or_init(|| Client::new(Config::default()))
}

/// Runs `fut` as a named run of the current client (the run's, else the global one).
/// `meta` is any serialisable value (`()` for none); it lands in `run.started.meta`.
/// The future's output is returned untouched.
pub async fn run<F>(name: &str, meta: impl serde::Serialize, fut: F) -> F::Output
where
    F: Future,
    F::Output: Outcome,
{
    let client = client::scope::Scope::current()
        .map(|s| s.client)
        .unwrap_or_else(|| global().clone());
    client.run(name, meta, fut).await
}

/// [`run`] with the run's thread, user and tags: `options` land in its meta as
/// `threadId`, `userId` and `tags`, the keys runs are grouped into threads by.
pub async fn run_with<F>(
    name: &str,
    options: RunOptions,
    meta: impl serde::Serialize,
    fut: F,
) -> F::Output
where
    F: Future,
    F::Output: Outcome,
{
    let client = client::scope::Scope::current()
        .map(|s| s.client)
        .unwrap_or_else(|| global().clone());
    client.run_with(name, options, meta, fut).await
}

/// Pre-announces nodes (e.g. the tool roster) so the viewer draws them greyed.
///
/// ```no_run
/// use mindgate_sdk::{graph_hint, hint, NodeKind};
/// graph_hint([hint(NodeKind::Tool, "search"), hint(NodeKind::Tool, "weather")]);
/// ```
pub fn graph_hint(nodes: impl IntoIterator<Item = HintNode>) {
    let client = client::scope::Scope::current()
        .map(|s| s.client)
        .unwrap_or_else(|| global().clone());
    client.graph_hint(nodes);
}
