//! Opening the database file: permissions, pragmas and the schema.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Result, StoreError};

/// Version of the schema this build writes.
pub const SCHEMA_VERSION: i64 = 7;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS runs (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    app TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'running',
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    last_event_at INTEGER NOT NULL,
    source TEXT NOT NULL DEFAULT 'live',
    meta_json TEXT,
    sdk_json TEXT,
    claim TEXT,
    event_count INTEGER NOT NULL DEFAULT 0,
    node_count INTEGER NOT NULL DEFAULT 0,
    error_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    last_seq INTEGER,
    held_ms INTEGER NOT NULL DEFAULT 0,
    thread_id TEXT,
    user_id TEXT,
    tags_json TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs(started_at DESC);
CREATE TABLE IF NOT EXISTS event_types (
    code INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS events (
    run_key INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    type INTEGER NOT NULL,
    node_id TEXT,
    payload TEXT NOT NULL,
    extra TEXT,
    PRIMARY KEY (run_key, seq)
) WITHOUT ROWID;
"#;

/// Opens the read-write connection and brings the schema up to date.
///
/// The schema version is checked before anything is written, so a database
/// from a newer Mindgate is refused exactly as it was found (its journal mode
/// included).
pub(crate) fn open_writer(path: &Path) -> Result<Connection> {
    crate::db_file::prepare_path(path)?;
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    conn.pragma_update(None, "cache_size", -16_000)?;
    conn.execute_batch(SCHEMA)?;
    add_held_time(&conn)?;
    add_thread_keys(&conn)?;
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS runs_by_thread ON runs(thread_id, started_at) \
         WHERE thread_id IS NOT NULL;",
    )?;
    // Version 5: annotations and their history (new tables, nothing to fill).
    conn.execute_batch(crate::annotations::SQLITE_TABLES)?;
    // Version 6: datasets, their versions and examples (new tables, nothing to fill).
    conn.execute_batch(crate::datasets::SQLITE_TABLES)?;
    move_search_index_out(&conn)?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    Ok(conn)
}

/// Version 7: the search index lives in a sibling file filled behind the writer
/// (`search::indexer`); the run database keeps only the queue of what was stored
/// since. The index tables of schemas 4–6 are dropped (the indexer rebuilds the sibling
/// file from the stored events).
fn move_search_index_out(conn: &Connection) -> Result<()> {
    let in_file: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM sqlite_master WHERE name IN ('search_fts', 'search_rows')",
        [],
        |r| r.get(0),
    )?;
    if in_file {
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             DROP TABLE IF EXISTS search_fts;
             DROP TABLE IF EXISTS search_rows;
             COMMIT;",
        )?;
        tracing::info!("run store: the search index moves to its own file (schema 7)");
    }
    conn.execute_batch(SEARCH_QUEUE)?;
    Ok(())
}

/// The queue of stored events the search indexer has not reached (schema 7): one row per
/// run and writer transaction with the seqs it stored, or one without seqs for a deleted
/// run. `AUTOINCREMENT`: an id is never reused once the indexed rows are removed.
const SEARCH_QUEUE: &str = "
CREATE TABLE IF NOT EXISTS search_queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_key INTEGER NOT NULL,
    first_seq INTEGER,
    last_seq INTEGER
);";

/// Version 2: the run row keeps its held time (`held_ms`, [`crate::RunSummary::held_ms`]).
/// A file written before gets the column, filled from its stored holds (each
/// `exec.resumed` less the latest `exec.paused` of its `pauseId` before it), in one
/// transaction.
fn add_held_time(conn: &Connection) -> Result<()> {
    let has_column: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('runs') WHERE name = 'held_ms'",
        [],
        |r| r.get(0),
    )?;
    if has_column {
        return Ok(());
    }
    conn.execute_batch(
        "BEGIN IMMEDIATE;
         ALTER TABLE runs ADD COLUMN held_ms INTEGER NOT NULL DEFAULT 0;
         UPDATE runs SET held_ms = COALESCE((
             SELECT SUM(MAX(r.ts - (
                 SELECT p.ts FROM events p
                 WHERE p.run_key = r.run_key AND p.seq < r.seq
                   AND p.type = (SELECT code FROM event_types WHERE name = 'exec.paused')
                   AND json_extract(p.payload, '$.pauseId') = json_extract(r.payload, '$.pauseId')
                 ORDER BY p.seq DESC LIMIT 1), 0))
             FROM events r
             WHERE r.run_key = runs.key
               AND r.type = (SELECT code FROM event_types WHERE name = 'exec.resumed')), 0);
         COMMIT;",
    )?;
    tracing::info!("run store: added the runs' held time (schema 2)");
    Ok(())
}

/// The SQL spelling of [`crate::threads::run_keys`]'s rule for one id key of `meta_json`:
/// a string of 1 to 256 bytes, or an integer.
fn key_sql(key: &str) -> String {
    format!(
        "CASE WHEN json_type(meta_json, '$.{key}') = 'text' \
           AND length(CAST(json_extract(meta_json, '$.{key}') AS BLOB)) BETWEEN 1 AND {max} \
           THEN json_extract(meta_json, '$.{key}') \
         WHEN json_type(meta_json, '$.{key}') = 'integer' \
           THEN CAST(json_extract(meta_json, '$.{key}') AS TEXT) END",
        max = crate::threads::MAX_KEY_BYTES
    )
}

/// Version 3: the run row keeps its thread, user and tags ([`crate::threads::run_keys`]).
/// A file written before gets the columns, filled from each run's stored meta by the same
/// rule, in one transaction.
fn add_thread_keys(conn: &Connection) -> Result<()> {
    let has_column: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('runs') WHERE name = 'thread_id'",
        [],
        |r| r.get(0),
    )?;
    if has_column {
        return Ok(());
    }
    let thread = crate::threads::THREAD_KEYS
        .iter()
        .map(|k| key_sql(k))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "BEGIN IMMEDIATE;
         ALTER TABLE runs ADD COLUMN thread_id TEXT;
         ALTER TABLE runs ADD COLUMN user_id TEXT;
         ALTER TABLE runs ADD COLUMN tags_json TEXT;
         UPDATE runs SET thread_id = COALESCE({thread}), user_id = {user},
           tags_json = (SELECT json_group_array(value) FROM json_each(meta_json, '$.tags')
                        WHERE json_type(meta_json, '$.tags') = 'array'
                          AND type = 'text' AND length(CAST(value AS BLOB)) BETWEEN 1 AND {max_tag})
         WHERE json_valid(meta_json);
         UPDATE runs SET tags_json = NULL WHERE tags_json = '[]';
         COMMIT;",
        user = key_sql(crate::threads::USER_KEY),
        max_tag = crate::threads::MAX_TAG_BYTES,
    );
    conn.execute_batch(&sql)?;
    tracing::info!("run store: added the runs' thread, user and tags (schema 3)");
    Ok(())
}

/// The schema version of an existing SQLite file (read-only).
pub(crate) fn user_version(path: &Path) -> Result<i64> {
    let conn = open_reader(path, true)?;
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

/// Opens a reading connection. `read_only` opens the file without write access
/// (for tools that read a database another process is writing).
pub(crate) fn open_reader(path: &Path, read_only: bool) -> Result<Connection> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}
