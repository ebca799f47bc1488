//! Export and import on PostgreSQL: the table reads and writes the shared rules of
//! [`crate::transfer`] run over. Cells keep SQLite's storage classes, so the files are
//! interchangeable: `jsonb` columns travel as their text, `boolean` as 0 / 1, `bytea` as
//! a blob; the derived `search_text` column is left out and rebuilt on import, and the
//! key sequences are moved past the imported keys.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use postgres::types::ToSql;
use postgres::{GenericClient, IsolationLevel, Statement};

use crate::error::{MemoryError, Result};
use crate::postgres::PgMemory;
use crate::postgres::items::{ITEM_COLUMNS, TS_CONFIG, item_from_row};
use crate::rules::row::index_text;
use crate::transfer::{self, Cell, TransferReport, TransferTables};

/// The table layout version of this backend's schema in SQLite's numbering (PostgreSQL
/// migration 1 holds every table of SQLite schema version 4, migration 2 the recall table
/// of version 5, migration 3 the conflict columns of version 6, migration 4 the neighbour
/// index of version 7): what an export's header says and the newest an import reads.
pub(crate) const LAYOUT_VERSION: i64 = 7;

/// Columns derived from others, never exported.
const DERIVED: &[&str] = &["search_text"];

/// The key columns filled by a sequence (`BIGSERIAL`).
const SERIAL_KEYS: &[(&str, &str)] = &[
    ("memory_items", "rowid"),
    ("working_blocks", "rowid"),
    ("shared_attachments", "rowid"),
    ("memory_history", "seq"),
    ("entities", "rowid"),
    ("entity_merges", "seq"),
    ("memory_vectors", "id"),
];

/// The tables of one PostgreSQL connection (or transaction), with the column types read
/// once per table.
struct Tables<'a, C: GenericClient> {
    client: &'a mut C,
    types: HashMap<String, Vec<(String, String)>>,
    /// Insert statements prepared once per table and column list.
    inserts: HashMap<String, Statement>,
}

impl<'a, C: GenericClient> Tables<'a, C> {
    fn new(client: &'a mut C) -> Self {
        Self {
            client,
            types: HashMap::new(),
            inserts: HashMap::new(),
        }
    }

    /// `(column, data_type)` of `table` in the current schema, in order, derived ones
    /// left out.
    fn typed_columns(&mut self, table: &str) -> Result<&[(String, String)]> {
        if !self.types.contains_key(table) {
            let rows = self.client.query(
                "SELECT column_name::text, data_type::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                &[&table],
            )?;
            let mut cols = Vec::with_capacity(rows.len());
            for r in rows {
                let name: String = r.try_get(0)?;
                if !DERIVED.contains(&name.as_str()) {
                    cols.push((name, r.try_get(1)?));
                }
            }
            self.types.insert(table.to_owned(), cols);
        }
        Ok(self.types.get(table).map(Vec::as_slice).unwrap_or_default())
    }

    fn type_of(&mut self, table: &str, column: &str) -> Result<String> {
        self.typed_columns(table)?
            .iter()
            .find(|(c, _)| c == column)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| MemoryError::Conflict(format!("table {table} has no column {column:?}")))
    }
}

/// Reads column `i` of type `ty` as a cell.
fn cell(row: &postgres::Row, i: usize, ty: &str) -> Result<Cell> {
    Ok(match ty {
        "bigint" => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Cell::Null, Cell::Integer),
        "integer" => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(Cell::Null, |v| Cell::Integer(v.into())),
        "double precision" => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Cell::Null, Cell::Real),
        "boolean" => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Cell::Null, |b| Cell::Integer(i64::from(b))),
        "bytea" => row
            .try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(Cell::Null, Cell::Blob),
        // jsonb selected as its text, written compact as SQLite stores it (jsonb's own
        // text puts a space after every `:` and `,`).
        "jsonb" => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Cell::Null, |t| {
                Cell::Text(
                    serde_json::from_str::<serde_json::Value>(&t)
                        .map(|v| v.to_string())
                        .unwrap_or(t),
                )
            }),
        // Text.
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Cell::Null, Cell::Text),
    })
}

/// A cell as a parameter of a column of type `ty`, and the placeholder's cast.
fn param(
    cell: Cell,
    ty: &str,
) -> std::result::Result<(Box<dyn ToSql + Sync>, &'static str), String> {
    let wrong = |cell: &Cell| format!("a {ty} column cannot hold {cell:?}");
    Ok(match ty {
        "bigint" | "integer" => {
            let v: Option<i64> = match cell {
                Cell::Null => None,
                Cell::Integer(i) => Some(i),
                Cell::Real(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(f as i64),
                other => return Err(wrong(&other)),
            };
            if ty == "integer" {
                let v = v
                    .map(i32::try_from)
                    .transpose()
                    .map_err(|_| format!("{v:?} does not fit an integer column"))?;
                (Box::new(v), "")
            } else {
                (Box::new(v), "")
            }
        }
        "double precision" => {
            let v: Option<f64> = match cell {
                Cell::Null => None,
                Cell::Integer(i) => Some(i as f64),
                Cell::Real(f) => Some(f),
                other => return Err(wrong(&other)),
            };
            (Box::new(v), "")
        }
        "boolean" => {
            let v: Option<bool> = match cell {
                Cell::Null => None,
                Cell::Integer(0) => Some(false),
                Cell::Integer(1) => Some(true),
                other => return Err(wrong(&other)),
            };
            (Box::new(v), "")
        }
        "bytea" => {
            let v: Option<Vec<u8>> = match cell {
                Cell::Null => None,
                Cell::Blob(b) => Some(b),
                other => return Err(wrong(&other)),
            };
            (Box::new(v), "")
        }
        "text" | "jsonb" => {
            let v: Option<String> = match cell {
                Cell::Null => None,
                Cell::Text(t) => Some(t),
                other => return Err(wrong(&other)),
            };
            (
                Box::new(v),
                if ty == "jsonb" {
                    "::text::jsonb"
                } else {
                    "::text"
                },
            )
        }
        other => return Err(format!("column type {other} is not importable")),
    })
}

impl<C: GenericClient> TransferTables for Tables<'_, C> {
    fn columns(&mut self, table: &str) -> Result<Vec<String>> {
        Ok(self
            .typed_columns(table)?
            .iter()
            .map(|(c, _)| c.clone())
            .collect())
    }

    fn count(&mut self, table: &str) -> Result<u64> {
        let n: i64 = self
            .client
            .query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])?
            .try_get(0)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn rows(
        &mut self,
        table: &str,
        columns: &[String],
        order: &str,
        each: &mut dyn FnMut(Vec<Cell>) -> Result<()>,
    ) -> Result<()> {
        let mut types = Vec::with_capacity(columns.len());
        let mut list = Vec::with_capacity(columns.len());
        for c in columns {
            let ty = self.type_of(table, c)?;
            list.push(if ty == "jsonb" {
                format!("\"{c}\"::text")
            } else {
                format!("\"{c}\"")
            });
            types.push(ty);
        }
        // Text keys in byte order, as SQLite sorts them.
        let mut keys = Vec::new();
        for key in order.split(',').map(str::trim) {
            keys.push(if self.type_of(table, key)? == "text" {
                format!("\"{key}\" COLLATE \"C\"")
            } else {
                format!("\"{key}\"")
            });
        }
        let sql = format!(
            "SELECT {} FROM {table} ORDER BY {}",
            list.join(", "),
            keys.join(", ")
        );
        for r in self.client.query(&sql, &[])? {
            let cells = types
                .iter()
                .enumerate()
                .map(|(i, ty)| cell(&r, i, ty))
                .collect::<Result<Vec<_>>>()?;
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
        let mut names = Vec::with_capacity(columns.len() + 1);
        let mut marks = Vec::with_capacity(columns.len() + 1);
        let mut params: Vec<Box<dyn ToSql + Sync>> = Vec::with_capacity(columns.len());
        for (i, (col, value)) in columns.iter().zip(values).enumerate() {
            let ty = self.type_of(table, col).map_err(|e| e.to_string())?;
            let (p, cast) = param(value, &ty).map_err(|e| format!("column {col}: {e}"))?;
            names.push(format!("\"{col}\""));
            marks.push(format!("${}{cast}", i + 1));
            params.push(p);
        }
        if table == "memory_items" {
            // Filled from the imported rows by `rebuild_derived`.
            names.push("search_text".to_owned());
            marks.push("''::tsvector".to_owned());
        }
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            names.join(", "),
            marks.join(", ")
        );
        let db_message = |e: postgres::Error| match e.as_db_error() {
            Some(db) => db.message().to_owned(),
            None => e.to_string(),
        };
        let statement = match self.inserts.get(&sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = self.client.prepare(&sql).map_err(db_message)?;
                self.inserts.insert(sql, statement.clone());
                statement
            }
        };
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        self.client
            .execute(&statement, &refs)
            .map(|_| ())
            .map_err(db_message)
    }

    fn stored_embedder(&mut self) -> Result<Option<String>> {
        crate::postgres::stored_embedder(&mut *self.client)
    }

    fn rebuild_derived(&mut self) -> Result<()> {
        let rows = self.client.query(
            &format!("SELECT {ITEM_COLUMNS} FROM memory_items i ORDER BY i.rowid"),
            &[],
        )?;
        let mut rowids = Vec::with_capacity(rows.len());
        let mut texts = Vec::with_capacity(rows.len());
        for r in &rows {
            let row = item_from_row(r)?;
            rowids.push(row.rowid);
            texts.push(index_text(&row));
        }
        self.client.execute(
            "UPDATE memory_items m SET search_text = to_tsvector($1::text::regconfig, u.t) \
             FROM unnest($2::bigint[], $3::text[]) AS u(r, t) WHERE m.rowid = u.r",
            &[&TS_CONFIG, &rowids, &texts],
        )?;
        for (table, key) in SERIAL_KEYS {
            self.client.execute(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', '{key}'), \
                     COALESCE((SELECT MAX({key}) FROM {table}), 0) + 1, false)"
                ),
                &[],
            )?;
        }
        Ok(())
    }
}

impl PgMemory {
    /// Writes the whole store as JSON Lines (see [`crate::transfer`]) from one consistent
    /// snapshot, and says what it wrote.
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<TransferReport> {
        let mut client = self.lock();
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let report = transfer::export(&mut Tables::new(&mut tx), LAYOUT_VERSION, out)?;
        tx.commit()?;
        Ok(report)
    }

    /// How many rows [`PgMemory::export_jsonl`] would write after its header.
    pub fn export_rows(&self) -> Result<u64> {
        transfer::export_rows(&mut Tables::new(&mut *self.lock()))
    }

    /// Whether the store holds nothing (no record, block, entity or ledger row).
    pub fn is_empty(&self) -> Result<bool> {
        transfer::is_empty(&mut Tables::new(&mut *self.lock()))
    }

    /// Reads an export (of either backend) into this store, which must be empty: one
    /// transaction under the store's write lock, so a bad line (named by its number)
    /// writes nothing and two instances never both import. Refused when the export's
    /// vectors were made by another embedder than this store's.
    pub fn import_jsonl(&self, input: &mut dyn BufRead) -> Result<TransferReport> {
        let active = self.embedder_id().map(str::to_owned);
        let report = self.write(|tx, _now| {
            transfer::import(
                &mut Tables::new(tx),
                LAYOUT_VERSION,
                active.as_deref(),
                input,
            )
        })?;
        self.clear_vector_cache();
        Ok(report)
    }
}
