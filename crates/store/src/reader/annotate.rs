//! The annotation calls of [`RunStore`]: create, edit, delete, list and history, each in
//! one transaction on the store's backend (the rules and rows are `crate::annotations`).

use crate::annotations::{
    Annotation, AnnotationDb, AnnotationFilter, AnnotationPatch, AnnotationVersion, Author,
    NewAnnotation, NoAnnotations, PgAnnotations, SqliteAnnotations, has_tables, new_id,
};
use crate::error::{Result, StoreError};
use crate::reader::RunStore;

impl RunStore {
    /// Stores a new annotation by `author`; refused when the run does not exist
    /// ([`StoreError::NoRun`]) or what it says breaks a rule
    /// ([`StoreError::BadAnnotation`]).
    pub fn create_annotation(&self, new: NewAnnotation, author: Author) -> Result<Annotation> {
        if self.get_run(&new.run_id)?.is_none() {
            return Err(StoreError::NoRun { run_id: new.run_id });
        }
        let now = crate::now_ms();
        let mut annotation = Annotation {
            id: new_id(),
            run_id: new.run_id,
            node_id: new.node_id.filter(|n| !n.is_empty()),
            instance_id: new.instance_id.filter(|n| !n.is_empty()),
            kind: new.kind,
            verdict: new.verdict,
            score: new.score,
            score_name: new.score_name.filter(|n| !n.is_empty()),
            labels: new.labels,
            comment: new.comment,
            check: new.check,
            author,
            created_at: now,
            updated_at: now,
            version: 1,
            deleted_at: None,
        };
        annotation.check_fields()?;
        self.annotation_db(|db| db.insert(&annotation))?;
        Ok(annotation)
    }

    /// Stores an annotation as it is (an import), under its own id; refused when the id
    /// is taken or it breaks a rule.
    pub fn put_annotation(&self, mut annotation: Annotation) -> Result<Annotation> {
        annotation.check_fields()?;
        self.annotation_db(|db| db.insert(&annotation))?;
        Ok(annotation)
    }

    /// One annotation (deleted ones too).
    pub fn get_annotation(&self, id: &str) -> Result<Option<Annotation>> {
        self.annotation_db(|db| db.get(id))
    }

    /// Edits annotation `id` by `by`: the version before goes to its history.
    pub fn update_annotation(
        &self,
        id: &str,
        patch: AnnotationPatch,
        by: Author,
    ) -> Result<Annotation> {
        self.annotation_db(|db| {
            let before = live(db.get(id)?, id)?;
            let mut after = before.clone();
            after.apply(patch);
            after.check_fields()?;
            after.updated_at = crate::now_ms().max(before.updated_at);
            after.version = before.version + 1;
            db.replace(&after, &record("edit", &after, by, before))?;
            Ok(after)
        })
    }

    /// Deletes annotation `id` by `by`: it is kept, marked deleted, with the version
    /// before in its history.
    pub fn delete_annotation(&self, id: &str, by: Author) -> Result<Annotation> {
        self.annotation_db(|db| {
            let before = live(db.get(id)?, id)?;
            let mut after = before.clone();
            after.updated_at = crate::now_ms().max(before.updated_at);
            after.deleted_at = Some(after.updated_at);
            after.version = before.version + 1;
            db.replace(&after, &record("delete", &after, by, before))?;
            Ok(after)
        })
    }

    /// The earlier versions of annotation `id`, oldest first.
    pub fn annotation_history(&self, id: &str) -> Result<Vec<AnnotationVersion>> {
        self.annotation_db(|db| db.history(id))
    }

    /// Annotations, oldest first.
    pub fn list_annotations(&self, filter: &AnnotationFilter) -> Result<Vec<Annotation>> {
        self.annotation_db(|db| db.list(filter))
    }

    fn annotation_db<T>(&self, f: impl FnOnce(&mut dyn AnnotationDb) -> Result<T>) -> Result<T> {
        match self.postgres() {
            Some(pg) => {
                let mut conn = pg.conn()?;
                let mut tx = conn.transaction()?;
                let out = f(&mut PgAnnotations(&mut tx))?;
                tx.commit()?;
                Ok(out)
            }
            None => self.with_conn(|conn| {
                if !has_tables(conn)? {
                    // A file from before annotations that no writer has migrated (opened
                    // read-only): it holds none, and a write says what to do.
                    let found = crate::sqlite_meta::version_of(conn)?;
                    let path = self.sqlite_path().unwrap_or_default();
                    return f(&mut NoAnnotations { path, found });
                }
                let tx = rusqlite::Transaction::new_unchecked(
                    conn,
                    rusqlite::TransactionBehavior::Immediate,
                )?;
                let out = f(&mut SqliteAnnotations(&tx))?;
                tx.commit()?;
                Ok(out)
            }),
        }
    }
}

fn live(found: Option<Annotation>, id: &str) -> Result<Annotation> {
    match found {
        Some(a) if a.deleted_at.is_none() => Ok(a),
        _ => Err(StoreError::NoAnnotation { id: id.to_owned() }),
    }
}

fn record(action: &str, after: &Annotation, by: Author, before: Annotation) -> AnnotationVersion {
    AnnotationVersion {
        action: action.to_owned(),
        at: after.updated_at,
        by,
        before,
    }
}
