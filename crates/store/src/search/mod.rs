//! Search across every stored run: the one search module.
//!
//! Each stored event's searchable text ([`indexed_text`]: the run's and nodes' names and
//! the text of inputs, outputs, errors and streamed tokens, taken from the payload's JSON
//! strings, bounded) is indexed by the writer in the transaction that stores the event
//! (SQLite: an FTS5 `trigram` table, so any substring of three characters or more is
//! found, case-insensitively). [`crate::RunStore::search_events`] reads it; a hit carries
//! where it is (run, seq, node, instance) and a snippet with the match marked
//! ([`mark`]). Rules and figures: `docs/search.md`.

use serde_json::Value;

pub mod sessions;

/// Most bytes of one event's text that are indexed (the rest is not found).
pub const MAX_INDEXED_BYTES: usize = 16 * 1024;
/// Shortest query the index answers (a trigram); shorter ones scan the payloads.
pub const MIN_INDEXED_QUERY_CHARS: usize = 3;
/// Characters of context a snippet keeps on each side of the match.
const SNIPPET_CONTEXT: usize = 60;

/// Payload keys whose strings are identifiers or states, not text a person searches.
const NOT_TEXT: &[&str] = &[
    "nodeId",
    "instanceId",
    "parentId",
    "parentInstanceId",
    "pauseId",
    "runId",
    "kind",
    "status",
    "point",
    "t",
    "toolCallId",
    "sdk",
    "traceId",
    "spanId",
    "parentSpanId",
];

/// The searchable text of one event payload (JSON text): its strings, keys in
/// [`NOT_TEXT`] left out, joined by newlines, at most [`MAX_INDEXED_BYTES`]; `None` when
/// it holds none (or is not JSON).
pub fn indexed_text(payload: &str) -> Option<String> {
    let value: Value = serde_json::from_str(payload).ok()?;
    let mut out = String::new();
    collect(&value, &mut out);
    if out.is_empty() { None } else { Some(out) }
}

/// Appends the strings of `value` to `out` until it holds [`MAX_INDEXED_BYTES`].
fn collect(value: &Value, out: &mut String) {
    if out.len() >= MAX_INDEXED_BYTES {
        return;
    }
    match value {
        Value::String(s) => push_bounded(out, s),
        Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                if !NOT_TEXT.contains(&key.as_str()) {
                    collect(v, out);
                }
            }
        }
        Value::Number(_) | Value::Bool(_) | Value::Null => {}
    }
}

fn push_bounded(out: &mut String, s: &str) {
    if s.trim().is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let room = MAX_INDEXED_BYTES.saturating_sub(out.len());
    let mut end = s.len().min(room);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(s.get(..end).unwrap_or_default());
}

/// The FTS5 query that finds `query` as a substring: one quoted phrase.
pub(crate) fn fts_phrase(query: &str) -> String {
    format!("\"{}\"", query.replace('"', "\"\""))
}

/// A snippet of `text` around the first case-insensitive occurrence of `query`, and the
/// match's place in it: `(snippet, [start, end))` in characters; the start of the text
/// and no mark when it does not occur.
pub fn mark(text: &str, query: &str) -> (String, Option<[usize; 2]>) {
    let flat: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    let chars: Vec<char> = flat.chars().collect();
    let needle: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    let lower: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let found = if needle.is_empty() {
        None
    } else {
        lower
            .windows(needle.len())
            .position(|w| w == needle.as_slice())
    };
    let Some(at) = found else {
        let head: String = chars.iter().take(2 * SNIPPET_CONTEXT).collect();
        return (head, None);
    };
    let start = at.saturating_sub(SNIPPET_CONTEXT);
    let end = (at + needle.len() + SNIPPET_CONTEXT).min(chars.len());
    let mut snippet = String::new();
    let mut offset = 0;
    if start > 0 {
        snippet.push('…');
        offset = 1;
    }
    snippet.extend(&chars[start..end]);
    if end < chars.len() {
        snippet.push('…');
    }
    let from = at - start + offset;
    (snippet, Some([from, from + needle.len()]))
}

/// The SQLite index: `search_rows` maps an index row to its event, `search_fts` (FTS5,
/// trigram, contentless: the text is not stored twice) holds the text's trigrams.
pub(crate) const SQLITE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS search_rows (
    id INTEGER PRIMARY KEY,
    run_key INTEGER NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS search_rows_by_run ON search_rows(run_key, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    body, content = '', contentless_delete = 1, tokenize = 'trigram'
);";

/// Indexes one stored event of run `key` (inside the caller's transaction).
pub(crate) fn sqlite_index(
    conn: &rusqlite::Connection,
    key: i64,
    seq: i64,
    payload: &str,
) -> rusqlite::Result<()> {
    let Some(text) = indexed_text(payload) else {
        return Ok(());
    };
    conn.prepare_cached("INSERT INTO search_rows(run_key, seq) VALUES (?1, ?2)")?
        .execute(rusqlite::params![key, seq])?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached("INSERT INTO search_fts(rowid, body) VALUES (?1, ?2)")?
        .execute(rusqlite::params![id, text])?;
    Ok(())
}

/// Removes run `key`'s events from the index (inside the caller's transaction).
pub(crate) fn sqlite_unindex_run(conn: &rusqlite::Connection, key: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_rows WHERE run_key = ?1)",
    )?
    .execute([key])?;
    conn.prepare_cached("DELETE FROM search_rows WHERE run_key = ?1")?
        .execute([key])?;
    Ok(())
}

/// Creates the index of a file that has none and fills it from its stored events, in one
/// transaction (schema 4).
pub(crate) fn sqlite_create_index(conn: &rusqlite::Connection) -> rusqlite::Result<bool> {
    let exists: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM sqlite_master WHERE name = 'search_fts'",
        [],
        |r| r.get(0),
    )?;
    if exists {
        return Ok(false);
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let filled = (|| {
        conn.execute_batch(SQLITE_TABLES)?;
        let mut stmt =
            conn.prepare("SELECT run_key, seq, payload FROM events ORDER BY run_key, seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let payload = row.get_ref(2)?.as_str().unwrap_or_default();
            sqlite_index(conn, row.get(0)?, row.get(1)?, payload)?;
        }
        Ok(())
    })();
    match filled {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
    }
    Ok(true)
}

/// A hit from its stored event: where it is, and the snippet of its text with the match
/// marked.
pub(crate) fn hit(
    run_id: String,
    seq: i64,
    ts: i64,
    type_name: String,
    node_id: Option<String>,
    payload: &str,
    query: &str,
) -> crate::model::EventHit {
    let instance_id = serde_json::from_str::<Value>(payload).ok().and_then(|v| {
        v.get("instanceId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let text = indexed_text(payload).unwrap_or_default();
    let (snippet, mark) = match mark(&text, query) {
        (snippet, Some(at)) => (snippet, Some(at)),
        // Found in the payload outside the indexed text (an id): show the payload.
        _ => mark(payload, query),
    };
    crate::model::EventHit {
        run_id,
        seq: seq.max(0) as u64,
        ts,
        type_name,
        node_id,
        instance_id,
        snippet,
        mark,
    }
}

/// Events of every run (or run `run_id`) whose text contains `query`, newest indexed
/// first, through the FTS5 index (`query` of [`MIN_INDEXED_QUERY_CHARS`] or more).
pub(crate) fn sqlite_search(
    conn: &rusqlite::Connection,
    names: &std::collections::HashMap<i64, String>,
    query: &str,
    run_id: Option<&str>,
    limit: u32,
) -> crate::error::Result<Vec<crate::model::EventHit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.id, e.seq, e.ts, e.type, e.node_id, e.payload FROM search_fts f \
         JOIN search_rows s ON s.id = f.rowid \
         JOIN runs r ON r.key = s.run_key \
         JOIN events e ON e.run_key = s.run_key AND e.seq = s.seq \
         WHERE search_fts MATCH ?1 AND (?2 IS NULL OR r.id = ?2) \
         ORDER BY f.rowid DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        rusqlite::params![fts_phrase(query), run_id, i64::from(limit)],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, String>(5)?,
            ))
        },
    )?;
    let mut hits = Vec::new();
    for row in rows {
        let (run, seq, ts, code, node_id, payload) = row?;
        let type_name = names.get(&code).cloned().unwrap_or_default();
        hits.push(hit(run, seq, ts, type_name, node_id, &payload, query));
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_leaves_ids_out_and_marks_the_match() {
        let text = indexed_text(
            r#"{"nodeId":"tool:x","instanceId":"i1","output":{"hotel":"Booked the Ritz"},"n":3}"#,
        )
        .unwrap_or_default();
        assert_eq!(text, "Booked the Ritz");
        let (snippet, at) = mark(&text, "RITZ");
        let [a, b] = at.unwrap_or_default();
        let hit: String = snippet.chars().skip(a).take(b - a).collect();
        assert_eq!(hit, "Ritz");
        assert_eq!(indexed_text(r#"{"nodeId":"x"}"#), None);
    }
}
