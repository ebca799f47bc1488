//! The SDK's error types. The SDK never returns its own error into host code
//! except [`Aborted`], the terminal outcome of the debugger's abort action.

/// The run was aborted (by the debugger's abort action or [`crate::RunHandle::abort`]).
///
/// Node wrappers return it through the host's own error type (`E: From<Aborted>`),
/// so `anyhow::Error`, `Box<dyn Error + Send + Sync>` and custom enums with a
/// `#[from] Aborted` variant all work. It is terminal: never retry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, thiserror::Error)]
#[error("run aborted by the Mindgate debugger")]
pub struct Aborted;

impl Aborted {
    /// The error name sent on the wire (what AI SDKs treat as terminal).
    pub const NAME: &'static str = "AbortError";
}

/// Why [`crate::demo::run_demo`] could not finish.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The async runtime could not be built.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// A scripted run ended with an error it was not meant to have.
    #[error("demo run {run} failed: {message}")]
    Run {
        /// Which run (1-based).
        run: usize,
        /// What went wrong.
        message: String,
    },
}
