//! What a SQLite file says about itself: its schema version and its tables (a file no
//! writer has migrated may lack the newer ones; see `datasets::unmigrated` and
//! `annotations::unmigrated`).

use rusqlite::Connection;

use crate::error::Result;

/// Whether the file of `conn` has table `name`.
pub(crate) fn has_table(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get(0),
    )?)
}

/// The schema version of the file of `conn`.
pub(crate) fn version_of(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}
