//! The annotation tables on each backend: one open transaction per call of
//! [`AnnotationDb`], the filters the run list adds.

use postgres::types::ToSql;
use rusqlite::{OptionalExtension, params};

pub(crate) use super::{Annotation, AnnotationFilter, AnnotationVersion, MAX_LIST};
use crate::error::{Result, StoreError};
use crate::model::RunFilter;

/// SQLite's annotation tables (schema 5).
pub(crate) const SQLITE_TABLES: &str = r#"
CREATE TABLE IF NOT EXISTS annotations (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    node_id TEXT,
    kind TEXT NOT NULL,
    verdict TEXT,
    score REAL,
    labels_json TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    deleted_at INTEGER,
    doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS annotations_by_run ON annotations(run_id, created_at);
CREATE TABLE IF NOT EXISTS annotation_history (
    annotation_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (annotation_id, version)
);
"#;

/// PostgreSQL's annotation tables (migration 6).
pub(crate) const PG_TABLES: &str = r#"
CREATE TABLE annotations (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    node_id TEXT,
    kind TEXT NOT NULL,
    verdict TEXT,
    score DOUBLE PRECISION,
    labels_json TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    deleted_at BIGINT,
    doc TEXT NOT NULL
);
CREATE INDEX annotations_by_run ON annotations (run_id, created_at);
CREATE TABLE annotation_history (
    annotation_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (annotation_id, version)
);
"#;

/// The annotation tables inside one transaction.
pub(crate) trait AnnotationDb {
    /// Stores a new annotation; refused when its id is taken.
    fn insert(&mut self, a: &Annotation) -> Result<()>;
    /// One annotation.
    fn get(&mut self, id: &str) -> Result<Option<Annotation>>;
    /// Replaces the stored annotation with `a`, keeping `earlier` in its history.
    fn replace(&mut self, a: &Annotation, earlier: &AnnotationVersion) -> Result<()>;
    /// The history of one annotation, oldest first.
    fn history(&mut self, id: &str) -> Result<Vec<AnnotationVersion>>;
    /// Annotations by the filter, oldest first.
    fn list(&mut self, filter: &AnnotationFilter) -> Result<Vec<Annotation>>;
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt {
        run_id: String::new(),
        message: format!("annotation not serialisable: {e}"),
    })
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        run_id: String::new(),
        message: format!("stored annotation not readable: {e}"),
    })
}

fn taken(id: &str) -> StoreError {
    StoreError::BadAnnotation {
        message: format!("annotation {id} already exists"),
    }
}

fn limit(filter: &AnnotationFilter) -> i64 {
    i64::from(filter.limit.unwrap_or(MAX_LIST).clamp(1, MAX_LIST))
}

/// The SQLite tables.
pub(crate) struct SqliteAnnotations<'a>(pub(crate) &'a rusqlite::Connection);

impl AnnotationDb for SqliteAnnotations<'_> {
    fn insert(&mut self, a: &Annotation) -> Result<()> {
        let n = self.0.execute(
            "INSERT INTO annotations(id, run_id, node_id, kind, verdict, score, labels_json, \
             created_at, deleted_at, doc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
             ON CONFLICT(id) DO NOTHING",
            params![
                a.id,
                a.run_id,
                a.node_id,
                a.kind.as_str(),
                a.verdict.map(|v| v.as_str()),
                a.score,
                to_json(&a.labels)?,
                a.created_at,
                a.deleted_at,
                to_json(a)?,
            ],
        )?;
        if n == 0 {
            return Err(taken(&a.id));
        }
        Ok(())
    }

    fn get(&mut self, id: &str) -> Result<Option<Annotation>> {
        let doc: Option<String> = self
            .0
            .query_row("SELECT doc FROM annotations WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        doc.as_deref().map(from_json).transpose()
    }

    fn replace(&mut self, a: &Annotation, earlier: &AnnotationVersion) -> Result<()> {
        self.0.execute(
            "INSERT INTO annotation_history(annotation_id, version, doc) VALUES (?1, ?2, ?3)",
            params![a.id, earlier.before.version, to_json(earlier)?],
        )?;
        self.0.execute(
            "UPDATE annotations SET verdict = ?2, score = ?3, labels_json = ?4, deleted_at = ?5, \
             doc = ?6 WHERE id = ?1",
            params![
                a.id,
                a.verdict.map(|v| v.as_str()),
                a.score,
                to_json(&a.labels)?,
                a.deleted_at,
                to_json(a)?,
            ],
        )?;
        Ok(())
    }

    fn history(&mut self, id: &str) -> Result<Vec<AnnotationVersion>> {
        let mut stmt = self.0.prepare(
            "SELECT doc FROM annotation_history WHERE annotation_id = ?1 ORDER BY version",
        )?;
        let docs = stmt
            .query_map([id], |r| r.get::<_, String>(0))?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        docs.iter().map(|d| from_json(d)).collect()
    }

    fn list(&mut self, filter: &AnnotationFilter) -> Result<Vec<Annotation>> {
        let mut sql = "SELECT doc FROM annotations WHERE 1=1".to_owned();
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(run) = &filter.run_id {
            sql.push_str(" AND run_id = ?");
            args.push(run.clone().into());
        }
        if let Some(node) = &filter.node_id {
            sql.push_str(" AND node_id = ?");
            args.push(node.clone().into());
        }
        if let Some(kind) = filter.kind {
            sql.push_str(" AND kind = ?");
            args.push(kind.as_str().to_owned().into());
        }
        if let Some(label) = &filter.label {
            sql.push_str(" AND EXISTS (SELECT 1 FROM json_each(labels_json) WHERE value = ?)");
            args.push(label.clone().into());
        }
        if !filter.include_deleted {
            sql.push_str(" AND deleted_at IS NULL");
        }
        sql.push_str(" ORDER BY created_at, id LIMIT ?");
        args.push(limit(filter).into());
        let mut stmt = self.0.prepare(&sql)?;
        let docs = stmt
            .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(0))?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        docs.iter().map(|d| from_json(d)).collect()
    }
}

/// The PostgreSQL tables.
pub(crate) struct PgAnnotations<'a, C: postgres::GenericClient>(pub(crate) &'a mut C);

impl<C: postgres::GenericClient> AnnotationDb for PgAnnotations<'_, C> {
    fn insert(&mut self, a: &Annotation) -> Result<()> {
        let n = self.0.execute(
            "INSERT INTO annotations(id, run_id, node_id, kind, verdict, score, labels_json, \
             created_at, deleted_at, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (id) DO NOTHING",
            &[
                &a.id,
                &a.run_id,
                &a.node_id,
                &a.kind.as_str(),
                &a.verdict.map(|v| v.as_str()),
                &a.score,
                &to_json(&a.labels)?,
                &a.created_at,
                &a.deleted_at,
                &to_json(a)?,
            ],
        )?;
        if n == 0 {
            return Err(taken(&a.id));
        }
        Ok(())
    }

    fn get(&mut self, id: &str) -> Result<Option<Annotation>> {
        let row = self
            .0
            .query_opt("SELECT doc FROM annotations WHERE id = $1", &[&id])?;
        row.map(|r| from_json(r.get::<_, &str>(0))).transpose()
    }

    fn replace(&mut self, a: &Annotation, earlier: &AnnotationVersion) -> Result<()> {
        self.0.execute(
            "INSERT INTO annotation_history(annotation_id, version, doc) VALUES ($1, $2, $3)",
            &[
                &a.id,
                &i64::from(earlier.before.version),
                &to_json(earlier)?,
            ],
        )?;
        self.0.execute(
            "UPDATE annotations SET verdict = $2, score = $3, labels_json = $4, deleted_at = $5, \
             doc = $6 WHERE id = $1",
            &[
                &a.id,
                &a.verdict.map(|v| v.as_str()),
                &a.score,
                &to_json(&a.labels)?,
                &a.deleted_at,
                &to_json(a)?,
            ],
        )?;
        Ok(())
    }

    fn history(&mut self, id: &str) -> Result<Vec<AnnotationVersion>> {
        let rows = self.0.query(
            "SELECT doc FROM annotation_history WHERE annotation_id = $1 ORDER BY version",
            &[&id],
        )?;
        rows.iter()
            .map(|r| from_json(r.get::<_, &str>(0)))
            .collect()
    }

    fn list(&mut self, filter: &AnnotationFilter) -> Result<Vec<Annotation>> {
        let mut sql = "SELECT doc FROM annotations WHERE true".to_owned();
        let mut args: Vec<Box<dyn ToSql + Sync>> = Vec::new();
        let push = crate::backend::read::push_arg;
        if let Some(run) = &filter.run_id {
            push(
                &mut sql,
                &mut args,
                " AND run_id = ?",
                Box::new(run.clone()),
            );
        }
        if let Some(node) = &filter.node_id {
            push(
                &mut sql,
                &mut args,
                " AND node_id = ?",
                Box::new(node.clone()),
            );
        }
        if let Some(kind) = filter.kind {
            push(
                &mut sql,
                &mut args,
                " AND kind = ?",
                Box::new(kind.as_str()),
            );
        }
        if let Some(label) = &filter.label {
            push(
                &mut sql,
                &mut args,
                " AND labels_json::jsonb @> jsonb_build_array(?::text)",
                Box::new(label.clone()),
            );
        }
        if !filter.include_deleted {
            sql.push_str(" AND deleted_at IS NULL");
        }
        push(
            &mut sql,
            &mut args,
            " ORDER BY created_at, id LIMIT ?",
            Box::new(limit(filter)),
        );
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref()).collect();
        let rows = self.0.query(&sql, &params)?;
        rows.iter()
            .map(|r| from_json(r.get::<_, &str>(0)))
            .collect()
    }
}

/// The run list's annotation filters (label, verdict, score range) on SQLite: runs with a
/// live annotation that matches them all.
pub(crate) fn sqlite_run_filter(
    filter: &RunFilter,
    sql: &mut String,
    args: &mut Vec<rusqlite::types::Value>,
) {
    let mut clause = String::new();
    if let Some(label) = &filter.label {
        clause.push_str(" AND EXISTS (SELECT 1 FROM json_each(a.labels_json) WHERE value = ?)");
        args.push(label.clone().into());
    }
    if let Some(verdict) = filter.verdict {
        clause.push_str(" AND a.verdict = ?");
        args.push(verdict.as_str().to_owned().into());
    }
    if let Some(min) = filter.min_score {
        clause.push_str(" AND a.score >= ?");
        args.push(min.into());
    }
    if let Some(max) = filter.max_score {
        clause.push_str(" AND a.score <= ?");
        args.push(max.into());
    }
    if !clause.is_empty() {
        sql.push_str(
            " AND EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = runs.id \
             AND a.deleted_at IS NULL",
        );
        sql.push_str(&clause);
        sql.push(')');
    }
}

/// The same filters on PostgreSQL.
pub(crate) fn pg_run_filter(
    filter: &RunFilter,
    sql: &mut String,
    args: &mut Vec<Box<dyn ToSql + Sync>>,
) {
    let wanted = filter.label.is_some()
        || filter.verdict.is_some()
        || filter.min_score.is_some()
        || filter.max_score.is_some();
    if !wanted {
        return;
    }
    let push = crate::backend::read::push_arg;
    sql.push_str(
        " AND EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = runs.id \
         AND a.deleted_at IS NULL",
    );
    if let Some(label) = &filter.label {
        push(
            sql,
            args,
            " AND a.labels_json::jsonb @> jsonb_build_array(?::text)",
            Box::new(label.clone()),
        );
    }
    if let Some(verdict) = filter.verdict {
        push(sql, args, " AND a.verdict = ?", Box::new(verdict.as_str()));
    }
    if let Some(min) = filter.min_score {
        push(sql, args, " AND a.score >= ?", Box::new(min));
    }
    if let Some(max) = filter.max_score {
        push(sql, args, " AND a.score <= ?", Box::new(max));
    }
    sql.push(')');
}
