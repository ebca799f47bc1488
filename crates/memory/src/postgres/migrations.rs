//! Numbered schema migrations of the PostgreSQL backend. Migration `n` (1-based) brings
//! the version recorded in `memory_schema` from `n - 1` to `n`; [`mindgate_pg`]'s runner
//! applies the pending ones in one transaction under an advisory lock, so instances
//! starting together migrate once. Never edit a released migration: add one.
//!
//! Times are `BIGINT` epoch milliseconds, the SQLite encoding, so the search filter's SQL
//! is the same in both backends; JSON is `jsonb`; vectors are little-endian f32 `bytea`
//! (the shared mirror's format); full text is a `tsvector` with a GIN index.

use mindgate_pg::{MigrateError, MigrationLock, Migrations};
use postgres::Client;

use crate::error::{MemoryError, Result};

/// Migration 1: every table of the SQLite schema version 4, in PostgreSQL types.
const V1_SCHEMA: &str = r#"
CREATE TABLE memory_items (
    rowid BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    session_id TEXT,
    sensitivity TEXT NOT NULL DEFAULT 'internal',
    text TEXT NOT NULL,
    tags_json JSONB,
    provenance TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    quarantine_reason TEXT,
    active_since BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT,
    deleted_at BIGINT,
    delete_reason TEXT,
    archived_at BIGINT,
    importance DOUBLE PRECISION,
    confidence DOUBLE PRECISION,
    strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    last_accessed_at BIGINT,
    valid_from BIGINT,
    valid_to BIGINT,
    supersedes TEXT,
    superseded_by TEXT,
    superseded_at BIGINT,
    subject TEXT,
    predicate TEXT,
    object TEXT,
    started_at BIGINT,
    ended_at BIGINT,
    priority DOUBLE PRECISION,
    success_count BIGINT,
    salience BIGINT,
    sequence BIGINT,
    body_json JSONB,
    search_text TSVECTOR NOT NULL
);
CREATE INDEX memory_items_scope ON memory_items(user_id, kind, created_at);
CREATE INDEX memory_items_session ON memory_items(session_id, sequence) WHERE session_id IS NOT NULL;
CREATE INDEX memory_items_fts ON memory_items USING GIN (search_text);
CREATE TABLE memory_tags (
    item_rowid BIGINT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (tag, item_rowid)
);
CREATE TABLE working_blocks (
    rowid BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    session_id TEXT,
    label TEXT NOT NULL,
    description TEXT,
    value TEXT NOT NULL,
    char_limit BIGINT NOT NULL,
    read_only BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT,
    deleted_at BIGINT
);
CREATE UNIQUE INDEX working_blocks_live_label ON working_blocks(user_id, label) WHERE deleted_at IS NULL;
CREATE TABLE shared_attachments (
    rowid BIGSERIAL PRIMARY KEY,
    item_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    attached_at BIGINT NOT NULL,
    detached_at BIGINT
);
CREATE UNIQUE INDEX shared_live ON shared_attachments(item_id, agent_id) WHERE detached_at IS NULL;
CREATE TABLE memory_history (
    seq BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
    subject_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT,
    detail_json JSONB
);
CREATE INDEX memory_history_subject ON memory_history(subject_id, seq);
CREATE TABLE memory_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE entities (
    rowid BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    normalized_name TEXT NOT NULL,
    merged_into TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT
);
CREATE UNIQUE INDEX entities_one_root_per_name ON entities(user_id, normalized_name) WHERE merged_into IS NULL;
CREATE INDEX entities_by_root ON entities(merged_into) WHERE merged_into IS NOT NULL;
CREATE TABLE fact_entities (
    fact_id TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (fact_id, role)
);
CREATE INDEX fact_entities_by_entity ON fact_entities(entity_id);
CREATE TABLE entity_merges (
    seq BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
    action TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    into_id TEXT,
    moved_json JSONB NOT NULL,
    actor TEXT NOT NULL,
    undone_at BIGINT
);
CREATE TABLE memory_vectors (
    id BIGSERIAL PRIMARY KEY,
    item_rowid BIGINT NOT NULL,
    embedder TEXT NOT NULL,
    vec BYTEA NOT NULL
);
CREATE UNIQUE INDEX memory_vectors_item ON memory_vectors(embedder, item_rowid);
CREATE TABLE entity_vectors (
    entity_id TEXT NOT NULL,
    embedder TEXT NOT NULL,
    vec BYTEA NOT NULL,
    PRIMARY KEY (embedder, entity_id)
);
"#;

/// Migration 2: who recalled which fact when (a search strengthens a fact once per
/// principal per hour: `crate::recall`). Not exported: it only rate-limits.
const V2_RECALLS: &str = r#"
CREATE TABLE memory_recalls (
    item_rowid BIGINT NOT NULL,
    principal TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (item_rowid, principal)
);
"#;

/// Migration 3: a fact's conflicts stored with it (`rules::conflicts`), as SQLite's
/// version 6: the ids of the active facts it contradicted and a person's decision on them.
const V3_CONFLICTS: &str = r#"
ALTER TABLE memory_items ADD COLUMN conflicts_json JSONB;
ALTER TABLE memory_items ADD COLUMN conflict_decision_json JSONB;
"#;

/// Migration 4: neighbour context's lookups (`crate::neighbours`), as SQLite's version 7:
/// a record's nearest records of the same session, user and kind in write order, a
/// bounded range of `(session_id, user_id, kind, rowid)` (the query in `search.rs` is a
/// `LATERAL` join so that the planner can use it; without the index it walked the primary
/// key from the record and filtered every row until it found a neighbour).
const V4_NEIGHBOURS: &str = r#"
CREATE INDEX memory_items_neighbours ON memory_items(session_id, user_id, kind, rowid) WHERE session_id IS NOT NULL;
"#;

/// Every migration, in order: index `i` brings the schema to version `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1_SCHEMA, V2_RECALLS, V3_CONFLICTS, V4_NEIGHBOURS];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock key every migration and every write holds ("mgmemory" in ASCII).
pub(crate) const LOCK_KEY: i64 = 0x6d67_6d65_6d6f_7279;

/// The memory store's migrations, for [`mindgate_pg`]'s locked runner.
const RUNNER: Migrations<'static> = Migrations {
    table: "memory_schema",
    lock: MigrationLock::Key(LOCK_KEY),
    steps: MIGRATIONS,
};

/// Applies every pending migration (in one transaction holding [`LOCK_KEY`]).
pub fn migrate(client: &mut Client) -> Result<()> {
    RUNNER.run(client).map_err(|e| match e {
        MigrateError::SchemaTooNew { found, supported } => {
            MemoryError::SchemaTooNew { found, supported }
        }
        MigrateError::Sql(e) => MemoryError::Postgres(e),
    })?;
    Ok(())
}
