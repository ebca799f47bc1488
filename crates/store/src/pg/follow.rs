//! The follower: other instances' commits, as this instance's writer would have
//! reported them.
//!
//! A dedicated connection `LISTEN`s on [`CHANNEL`] on a thread of its own. Each
//! announcement (see [`super::announce`]) of another writer on the same schema is read
//! back — the announced events by seq range, the touched runs' summaries — through the
//! reader's row mapping, and handed to the hook as a [`Committed`]. Announcements heard
//! together are read together (one commit per round). After a lost connection it
//! reconnects with a bounded backoff and reports [`Followed::Resync`]: whatever was
//! committed while it was away was not heard.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use super::announce::{Announcement, CHANNEL};
use super::reader::{events_in_ranges, summaries};
use crate::backend::write_db::{Committed, EventsWanted};
use crate::error::{Result, StoreError};
use mindgate_pg::PostgresUrl;

/// Longest wait for a notification before the thread looks at its stop flag.
const POLL: Duration = Duration::from_millis(200);
/// Idle time after which the connection is checked with a query (a silent network
/// loss shows no error until something is sent).
const PING_AFTER: Duration = Duration::from_secs(5);
/// First and longest wait between reconnection attempts (doubling in between).
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Most notifications read back in one round.
const MAX_ROUND: usize = 256;
/// A round stops taking notifications once they announce this many events (bounds the
/// memory of one read-back; the rest are read in the next round).
const MAX_ROUND_EVENTS: u64 = 16_384;

/// What the follower reports.
#[derive(Debug)]
pub enum Followed {
    /// Another writer's commit, read back from the database.
    Commit(Committed),
    /// The follower was disconnected and is listening again: commits made meanwhile
    /// were not reported, so whoever shows live state should re-read it.
    Resync,
}

/// Called on the follower's thread for each report.
pub type FollowHook = Box<dyn FnMut(Followed) + Send + 'static>;

/// Follows the commits other writers announce on a PostgreSQL run store (see the
/// module docs). Stops when [`Follower::stop`] is called or it is dropped.
pub struct Follower {
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("stopped", &self.stop.load(Ordering::Relaxed))
            .finish()
    }
}

/// A connection listening on [`CHANNEL`], and the schema it reads.
struct Listening {
    client: Client,
    schema: String,
}

/// The `application_name` of a follower's connection: [`APPLICATION_PREFIX`] and the
/// id of the writer it follows for (PostgreSQL keeps the first 63 bytes), so an operator
/// sees in `pg_stat_activity` which instance a listener belongs to.
pub fn application_name(own_writer: &str) -> String {
    format!("{APPLICATION_PREFIX}{own_writer}")
}

/// The start of every follower connection's `application_name`.
pub const APPLICATION_PREFIX: &str = "mindgate follow ";

fn listen(url: &PostgresUrl, own_writer: &str) -> Result<Listening> {
    let mut client = super::connect(url)?;
    client.execute(
        "SELECT set_config('application_name', $1, false)",
        &[&application_name(own_writer)],
    )?;
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    let schema = super::current_schema(&mut client)?;
    Ok(Listening { client, schema })
}

impl Follower {
    /// Connects and listens (an error when the database cannot be reached), then
    /// follows on a thread of its own, reporting to `hook`. `own_writer` is the id of
    /// this process's writer ([`crate::Writer::id`]): its commits are skipped. When
    /// `events_wanted` answers `false` the announced events are not read
    /// ([`Committed::events`] stays empty; the runs are still reported).
    pub fn start(
        url: &PostgresUrl,
        own_writer: &str,
        events_wanted: Option<EventsWanted>,
        hook: FollowHook,
    ) -> Result<Follower> {
        let listening = listen(url, own_writer)?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut follow = Follow {
            url: url.clone(),
            own: own_writer.to_owned(),
            events_wanted,
            hook,
            stop: Arc::clone(&stop),
        };
        let thread = std::thread::Builder::new()
            .name("mindgate-store-follow".to_owned())
            .spawn(move || follow.run(listening))
            .map_err(|source| StoreError::Io {
                path: std::path::PathBuf::new(),
                source,
            })?;
        Ok(Follower {
            stop,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Whether the thread has stopped.
    pub fn is_stopped(&self) -> bool {
        self.thread
            .lock()
            .map(|h| h.as_ref().is_none_or(JoinHandle::is_finished))
            .unwrap_or(true)
    }

    /// Stops following and waits for the thread (at most about 200 ms plus a read in
    /// flight). Idempotent. Blocks: call it off async workers.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let handle = self.thread.lock().ok().and_then(|mut h| h.take());
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            tracing::warn!("the commit follower's thread panicked");
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop();
    }
}

/// How many events a notification announces (0 when it is not an announcement).
fn announced_events(note: &postgres::Notification) -> u64 {
    serde_json::from_str::<Announcement>(note.payload()).map_or(0, |a| {
        a.runs
            .iter()
            .flat_map(|r| &r.seqs)
            .map(|[lo, hi]| hi.saturating_sub(*lo).saturating_add(1))
            .fold(0u64, u64::saturating_add)
    })
}

/// The thread's side.
struct Follow {
    url: PostgresUrl,
    own: String,
    events_wanted: Option<EventsWanted>,
    hook: FollowHook,
    stop: Arc<AtomicBool>,
}

impl Follow {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn run(&mut self, first: Listening) {
        let mut conn = Some(first);
        let mut backoff = BACKOFF_FIRST;
        let mut last_heard = Instant::now();
        while !self.stopping() {
            let Some(listening) = conn.as_mut() else {
                self.pause(backoff);
                if self.stopping() {
                    break;
                }
                match listen(&self.url, &self.own) {
                    Ok(fresh) => {
                        tracing::info!(database = %self.url, "commit follower listening again; viewers re-read");
                        conn = Some(fresh);
                        backoff = BACKOFF_FIRST;
                        last_heard = Instant::now();
                        (self.hook)(Followed::Resync);
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "commit follower cannot reconnect yet");
                        backoff = (backoff * 2).min(BACKOFF_MAX);
                    }
                }
                continue;
            };
            let lost = match self.round(listening) {
                Ok(true) => {
                    last_heard = Instant::now();
                    false
                }
                Ok(false) if last_heard.elapsed() >= PING_AFTER => {
                    last_heard = Instant::now();
                    listening.client.simple_query("SELECT 1").is_err()
                }
                Ok(false) => false,
                Err(e) if listening.client.is_closed() => {
                    tracing::debug!(error = %e, "commit follower's read failed on a closed connection");
                    true
                }
                Err(e) => {
                    // Announced commits could not be read: tell the consumer it missed some.
                    tracing::warn!(error = %e, "commit follower could not read announced commits");
                    (self.hook)(Followed::Resync);
                    false
                }
            };
            if lost || listening.client.is_closed() {
                tracing::warn!(database = %self.url, "commit follower lost its connection; reconnecting");
                conn = None;
            }
        }
    }

    /// Sleeps `wait` in slices, returning early when stopping.
    fn pause(&self, wait: Duration) {
        let until = Instant::now() + wait;
        while !self.stopping() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(POLL));
        }
    }

    /// Waits up to [`POLL`] for announcements, then reads back everything heard by then.
    /// Returns whether anything was heard.
    fn round(&mut self, listening: &mut Listening) -> Result<bool> {
        let mut heard: Vec<String> = Vec::new();
        {
            let mut notifications = listening.client.notifications();
            let first = notifications.timeout_iter(POLL).next()?;
            let Some(first) = first else {
                return Ok(false);
            };
            heard.push(first.payload().to_owned());
            let mut announced = announced_events(&first);
            let mut pending = notifications.iter();
            while heard.len() < MAX_ROUND && announced < MAX_ROUND_EVENTS {
                match pending.next()? {
                    Some(note) => {
                        announced = announced.saturating_add(announced_events(&note));
                        heard.push(note.payload().to_owned());
                    }
                    None => break,
                }
            }
        }
        let committed = self.read_back(listening, &heard)?;
        if !committed.runs.is_empty() || !committed.deleted.is_empty() {
            (self.hook)(Followed::Commit(committed));
        }
        Ok(true)
    }

    /// The commit the announcements in `heard` describe, read from the database.
    fn read_back(&self, listening: &mut Listening, heard: &[String]) -> Result<Committed> {
        let mut run_ids: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut ranges: Vec<(String, [u64; 2])> = Vec::new();
        let mut deleted: Vec<String> = Vec::new();
        for text in heard {
            let announcement: Announcement = match serde_json::from_str(text) {
                Ok(a) => a,
                Err(e) => {
                    tracing::debug!(error = %e, "not a commit announcement; ignored");
                    continue;
                }
            };
            if announcement.w == self.own || announcement.s != listening.schema {
                continue;
            }
            for run in announcement.runs {
                ranges.extend(run.seqs.iter().map(|r| (run.id.clone(), *r)));
                if seen.insert(run.id.clone()) {
                    run_ids.push(run.id);
                }
            }
            deleted.extend(announcement.deleted);
        }
        let wanted = self.events_wanted.as_ref().is_none_or(|wanted| wanted());
        let events = if wanted {
            events_in_ranges(&mut listening.client, &ranges)?
        } else {
            Vec::new()
        };
        let mut runs = summaries(&mut listening.client, &run_ids)?;
        // In the order they were announced.
        let order: HashMap<&str, usize> = run_ids
            .iter()
            .enumerate()
            .map(|(at, id)| (id.as_str(), at))
            .collect();
        runs.sort_by_key(|r| order.get(r.id.as_str()).copied());
        Ok(Committed {
            events,
            runs,
            deleted,
            resync: false,
        })
    }
}
