//! Search across every stored run: the one search module.
//!
//! Each stored event's searchable text ([`indexed_text`]: the run's and nodes' names and
//! the text of inputs, outputs, errors and streamed tokens, taken from the payload's JSON
//! strings, bounded) is indexed — on SQLite behind the writer, by the indexer thread
//! ([`indexer`]) into a sibling file ([`index_file`]: FTS5 `trigram`, so any substring of
//! three characters or more is found, case-insensitively), with the not-yet-indexed tail
//! scanned at search time ([`sqlite_query`]); on PostgreSQL in the writer's transaction.
//! [`crate::RunStore::search_events`] reads it; a hit carries where it is (run, seq,
//! node, instance) and a snippet with the match marked ([`mark`]). Rules and figures:
//! `docs/search.md`.

use serde_json::Value;

pub(crate) mod index_file;
pub(crate) mod indexer;
pub mod sessions;
pub(crate) mod sqlite_query;

pub use index_file::index_path;

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
