//! The dataset tables of a SQLite file no writer has brought to schema 6 yet (a file
//! written by an older Mindgate, opened read-only — by `mindgate mcp`, say — before any
//! writer migrated it): it holds no dataset, so reads answer as for an empty store ("no
//! datasets", "no dataset NAME"), and a write is refused with what to do instead of
//! SQLite's "no such table".

use std::path::PathBuf;

use super::backend::{DatasetDb, DatasetRow};
use super::{DatasetVersion, Example};
use crate::error::{Result, StoreError};

/// The schema version that added the dataset tables.
pub(crate) const DATASETS_SCHEMA: i64 = 6;

/// Whether the file has the dataset tables.
pub(crate) fn has_tables(conn: &rusqlite::Connection) -> Result<bool> {
    crate::sqlite_meta::has_table(conn, "datasets")
}

/// The dataset tables of a file that has none.
pub(crate) struct NoDatasets {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its schema version.
    pub(crate) found: i64,
}

impl NoDatasets {
    fn refuse<T>(&self) -> Result<T> {
        Err(StoreError::SchemaTooOld {
            path: self.path.clone(),
            found: self.found,
            needed: DATASETS_SCHEMA,
            what: "datasets",
        })
    }
}

impl DatasetDb for NoDatasets {
    fn lock(&mut self, _: &str, _: i64) -> Result<()> {
        self.refuse()
    }
    fn head(&mut self, _: &str) -> Result<Option<DatasetRow>> {
        Ok(None)
    }
    fn put_head(&mut self, _: &DatasetRow) -> Result<()> {
        self.refuse()
    }
    fn heads(&mut self) -> Result<Vec<DatasetRow>> {
        Ok(Vec::new())
    }
    fn log(&mut self, _: &str, _: &DatasetVersion) -> Result<()> {
        self.refuse()
    }
    fn versions(&mut self, _: &str) -> Result<Vec<DatasetVersion>> {
        Ok(Vec::new())
    }
    fn insert(&mut self, _: &str, _: u32, _: i64, _: &Example) -> Result<()> {
        self.refuse()
    }
    fn close(&mut self, _: &str, _: &str, _: u32) -> Result<bool> {
        self.refuse()
    }
    fn close_all(&mut self, _: &str, _: u32) -> Result<()> {
        self.refuse()
    }
    fn examples(&mut self, _: &str, _: u32) -> Result<Vec<(i64, Example)>> {
        Ok(Vec::new())
    }
    fn count(&mut self, _: &str, _: u32) -> Result<u64> {
        Ok(0)
    }
    fn last_position(&mut self, _: &str) -> Result<i64> {
        Ok(-1)
    }
}
