//! The locked migration runner every PostgreSQL schema of Mindgate uses. Each crate keeps
//! its own list of migrations; this applies the missing ones, in order, in one
//! transaction holding an advisory lock, so instances starting together apply each once.
//! A database migrated by a newer Mindgate is refused before anything is written.

use postgres::Client;

/// The advisory lock held while migrating.
#[derive(Debug, Clone, Copy)]
pub enum MigrationLock {
    /// `pg_advisory_xact_lock(key)`.
    Key(i64),
    /// `pg_advisory_xact_lock(hashtext(name))`.
    NameHash(&'static str),
}

/// One schema's numbered migrations: `steps[i]` brings it from version `i` to `i + 1`.
#[derive(Debug, Clone, Copy)]
pub struct Migrations<'a> {
    /// The table that lists the applied versions (`version BIGINT PRIMARY KEY, applied_at`).
    pub table: &'a str,
    /// The lock held while migrating.
    pub lock: MigrationLock,
    /// The migrations' SQL, in order.
    pub steps: &'a [&'a str],
}

/// Why a migration did not happen.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The database holds a newer schema than this build knows; nothing was written.
    #[error("schema version {found} is newer than this build supports ({supported})")]
    SchemaTooNew {
        /// The version found.
        found: i64,
        /// The newest version this build applies.
        supported: i64,
    },
    /// A statement failed; nothing of this run was kept.
    #[error("a migration statement failed")]
    Sql(#[from] postgres::Error),
}

impl Migrations<'_> {
    /// The newest version these migrations reach.
    pub fn latest(&self) -> i64 {
        i64::try_from(self.steps.len()).unwrap_or(i64::MAX)
    }

    /// Applies the missing migrations; returns the versions applied now (empty when the
    /// schema was current).
    pub fn run(&self, client: &mut Client) -> Result<Vec<i64>, MigrateError> {
        let mut tx = client.transaction()?;
        match self.lock {
            MigrationLock::Key(key) => tx.execute("SELECT pg_advisory_xact_lock($1)", &[&key])?,
            MigrationLock::NameHash(name) => {
                tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&name])?
            }
        };
        tx.batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {} (
                 version BIGINT PRIMARY KEY,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
             )",
            self.table
        ))?;
        let found: i64 = tx
            .query_one(
                &format!("SELECT COALESCE(MAX(version), 0) FROM {}", self.table),
                &[],
            )?
            .try_get(0)?;
        let supported = self.latest();
        if found > supported {
            return Err(MigrateError::SchemaTooNew { found, supported });
        }
        let insert = format!("INSERT INTO {} (version) VALUES ($1)", self.table);
        let mut applied = Vec::new();
        for (version, sql) in (1..).zip(self.steps).filter(|(v, _)| *v > found) {
            tx.batch_execute(sql)?;
            tx.execute(&insert, &[&version])?;
            applied.push(version);
        }
        tx.commit()?;
        if !applied.is_empty() {
            tracing::info!(table = self.table, ?applied, "PostgreSQL schema migrated");
        }
        Ok(applied)
    }

    /// The schema version of the database (0 before the first migration); writes nothing.
    pub fn version(&self, client: &mut Client) -> Result<i64, postgres::Error> {
        let exists: bool = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&self.table])?
            .try_get(0)?;
        if !exists {
            return Ok(0);
        }
        client
            .query_one(
                &format!("SELECT COALESCE(MAX(version), 0) FROM {}", self.table),
                &[],
            )?
            .try_get(0)
    }
}
