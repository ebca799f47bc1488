//! The annotation tables of a SQLite file no writer has brought to schema 5 yet (a file
//! written by an older Mindgate, opened read-only — by `mindgate mcp` or `mindgate check`,
//! say — before any writer migrated it): it holds no annotation, so reads answer none, and
//! a write is refused with what to do instead of SQLite's "no such table".

use std::path::PathBuf;

use super::backend::AnnotationDb;
use super::{Annotation, AnnotationFilter, AnnotationVersion};
use crate::error::{Result, StoreError};

/// The schema version that added the annotation tables.
pub(crate) const ANNOTATIONS_SCHEMA: i64 = 5;

/// Whether the file has the annotation tables.
pub(crate) fn has_tables(conn: &rusqlite::Connection) -> Result<bool> {
    crate::sqlite_meta::has_table(conn, "annotations")
}

/// The annotation tables of a file that has none.
pub(crate) struct NoAnnotations {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its schema version.
    pub(crate) found: i64,
}

impl NoAnnotations {
    fn refuse<T>(&self) -> Result<T> {
        Err(StoreError::SchemaTooOld {
            path: self.path.clone(),
            found: self.found,
            needed: ANNOTATIONS_SCHEMA,
            what: "annotations",
        })
    }
}

impl AnnotationDb for NoAnnotations {
    fn insert(&mut self, _: &Annotation) -> Result<()> {
        self.refuse()
    }
    fn get(&mut self, _: &str) -> Result<Option<Annotation>> {
        Ok(None)
    }
    fn replace(&mut self, _: &Annotation, _: &AnnotationVersion) -> Result<()> {
        self.refuse()
    }
    fn history(&mut self, _: &str) -> Result<Vec<AnnotationVersion>> {
        Ok(Vec::new())
    }
    fn list(&mut self, _: &AnnotationFilter) -> Result<Vec<Annotation>> {
        Ok(Vec::new())
    }
}
