//! The dataset calls of [`RunStore`]: add, update and remove examples, delete a dataset,
//! list, show a version, the version log, export and import — each in one transaction on
//! the store's backend, each edit making one new version (the rules and rows are
//! `crate::datasets`).

use std::io::Write;

use crate::annotations::Author;
use crate::datasets::jsonl::{self, DatasetFile};
use crate::datasets::source::example_of;
use crate::datasets::{
    AddExamples, Dataset, DatasetDb, DatasetRow, DatasetVersion, Example, ExamplePatch, MAX_BATCH,
    MAX_EXAMPLES, NewExample, NoDatasets, PgDatasets, SqliteDatasets, bad, check_name, has_tables,
    missing,
};
use crate::error::{Result, StoreError};
use crate::reader::RunStore;

/// A dataset's head and the version an edit makes.
struct Edit {
    row: DatasetRow,
    version: u32,
}

/// Opens the next version of `name` (a new dataset, or a deleted one taken up again:
/// its history continues).
fn begin(db: &mut dyn DatasetDb, name: &str, now: i64) -> Result<Edit> {
    check_name(name)?;
    db.lock(name, now)?;
    let row = db.head(name)?.unwrap_or(DatasetRow {
        name: name.to_owned(),
        version: 0,
        created_at: now,
        updated_at: now,
        deleted_at: None,
    });
    let version = row
        .version
        .checked_add(1)
        .ok_or_else(|| bad(format!("dataset {name} has no version left")))?;
    Ok(Edit { row, version })
}

/// An edit of a live dataset only.
fn begin_live(db: &mut dyn DatasetDb, name: &str, now: i64) -> Result<Edit> {
    check_name(name)?;
    match db.head(name)? {
        Some(row) if row.version > 0 && row.deleted_at.is_none() => begin(db, name, now),
        _ => Err(missing(format!("no dataset {name}"))),
    }
}

/// Writes the head and the log line of the edit; the dataset as it is now.
fn commit(
    db: &mut dyn DatasetDb,
    mut edit: Edit,
    action: &str,
    example_ids: Vec<String>,
    by: Author,
    now: i64,
) -> Result<Dataset> {
    let examples = db.count(&edit.row.name, edit.version)?;
    if examples > MAX_EXAMPLES as u64 {
        return Err(bad(format!(
            "dataset {}: more than {MAX_EXAMPLES} examples",
            edit.row.name
        )));
    }
    edit.row.version = edit.version;
    edit.row.updated_at = now.max(edit.row.updated_at);
    edit.row.deleted_at = (action == "delete").then_some(edit.row.updated_at);
    db.put_head(&edit.row)?;
    db.log(
        &edit.row.name,
        &DatasetVersion {
            version: edit.version,
            action: action.to_owned(),
            example_ids,
            examples,
            at: edit.row.updated_at,
            by,
        },
    )?;
    Ok(dataset(&edit.row, edit.version, examples))
}

fn dataset(row: &DatasetRow, version: u32, examples: u64) -> Dataset {
    Dataset {
        name: row.name.clone(),
        version,
        latest: row.version,
        examples,
        created_at: row.created_at,
        updated_at: row.updated_at,
        deleted_at: row.deleted_at,
    }
}

/// The version of `name` asked for (the newest when `None`), checked to exist.
fn pick(db: &mut dyn DatasetDb, name: &str, version: Option<u32>) -> Result<(DatasetRow, u32)> {
    check_name(name)?;
    let row = db
        .head(name)?
        .filter(|r| r.version > 0)
        .ok_or_else(|| missing(format!("no dataset {name}")))?;
    let Some(v) = version else {
        if row.deleted_at.is_some() {
            return Err(missing(format!(
                "dataset {name} was deleted (version {}); give a version to read an earlier one",
                row.version
            )));
        }
        return Ok((row.clone(), row.version));
    };
    let first = db
        .versions(name)?
        .first()
        .map_or(row.version, |v| v.version);
    if v < first || v > row.version {
        return Err(missing(format!(
            "dataset {name} has no version {v} (versions {first} to {})",
            row.version
        )));
    }
    Ok((row, v))
}

impl RunStore {
    /// Adds `new` to dataset `name` (made when absent) as one new version; the dataset
    /// and the stored examples. Refused, with nothing stored, when an example breaks a
    /// rule ([`StoreError::BadDataset`]).
    pub fn add_examples(
        &self,
        name: &str,
        new: Vec<NewExample>,
        by: Author,
    ) -> Result<(Dataset, Vec<Example>)> {
        if new.is_empty() || new.len() > MAX_BATCH {
            return Err(bad(format!("give 1 to {MAX_BATCH} examples")));
        }
        let now = crate::now_ms();
        let made: Vec<Example> = new
            .into_iter()
            .map(|n| Example::made(n, &by, now))
            .collect();
        for e in &made {
            e.check_fields()?;
        }
        self.dataset_tx(true, |db| {
            let edit = begin(db, name, now)?;
            let mut position = db.last_position(name)?;
            for e in &made {
                position += 1;
                db.insert(name, edit.version, position, e)?;
            }
            let ids = made.iter().map(|e| e.id.clone()).collect();
            let ds = commit(db, edit, "add", ids, by, now)?;
            Ok((ds, made))
        })
    }

    /// Adds what `add` brings to dataset `name` as one new version: its examples, and the
    /// example taken from the run it names (`from`, [`RunStore::example_from_run`]) with
    /// its metadata.
    pub fn add_to_dataset(
        &self,
        name: &str,
        add: AddExamples,
        by: Author,
    ) -> Result<(Dataset, Vec<Example>)> {
        let mut new = add.examples;
        if let Some(from) = add.from {
            let mut taken = self.example_from_run(
                &from.run_id,
                from.node_id.as_deref(),
                from.instance_id.as_deref(),
            )?;
            taken.metadata = add.metadata;
            new.push(taken);
        } else if !add.metadata.is_empty() {
            return Err(bad(
                "metadata goes with from (each example carries its own)",
            ));
        }
        self.add_examples(name, new, by)
    }

    /// The example run `run_id` makes ([`crate::datasets::source::example_of`]): a node
    /// instance's input and output, or the run's agent input and final output.
    pub fn example_from_run(
        &self,
        run_id: &str,
        node_id: Option<&str>,
        instance_id: Option<&str>,
    ) -> Result<NewExample> {
        let projection = self.projection(run_id)?.ok_or_else(|| StoreError::NoRun {
            run_id: run_id.to_owned(),
        })?;
        let (_, details) = projection.into_details();
        example_of(run_id, &details, node_id, instance_id)
    }

    /// Edits example `id` of `name` (a new version; its id and place kept).
    pub fn update_example(
        &self,
        name: &str,
        id: &str,
        patch: ExamplePatch,
        by: Author,
    ) -> Result<(Dataset, Example)> {
        let now = crate::now_ms();
        self.dataset_tx(true, |db| {
            let edit = begin_live(db, name, now)?;
            let (position, mut example) = db
                .examples(name, edit.row.version)?
                .into_iter()
                .find(|(_, e)| e.id == id)
                .ok_or_else(|| missing(format!("dataset {name} has no example {id}")))?;
            example.apply(patch);
            example.updated_at = now.max(example.updated_at);
            example.check_fields()?;
            db.close(name, id, edit.version)?;
            db.insert(name, edit.version, position, &example)?;
            let ds = commit(db, edit, "update", vec![id.to_owned()], by, now)?;
            Ok((ds, example))
        })
    }

    /// Removes examples `ids` from `name` as one new version (earlier versions keep them).
    pub fn remove_examples(&self, name: &str, ids: &[String], by: Author) -> Result<Dataset> {
        if ids.is_empty() {
            return Err(bad("give the ids of the examples to remove"));
        }
        let now = crate::now_ms();
        self.dataset_tx(true, |db| {
            let edit = begin_live(db, name, now)?;
            for id in ids {
                if !db.close(name, id, edit.version)? {
                    return Err(missing(format!("dataset {name} has no example {id}")));
                }
            }
            commit(db, edit, "remove", ids.to_vec(), by, now)
        })
    }

    /// Deletes dataset `name`: a last version with no examples, left out of the list; its
    /// earlier versions stay readable, and adding to the name again continues its history.
    pub fn delete_dataset(&self, name: &str, by: Author) -> Result<Dataset> {
        let now = crate::now_ms();
        self.dataset_tx(true, |db| {
            let edit = begin_live(db, name, now)?;
            db.close_all(name, edit.version)?;
            commit(db, edit, "delete", Vec::new(), by, now)
        })
    }

    /// The live datasets at their newest versions, by name.
    pub fn list_datasets(&self) -> Result<Vec<Dataset>> {
        self.dataset_tx(false, |db| {
            let mut out = Vec::new();
            for row in db.heads()? {
                if row.deleted_at.is_none() {
                    let n = db.count(&row.name, row.version)?;
                    out.push(dataset(&row, row.version, n));
                }
            }
            Ok(out)
        })
    }

    /// Dataset `name` at `version` (the newest when `None`) and its examples, in order.
    pub fn get_dataset(&self, name: &str, version: Option<u32>) -> Result<(Dataset, Vec<Example>)> {
        self.dataset_tx(false, |db| {
            let (row, v) = pick(db, name, version)?;
            let examples: Vec<Example> =
                db.examples(name, v)?.into_iter().map(|(_, e)| e).collect();
            Ok((dataset(&row, v, examples.len() as u64), examples))
        })
    }

    /// What each version of `name` did, oldest first.
    pub fn dataset_versions(&self, name: &str) -> Result<Vec<DatasetVersion>> {
        self.dataset_tx(false, |db| {
            check_name(name)?;
            if db.head(name)?.is_none_or(|r| r.version == 0) {
                return Err(missing(format!("no dataset {name}")));
            }
            db.versions(name)
        })
    }

    /// Writes version `version` (the newest when `None`) of `name` as JSON Lines
    /// ([`jsonl`]); the dataset at that version.
    pub fn export_dataset(
        &self,
        name: &str,
        version: Option<u32>,
        out: &mut dyn Write,
    ) -> Result<Dataset> {
        let (ds, examples) = self.get_dataset(name, version)?;
        jsonl::write(&ds.name, ds.version, &examples, out)?;
        Ok(ds)
    }

    /// Stores an export as dataset `name` (the file's name when `None`). A name the store
    /// has never had takes the file's version, so `name@version` means the same examples
    /// in both stores; an existing one gets a new version holding exactly the file's
    /// examples. Ids, authors and times are kept.
    pub fn import_dataset(
        &self,
        file: DatasetFile,
        name: Option<&str>,
        by: Author,
    ) -> Result<Dataset> {
        let name = name.unwrap_or(&file.header.name).to_owned();
        let now = crate::now_ms();
        self.dataset_tx(true, |db| {
            let mut edit = begin(db, &name, now)?;
            if edit.row.version == 0 {
                edit.version = file.header.version.max(1);
            } else {
                db.close_all(&name, edit.version)?;
            }
            let mut position = db.last_position(&name)?;
            for e in &file.examples {
                e.check_fields()?;
                position += 1;
                db.insert(&name, edit.version, position, e)?;
            }
            commit(db, edit, "import", Vec::new(), by, now)
        })
    }

    /// Runs `f` in one transaction: a writing one (SQLite: `BEGIN IMMEDIATE`) for an
    /// edit, a plain one for a read (a store opened read-only can read).
    fn dataset_tx<T>(
        &self,
        write: bool,
        f: impl FnOnce(&mut dyn DatasetDb) -> Result<T>,
    ) -> Result<T> {
        match self.postgres() {
            Some(pg) => {
                let mut conn = pg.conn()?;
                let mut tx = conn.transaction()?;
                let out = f(&mut PgDatasets(&mut tx))?;
                tx.commit()?;
                Ok(out)
            }
            None => self.with_conn(|conn| {
                if !has_tables(conn)? {
                    // A file from before datasets that no writer has migrated (opened
                    // read-only): it holds none, and a write says what to do.
                    let found = crate::sqlite_meta::version_of(conn)?;
                    let path = self.sqlite_path().unwrap_or_default();
                    return f(&mut NoDatasets { path, found });
                }
                let tx = rusqlite::Transaction::new_unchecked(
                    conn,
                    if write {
                        rusqlite::TransactionBehavior::Immediate
                    } else {
                        rusqlite::TransactionBehavior::Deferred
                    },
                )?;
                let out = f(&mut SqliteDatasets(&tx))?;
                tx.commit()?;
                Ok(out)
            }),
        }
    }
}
