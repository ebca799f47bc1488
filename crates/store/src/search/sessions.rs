//! The session search index: full-text search of every coding-agent session the catalog lists
//! (user messages, the model's text, tool arguments, tool output), each hit naming the exact
//! node — `mindgate tasks --search`, `GET /task-graph/api/search`, MCP `search_tasks`.
//!
//! One SQLite file in the Mindgate home ([`mindgate_home::Home::session_search_db`]), WAL
//! mode, shared by `serve`, the CLI and MCP at once: each writes a session's rows in one short
//! transaction and readers never block. The index is kept incrementally: [`SessionIndex::sync`]
//! compares each listed session's file stamp (modification time and size) with the stamp it
//! indexed and re-reads only sessions that changed (a growing live session is re-indexed
//! whole on the next sync). What a session offers is [`mindgate_taskgraph::search_text`]'s; the
//! table design (FTS5 `trigram`: any substring of three characters or more, case-insensitive)
//! and the snippets ([`super::mark`]) are the run index's.
//!
//! Which sessions a search sees: only those in the caller's task list (a CLI run with other
//! `--sessions` flags than `serve` never sees, nor removes, the other's sessions). Rows of a
//! session whose file is gone are removed by the next sync that lists it no more.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::UNIX_EPOCH;

use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::follow::stamp;
use mindgate_taskgraph::search_text::{SessionText, session_texts};
use mindgate_taskgraph::{DiscoveryConfig, TaskSummary};
use rusqlite::{Connection, params};
use serde::Serialize;

use super::{MIN_INDEXED_QUERY_CHARS, fts_phrase, mark};
use crate::backend::read::escape_like;
use crate::db_file::prepare_path;
use crate::error::Result;

/// Most hits one search returns.
pub const MAX_SESSION_HITS: usize = 500;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS session_files (
    key TEXT PRIMARY KEY,
    stamp TEXT NOT NULL,
    session_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    title TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS session_texts (
    id INTEGER PRIMARY KEY,
    file_key TEXT NOT NULL,
    node_id TEXT NOT NULL,
    turn TEXT,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS session_texts_by_file ON session_texts(file_key);
CREATE VIRTUAL TABLE IF NOT EXISTS session_texts_fts USING fts5(body, tokenize = 'trigram');";

/// One hit: where the text is and a snippet around the match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionHit {
    /// The session's id.
    pub session_id: String,
    /// The agent that wrote it.
    pub agent: String,
    /// Its title.
    pub title: String,
    /// Its file (or OpenCode row path).
    pub path: String,
    /// The node the text belongs to.
    pub node_id: String,
    /// The turn (phase node id) holding the node.
    pub turn: Option<String>,
    /// The event's `seq`.
    pub seq: u64,
    /// `user`, `assistant`, `tool_args` or `tool_output`.
    pub kind: String,
    /// Text around the first match.
    pub snippet: String,
    /// The match's place in `snippet`, in characters (`[start, end)`).
    pub mark: Option<[usize; 2]>,
}

/// What one [`SessionIndex::sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// Sessions read and (re-)indexed.
    pub indexed: usize,
    /// Sessions whose index was current.
    pub unchanged: usize,
    /// Sessions that could not be read (left as they were indexed).
    pub failed: usize,
    /// Sessions whose files are gone, removed from the index.
    pub removed: usize,
}

/// The session search index (one connection, used by one caller at a time).
#[derive(Debug)]
pub struct SessionIndex {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SessionIndex {
    /// Opens (creating) the index at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        prepare_path(path)?;
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(TABLES)?;
        Ok(SessionIndex {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Brings the index up to date with `tasks` (read with `config`): sessions whose file
    /// changed since they were indexed are read again (outside any transaction) and their
    /// rows replaced in one transaction; indexed sessions no longer listed whose file is gone
    /// are removed.
    pub fn sync(&self, tasks: &[TaskSummary], config: &DiscoveryConfig) -> Result<SyncReport> {
        let known: HashMap<String, String> = {
            let conn = self.conn();
            let mut stmt = conn.prepare("SELECT key, stamp FROM session_files")?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut report = SyncReport::default();
        let mut listed = HashSet::with_capacity(tasks.len());
        for t in tasks {
            let key = key_of(&t.path);
            let now = stamp_text(stamp(&t.path, t.agent));
            listed.insert(key.clone());
            if known.get(&key) == Some(&now) {
                report.unchanged += 1;
                continue;
            }
            match load_tree(&t.location(), config) {
                Ok((session, tree)) => {
                    let texts = session_texts(&session, &tree.graph);
                    self.replace(&key, &now, t, &texts)?;
                    report.indexed += 1;
                }
                Err(e) => {
                    tracing::warn!(path = %t.path.display(), error = %e, "session not indexed");
                    report.failed += 1;
                }
            }
        }
        for key in known.keys().filter(|k| !listed.contains(*k)) {
            if !Path::new(key).exists() && !opencode_row_exists(key) {
                self.remove(key)?;
                report.removed += 1;
            }
        }
        Ok(report)
    }

    /// Replaces the rows of session `key` in one transaction.
    fn replace(
        &self,
        key: &str,
        stamp: &str,
        t: &TaskSummary,
        texts: &[SessionText],
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        delete_rows(&tx, key)?;
        tx.execute(
            "INSERT INTO session_files(key, stamp, session_id, agent, title) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![key, stamp, t.id, t.agent.as_str(), t.title],
        )?;
        {
            let mut row = tx.prepare_cached(
                "INSERT INTO session_texts(file_key, node_id, turn, seq, kind) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            let mut fts =
                tx.prepare_cached("INSERT INTO session_texts_fts(rowid, body) VALUES (?1, ?2)")?;
            for x in texts {
                row.execute(params![
                    key,
                    x.node_id,
                    x.turn,
                    i64::try_from(x.seq).unwrap_or(i64::MAX),
                    x.kind.as_str()
                ])?;
                fts.execute(params![tx.last_insert_rowid(), x.text])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        delete_rows(&tx, key)?;
        tx.commit()?;
        Ok(())
    }

    /// Syncs the index with `tasks` ([`Self::sync`]), then searches them ([`Self::search`]):
    /// what every surface calls.
    pub fn search_current(
        &self,
        query: &str,
        tasks: &[TaskSummary],
        config: &DiscoveryConfig,
        limit: usize,
    ) -> Result<(SyncReport, Vec<SessionHit>)> {
        let report = self.sync(tasks, config)?;
        Ok((report, self.search(query, tasks, limit)?))
    }

    /// Sessions and text pieces indexed.
    pub fn counts(&self) -> Result<(u64, u64)> {
        let conn = self.conn();
        let files: i64 = conn.query_row("SELECT COUNT(*) FROM session_files", [], |r| r.get(0))?;
        let texts: i64 = conn.query_row("SELECT COUNT(*) FROM session_texts", [], |r| r.get(0))?;
        Ok((files.max(0) as u64, texts.max(0) as u64))
    }

    /// The texts of the sessions in `tasks` that contain `query` (case-insensitive; a
    /// substring of three characters or more through the index, a shorter one by a scan),
    /// best matches first, at most `limit` (≤ [`MAX_SESSION_HITS`]).
    pub fn search(
        &self,
        query: &str,
        tasks: &[TaskSummary],
        limit: usize,
    ) -> Result<Vec<SessionHit>> {
        let query = query.trim();
        if query.is_empty() || tasks.is_empty() {
            return Ok(Vec::new());
        }
        let limit = limit.clamp(1, MAX_SESSION_HITS);
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute_batch("CREATE TEMP TABLE IF NOT EXISTS listed(key TEXT PRIMARY KEY); DELETE FROM temp.listed;")?;
        {
            let mut add =
                tx.prepare_cached("INSERT OR IGNORE INTO temp.listed(key) VALUES (?1)")?;
            for t in tasks {
                add.execute([key_of(&t.path)])?;
            }
        }
        let (filter, needle) = if query.chars().count() >= MIN_INDEXED_QUERY_CHARS {
            (
                "session_texts_fts MATCH ?1 ORDER BY x.rank",
                fts_phrase(query),
            )
        } else {
            (
                "x.body LIKE ?1 ESCAPE '\\' ORDER BY t.id",
                escape_like(query),
            )
        };
        let sql = format!(
            "SELECT t.file_key, f.session_id, f.agent, f.title, t.node_id, t.turn, t.seq, t.kind, x.body
             FROM session_texts_fts x
             JOIN session_texts t ON t.id = x.rowid
             JOIN session_files f ON f.key = t.file_key
             JOIN temp.listed l ON l.key = t.file_key
             WHERE {filter} LIMIT ?2"
        );
        let hits = {
            let mut stmt = tx.prepare(&sql)?;
            stmt.query_map(params![needle, limit as i64], |r| {
                let body: String = r.get(8)?;
                let (snippet, mark) = mark(&body, query);
                Ok(SessionHit {
                    path: r.get(0)?,
                    session_id: r.get(1)?,
                    agent: r.get(2)?,
                    title: r.get(3)?,
                    node_id: r.get(4)?,
                    turn: r.get(5)?,
                    seq: r.get::<_, i64>(6)?.max(0) as u64,
                    kind: r.get(7)?,
                    snippet,
                    mark,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
        };
        tx.execute_batch("DELETE FROM temp.listed;")?;
        tx.commit()?;
        Ok(hits)
    }
}

fn delete_rows(conn: &Connection, key: &str) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM session_texts_fts WHERE rowid IN (SELECT id FROM session_texts WHERE file_key = ?1)",
        [key],
    )?;
    conn.execute("DELETE FROM session_texts WHERE file_key = ?1", [key])?;
    conn.execute("DELETE FROM session_files WHERE key = ?1", [key])?;
    Ok(())
}

fn key_of(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A session's file stamp as stored: modification time (ns) and size.
fn stamp_text((modified, len): (Option<std::time::SystemTime>, u64)) -> String {
    let ns = modified
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{ns}:{len}")
}

/// Whether `key` names a session row of an OpenCode database that still exists.
fn opencode_row_exists(key: &str) -> bool {
    mindgate_taskgraph::opencode::is_session_path(Path::new(key))
        && Path::new(key).parent().is_some_and(Path::is_file)
}
