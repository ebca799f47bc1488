//! The SQLite search index: a sibling file of the run database (`<db>.search`), written
//! only by the indexer thread ([`super::indexer`]), never in the writer's transactions.
//!
//! The run database keeps a queue of what was stored (`search_queue`: one row per run and
//! writer transaction with the seqs it stored, or a row with no seqs when a run was
//! deleted). The index file holds the text's trigrams (`search_fts`, FTS5 `trigram`,
//! contentless), which event each index row is (`search_rows`), and in `search_meta` its
//! version and its watermark: the highest queue id whose events it holds. A search answers
//! from the index up to the watermark and scans the queue's rows after it
//! ([`super::sqlite_query`]).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::error::{Result, StoreError};

/// Version of the index file's layout; a file of another version is rebuilt.
pub(crate) const INDEX_VERSION: i64 = 1;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS search_rows (
    id INTEGER PRIMARY KEY,
    run_key INTEGER NOT NULL,
    seq INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS search_rows_by_event ON search_rows(run_key, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    body, content = '', contentless_delete = 1, tokenize = 'trigram'
);";

/// The index file beside the run database `db`: its name with `.search` appended.
pub fn index_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".search");
    db.with_file_name(name)
}

/// The highest queue id ever given out in the run database (0 when none).
pub(crate) fn queue_high_water(main: &Connection) -> rusqlite::Result<i64> {
    main.query_row(
        "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'search_queue'), 0)",
        [],
        |r| r.get(0),
    )
}

/// Reads the version and watermark of an open index connection: `Ok(None)` when it is
/// not of [`INDEX_VERSION`] or has no watermark yet (being built).
pub(crate) fn read_watermark(index: &Connection) -> rusqlite::Result<Option<i64>> {
    let version: Option<i64> = index
        .query_row(
            "SELECT value FROM search_meta WHERE key = 'version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if version != Some(INDEX_VERSION) {
        return Ok(None);
    }
    index
        .query_row(
            "SELECT value FROM search_meta WHERE key = 'watermark'",
            [],
            |r| r.get(0),
        )
        .optional()
}

/// Opens the index file read-only for a search; `None` when it does not exist.
pub(crate) fn open_for_search(db: &Path) -> Option<Connection> {
    let path = index_path(db);
    if !path.exists() {
        return None;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&path, flags).ok()?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).ok()?;
    Some(conn)
}

/// The indexer's read-write connection to the index file.
pub(crate) struct IndexFile {
    pub(crate) conn: Connection,
    path: PathBuf,
}

impl IndexFile {
    /// Opens the index file of `db` and returns it with its watermark; a file that is
    /// missing, unreadable (corrupt), of another version, or ahead of the run database
    /// (a watermark above `high_water`: the index of another database) is replaced by an
    /// empty one (watermark `None`: to be rebuilt).
    pub(crate) fn open(db: &Path, high_water: i64) -> Result<(IndexFile, Option<i64>)> {
        let path = index_path(db);
        match Self::open_existing(&path) {
            Ok((file, Some(mark))) if mark <= high_water => return Ok((file, Some(mark))),
            Ok((_, Some(mark))) => tracing::warn!(
                path = %path.display(),
                watermark = mark,
                high_water,
                "search index is ahead of its database; rebuilding it"
            ),
            Ok((_, None)) => {
                tracing::info!(path = %path.display(), "search index missing or of another version; building it")
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "search index unreadable; rebuilding it")
            }
        }
        Ok((Self::recreate(&path)?, None))
    }

    fn open_existing(path: &Path) -> Result<(IndexFile, Option<i64>)> {
        crate::db_file::prepare_path(path)?;
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let has_meta: bool = conn.query_row(
            "SELECT COUNT(*) > 0 FROM sqlite_master WHERE name = 'search_meta'",
            [],
            |r| r.get(0),
        )?;
        let mark = if has_meta {
            read_watermark(&conn)?
        } else {
            None
        };
        Ok((
            IndexFile {
                conn,
                path: path.to_path_buf(),
            },
            mark,
        ))
    }

    /// Deletes the file (and its WAL) and creates an empty index of this version.
    fn recreate(path: &Path) -> Result<IndexFile> {
        for suffix in ["", "-wal", "-shm"] {
            let mut name = path.as_os_str().to_os_string();
            name.push(suffix);
            match std::fs::remove_file(&name) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(StoreError::Io {
                        path: PathBuf::from(name),
                        source,
                    });
                }
            }
        }
        let (file, _) = Self::open_existing(path)?;
        file.conn.execute_batch(TABLES)?;
        file.conn.execute(
            "INSERT OR REPLACE INTO search_meta(key, value) VALUES ('version', ?1)",
            [INDEX_VERSION],
        )?;
        Ok(file)
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Indexes event `(key, seq)` unless it is already (inside the caller's transaction).
    pub(crate) fn index(&self, key: i64, seq: i64, payload: &str) -> rusqlite::Result<()> {
        let Some(text) = super::indexed_text(payload) else {
            return Ok(());
        };
        let added = self
            .conn
            .prepare_cached("INSERT OR IGNORE INTO search_rows(run_key, seq) VALUES (?1, ?2)")?
            .execute(params![key, seq])?;
        if added == 1 {
            let id = self.conn.last_insert_rowid();
            self.conn
                .prepare_cached("INSERT INTO search_fts(rowid, body) VALUES (?1, ?2)")?
                .execute(params![id, text])?;
        }
        Ok(())
    }

    /// Removes run `key`'s events from the index (inside the caller's transaction).
    pub(crate) fn unindex_run(&self, key: i64) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached(
                "DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_rows WHERE run_key = ?1)",
            )?
            .execute([key])?;
        self.conn
            .prepare_cached("DELETE FROM search_rows WHERE run_key = ?1")?
            .execute([key])?;
        Ok(())
    }

    /// Records the watermark (inside the caller's transaction).
    pub(crate) fn set_watermark(&self, mark: i64) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO search_meta(key, value) VALUES ('watermark', ?1)",
            )?
            .execute([mark])?;
        Ok(())
    }
}
