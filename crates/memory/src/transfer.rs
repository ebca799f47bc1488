//! Export and import, backend-neutral: the whole store as JSON Lines, losslessly, and the
//! rules of reading one back. Each backend provides the table reads and writes
//! ([`TransferTables`]); the line format, its order, the header checks, the validation of
//! every line, the empty-store rule and the embedder check are here, once.
//!
//! The first line is a header (`{"format":"mindgate-memory","version":1,"schemaVersion":N}`),
//! then one line per stored row, `{"table":"<name>","row":{<column>:<value>,…}}`, tables in
//! a fixed order and rows in key order: every record in every state (tombstoned,
//! superseded, quarantined, archived), the history ledger, blocks, sharing, entities and
//! their merge ledger, and the vectors (blobs as `{"$blob":"<hex>"}`). Importing it into an
//! empty store writes the same rows (and rebuilds the derived full-text index from them),
//! so a second export from the same backend is byte-identical to the first. `N` is the
//! table layout's version in SQLite's numbering, on either backend, so an export from one
//! backend imports into the other.

use std::io::{BufRead, Write};

use serde_json::{Map, Number, Value, json};

use crate::error::{MemoryError, Result};

/// The `format` of the export header.
pub const EXPORT_FORMAT: &str = "mindgate-memory";
/// The export format version this build writes and reads.
pub const EXPORT_VERSION: u64 = 1;
/// Longest line an import accepts (a 32,000-character text escaped, or a large vector in
/// hex, fits well within it).
pub const MAX_IMPORT_LINE: usize = 4 * 1024 * 1024;

/// The exported tables and the order of their rows.
pub(crate) const TABLES: &[(&str, &str)] = &[
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

/// The tables whose rows make a store non-empty.
const CONTENT_TABLES: &[&str] = &[
    "memory_items",
    "working_blocks",
    "entities",
    "memory_history",
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

/// One stored value, in the export's terms (SQLite's storage classes).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// The reads and writes of the tables an export moves, as one backend does them.
pub(crate) trait TransferTables {
    /// The exported columns of `table`, in the table's order (derived columns left out).
    fn columns(&mut self, table: &str) -> Result<Vec<String>>;
    /// Rows in `table`.
    fn count(&mut self, table: &str) -> Result<u64>;
    /// Calls `each` with every row of `table` ordered by `order` (column names separated
    /// by commas), cells in the order of `columns`.
    fn rows(
        &mut self,
        table: &str,
        columns: &[String],
        order: &str,
        each: &mut dyn FnMut(Vec<Cell>) -> Result<()>,
    ) -> Result<()>;
    /// Inserts one row; the error is the database's own words.
    fn insert(
        &mut self,
        table: &str,
        columns: &[&str],
        values: Vec<Cell>,
    ) -> std::result::Result<(), String>;
    /// The embedder the stored vectors belong to.
    fn stored_embedder(&mut self) -> Result<Option<String>>;
    /// Rebuilds what is derived from the imported rows (the full-text index, key
    /// counters).
    fn rebuild_derived(&mut self) -> Result<()>;
}

/// Refuses when the stored vectors belong to another embedder than `active` (an id).
pub(crate) fn check_embedder_key(stored: Option<String>, active: Option<&str>) -> Result<()> {
    let (Some(stored), Some(active)) = (stored, active) else {
        return Ok(());
    };
    if stored != active {
        return Err(MemoryError::EmbedderMismatch {
            stored,
            active: active.to_owned(),
            provider: active.split(':').next().unwrap_or(active).to_owned(),
        });
    }
    Ok(())
}

fn to_json(v: Cell) -> Value {
    match v {
        Cell::Null => Value::Null,
        Cell::Integer(i) => Value::from(i),
        Cell::Real(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        Cell::Text(t) => Value::String(t),
        Cell::Blob(b) => {
            let mut hex = String::with_capacity(b.len() * 2);
            for byte in b {
                hex.push_str(&format!("{byte:02x}"));
            }
            json!({ "$blob": hex })
        }
    }
}

fn from_json(v: &Value, line: usize) -> Result<Cell> {
    let bad = |reason: String| MemoryError::invalid("import", format!("line {line}: {reason}"));
    Ok(match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Integer(i64::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) if !n.is_f64() => Cell::Integer(i),
            (_, Some(f)) => Cell::Real(f),
            _ => return Err(bad(format!("number {n} is out of range"))),
        },
        Value::String(s) => Cell::Text(s.clone()),
        Value::Object(o) => match o.get("$blob").and_then(Value::as_str) {
            Some(hex) if o.len() == 1 => {
                Cell::Blob(decode_hex(hex).ok_or_else(|| bad("a `$blob` is not hex".to_owned()))?)
            }
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

/// Writes the whole store as JSON Lines (see the module docs); `schema_version` is the
/// layout's version in SQLite's numbering.
pub(crate) fn export(
    db: &mut dyn TransferTables,
    schema_version: i64,
    out: &mut dyn Write,
) -> Result<TransferReport> {
    let io = |source| MemoryError::Io {
        path: "export".into(),
        source,
    };
    let header = json!({
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "schemaVersion": schema_version,
    });
    writeln!(out, "{header}").map_err(io)?;
    let mut report = TransferReport::default();
    for (table, order) in TABLES {
        let cols = db.columns(table)?;
        db.rows(table, &cols, order, &mut |cells| {
            let mut row = Map::new();
            for (c, v) in cols.iter().zip(cells) {
                row.insert(c.clone(), to_json(v));
            }
            let line = json!({ "table": table, "row": row });
            writeln!(out, "{line}").map_err(io)?;
            report.add(table);
            Ok(())
        })?;
    }
    out.flush().map_err(io)?;
    Ok(report)
}

/// How many rows [`export`] would write after its header (for a progress bar).
pub(crate) fn export_rows(db: &mut dyn TransferTables) -> Result<u64> {
    let mut total = 0;
    for (table, _) in TABLES {
        total += db.count(table)?;
    }
    Ok(total)
}

/// Whether the store holds nothing (no record, block, entity or ledger row).
pub(crate) fn is_empty(db: &mut dyn TransferTables) -> Result<bool> {
    for table in CONTENT_TABLES {
        if db.count(table)? > 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Reads an export into the store behind `db`, which must be empty; the caller runs it in
/// one transaction, so any error (a bad line, named by its number) writes nothing.
/// Refused when the export is newer than `schema_version` or its vectors were made by
/// another embedder than `active`.
pub(crate) fn import(
    db: &mut dyn TransferTables,
    schema_version: i64,
    active: Option<&str>,
    input: &mut dyn BufRead,
) -> Result<TransferReport> {
    if !is_empty(db)? {
        return Err(MemoryError::Conflict(
            "import needs an empty memory store (this one already holds records); import into a new --db".to_owned(),
        ));
    }
    let mut known: Vec<(String, Vec<String>)> = Vec::new();
    for (table, _) in TABLES {
        known.push(((*table).to_owned(), db.columns(table)?));
    }
    let mut report = TransferReport::default();
    let mut line_no = 0usize;
    let mut header_seen = false;
    let mut buf = String::new();
    loop {
        buf.clear();
        let n = read_bounded_line(input, &mut buf)
            .map_err(|e| MemoryError::invalid("import", format!("line {}: {e}", line_no + 1)))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        let bad =
            |reason: String| MemoryError::invalid("import", format!("line {line_no}: {reason}"));
        let value: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        if !header_seen {
            check_header(&value, schema_version).map_err(|e| match e {
                HeaderError::Invalid(reason) => bad(reason),
                HeaderError::Store(e) => e,
            })?;
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
            names.push(col.as_str());
            values.push(from_json(v, line_no)?);
        }
        db.insert(table, &names, values)
            .map_err(|e| bad(format!("{table}: {e}")))?;
        report.add(table);
    }
    if !header_seen {
        return Err(MemoryError::invalid(
            "import",
            "the input is empty (no export header)",
        ));
    }
    let stored = db.stored_embedder()?;
    check_embedder_key(stored, active)?;
    db.rebuild_derived()?;
    Ok(report)
}

enum HeaderError {
    Invalid(String),
    Store(MemoryError),
}

fn check_header(value: &Value, schema_version: i64) -> std::result::Result<(), HeaderError> {
    if value.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
        return Err(HeaderError::Invalid(format!(
            "the first line must be the export header (format {EXPORT_FORMAT:?})"
        )));
    }
    let version = value.get("version").and_then(Value::as_u64);
    if version != Some(EXPORT_VERSION) {
        return Err(HeaderError::Invalid(format!(
            "export version {version:?}; this build reads {EXPORT_VERSION}"
        )));
    }
    let schema = value
        .get("schemaVersion")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if schema > schema_version {
        return Err(HeaderError::Store(MemoryError::SchemaTooNew {
            found: schema,
            supported: schema_version,
        }));
    }
    Ok(())
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
