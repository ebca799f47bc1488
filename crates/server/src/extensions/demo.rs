//! [`DemoLauncher`]: how the binary starts its scripted demo agent against this server
//! (`POST /api/demo` calls it; the server does not know the demo).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Launch = dyn Fn(String) -> std::io::Result<JoinHandle<()>> + Send + Sync;

/// How the binary starts its demo agent: given this server's ingest URL (`ws://…/ingest`,
/// with `?token=` under `--allow-remote`), it starts the demo and returns the thread that
/// runs it; the demo counts as running until that thread ends.
#[derive(Clone)]
pub struct DemoLauncher {
    launch: Arc<Launch>,
    running: Arc<Mutex<Option<JoinHandle<()>>>>,
}

/// Why [`DemoLauncher::start`] started nothing.
#[derive(Debug)]
pub(crate) enum StartRefused {
    /// A demo started earlier has not finished.
    AlreadyRunning,
    /// The thread could not be started.
    Spawn(std::io::Error),
}

impl DemoLauncher {
    /// A launcher that starts the demo with `launch`.
    pub fn new(
        launch: impl Fn(String) -> std::io::Result<JoinHandle<()>> + Send + Sync + 'static,
    ) -> DemoLauncher {
        DemoLauncher {
            launch: Arc::new(launch),
            running: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether a demo started here is still running.
    pub fn is_running(&self) -> bool {
        self.slot()
            .as_ref()
            .is_some_and(|handle| !handle.is_finished())
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<()>>> {
        // A panic while the lock was held leaves only a handle behind: keep using it.
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts the demo against `ingest_url` unless one is running.
    pub(crate) fn start(&self, ingest_url: String) -> Result<(), StartRefused> {
        let mut slot = self.slot();
        if slot.as_ref().is_some_and(|handle| !handle.is_finished()) {
            return Err(StartRefused::AlreadyRunning);
        }
        let handle = (self.launch)(ingest_url).map_err(StartRefused::Spawn)?;
        *slot = Some(handle);
        Ok(())
    }
}

impl std::fmt::Debug for DemoLauncher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoLauncher")
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_demo_is_refused_while_the_first_runs_and_allowed_after() {
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let launcher = DemoLauncher::new(move |_url| {
            let rx = Arc::clone(&release_rx);
            std::thread::Builder::new().spawn(move || {
                let _ = rx.lock().map(|rx| rx.recv());
            })
        });
        assert!(launcher.start("ws://x/ingest".into()).is_ok());
        assert!(matches!(
            launcher.start("ws://x/ingest".into()),
            Err(StartRefused::AlreadyRunning)
        ));
        release_tx.send(()).ok();
        let mut finished = false;
        for _ in 0..500 {
            if !launcher.is_running() {
                finished = true;
                break;
            }
            std::thread::yield_now();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(finished, "the first demo thread ended");
        release_tx.send(()).ok();
        assert!(launcher.start("ws://x/ingest".into()).is_ok());
    }
}
