//! Numbered migrations of the PostgreSQL run store, applied by [`mindgate_pg`]'s locked
//! runner: each once, in order, in one transaction holding an advisory lock, so
//! instances starting together never apply one twice. Applied versions are listed in
//! `mindgate_run_migrations`; a database migrated by a newer Mindgate is refused before
//! anything is written. Never edit a released migration: add one.

use mindgate_pg::{MigrationLock, Migrations};

use crate::error::Result;

/// Migration 1: runs, interned event types and events.
const V1_TABLES: &str = r#"
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
"#;

/// Migration 2: the instance that last wrote a run (its owner), when several share the
/// database.
const V2_RUN_OWNER: &str = "ALTER TABLE runs ADD COLUMN instance_id TEXT;";

/// Migration 3: the run's held time (`RunSummary::held_ms`), filled from the stored holds:
/// each `exec.resumed` less the latest `exec.paused` of its `pauseId` before it.
const V3_HELD_MS: &str = r#"
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
"#;

/// Migration 4: the run's thread, user and tags (`crate::threads::run_keys`), filled from
/// each run's stored meta by the same rule (meta that `jsonb` cannot hold, a `\u0000`
/// escape, names none).
const V4_THREAD_KEYS: &str = r#"
ALTER TABLE runs ADD COLUMN thread_id TEXT, ADD COLUMN user_id TEXT, ADD COLUMN tags_json TEXT;
CREATE INDEX runs_by_thread ON runs (thread_id, started_at) WHERE thread_id IS NOT NULL;
UPDATE runs SET
    thread_id = COALESCE(
        CASE WHEN jsonb_typeof(m -> 'threadId') = 'string'
                AND octet_length(m ->> 'threadId') BETWEEN 1 AND 256 THEN m ->> 'threadId'
              WHEN jsonb_typeof(m -> 'threadId') = 'number' AND (m ->> 'threadId') ~ '^-?[0-9]+$'
                THEN m ->> 'threadId' END,
        CASE WHEN jsonb_typeof(m -> 'conversationId') = 'string'
                AND octet_length(m ->> 'conversationId') BETWEEN 1 AND 256 THEN m ->> 'conversationId'
              WHEN jsonb_typeof(m -> 'conversationId') = 'number' AND (m ->> 'conversationId') ~ '^-?[0-9]+$'
                THEN m ->> 'conversationId' END,
        CASE WHEN jsonb_typeof(m -> 'sessionId') = 'string'
                AND octet_length(m ->> 'sessionId') BETWEEN 1 AND 256 THEN m ->> 'sessionId'
              WHEN jsonb_typeof(m -> 'sessionId') = 'number' AND (m ->> 'sessionId') ~ '^-?[0-9]+$'
                THEN m ->> 'sessionId' END),
    user_id = CASE WHEN jsonb_typeof(m -> 'userId') = 'string'
                AND octet_length(m ->> 'userId') BETWEEN 1 AND 256 THEN m ->> 'userId'
              WHEN jsonb_typeof(m -> 'userId') = 'number' AND (m ->> 'userId') ~ '^-?[0-9]+$'
                THEN m ->> 'userId' END,
    tags_json = (
        SELECT jsonb_agg(t.tag ORDER BY t.n)::text
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(m -> 'tags') = 'array'
                                       THEN m -> 'tags' ELSE '[]'::jsonb END)
             WITH ORDINALITY AS t(tag, n)
        WHERE jsonb_typeof(t.tag) = 'string'
          AND octet_length(t.tag #>> '{}') BETWEEN 1 AND 64)
FROM (SELECT key AS k, meta_json::jsonb AS m FROM runs
      WHERE meta_json IS NOT NULL AND position('\u0000' in meta_json) = 0) j
WHERE runs.key = j.k;
"#;

/// The text search vector of an event: the words of its payload's strings (`simple`
/// configuration: no stemming, no stop words). Migration 5 indexes it; the search's query
/// spells it the same so the index answers.
pub(crate) const SEARCH_VECTOR: &str =
    "jsonb_to_tsvector('simple'::regconfig, e.payload, '[\"string\"]'::jsonb)";

/// Migration 5: the search index over the events' text (a GIN index of
/// [`SEARCH_VECTOR`], kept by PostgreSQL in the transaction that stores each event), and
/// the few payloads `jsonb` could not hold (kept as text, searched by substring).
const V5_SEARCH: &str = "CREATE INDEX events_search ON events USING gin \
     (jsonb_to_tsvector('simple'::regconfig, payload, '[\"string\"]'::jsonb)); \
     CREATE INDEX events_payload_text ON events (run_key) WHERE payload_text IS NOT NULL;";

/// The run store's migrations (the lock key spells "mgruns").
pub(crate) const MIGRATIONS: Migrations<'static> = Migrations {
    table: "mindgate_run_migrations",
    lock: MigrationLock::Key(0x6d67_7275_6e73),
    steps: &[
        V1_TABLES,
        V2_RUN_OWNER,
        V3_HELD_MS,
        V4_THREAD_KEYS,
        V5_SEARCH,
        crate::annotations::PG_TABLES,
        crate::datasets::PG_TABLES,
    ],
};

/// Brings the database up to this build's schema; returns the versions applied now.
pub(crate) fn migrate(client: &mut postgres::Client) -> Result<Vec<i64>> {
    Ok(MIGRATIONS.run(client)?)
}
