//! The dataset tables on each backend: one open transaction per call of [`DatasetDb`].

use rusqlite::{OptionalExtension, params};

use super::{DatasetVersion, Example};
use crate::error::{Result, StoreError};

/// SQLite's dataset tables (schema 6).
pub(crate) const SQLITE_TABLES: &str = r#"
CREATE TABLE IF NOT EXISTS datasets (
    name TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
);
CREATE TABLE IF NOT EXISTS dataset_versions (
    dataset TEXT NOT NULL,
    version INTEGER NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (dataset, version)
);
CREATE TABLE IF NOT EXISTS dataset_examples (
    dataset TEXT NOT NULL,
    example_id TEXT NOT NULL,
    from_version INTEGER NOT NULL,
    to_version INTEGER,
    position INTEGER NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (dataset, example_id, from_version)
);
CREATE INDEX IF NOT EXISTS dataset_examples_by_position
    ON dataset_examples(dataset, position, from_version);
"#;

/// PostgreSQL's dataset tables (migration 7).
pub(crate) const PG_TABLES: &str = r#"
CREATE TABLE datasets (
    name TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    deleted_at BIGINT
);
CREATE TABLE dataset_versions (
    dataset TEXT NOT NULL,
    version BIGINT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (dataset, version)
);
CREATE TABLE dataset_examples (
    dataset TEXT NOT NULL,
    example_id TEXT NOT NULL,
    from_version BIGINT NOT NULL,
    to_version BIGINT,
    position BIGINT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (dataset, example_id, from_version)
);
CREATE INDEX dataset_examples_by_position ON dataset_examples (dataset, position, from_version);
"#;

/// The head row of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DatasetRow {
    pub(crate) name: String,
    pub(crate) version: u32,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    pub(crate) deleted_at: Option<i64>,
}

/// The dataset tables inside one transaction.
pub(crate) trait DatasetDb {
    /// Holds `name` for an edit until the transaction ends, so edits of one dataset (a
    /// new one too) take their versions one after the other: SQLite's writing transaction
    /// already does; PostgreSQL makes the head row (version 0) when absent and locks it.
    fn lock(&mut self, name: &str, now: i64) -> Result<()>;
    /// The head row of `name` (a deleted one too).
    fn head(&mut self, name: &str) -> Result<Option<DatasetRow>>;
    /// Writes the head row (made or replaced).
    fn put_head(&mut self, row: &DatasetRow) -> Result<()>;
    /// Every head row, by name (deleted ones too).
    fn heads(&mut self) -> Result<Vec<DatasetRow>>;
    /// Records what version `v.version` of `name` did.
    fn log(&mut self, name: &str, v: &DatasetVersion) -> Result<()>;
    /// The versions of `name`, oldest first.
    fn versions(&mut self, name: &str) -> Result<Vec<DatasetVersion>>;
    /// Adds `e` at `position`, part of `name` from `version` on.
    fn insert(&mut self, name: &str, version: u32, position: i64, e: &Example) -> Result<()>;
    /// Ends example `id` of `name` at `version` (not part of it any more); whether it was
    /// part of the version before.
    fn close(&mut self, name: &str, id: &str, version: u32) -> Result<bool>;
    /// Ends every example of `name` at `version`.
    fn close_all(&mut self, name: &str, version: u32) -> Result<()>;
    /// The examples of `name` at `version` with their positions, in order.
    fn examples(&mut self, name: &str, version: u32) -> Result<Vec<(i64, Example)>>;
    /// How many examples `name` holds at `version`.
    fn count(&mut self, name: &str, version: u32) -> Result<u64>;
    /// The largest position used in `name` (-1 when none).
    fn last_position(&mut self, name: &str) -> Result<i64>;
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt {
        run_id: String::new(),
        message: format!("dataset value not serialisable: {e}"),
    })
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        run_id: String::new(),
        message: format!("stored dataset value not readable: {e}"),
    })
}

fn version_of(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

const LIVE_AT: &str = "from_version <= ?2 AND (to_version IS NULL OR to_version > ?2)";
const LIVE_AT_PG: &str = "from_version <= $2 AND (to_version IS NULL OR to_version > $2)";

/// The SQLite tables.
pub(crate) struct SqliteDatasets<'a>(pub(crate) &'a rusqlite::Connection);

fn sqlite_head(r: &rusqlite::Row<'_>) -> rusqlite::Result<DatasetRow> {
    Ok(DatasetRow {
        name: r.get(0)?,
        version: version_of(r.get(1)?),
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
        deleted_at: r.get(4)?,
    })
}

impl DatasetDb for SqliteDatasets<'_> {
    fn lock(&mut self, _name: &str, _now: i64) -> Result<()> {
        Ok(())
    }

    fn head(&mut self, name: &str) -> Result<Option<DatasetRow>> {
        Ok(self
            .0
            .query_row(
                "SELECT name, version, created_at, updated_at, deleted_at FROM datasets \
                 WHERE name = ?1",
                [name],
                sqlite_head,
            )
            .optional()?)
    }

    fn put_head(&mut self, row: &DatasetRow) -> Result<()> {
        self.0.execute(
            "INSERT INTO datasets(name, version, created_at, updated_at, deleted_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(name) DO UPDATE SET version = ?2, \
             created_at = ?3, updated_at = ?4, deleted_at = ?5",
            params![
                row.name,
                row.version,
                row.created_at,
                row.updated_at,
                row.deleted_at
            ],
        )?;
        Ok(())
    }

    fn heads(&mut self) -> Result<Vec<DatasetRow>> {
        let mut stmt = self.0.prepare(
            "SELECT name, version, created_at, updated_at, deleted_at FROM datasets ORDER BY name",
        )?;
        let rows = stmt
            .query_map([], sqlite_head)?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    fn log(&mut self, name: &str, v: &DatasetVersion) -> Result<()> {
        self.0.execute(
            "INSERT INTO dataset_versions(dataset, version, doc) VALUES (?1, ?2, ?3)",
            params![name, v.version, to_json(v)?],
        )?;
        Ok(())
    }

    fn versions(&mut self, name: &str) -> Result<Vec<DatasetVersion>> {
        let mut stmt = self
            .0
            .prepare("SELECT doc FROM dataset_versions WHERE dataset = ?1 ORDER BY version")?;
        let docs = stmt
            .query_map([name], |r| r.get::<_, String>(0))?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        docs.iter().map(|d| from_json(d)).collect()
    }

    fn insert(&mut self, name: &str, version: u32, position: i64, e: &Example) -> Result<()> {
        self.0.execute(
            "INSERT INTO dataset_examples(dataset, example_id, from_version, position, doc) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![name, e.id, version, position, to_json(e)?],
        )?;
        Ok(())
    }

    fn close(&mut self, name: &str, id: &str, version: u32) -> Result<bool> {
        let n = self.0.execute(
            "UPDATE dataset_examples SET to_version = ?3 \
             WHERE dataset = ?1 AND example_id = ?2 AND to_version IS NULL",
            params![name, id, version],
        )?;
        Ok(n > 0)
    }

    fn close_all(&mut self, name: &str, version: u32) -> Result<()> {
        self.0.execute(
            "UPDATE dataset_examples SET to_version = ?2 WHERE dataset = ?1 AND to_version IS NULL",
            params![name, version],
        )?;
        Ok(())
    }

    fn examples(&mut self, name: &str, version: u32) -> Result<Vec<(i64, Example)>> {
        let sql = format!(
            "SELECT position, doc FROM dataset_examples WHERE dataset = ?1 AND {LIVE_AT} \
             ORDER BY position"
        );
        let mut stmt = self.0.prepare(&sql)?;
        let rows = stmt
            .query_map(params![name, version], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(p, d)| Ok((p, from_json(&d)?)))
            .collect()
    }

    fn count(&mut self, name: &str, version: u32) -> Result<u64> {
        let sql = format!("SELECT COUNT(*) FROM dataset_examples WHERE dataset = ?1 AND {LIVE_AT}");
        let n: i64 = self
            .0
            .query_row(&sql, params![name, version], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    fn last_position(&mut self, name: &str) -> Result<i64> {
        Ok(self.0.query_row(
            "SELECT COALESCE(MAX(position), -1) FROM dataset_examples WHERE dataset = ?1",
            [name],
            |r| r.get(0),
        )?)
    }
}

/// The PostgreSQL tables.
pub(crate) struct PgDatasets<'a, C: postgres::GenericClient>(pub(crate) &'a mut C);

fn pg_head(r: &postgres::Row) -> DatasetRow {
    DatasetRow {
        name: r.get(0),
        version: version_of(r.get(1)),
        created_at: r.get(2),
        updated_at: r.get(3),
        deleted_at: r.get(4),
    }
}

impl<C: postgres::GenericClient> DatasetDb for PgDatasets<'_, C> {
    fn lock(&mut self, name: &str, now: i64) -> Result<()> {
        self.0.execute(
            "INSERT INTO datasets(name, version, created_at, updated_at) VALUES ($1, 0, $2, $2) \
             ON CONFLICT (name) DO NOTHING",
            &[&name, &now],
        )?;
        self.0.execute(
            "SELECT 1 FROM datasets WHERE name = $1 FOR UPDATE",
            &[&name],
        )?;
        Ok(())
    }

    fn head(&mut self, name: &str) -> Result<Option<DatasetRow>> {
        let row = self.0.query_opt(
            "SELECT name, version, created_at, updated_at, deleted_at FROM datasets \
             WHERE name = $1",
            &[&name],
        )?;
        Ok(row.as_ref().map(pg_head))
    }

    fn put_head(&mut self, row: &DatasetRow) -> Result<()> {
        self.0.execute(
            "INSERT INTO datasets(name, version, created_at, updated_at, deleted_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO UPDATE SET version = $2, \
             created_at = $3, updated_at = $4, deleted_at = $5",
            &[
                &row.name,
                &i64::from(row.version),
                &row.created_at,
                &row.updated_at,
                &row.deleted_at,
            ],
        )?;
        Ok(())
    }

    fn heads(&mut self) -> Result<Vec<DatasetRow>> {
        let rows = self.0.query(
            "SELECT name, version, created_at, updated_at, deleted_at FROM datasets \
             WHERE version > 0 ORDER BY name",
            &[],
        )?;
        Ok(rows.iter().map(pg_head).collect())
    }

    fn log(&mut self, name: &str, v: &DatasetVersion) -> Result<()> {
        self.0.execute(
            "INSERT INTO dataset_versions(dataset, version, doc) VALUES ($1, $2, $3)",
            &[&name, &i64::from(v.version), &to_json(v)?],
        )?;
        Ok(())
    }

    fn versions(&mut self, name: &str) -> Result<Vec<DatasetVersion>> {
        let rows = self.0.query(
            "SELECT doc FROM dataset_versions WHERE dataset = $1 ORDER BY version",
            &[&name],
        )?;
        rows.iter()
            .map(|r| from_json(r.get::<_, &str>(0)))
            .collect()
    }

    fn insert(&mut self, name: &str, version: u32, position: i64, e: &Example) -> Result<()> {
        self.0.execute(
            "INSERT INTO dataset_examples(dataset, example_id, from_version, position, doc) \
             VALUES ($1, $2, $3, $4, $5)",
            &[&name, &e.id, &i64::from(version), &position, &to_json(e)?],
        )?;
        Ok(())
    }

    fn close(&mut self, name: &str, id: &str, version: u32) -> Result<bool> {
        let n = self.0.execute(
            "UPDATE dataset_examples SET to_version = $3 \
             WHERE dataset = $1 AND example_id = $2 AND to_version IS NULL",
            &[&name, &id, &i64::from(version)],
        )?;
        Ok(n > 0)
    }

    fn close_all(&mut self, name: &str, version: u32) -> Result<()> {
        self.0.execute(
            "UPDATE dataset_examples SET to_version = $2 WHERE dataset = $1 AND to_version IS NULL",
            &[&name, &i64::from(version)],
        )?;
        Ok(())
    }

    fn examples(&mut self, name: &str, version: u32) -> Result<Vec<(i64, Example)>> {
        let sql = format!(
            "SELECT position, doc FROM dataset_examples WHERE dataset = $1 AND {LIVE_AT_PG} \
             ORDER BY position"
        );
        let rows = self.0.query(&sql, &[&name, &i64::from(version)])?;
        rows.iter()
            .map(|r| Ok((r.get::<_, i64>(0), from_json(r.get::<_, &str>(1))?)))
            .collect()
    }

    fn count(&mut self, name: &str, version: u32) -> Result<u64> {
        let sql =
            format!("SELECT COUNT(*) FROM dataset_examples WHERE dataset = $1 AND {LIVE_AT_PG}");
        let row = self.0.query_one(&sql, &[&name, &i64::from(version)])?;
        Ok(row.get::<_, i64>(0).max(0) as u64)
    }

    fn last_position(&mut self, name: &str) -> Result<i64> {
        let row = self.0.query_one(
            "SELECT COALESCE(MAX(position), -1)::int8 FROM dataset_examples WHERE dataset = $1",
            &[&name],
        )?;
        Ok(row.get(0))
    }
}
