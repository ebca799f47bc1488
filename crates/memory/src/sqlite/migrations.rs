//! Numbered schema migrations. Migration `n` (1-based) brings `user_version` from `n - 1`
//! to `n`; each runs in its own transaction. Never edit a released migration: add one.

use rusqlite::Connection;

use crate::error::{MemoryError, Result};

/// Migration 1: records, tags, full-text index, working blocks, sharing, the ledger.
const V1_CORE: &str = r#"
CREATE TABLE memory_items (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    session_id TEXT,
    sensitivity TEXT NOT NULL DEFAULT 'internal',
    text TEXT NOT NULL,
    tags_json TEXT,
    provenance TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    quarantine_reason TEXT,
    active_since INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER,
    deleted_at INTEGER,
    delete_reason TEXT,
    archived_at INTEGER,
    importance REAL,
    confidence REAL,
    strength REAL NOT NULL DEFAULT 1.0,
    last_accessed_at INTEGER,
    valid_from INTEGER,
    valid_to INTEGER,
    supersedes TEXT,
    superseded_by TEXT,
    superseded_at INTEGER,
    subject TEXT,
    predicate TEXT,
    object TEXT,
    started_at INTEGER,
    ended_at INTEGER,
    priority REAL,
    success_count INTEGER,
    salience INTEGER,
    sequence INTEGER,
    body_json TEXT
);
CREATE INDEX memory_items_scope ON memory_items(user_id, kind, created_at);
CREATE INDEX memory_items_session ON memory_items(session_id, sequence) WHERE session_id IS NOT NULL;
CREATE TABLE memory_tags (
    item_rowid INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (tag, item_rowid)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE working_blocks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    session_id TEXT,
    label TEXT NOT NULL,
    description TEXT,
    value TEXT NOT NULL,
    char_limit INTEGER NOT NULL,
    read_only INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER,
    deleted_at INTEGER
);
CREATE UNIQUE INDEX working_blocks_live_label ON working_blocks(user_id, label) WHERE deleted_at IS NULL;
CREATE TABLE shared_attachments (
    rowid INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    attached_at INTEGER NOT NULL,
    detached_at INTEGER
);
CREATE UNIQUE INDEX shared_live ON shared_attachments(item_id, agent_id) WHERE detached_at IS NULL;
CREATE TABLE memory_history (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    subject_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT,
    detail_json TEXT
);
CREATE INDEX memory_history_subject ON memory_history(subject_id, seq);
CREATE TABLE memory_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"#;

/// Migration 2: the entity graph and its merge ledger.
const V2_ENTITIES: &str = r#"
CREATE TABLE entities (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    normalized_name TEXT NOT NULL,
    merged_into TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER
);
CREATE UNIQUE INDEX entities_one_root_per_name ON entities(user_id, normalized_name) WHERE merged_into IS NULL;
CREATE INDEX entities_by_root ON entities(merged_into) WHERE merged_into IS NOT NULL;
CREATE TABLE fact_entities (
    fact_id TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (fact_id, role)
) WITHOUT ROWID;
CREATE INDEX fact_entities_by_entity ON fact_entities(entity_id);
CREATE TABLE entity_merges (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    action TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    into_id TEXT,
    moved_json TEXT NOT NULL,
    actor TEXT NOT NULL,
    undone_at INTEGER
);
"#;

/// Migration 3: vectors per embedder.
const V3_VECTORS: &str = r#"
CREATE TABLE memory_vectors (
    id INTEGER PRIMARY KEY,
    item_rowid INTEGER NOT NULL,
    embedder TEXT NOT NULL,
    vec BLOB NOT NULL
);
CREATE UNIQUE INDEX memory_vectors_item ON memory_vectors(embedder, item_rowid);
"#;

/// Migration 4: name vectors of entities, for embedding-similarity resolution.
const V4_ENTITY_VECTORS: &str = r#"
CREATE TABLE entity_vectors (
    entity_id TEXT NOT NULL,
    embedder TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (embedder, entity_id)
) WITHOUT ROWID;
"#;

/// Migration 5: who recalled which fact when (a search strengthens a fact once per
/// principal per hour: `crate::recall`). Not exported: it only rate-limits.
const V5_RECALLS: &str = r#"
CREATE TABLE memory_recalls (
    item_rowid INTEGER NOT NULL,
    principal TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (item_rowid, principal)
) WITHOUT ROWID;
"#;

/// Migration 6: a fact's conflicts stored with it (`rules::conflicts`): the ids of the
/// active facts it contradicted (a JSON array) and a person's decision on them (JSON).
const V6_CONFLICTS: &str = r#"
ALTER TABLE memory_items ADD COLUMN conflicts_json TEXT;
ALTER TABLE memory_items ADD COLUMN conflict_decision_json TEXT;
"#;

/// Migration 7: neighbour context's lookups (`crate::neighbours`): a record's nearest
/// records of the same session, user and kind in write order. SQLite ends every index
/// with the rowid, so `(session_id, user_id, kind)` answers "the nearest rowids below or
/// above this one" as a bounded range of the index; the session index
/// (`session_id, sequence`) made it read every row of the session and sort them.
const V7_NEIGHBOURS: &str = r#"
CREATE INDEX memory_items_neighbours ON memory_items(session_id, user_id, kind) WHERE session_id IS NOT NULL;
"#;

/// Every migration, in order: index `i` brings the schema to version `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    V1_CORE,
    V2_ENTITIES,
    V3_VECTORS,
    V4_ENTITY_VECTORS,
    V5_RECALLS,
    V6_CONFLICTS,
    V7_NEIGHBOURS,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Applies the pending migrations up to `target` (tests stop early to build old files).
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<()> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(MemoryError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for version in (found + 1)..=target.min(SCHEMA_VERSION) {
        let tx = conn.transaction()?;
        if let Some(sql) = usize::try_from(version - 1)
            .ok()
            .and_then(|i| MIGRATIONS.get(i))
        {
            tx.execute_batch(sql)?;
        }
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::debug!(version, "memory schema migrated");
    }
    Ok(())
}

/// Applies every pending migration.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, SCHEMA_VERSION)
}
