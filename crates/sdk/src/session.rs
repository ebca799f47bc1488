//! The state one client session shares between the host-side API and the
//! transport thread: the seq counter and replay ring, held gates, the loop
//! guard and the implicit run.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, OnceLock};

use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::buffer::Ring;
use crate::config::Config;
use crate::gate::Gates;
use crate::loop_guard::LoopGuard;
use crate::run::RunRef;
use crate::warn::Warner;

/// The SDK's name and version as announced in `hello` and `run.started`.
pub const SDK_NAME: &str = "mindgate-sdk";
/// The SDK version.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Mutable state behind one lock: the seq counter and the replay buffer.
pub(crate) struct Core {
    pub(crate) seq: u64,
    pub(crate) ring: Ring,
    pub(crate) session_token: Option<String>,
}

/// Everything the host-side API and the transport thread share.
pub(crate) struct Shared {
    pub(crate) enabled: bool,
    pub(crate) config: Config,
    pub(crate) url: String,
    pub(crate) attached: AtomicBool,
    pub(crate) started: AtomicBool,
    pub(crate) core: Mutex<Core>,
    /// Wakes the writer when frames are pending.
    pub(crate) wake: Notify,
    /// Asks the supervisor to connect now.
    pub(crate) kick: Notify,
    /// Attachment state for `ready()` waiters.
    pub(crate) attached_tx: watch::Sender<bool>,
    /// Frames (by buffer index) the writer has flushed to the socket.
    pub(crate) sent: AtomicU64,
    pub(crate) gates: Gates,
    pub(crate) loop_guard: LoopGuard,
    pub(crate) warner: Warner,
    pub(crate) runtime: OnceLock<tokio::runtime::Handle>,
    pub(crate) shutdown: CancellationToken,
    /// The run of events emitted outside any run (created on first use).
    pub(crate) implicit: OnceLock<RunRef>,
    pub(crate) implicit_finished: AtomicBool,
}
