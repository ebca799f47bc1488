//! Numbered migrations of the PostgreSQL run store.
//!
//! Each migration runs once, in order, inside one transaction that holds an
//! advisory lock, so instances starting together never apply one twice. Applied
//! versions are listed in `mindgate_run_migrations`; a database migrated by a newer
//! Mindgate (a version above [`LATEST`]) is refused before anything is written.

use postgres::Client;

use crate::error::{Result, StoreError};

/// Advisory lock key held while migrating (any constant unlikely to collide).
const MIGRATION_LOCK: i64 = 0x6d67_7275_6e73; // "mgruns"

/// The migrations, by version.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        r#"
CREATE TABLE runs (
    key BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    app TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'running',
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    last_event_at BIGINT NOT NULL,
    source TEXT NOT NULL DEFAULT 'live',
    meta_json TEXT,
    sdk_json TEXT,
    claim TEXT,
    event_count BIGINT NOT NULL DEFAULT 0,
    node_count BIGINT NOT NULL DEFAULT 0,
    error_count BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    last_seq BIGINT
);
CREATE INDEX runs_by_start ON runs (started_at DESC, key DESC);
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';
CREATE TABLE event_types (
    code BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE events (
    run_key BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    ts BIGINT NOT NULL,
    type BIGINT NOT NULL,
    node_id TEXT,
    payload JSONB,
    extra JSONB,
    -- The payload / extra text when jsonb cannot hold it (a \u0000 escape): kept as sent.
    payload_text TEXT,
    extra_text TEXT,
    PRIMARY KEY (run_key, seq),
    CHECK (payload IS NOT NULL OR payload_text IS NOT NULL)
);
"#,
    ),
    (
        2,
        // The instance that last wrote a run (its owner), when several share the database.
        "ALTER TABLE runs ADD COLUMN instance_id TEXT;",
    ),
    (
        3,
        // The run's held time (`RunSummary::held_ms`), filled from the stored holds: each
        // `exec.resumed` less the latest `exec.paused` of its `pauseId` before it.
        r#"
ALTER TABLE runs ADD COLUMN held_ms BIGINT NOT NULL DEFAULT 0;
UPDATE runs SET held_ms = h.held
FROM (
    SELECT r.run_key, SUM(GREATEST(r.ts - p.ts, 0))::int8 AS held
    FROM events r
    JOIN event_types rt ON rt.code = r.type AND rt.name = 'exec.resumed'
    JOIN LATERAL (
        SELECT p.ts FROM events p
        JOIN event_types pt ON pt.code = p.type AND pt.name = 'exec.paused'
        WHERE p.run_key = r.run_key AND p.seq < r.seq
          AND p.payload ->> 'pauseId' = r.payload ->> 'pauseId'
        ORDER BY p.seq DESC LIMIT 1
    ) p ON true
    GROUP BY r.run_key
) h
WHERE runs.key = h.run_key;
"#,
    ),
];

/// The newest schema version this build knows.
pub const LATEST: i64 = 3;

/// Brings the database up to [`LATEST`]; returns the versions applied now (empty when
/// it was current).
pub(crate) fn migrate(client: &mut Client) -> Result<Vec<i64>> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS mindgate_run_migrations (
             version BIGINT PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )?;
    let found: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM mindgate_run_migrations",
            &[],
        )?
        .get(0);
    if found > LATEST {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: LATEST,
        });
    }
    let mut applied = Vec::new();
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO mindgate_run_migrations(version) VALUES ($1)",
            &[version],
        )?;
        applied.push(*version);
    }
    tx.commit()?;
    if !applied.is_empty() {
        tracing::info!(?applied, "run store migrated");
    }
    Ok(applied)
}

/// The schema version of the database (0 before the first migration).
pub(crate) fn version(client: &mut Client) -> Result<i64> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('mindgate_run_migrations') IS NOT NULL",
            &[],
        )?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM mindgate_run_migrations",
            &[],
        )?
        .get(0))
}
