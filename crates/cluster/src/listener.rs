//! The listener thread: `LISTEN mindgate_hub`, and the other instances' announcements
//! turned into [`ClusterEvent`]s (with the rows they name read, so the hub never waits on
//! the database).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;
use tokio::sync::mpsc::UnboundedSender;

use crate::notice::Notice;
use crate::schema;
use crate::{ClusterError, ClusterEvent, Result, Shared};

/// How long one wait for notifications lasts before the stop flag is checked.
const POLL: Duration = Duration::from_millis(100);

/// Most notifications handled per wait (the rest wait for the next round).
const BATCH: usize = 512;

/// Longest wait between two reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Starts the listener and waits until it listens (so nothing announced after
/// [`crate::Cluster::join`] returns is missed), or its first connection failed.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    events: UnboundedSender<ClusterEvent>,
) -> Result<JoinHandle<()>> {
    let (ready_tx, ready) = std::sync::mpsc::sync_channel(1);
    let handle = std::thread::Builder::new()
        .name("mindgate-cluster-listener".to_owned())
        .spawn(move || run(&shared, &events, ready_tx))
        .map_err(ClusterError::Thread)?;
    match ready.recv() {
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(e)
        }
        _ => Ok(handle),
    }
}

fn stopping(shared: &Shared) -> bool {
    shared.stop.load(Ordering::SeqCst)
}

fn run(
    shared: &Shared,
    events: &UnboundedSender<ClusterEvent>,
    ready: std::sync::mpsc::SyncSender<Result<()>>,
) {
    let mut backoff = Duration::from_millis(100);
    let mut ready = Some(ready);
    while !stopping(shared) {
        match listen(shared, events, &mut ready) {
            Ok(()) => return,
            Err(e) if ready.is_some() => {
                if let Some(r) = ready.take() {
                    let _ = r.send(Err(e));
                }
                return;
            }
            Err(e) => {
                tracing::warn!(error = %mindgate_errors::error_chain(&e), "the cluster listener lost its connection; reconnecting");
                let until = Instant::now() + backoff;
                while Instant::now() < until && !stopping(shared) {
                    std::thread::sleep(POLL.min(backoff));
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Listens until the cluster stops (`Ok`) or the connection fails (`Err`).
fn listen(
    shared: &Shared,
    events: &UnboundedSender<ClusterEvent>,
    ready: &mut Option<std::sync::mpsc::SyncSender<Result<()>>>,
) -> Result<()> {
    let mut client = schema::connect(&shared.url)?;
    client.batch_execute(&format!("LISTEN {}", shared.channel))?;
    // Anything announced before the LISTEN is in the state read now.
    resync(&mut client, shared, events)?;
    if let Some(r) = ready.take() {
        let _ = r.send(Ok(()));
    }
    let mut last_resync = Instant::now();
    while !stopping(shared) {
        let mut batch: Vec<String> = Vec::new();
        {
            let mut notifications = client.notifications();
            // Wait (bounded, to see the stop flag) for one notification, then take the
            // ones already received without waiting again: a lone notification is
            // handled as soon as it arrives.
            let first = notifications.timeout_iter(POLL).next();
            match first {
                Ok(Some(n)) => batch.push(n.payload().to_owned()),
                Ok(None) => {}
                Err(e) => return Err(e.into()),
            }
            if !batch.is_empty() {
                let mut pending = notifications.iter();
                while batch.len() < BATCH {
                    match pending.next() {
                        Ok(Some(n)) => batch.push(n.payload().to_owned()),
                        Ok(None) => break,
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
        if client.is_closed() {
            return Err(ClusterError::Stopped);
        }
        for payload in batch {
            if let Some(notice) = Notice::parse(&payload) {
                handle(&mut client, shared, events, notice)?;
            }
        }
        if last_resync.elapsed() >= shared.config.resync_every {
            resync(&mut client, shared, events)?;
            last_resync = Instant::now();
        }
    }
    Ok(())
}

fn resync(
    client: &mut Client,
    shared: &Shared,
    events: &UnboundedSender<ClusterEvent>,
) -> Result<()> {
    let Some(debug) = schema::debug_state(client)? else {
        return Ok(());
    };
    let pauses = schema::remote_pauses(client, &shared.id, shared.config.stale_after)?;
    let _ = events.send(ClusterEvent::Resync { debug, pauses });
    Ok(())
}

fn handle(
    client: &mut Client,
    shared: &Shared,
    events: &UnboundedSender<ClusterEvent>,
    notice: Notice,
) -> Result<()> {
    let me = shared.id.as_str();
    let event = match notice {
        Notice::Debug { .. } => schema::debug_state(client)?.map(ClusterEvent::Debug),
        Notice::Held {
            from,
            run_id,
            pause_id,
        } if from != me => schema::remote_pause(client, &run_id, &pause_id)?
            .filter(|p| p.instance == from)
            .map(ClusterEvent::PauseHeld),
        Notice::Released {
            from,
            run_id,
            pause_id,
        } if from != me => Some(ClusterEvent::PauseReleased { run_id, pause_id }),
        Notice::Resume {
            to,
            run_id,
            pause_id,
            ..
        } if to == me => schema::recorded_resume(client, &run_id, &pause_id, me)?.map(
            |(request, requester, ticket)| ClusterEvent::Resume {
                run_id,
                pause_id,
                request,
                ticket,
                requester,
            },
        ),
        Notice::Answer {
            to, ticket, reply, ..
        } if to == me => Some(ClusterEvent::ResumeAnswer { ticket, reply }),
        _ => None,
    };
    if let Some(event) = event {
        let _ = events.send(event);
    }
    Ok(())
}
