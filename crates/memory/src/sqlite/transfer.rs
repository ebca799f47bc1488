//! Export and import on SQLite: the table reads and writes the shared rules of
//! [`crate::transfer`] run over.

use std::io::{BufRead, Write};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, params_from_iter};

use crate::error::Result;
use crate::sqlite::SqliteMemory;
use crate::sqlite::items::{ITEM_COLUMNS, index_text};
use crate::sqlite::migrations::SCHEMA_VERSION;
use crate::transfer::{self, Cell, TransferReport, TransferTables};

/// The tables of one SQLite connection (or transaction).
struct Tables<'a>(&'a Connection);

fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Integer(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    }
}

fn sql_value(c: Cell) -> SqlValue {
    match c {
        Cell::Null => SqlValue::Null,
        Cell::Integer(i) => SqlValue::Integer(i),
        Cell::Real(f) => SqlValue::Real(f),
        Cell::Text(t) => SqlValue::Text(t),
        Cell::Blob(b) => SqlValue::Blob(b),
    }
}

impl TransferTables for Tables<'_> {
    fn columns(&mut self, table: &str) -> Result<Vec<String>> {
        let mut stmt = self.0.prepare(&format!("PRAGMA table_info({table})"))?;
        let cols = stmt
            .query_map([], |r| r.get::<_, String>(1))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(cols)
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let n: i64 = self
            .0
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn rows(
        &mut self,
        table: &str,
        columns: &[String],
        order: &str,
        each: &mut dyn FnMut(Vec<Cell>) -> Result<()>,
    ) -> Result<()> {
        let list = columns
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let mut stmt = self
            .0
            .prepare(&format!("SELECT {list} FROM {table} ORDER BY {order}"))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let cells = (0..columns.len())
                .map(|i| r.get_ref(i).map(cell))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            each(cells)?;
        }
        Ok(())
    }

    fn insert(
        &mut self,
        table: &str,
        columns: &[&str],
        values: Vec<Cell>,
    ) -> std::result::Result<(), String> {
        let names = columns
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let marks = (1..=values.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        self.0
            .execute(
                &format!("INSERT INTO {table} ({names}) VALUES ({marks})"),
                params_from_iter(values.into_iter().map(sql_value)),
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn stored_embedder(&mut self) -> Result<Option<String>> {
        crate::sqlite::stored_embedder(self.0)
    }

    fn rebuild_derived(&mut self) -> Result<()> {
        // The full-text index is derived: rebuild it from the imported rows.
        let mut stmt = self.0.prepare(&format!(
            "SELECT {ITEM_COLUMNS} FROM memory_items i ORDER BY i.rowid"
        ))?;
        let rows = stmt
            .query_map([], crate::sqlite::items::item_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for row in &rows {
            self.0.execute(
                "INSERT INTO memory_fts (rowid, text) VALUES (?1, ?2)",
                rusqlite::params![row.rowid, index_text(row)],
            )?;
        }
        Ok(())
    }
}

impl SqliteMemory {
    /// Writes the whole store as JSON Lines (see [`crate::transfer`]) and says what it
    /// wrote.
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<TransferReport> {
        let conn = self.lock();
        transfer::export(&mut Tables(&conn), SCHEMA_VERSION, out)
    }

    /// How many rows [`SqliteMemory::export_jsonl`] would write after its header (for a
    /// progress bar).
    pub fn export_rows(&self) -> Result<u64> {
        transfer::export_rows(&mut Tables(&self.lock()))
    }

    /// Whether the store holds nothing (no record, block, entity or ledger row).
    pub fn is_empty(&self) -> Result<bool> {
        transfer::is_empty(&mut Tables(&self.lock()))
    }

    /// Reads an export (of either backend) into this store, which must be empty. One
    /// transaction: a bad line (named by its number) writes nothing. Refused when the
    /// export's vectors were made by another embedder than this store's.
    pub fn import_jsonl(&self, input: &mut dyn BufRead) -> Result<TransferReport> {
        let active = self.embedder_id().map(str::to_owned);
        let report = self.write(|tx, _now| {
            transfer::import(&mut Tables(tx), SCHEMA_VERSION, active.as_deref(), input)
        })?;
        self.clear_vector_cache();
        Ok(report)
    }
}
