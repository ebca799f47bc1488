//! OpenCode's stores on disk (`$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode`):
//! finding the sessions and reading one with its sub-sessions. The conversion to events is
//! pure and lives in [`crate::parse::opencode`].
//!
//! * **JSON storage tree** (≤ 1.x): `storage/session/<project>/<id>.json`,
//!   `storage/message/<session>/<id>.json`, `storage/part/<message>/<id>.json`. A session is
//!   located by its session file.
//! * **SQLite** (`opencode.db`, newer versions): a session is located by the virtual path
//!   `<data>/opencode.db/<session id>`. The database is opened **read-only** (`mode=ro` URI;
//!   this crate never writes a user's file) and with its write-ahead log, which OpenCode keeps
//!   while it runs: messages not yet checkpointed live only in `opencode.db-wal`, and a reader
//!   that ignored it would miss them. SQLite needs to write the `-shm` index to read a WAL
//!   database; when it cannot (read-only files or folder), the database and its WAL are copied
//!   to a temporary folder and the copy is read (SQLite rebuilds the index from the WAL). A
//!   locked or corrupt database is an error for that session, never a panic.
//!
//! A session with a parent (`parent_id` / `parentID`, a `task` call's subagent) is read as a
//! child of its parent, and listed on its own too (marked with its parent), as every agent's
//! subagent sessions are.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};
use serde_json::{Map, Value, json};

use crate::bounded::{self, MAX_SESSION_BYTES};
use crate::error::{Error, Result};
use crate::parse::opencode::{MessageRecord, build};
use crate::session::{ReadWarning, Session};

/// The SQLite file of newer OpenCode versions, in the data folder.
pub const DB_FILE: &str = "opencode.db";

/// Largest single JSON file of the storage tree read (a session, message or part).
const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// How long a read waits for OpenCode's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// How deep sub-sessions are followed (guards against cycles in `parent_id`).
const MAX_CHILD_DEPTH: usize = 8;

/// The database and session id a virtual `<…>/opencode.db/<id>` path names, if it is one.
pub fn db_target(path: &Path) -> Option<(PathBuf, String)> {
    let db = path.parent()?;
    let is_db = db
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".db"));
    let id = path.file_name()?.to_str()?;
    (is_db && fs::metadata(db).is_ok_and(|m| m.is_file()))
        .then(|| (db.to_path_buf(), id.to_owned()))
}

/// The files whose change means a session located at `path` changed: the database and its
/// WAL for a database session, the session file otherwise.
pub fn watched_files(path: &Path) -> Vec<PathBuf> {
    match db_target(path) {
        Some((db, _)) => vec![db.clone(), wal_of(&db)],
        None => vec![path.to_path_buf()],
    }
}

fn wal_of(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

/// The sessions under an OpenCode data folder (sub-sessions included), as session paths
/// (storage files and virtual database paths), and the reasons a store could not be listed.
pub fn list_sessions(data: &Path) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut out = Vec::new();
    let mut failed = Vec::new();
    let db = data.join(DB_FILE);
    if db.exists() {
        match Db::open(&db).and_then(|d| d.all_sessions()) {
            Ok(ids) => out.extend(ids.into_iter().map(|id| db.join(id))),
            Err(e) => failed.push((db.clone(), e.to_string())),
        }
    }
    let sessions = data.join("storage").join("session");
    let files = storage_session_files(&sessions);
    for f in files {
        match read_json(&f) {
            Ok(_) => out.push(f),
            Err(e) => failed.push((f, e.to_string())),
        }
    }
    (out, failed)
}

/// `storage/session/<project>/<id>.json` files, sorted.
fn storage_session_files(sessions: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for project in sorted_entries(sessions) {
        if !fs::symlink_metadata(&project).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        out.extend(
            sorted_entries(&project)
                .into_iter()
                .filter(|f| is_json_file(f)),
        );
    }
    out
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    v.sort();
    v
}

fn is_json_file(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json") && fs::metadata(p).is_ok_and(|m| m.is_file())
}

fn read_json(path: &Path) -> Result<Value> {
    let bytes = bounded::read_regular(path, MAX_RECORD_BYTES)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Database {
        path: path.to_path_buf(),
        message: format!("invalid JSON: {e}"),
    })
}

/// Whether `path` is an OpenCode session: a virtual database path, or a storage tree
/// session file (`…/storage/session/<project>/<id>.json`).
pub fn is_session_path(path: &Path) -> bool {
    if db_target(path).is_some() {
        return true;
    }
    let mut up = path.ancestors().skip(1);
    let (_, session, storage) = (up.next(), up.next(), up.next());
    is_json_file(path)
        && session
            .and_then(Path::file_name)
            .is_some_and(|n| n == "session")
        && storage
            .and_then(Path::file_name)
            .is_some_and(|n| n == "storage")
}

/// Reads the OpenCode session at `path` (a storage session file or a virtual database path)
/// with its sub-sessions.
pub fn read(path: &Path) -> Result<Session> {
    match db_target(path) {
        Some((db, id)) => {
            let d = Db::open(&db)?;
            d.session(&id, path, 0)
        }
        None => read_storage(path, 0),
    }
}

// ----- storage tree --------------------------------------------------------------------------

fn read_storage(path: &Path, depth: usize) -> Result<Session> {
    let info = read_json(path)?;
    let storage = path
        .ancestors()
        .nth(3)
        .ok_or_else(|| Error::NotASession {
            path: path.to_path_buf(),
        })?
        .to_path_buf();
    let id = info
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut warnings = Vec::new();
    let mut budget = MAX_SESSION_BYTES;
    let mut messages = Vec::new();
    for f in sorted_entries(&storage.join("message").join(&id)) {
        if !is_json_file(&f) {
            continue;
        }
        let Some(message) = storage_record(&f, &mut budget, &mut warnings) else {
            continue;
        };
        let mid = message
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let parts = sorted_entries(&storage.join("part").join(mid))
            .into_iter()
            .filter(|p| is_json_file(p))
            .filter_map(|p| storage_record(&p, &mut budget, &mut warnings))
            .collect();
        messages.push(MessageRecord { message, parts });
    }
    messages.sort_by_key(|m| {
        (
            m.message.pointer("/time/created").and_then(Value::as_i64),
            m.message
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    });
    let mut s = build(&info, &messages);
    s.path = path.to_path_buf();
    s.warnings.append(&mut warnings);
    if depth < MAX_CHILD_DEPTH && !id.is_empty() {
        for f in storage_session_files(&storage.join("session")) {
            let is_child = read_json(&f)
                .ok()
                .is_some_and(|v| v.get("parentID").and_then(Value::as_str) == Some(id.as_str()));
            if is_child && f != path {
                match read_storage(&f, depth + 1) {
                    Ok(c) => s.children.push(c),
                    Err(e) => {
                        s.warnings
                            .push(ReadWarning::new(f.display().to_string(), 0, e.to_string()))
                    }
                }
            }
        }
    }
    Ok(s)
}

/// One JSON record of the storage tree within the session's byte budget; problems become
/// warnings.
fn storage_record(f: &Path, budget: &mut u64, warnings: &mut Vec<ReadWarning>) -> Option<Value> {
    let label = f.display().to_string();
    match bounded::read_regular(f, MAX_RECORD_BYTES.min(*budget)) {
        Ok(bytes) => {
            *budget = budget.saturating_sub(bytes.len() as u64);
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(v @ Value::Object(_)) => Some(v),
                Ok(_) => {
                    warnings.push(ReadWarning::new(label, 0, "not a JSON object"));
                    None
                }
                Err(e) => {
                    warnings.push(ReadWarning::new(label, 0, format!("invalid JSON: {e}")));
                    None
                }
            }
        }
        Err(e) => {
            warnings.push(ReadWarning::new(label, 0, e.to_string()));
            None
        }
    }
}

// ----- SQLite --------------------------------------------------------------------------------

/// An open OpenCode database (read-only, or a private copy).
struct Db {
    conn: Connection,
    path: PathBuf,
    /// The private copy's folder, removed on drop.
    _copy: Option<tempfile::TempDir>,
}

impl Db {
    fn open(db: &Path) -> Result<Db> {
        // Regular files only (a FIFO named opencode.db is refused without blocking).
        let (_, len) = bounded::open_regular(db)?;
        let _ = len;
        match Self::open_read_only(db) {
            Ok(conn) => Ok(Db {
                conn,
                path: db.to_path_buf(),
                _copy: None,
            }),
            Err(e) if is_locked(&e) => Err(db_error(db, &e)),
            Err(_) => Self::open_copy(db),
        }
    }

    fn open_read_only(db: &Path) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(file_uri(db, "mode=ro"), flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Opening is lazy: this read is what touches the WAL and its index.
        conn.query_row("SELECT count(*) FROM session", [], |r| r.get::<_, i64>(0))?;
        Ok(conn)
    }

    /// Copies the database and its WAL to a temporary folder and reads the copy.
    fn open_copy(db: &Path) -> Result<Db> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(db, e))?;
        let copy = dir.path().join(DB_FILE);
        copy_regular(db, &copy)?;
        let wal = wal_of(db);
        if wal.exists() {
            copy_regular(&wal, &wal_of(&copy))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(file_uri(&copy, "mode=rw"), flags)
            .map_err(|e| db_error(db, &e))?;
        conn.query_row("SELECT count(*) FROM session", [], |r| r.get::<_, i64>(0))
            .map_err(|e| db_error(db, &e))?;
        Ok(Db {
            conn,
            path: db.to_path_buf(),
            _copy: Some(dir),
        })
    }

    fn err(&self, e: &rusqlite::Error) -> Error {
        db_error(&self.path, e)
    }

    /// Ids of every session, oldest first.
    fn all_sessions(&self) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT id FROM session ORDER BY time_created, id")
            .map_err(|e| self.err(&e))?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(&e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(&e))
    }

    fn session(&self, id: &str, path: &Path, depth: usize) -> Result<Session> {
        let info = self
            .session_info(id)?
            .ok_or_else(|| Error::NotFound { id: id.to_owned() })?;
        let mut warnings = Vec::new();
        let messages = self.messages(id, &mut warnings)?;
        let mut s = build(&info, &messages);
        s.path = path.to_path_buf();
        s.warnings.append(&mut warnings);
        if depth < MAX_CHILD_DEPTH {
            for child in self.children(id)? {
                let child_path = self.path.join(&child);
                match self.session(&child, &child_path, depth + 1) {
                    Ok(c) => s.children.push(c),
                    Err(e) => s.warnings.push(ReadWarning::new(
                        child_path.display().to_string(),
                        0,
                        e.to_string(),
                    )),
                }
            }
        }
        Ok(s)
    }

    fn session_info(&self, id: &str) -> Result<Option<Value>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, parent_id, directory, title, version, time_created, time_updated \
                 FROM session WHERE id = ?1",
            )
            .map_err(|e| self.err(&e))?;
        let mut rows = st.query(params![id]).map_err(|e| self.err(&e))?;
        let Some(r) = rows.next().map_err(|e| self.err(&e))? else {
            return Ok(None);
        };
        let text = |i: usize| r.get::<_, Option<String>>(i).ok().flatten();
        let num = |i: usize| r.get::<_, Option<i64>>(i).ok().flatten();
        Ok(Some(json!({
            "id": text(0),
            "parentID": text(1),
            "directory": text(2),
            "title": text(3),
            "version": text(4),
            "time": {"created": num(5), "updated": num(6)},
        })))
    }

    fn children(&self, id: &str) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT id FROM session WHERE parent_id = ?1 ORDER BY time_created, id")
            .map_err(|e| self.err(&e))?;
        let rows = st
            .query_map(params![id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(&e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(&e))
    }

    /// The session's messages in order, each with its parts (ids put back into the JSON).
    fn messages(&self, id: &str, warnings: &mut Vec<ReadWarning>) -> Result<Vec<MessageRecord>> {
        let label = self.path.display().to_string();
        let mut budget = MAX_SESSION_BYTES;
        let mut out: Vec<MessageRecord> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let rows = self.rows(
            "SELECT id, '', time_created, data FROM message WHERE session_id = ?1 \
             ORDER BY time_created, id",
            id,
        )?;
        for (mid, _, created, data) in rows {
            let Some(mut v) = record(&data, &mid, &label, &mut budget, warnings) else {
                continue;
            };
            v.insert("id".into(), mid.clone().into());
            v.insert("sessionID".into(), id.into());
            if !v.contains_key("time") {
                v.insert("time".into(), json!({ "created": created }));
            }
            index.insert(mid, out.len());
            out.push(MessageRecord {
                message: Value::Object(v),
                parts: Vec::new(),
            });
        }
        let rows = self.rows(
            "SELECT id, message_id, time_created, data FROM part WHERE session_id = ?1 \
             ORDER BY id",
            id,
        )?;
        for (pid, mid, _, data) in rows {
            let Some(mut v) = record(&data, &pid, &label, &mut budget, warnings) else {
                continue;
            };
            v.insert("id".into(), pid.into());
            v.insert("messageID".into(), mid.clone().into());
            match index.get(&mid) {
                Some(&i) => out[i].parts.push(Value::Object(v)),
                None => warnings.push(ReadWarning::new(
                    &label,
                    0,
                    format!("part of unknown message {mid} skipped"),
                )),
            }
        }
        Ok(out)
    }

    fn rows(&self, sql: &str, id: &str) -> Result<Vec<(String, String, i64, String)>> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(&e))?;
        let rows = st
            .query_map(params![id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(|e| self.err(&e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(&e))
    }
}

/// Parses one `data` column within the byte budget; problems become warnings.
fn record(
    data: &str,
    id: &str,
    label: &str,
    budget: &mut u64,
    warnings: &mut Vec<ReadWarning>,
) -> Option<Map<String, Value>> {
    if data.len() as u64 > *budget {
        warnings.push(ReadWarning::new(
            label,
            0,
            format!("{id}: session larger than the {MAX_SESSION_BYTES}-byte limit; rest skipped"),
        ));
        *budget = 0;
        return None;
    }
    *budget -= data.len() as u64;
    match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(o)) => Some(o),
        Ok(_) => {
            warnings.push(ReadWarning::new(
                label,
                0,
                format!("{id}: data is not a JSON object"),
            ));
            None
        }
        Err(e) => {
            warnings.push(ReadWarning::new(
                label,
                0,
                format!("{id}: invalid JSON: {e}"),
            ));
            None
        }
    }
}

fn is_locked(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn db_error(db: &Path, e: &rusqlite::Error) -> Error {
    let message = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            format!("database is locked by another process ({e})")
        }
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
            format!("not a readable SQLite database: corrupt or not OpenCode's ({e})")
        }
        _ => format!("cannot read the OpenCode database: {e}"),
    };
    Error::Database {
        path: db.to_path_buf(),
        message,
    }
}

/// A `file:` URI for SQLite with `query`, the path's special characters escaped.
fn file_uri(path: &Path, query: &str) -> String {
    let mut out = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out.push('?');
    out.push_str(query);
    out
}

/// Copies a regular file (never a FIFO or device) within the size cap.
fn copy_regular(from: &Path, to: &Path) -> Result<()> {
    let (mut f, len) = bounded::open_regular(from)?;
    if len > 4 * MAX_SESSION_BYTES {
        return Err(Error::TooLarge {
            path: from.to_path_buf(),
            limit: 4 * MAX_SESSION_BYTES,
        });
    }
    let mut out = fs::File::create(to).map_err(|e| Error::io(to, e))?;
    std::io::copy(
        &mut std::io::Read::take(&mut f, 4 * MAX_SESSION_BYTES),
        &mut out,
    )
    .map_err(|e| Error::io(from, e))?;
    Ok(())
}

/// Latest modification time and total size of the files behind a session path (the
/// database and its WAL for a database session): what changes when OpenCode writes.
pub fn stamp(path: &Path) -> (Option<std::time::SystemTime>, u64) {
    let mut modified = None;
    let mut len = 0;
    for f in watched_files(path) {
        if let Ok(m) = fs::metadata(&f) {
            len += m.len();
            modified = modified.max(m.modified().ok());
        }
    }
    (modified, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy path (taken when SQLite cannot write the `-shm` next to the user's database,
    /// which the read-only-files test cannot force when it runs as root) reads the WAL too.
    #[test]
    fn the_private_copy_reads_the_wal() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = dir.path().join(DB_FILE);
        let writer = Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
        writer
            .execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
                 CREATE TABLE session (id text, parent_id text, directory text, title text,
                   version text, time_created integer, time_updated integer);
                 INSERT INTO session VALUES ('ses_1', NULL, '/w', 't', '1', 1, 2);",
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(fs::metadata(wal_of(&db)).is_ok_and(|m| m.len() > 0));
        let copy = Db::open_copy(&db).unwrap_or_else(|e| panic!("{e}"));
        assert!(copy._copy.is_some());
        assert_eq!(copy.all_sessions().ok(), Some(vec!["ses_1".to_owned()]));
        drop(writer);
    }
}
