//! Export and import: the whole store as JSON Lines, losslessly.
//!
//! The first line is a header (`{"format":"mindgate-memory","version":1,"schemaVersion":N}`),
//! then one line per stored row, `{"table":"<name>","row":{<column>:<value>,…}}`, tables in
//! a fixed order and rows in key order: every record in every state (tombstoned,
//! superseded, quarantined, archived), the history ledger, blocks, sharing, entities and
//! their merge ledger, and the vectors (blobs as `{"$blob":"<hex>"}`). Importing it into an
//! empty store writes the same rows (and rebuilds the full-text index from them), so a
//! second export is byte-identical to the first.

use std::io::{BufRead, Write};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, params_from_iter};
use serde_json::{Map, Number, Value, json};

use crate::error::{MemoryError, Result};
use crate::sqlite::items::{ITEM_COLUMNS, index_text};
use crate::sqlite::migrations::SCHEMA_VERSION;
use crate::sqlite::{SqliteMemory, check_embedder_key};

/// The `format` of the export header.
pub const EXPORT_FORMAT: &str = "mindgate-memory";
/// The export format version this build writes and reads.
pub const EXPORT_VERSION: u64 = 1;
/// Longest line [`SqliteMemory::import_jsonl`] accepts (a 32,000-character text escaped, or
/// a large vector in hex, fits well within it).
pub const MAX_IMPORT_LINE: usize = 4 * 1024 * 1024;

/// The exported tables and the order of their rows.
const TABLES: &[(&str, &str)] = &[
    ("memory_meta", "key"),
    ("memory_items", "rowid"),
    ("memory_tags", "item_rowid, tag"),
    ("memory_vectors", "id"),
    ("working_blocks", "rowid"),
    ("shared_attachments", "rowid"),
    ("entities", "rowid"),
    ("fact_entities", "fact_id, role"),
    ("entity_merges", "seq"),
    ("entity_vectors", "embedder, entity_id"),
    ("memory_history", "seq"),
];

/// What an export or an import moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransferReport {
    /// Rows per table, in export order.
    pub tables: Vec<(String, u64)>,
    /// Every row.
    pub rows: u64,
}

impl TransferReport {
    fn add(&mut self, table: &str) {
        self.rows += 1;
        match self.tables.iter_mut().find(|(t, _)| t == table) {
            Some((_, n)) => *n += 1,
            None => self.tables.push((table.to_owned(), 1)),
        }
    }
}

fn columns(conn: &Connection, table: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let cols = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(cols)
}

fn to_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => {
            let mut hex = String::with_capacity(b.len() * 2);
            for byte in b {
                hex.push_str(&format!("{byte:02x}"));
            }
            json!({ "$blob": hex })
        }
    }
}

fn from_json(v: &Value, line: usize) -> Result<SqlValue> {
    let bad = |reason: String| MemoryError::invalid("import", format!("line {line}: {reason}"));
    Ok(match v {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) if !n.is_f64() => SqlValue::Integer(i),
            (_, Some(f)) => SqlValue::Real(f),
            _ => return Err(bad(format!("number {n} is out of range"))),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        Value::Object(o) => match o.get("$blob").and_then(Value::as_str) {
            Some(hex) if o.len() == 1 => SqlValue::Blob(
                decode_hex(hex).ok_or_else(|| bad("a `$blob` is not hex".to_owned()))?,
            ),
            _ => {
                return Err(bad(
                    "an object value must be {\"$blob\": \"<hex>\"}".to_owned()
                ));
            }
        },
        Value::Array(_) => return Err(bad("array values are not row values".to_owned())),
    })
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect()
}

impl SqliteMemory {
    /// Writes the whole store as JSON Lines (see the module docs) and says what it wrote.
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<TransferReport> {
        let io = |source| MemoryError::Io {
            path: "export".into(),
            source,
        };
        let conn = self.lock();
        let header = json!({
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "schemaVersion": SCHEMA_VERSION,
        });
        writeln!(out, "{header}").map_err(io)?;
        let mut report = TransferReport::default();
        for (table, order) in TABLES {
            let cols = columns(&conn, table)?;
            let list = cols
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let mut stmt = conn.prepare(&format!("SELECT {list} FROM {table} ORDER BY {order}"))?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let mut row = Map::new();
                for (i, c) in cols.iter().enumerate() {
                    row.insert(c.clone(), to_json(r.get_ref(i)?));
                }
                let line = json!({ "table": table, "row": row });
                writeln!(out, "{line}").map_err(io)?;
                report.add(table);
            }
        }
        out.flush().map_err(io)?;
        Ok(report)
    }

    /// How many rows [`SqliteMemory::export_jsonl`] would write after its header (for a
    /// progress bar).
    pub fn export_rows(&self) -> Result<u64> {
        let conn = self.lock();
        let mut total = 0u64;
        for (table, _) in TABLES {
            let n: i64 =
                conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
            total += u64::try_from(n).unwrap_or(0);
        }
        Ok(total)
    }

    /// Whether the store holds nothing (no record, block, entity or ledger row).
    pub fn is_empty(&self) -> Result<bool> {
        let conn = self.lock();
        for table in [
            "memory_items",
            "working_blocks",
            "entities",
            "memory_history",
        ] {
            let n: i64 =
                conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
            if n > 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads an export made by [`SqliteMemory::export_jsonl`] into this store, which must be
    /// empty. One transaction: a bad line (named by its number) writes nothing. Refused when
    /// the export's vectors were made by another embedder than this store's.
    pub fn import_jsonl(&self, input: &mut dyn BufRead) -> Result<TransferReport> {
        if !self.is_empty()? {
            return Err(MemoryError::Conflict(
                "import needs an empty memory store (this one already holds records); import into a new --db".to_owned(),
            ));
        }
        let active = self.embedder_id().map(str::to_owned);
        let report = self.write(|tx, _now| {
            let mut known: Vec<(String, Vec<String>)> = Vec::new();
            for (table, _) in TABLES {
                known.push(((*table).to_owned(), columns(tx, table)?));
            }
            let mut report = TransferReport::default();
            let mut line_no = 0usize;
            let mut header_seen = false;
            let mut buf = String::new();
            loop {
                buf.clear();
                let n = read_bounded_line(input, &mut buf).map_err(|e| {
                    MemoryError::invalid("import", format!("line {}: {e}", line_no + 1))
                })?;
                if n == 0 {
                    break;
                }
                line_no += 1;
                let text = buf.trim();
                if text.is_empty() {
                    continue;
                }
                let bad = |reason: String| {
                    MemoryError::invalid("import", format!("line {line_no}: {reason}"))
                };
                let value: Value =
                    serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
                if !header_seen {
                    if value.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
                        return Err(bad(format!(
                            "the first line must be the export header (format {EXPORT_FORMAT:?})"
                        )));
                    }
                    let version = value.get("version").and_then(Value::as_u64);
                    if version != Some(EXPORT_VERSION) {
                        return Err(bad(format!(
                            "export version {version:?}; this build reads {EXPORT_VERSION}"
                        )));
                    }
                    let schema = value
                        .get("schemaVersion")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    if schema > SCHEMA_VERSION {
                        return Err(MemoryError::SchemaTooNew {
                            found: schema,
                            supported: SCHEMA_VERSION,
                        });
                    }
                    header_seen = true;
                    continue;
                }
                let table = value
                    .get("table")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("a row line needs `table`".to_owned()))?;
                let row = value
                    .get("row")
                    .and_then(Value::as_object)
                    .ok_or_else(|| bad("a row line needs a `row` object".to_owned()))?;
                let Some((table, cols)) = known.iter().find(|(t, _)| t == table) else {
                    return Err(bad(format!("unknown table {table:?}")));
                };
                let mut names = Vec::with_capacity(row.len());
                let mut values = Vec::with_capacity(row.len());
                for (col, v) in row {
                    if !cols.contains(col) {
                        return Err(bad(format!("table {table} has no column {col:?}")));
                    }
                    names.push(format!("\"{col}\""));
                    values.push(from_json(v, line_no)?);
                }
                let marks = (1..=values.len())
                    .map(|i| format!("?{i}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                tx.execute(
                    &format!(
                        "INSERT INTO {table} ({}) VALUES ({marks})",
                        names.join(", ")
                    ),
                    params_from_iter(values),
                )
                .map_err(|e| bad(format!("{table}: {e}")))?;
                report.add(table);
            }
            if !header_seen {
                return Err(MemoryError::invalid(
                    "import",
                    "the input is empty (no export header)",
                ));
            }
            check_embedder_key(tx, active.as_deref())?;
            // The full-text index is derived: rebuild it from the imported rows.
            let mut stmt = tx.prepare(&format!(
                "SELECT {ITEM_COLUMNS} FROM memory_items i ORDER BY i.rowid"
            ))?;
            let rows = stmt
                .query_map([], crate::sqlite::items::item_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            for row in &rows {
                tx.execute(
                    "INSERT INTO memory_fts (rowid, text) VALUES (?1, ?2)",
                    rusqlite::params![row.rowid, index_text(row)],
                )?;
            }
            Ok(report)
        })?;
        self.clear_vector_cache();
        Ok(report)
    }
}

/// Reads one line of at most [`MAX_IMPORT_LINE`] bytes.
fn read_bounded_line(input: &mut dyn BufRead, buf: &mut String) -> std::io::Result<usize> {
    let mut bytes = Vec::new();
    let mut limited = std::io::Read::take(&mut *input, (MAX_IMPORT_LINE + 1) as u64);
    let n = limited.read_until(b'\n', &mut bytes)?;
    if bytes.len() > MAX_IMPORT_LINE {
        return Err(std::io::Error::other(format!(
            "longer than {MAX_IMPORT_LINE} bytes"
        )));
    }
    buf.push_str(&String::from_utf8(bytes).map_err(|_| std::io::Error::other("not UTF-8"))?);
    Ok(n)
}
