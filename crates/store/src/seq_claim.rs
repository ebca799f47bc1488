//! For writers that allocate a run's `seq`s themselves (the OTLP receiver): a claim on
//! the run while they read where it ends, write after it and check their rows went in.
//!
//! On SQLite one server owns the file (the server's database lock), so the claim is the
//! caller's own per-run lock and [`RunStore::claim_run`] holds nothing more. On
//! PostgreSQL, where several instances write one database, it is a per-run advisory
//! lock across the cluster (`pg::run_lock`), waited for at most [`RUN_CLAIM_WAIT`].

use crate::backend::read::absent;
use crate::error::Result;
pub use crate::pg::run_lock::RUN_CLAIM_WAIT;
use crate::reader::RunStore;

/// A run's claim, released when dropped.
#[must_use = "the claim is released when dropped"]
pub struct RunClaim<'a> {
    store: &'a RunStore,
    run_id: String,
    held: bool,
}

impl std::fmt::Debug for RunClaim<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunClaim")
            .field("run_id", &self.run_id)
            .field("held", &self.held)
            .finish()
    }
}

impl Drop for RunClaim<'_> {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        if let Some(pg) = self.store.postgres()
            && let Err(e) = pg.claims().release(&self.run_id)
        {
            // The connection is gone, and its claims with it.
            tracing::warn!(run = %self.run_id, error = %e, "releasing a run claim failed");
        }
    }
}

impl RunStore {
    /// Waits until this process may allocate `run_id`'s next `seq`s: on PostgreSQL no
    /// other instance holds its claim (at most [`RUN_CLAIM_WAIT`], then
    /// [`crate::StoreError::RunBusy`]); on SQLite at once.
    pub fn claim_run(&self, run_id: &str) -> Result<RunClaim<'_>> {
        let held = match self.postgres() {
            Some(pg) => {
                pg.claims().acquire(run_id)?;
                true
            }
            None => false,
        };
        Ok(RunClaim {
            store: self,
            run_id: run_id.to_owned(),
            held,
        })
    }

    /// The `seq`s in `first..=last` that run `run_id` does not hold (all of them when the
    /// run does not exist): what a writer that just wrote them finds was not stored.
    pub fn missing_seqs(&self, run_id: &str, first: u64, last: u64) -> Result<Vec<u64>> {
        if last < first {
            return Ok(Vec::new());
        }
        if let Some(pg) = self.postgres() {
            return pg.missing_seqs(run_id, first, last);
        }
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.with_conn(|conn| {
            let key: Option<i64> = rusqlite::OptionalExtension::optional(
                conn.prepare_cached("SELECT key FROM runs WHERE id = ?1")?
                    .query_row([run_id], |r| r.get(0)),
            )?;
            let Some(key) = key else {
                return Ok((first..=last).collect());
            };
            let (lo, hi) = (as_i64(first), as_i64(last));
            let n: i64 = conn
                .prepare_cached(
                    "SELECT COUNT(*) FROM events WHERE run_key = ?1 AND seq BETWEEN ?2 AND ?3",
                )?
                .query_row(rusqlite::params![key, lo, hi], |r| r.get(0))?;
            if n == hi - lo + 1 {
                return Ok(Vec::new());
            }
            let mut stmt = conn.prepare_cached(
                "SELECT seq FROM events WHERE run_key = ?1 AND seq BETWEEN ?2 AND ?3",
            )?;
            let held = stmt
                .query_map(rusqlite::params![key, lo, hi], |r| r.get::<_, i64>(0))?
                .map(|s| s.map(|s| u64::try_from(s).unwrap_or(0)))
                .collect::<rusqlite::Result<Vec<u64>>>()?;
            Ok(absent(first, last, held))
        })
    }
}
