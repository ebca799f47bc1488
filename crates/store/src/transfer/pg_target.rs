//! The PostgreSQL side of a run import ([`crate::transfer::RunImport`]): one
//! transaction on a connection of its own; the events go in the writer's multi-row
//! statement ([`crate::pg::writer`]), [`PG_INSERT_CHUNK`] rows at a time.
//!
//! No file lock here: live instances keep writing the database during an import. The
//! run row's unique id referees them (`ON CONFLICT (id) DO NOTHING`: the id another
//! writer holds, committed or not, is refused as taken). New event types are interned
//! on a second connection outside the transaction, so a live writer that needs the same
//! name never waits for the import to end (an interned name left by a rolled-back import
//! is harmless: it names no event).
//!
//! The commit is announced as the writer's are ([`crate::pg::announce`]: `pg_notify` in the
//! transaction, under a writer id of the import's own), so the servers following the
//! database show the imported run live.

use std::collections::{HashMap, HashSet};

use postgres::{Client, Statement};

use super::{Counted, IMPORT_SOURCE, ImportTarget, ImportedRun};
use crate::backend::write_db::{EventRow, random_id};
use crate::error::StoreError;
use crate::ingest::NewEvent;
use crate::pg::announce::{AnnouncedRun, CHANNEL, payloads, ranges};
use crate::pg::writer::{INSERT_ROWS, NOTIFY, PG_INSERT_CHUNK, insert_rows};
use mindgate_pg::PostgresUrl;

/// An import's transaction on a PostgreSQL database.
pub(crate) struct PgTarget {
    url: PostgresUrl,
    client: Client,
    insert_rows: Statement,
    /// The connection new event types are interned on (opened when first needed).
    types_client: Option<Client>,
    /// Events checked but not yet sent: `(run key, type code, event)`.
    held: Vec<(i64, i64, NewEvent)>,
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl PgTarget {
    /// Connects, migrates the schema if needed and opens the transaction.
    pub(crate) fn begin(url: &PostgresUrl) -> Result<PgTarget, StoreError> {
        let mut client = crate::pg::connect(url)?;
        crate::pg::schema::migrate(&mut client)?;
        let insert_rows = client.prepare(INSERT_ROWS)?;
        client.batch_execute("BEGIN")?;
        Ok(PgTarget {
            url: url.clone(),
            client,
            insert_rows,
            types_client: None,
            held: Vec::with_capacity(PG_INSERT_CHUNK),
        })
    }

    fn send_held(&mut self) -> Result<(), StoreError> {
        if self.held.is_empty() {
            return Ok(());
        }
        let rows: Vec<EventRow<'_>> = self
            .held
            .iter()
            .map(|(key, code, event)| EventRow {
                key: *key,
                code: *code,
                event,
            })
            .collect();
        insert_rows(&mut self.client, &self.insert_rows, &rows)?;
        self.held.clear();
        Ok(())
    }
}

impl ImportTarget for PgTarget {
    fn run_exists(&mut self, run_id: &str) -> Result<bool, StoreError> {
        Ok(self
            .client
            .query_opt("SELECT 1 FROM runs WHERE id = $1", &[&run_id])?
            .is_some())
    }

    fn insert_run(&mut self, run_id: &str, run: &ImportedRun) -> Result<Option<i64>, StoreError> {
        let meta = run.meta.as_ref().map(|m| m.to_string());
        let sdk = run.sdk.as_ref().map(|m| m.to_string());
        let keys = crate::threads::run_keys(run.meta.as_ref());
        let tags = crate::threads::tags_to_column(&keys.tags);
        let row = self.client.query_opt(
            "INSERT INTO runs(id, app, name, status, started_at, finished_at, last_event_at, \
             source, meta_json, sdk_json, event_count, node_count, error_count, input_tokens, \
             output_tokens, last_seq, thread_id, user_id, tags_json) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
             $17, $18, $19) \
             ON CONFLICT (id) DO NOTHING RETURNING key",
            &[
                &run_id,
                &run.app,
                &run.name,
                &run.status.as_str(),
                &run.started_at,
                &run.finished_at,
                &run.last_event_at,
                &IMPORT_SOURCE,
                &meta,
                &sdk,
                &to_i64(run.counts.events),
                &to_i64(run.counts.nodes),
                &to_i64(run.counts.errors),
                &to_i64(run.usage.input_tokens),
                &to_i64(run.usage.output_tokens),
                &run.last_seq.map(to_i64),
                &keys.thread_id,
                &keys.user_id,
                &tags,
            ],
        )?;
        Ok(row.map(|r| r.get(0)))
    }

    fn set_counters(&mut self, key: i64, counted: &Counted) -> Result<(), StoreError> {
        self.client.execute(
            "UPDATE runs SET event_count = $2, node_count = $3, error_count = $4, \
             input_tokens = $5, output_tokens = $6, last_seq = $7, held_ms = $8 WHERE key = $1",
            &[
                &key,
                &to_i64(counted.counts.events),
                &to_i64(counted.counts.nodes),
                &to_i64(counted.counts.errors),
                &to_i64(counted.usage.input_tokens),
                &to_i64(counted.usage.output_tokens),
                &counted.last_seq.map(to_i64),
                &counted.held_ms,
            ],
        )?;
        Ok(())
    }

    fn event_types(&mut self) -> Result<HashMap<String, i64>, StoreError> {
        Ok(self
            .client
            .query("SELECT code, name FROM event_types", &[])?
            .iter()
            .map(|r| (r.get::<_, String>(1), r.get::<_, i64>(0)))
            .collect())
    }

    fn intern_type(&mut self, name: &str) -> Result<i64, StoreError> {
        let client = match &mut self.types_client {
            Some(client) => client,
            None => self.types_client.insert(crate::pg::connect(&self.url)?),
        };
        client.execute(
            "INSERT INTO event_types(name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&name],
        )?;
        Ok(client
            .query_one("SELECT code FROM event_types WHERE name = $1", &[&name])?
            .get(0))
    }

    fn insert_event(&mut self, key: i64, code: i64, event: NewEvent) -> Result<(), StoreError> {
        self.held.push((key, code, event));
        if self.held.len() >= PG_INSERT_CHUNK {
            self.send_held()?;
        }
        Ok(())
    }

    fn commit(&mut self, run_id: &str, seqs: &HashSet<u64>) -> Result<(), StoreError> {
        self.send_held()?;
        let run = AnnouncedRun {
            id: run_id.to_owned(),
            seqs: ranges(seqs.iter().copied().collect()),
        };
        let schema = crate::pg::current_schema(&mut self.client)?;
        let texts = payloads(&random_id(), &schema, vec![run], Vec::new());
        if !texts.is_empty() {
            self.client.execute(NOTIFY, &[&CHANNEL, &texts])?;
        }
        Ok(self.client.batch_execute("COMMIT")?)
    }

    fn insert_annotation(&mut self, annotation: &crate::Annotation) -> Result<(), StoreError> {
        use crate::annotations::AnnotationDb;
        crate::annotations::PgAnnotations(&mut self.client).insert(annotation)
    }

    fn rollback(&mut self) {
        self.held.clear();
        if let Err(e) = self.client.batch_execute("ROLLBACK") {
            tracing::warn!(error = %e, "rolling back an unfinished import failed");
        }
    }
}
