//! Per-run claims across the instances of one PostgreSQL database: one writer of a run
//! at a time, for the writers that allocate a run's `seq`s themselves (the OTLP
//! receiver). A claim is a session advisory lock on a connection of this process kept
//! for claims only, taken with `pg_try_advisory_lock` (so one connection serves every
//! claim of the process, waiting ones never block it) and given back on release. If that
//! connection drops, PostgreSQL releases its claims; the holder finds out when it checks
//! that its rows went in.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use postgres::Client;

use crate::error::{Result, StoreError};
use mindgate_pg::PostgresUrl;

/// The first key of every run claim (`mgOT`): the two-key advisory locks of run claims
/// never meet the one-key locks of migrations.
const CLAIM_NAMESPACE: i32 = 0x6d67_4f54;

/// Longest a claim is waited for.
pub const RUN_CLAIM_WAIT: Duration = Duration::from_secs(120);

/// Longest pause between two tries.
const MAX_PAUSE: Duration = Duration::from_millis(20);

/// The claims of one process.
pub(crate) struct PgRunClaims {
    url: PostgresUrl,
    client: Mutex<Option<Client>>,
}

/// The second key of a run's claim: FNV-1a of its id, folded to 32 bits.
fn run_key(run_id: &str) -> i32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in run_id.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    i32::from_ne_bytes(((hash >> 32) as u32 ^ hash as u32).to_ne_bytes())
}

impl PgRunClaims {
    pub(crate) fn new(url: PostgresUrl) -> PgRunClaims {
        PgRunClaims {
            url,
            client: Mutex::new(None),
        }
    }

    /// Runs `f` on the claims connection (made when missing, dropped after an error).
    fn with_client<T>(&self, f: impl FnOnce(&mut Client) -> Result<T>) -> Result<T> {
        let mut slot = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(super::connect(&self.url)?);
        }
        let Some(client) = slot.as_mut() else {
            return Err(StoreError::WriterGone);
        };
        let result = f(client);
        if result.is_err() {
            *slot = None;
        }
        result
    }

    /// Waits (at most [`RUN_CLAIM_WAIT`]) until this process holds the claim of `run_id`.
    pub(crate) fn acquire(&self, run_id: &str) -> Result<()> {
        let key = run_key(run_id);
        let deadline = Instant::now() + RUN_CLAIM_WAIT;
        let mut pause = Duration::from_millis(1);
        loop {
            let got: bool = self.with_client(|c| {
                Ok(c.query_one(
                    "SELECT pg_try_advisory_lock($1, $2)",
                    &[&CLAIM_NAMESPACE, &key],
                )?
                .get(0))
            })?;
            if got {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(StoreError::RunBusy {
                    run_id: run_id.to_owned(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// Gives the claim of `run_id` back.
    pub(crate) fn release(&self, run_id: &str) -> Result<()> {
        let key = run_key(run_id);
        self.with_client(|c| {
            c.execute(
                "SELECT pg_advisory_unlock($1, $2)",
                &[&CLAIM_NAMESPACE, &key],
            )?;
            Ok(())
        })
    }
}

/// Closing a `postgres::Client` blocks on its own runtime, which tokio refuses on an
/// async worker thread: the connection is closed on a thread of its own.
impl Drop for PgRunClaims {
    fn drop(&mut self) {
        let client = self
            .client
            .get_mut()
            .map(Option::take)
            .unwrap_or_else(|p| p.into_inner().take());
        let Some(client) = client else {
            return;
        };
        let closing = std::thread::Builder::new()
            .name("mindgate-store-pg-claims-close".to_owned())
            .spawn(move || drop(client));
        match closing {
            Ok(handle) => {
                if handle.join().is_err() {
                    tracing::debug!("closing the PostgreSQL claims connection panicked");
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot start a thread to close a connection"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_keys_differ_and_are_stable() {
        assert_eq!(run_key("otlp-ab"), run_key("otlp-ab"));
        assert_ne!(run_key("otlp-ab"), run_key("otlp-ac"));
    }
}
