//! The task-local scope every event is emitted in: the client, the run and the
//! enclosing node. Task-locals do not cross `tokio::spawn`: wrap spawned futures
//! with [`in_current_run`] to keep them in the run.

use std::future::Future;
use std::sync::Arc;

use super::Client;
use crate::run::{RunHandle, RunRef};

tokio::task_local! {
    static SCOPE: Scope;
}

/// What the task-local carries: the client, the run and the enclosing node.
#[derive(Clone)]
pub(crate) struct Scope {
    pub(crate) client: Client,
    pub(crate) run: RunRef,
    pub(crate) parent: Option<Arc<str>>,
}

impl Scope {
    /// The current scope, if inside a run or a node.
    pub(crate) fn current() -> Option<Scope> {
        SCOPE.try_with(Scope::clone).ok()
    }

    /// The current run, when the current scope belongs to `client`.
    pub(crate) fn run_of(client: &Client) -> Option<RunRef> {
        SCOPE
            .try_with(|s| s.client.same_as(client).then(|| s.run.clone()))
            .ok()
            .flatten()
    }

    /// Runs `fut` inside this scope.
    pub(crate) async fn enter<F: Future>(self, fut: F) -> F::Output {
        SCOPE.scope(self, fut).await
    }
}

/// The run the calling task is in, if any.
pub fn current_run() -> Option<RunHandle> {
    SCOPE.try_with(|s| RunHandle(s.run.clone())).ok()
}

/// Wraps `fut` so it runs in the caller's run (for `tokio::spawn`).
///
/// ```no_run
/// # async fn demo() {
/// let handle = tokio::spawn(mindgate_sdk::in_current_run(async {
///     mindgate_sdk::tool("fetch").call(|_| async { Ok::<_, mindgate_sdk::Aborted>(1) }).await
/// }));
/// # let _ = handle.await;
/// # }
/// ```
pub fn in_current_run<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    let scope = Scope::current();
    async move {
        match scope {
            Some(scope) => scope.enter(fut).await,
            None => fut.await,
        }
    }
}
