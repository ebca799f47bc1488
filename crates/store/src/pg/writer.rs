//! The PostgreSQL side of the writer: [`WriteDb`] over one connection, its hot
//! statements prepared once.

use std::collections::{HashMap, HashSet};

use postgres::{Client, Statement};

use super::announce::{AnnouncedRun, CHANNEL, payloads, ranges};
use super::reader::{SUMMARY_COLUMNS, summary_from_row};
use crate::backend::write_db::{EventRow, FoundRun, Retention, WriteDb};
use crate::error::Result;
use crate::model::RunSummary;
use mindgate_pg::PostgresUrl;

/// Rows per multi-row insert (one `unnest` statement; parameters are 7 arrays, so
/// the size is not bound by PostgreSQL's 65,535 parameters).
pub(crate) const PG_INSERT_CHUNK: usize = 2_048;

pub(crate) const INSERT_ROWS: &str = "INSERT INTO events(run_key, seq, ts, type, node_id, payload, extra, \
     payload_text, extra_text) \
     SELECT k, s, t, y, n, p::jsonb, x::jsonb, pt, xt \
     FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::text[], $6::text[], \
       $7::text[], $8::text[], $9::text[]) AS u(k, s, t, y, n, p, x, pt, xt) \
     ON CONFLICT (run_key, seq) DO NOTHING";

const INSERT_ONE: &str = "INSERT INTO events(run_key, seq, ts, type, node_id, payload, extra, \
     payload_text, extra_text) \
     VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7::text::jsonb, $8, $9) \
     ON CONFLICT (run_key, seq) DO NOTHING";

/// `(as jsonb, as text)`: JSON text goes to the `jsonb` column unless it holds an
/// escape `jsonb` may refuse (`\u0000`, a surrogate `\uD800`–`\uDFFF`); such text is
/// kept as sent in the text column, so no event is lost to the column type.
fn json_or_text(json: Option<&str>) -> (Option<&str>, Option<&str>) {
    match json {
        Some(text) if needs_text(text) => (None, Some(text)),
        other => (other, None),
    }
}

fn needs_text(json: &str) -> bool {
    json.match_indices("\\u").any(|(at, _)| {
        let hex = json.get(at + 2..at + 6).unwrap_or_default();
        hex == "0000" || hex.get(..1).is_some_and(|h| h.eq_ignore_ascii_case("d"))
    })
}

const WRITE_RUN: &str = "UPDATE runs SET app = $2, name = $3, status = $4, started_at = $5, \
     finished_at = $6, last_event_at = $7, meta_json = $8, sdk_json = $9, event_count = $10, \
     node_count = $11, error_count = $12, input_tokens = $13, output_tokens = $14, last_seq = $15, \
     instance_id = $16, held_ms = $17, thread_id = $18, user_id = $19, tags_json = $20 \
     WHERE key = $1";

/// One statement per commit, however many payloads it announces.
pub(crate) const NOTIFY: &str = "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS u(p)";

/// The writer's PostgreSQL connection.
pub(crate) struct PgWriteDb {
    url: PostgresUrl,
    client: Client,
    insert_rows: Statement,
    insert_one: Statement,
    write_run: Statement,
    notify: Statement,
    /// The writer's id in its announcements.
    writer_id: String,
    /// Stamped on every run written (`runs.instance_id`).
    instance_id: Option<String>,
    /// The schema the tables live in (announcements name it).
    schema: String,
}

impl PgWriteDb {
    /// Connects, migrates the schema and prepares the hot statements. `writer_id` names
    /// the writer in its commit announcements; `instance_id` is stamped on the runs it
    /// writes.
    pub(crate) fn open(
        url: &PostgresUrl,
        writer_id: &str,
        instance_id: Option<&str>,
    ) -> Result<PgWriteDb> {
        let mut client = super::connect(url)?;
        super::schema::migrate(&mut client)?;
        let insert_rows = client.prepare(INSERT_ROWS)?;
        let insert_one = client.prepare(INSERT_ONE)?;
        let write_run = client.prepare(WRITE_RUN)?;
        let notify = client.prepare(NOTIFY)?;
        let schema = super::current_schema(&mut client)?;
        Ok(PgWriteDb {
            url: url.clone(),
            client,
            insert_rows,
            insert_one,
            write_run,
            notify,
            writer_id: writer_id.to_owned(),
            instance_id: instance_id.map(str::to_owned),
            schema,
        })
    }

    /// Connects again after the connection was lost (the database restarted, or the
    /// server closed it): the batch that found it closed is then applied on the new one.
    fn reconnect(&mut self) -> Result<()> {
        let fresh = Self::open(&self.url, &self.writer_id, self.instance_id.as_deref())?;
        tracing::info!(database = %self.url, "reconnected to the PostgreSQL database");
        *self = fresh;
        Ok(())
    }
}

fn seq_of(row: &EventRow<'_>) -> i64 {
    i64::try_from(row.event.seq).unwrap_or(i64::MAX)
}

/// Inserts `rows` in multi-row statements of [`PG_INSERT_CHUNK`] rows (`statement` is
/// [`INSERT_ROWS`] prepared on `client`); returns the rows written (a `(run, seq)`
/// already stored is skipped).
pub(crate) fn insert_rows(
    client: &mut Client,
    statement: &Statement,
    rows: &[EventRow<'_>],
) -> Result<usize> {
    let mut written = 0usize;
    for chunk in rows.chunks(PG_INSERT_CHUNK) {
        let keys: Vec<i64> = chunk.iter().map(|r| r.key).collect();
        let seqs: Vec<i64> = chunk.iter().map(seq_of).collect();
        let ts: Vec<i64> = chunk.iter().map(|r| r.event.ts).collect();
        let codes: Vec<i64> = chunk.iter().map(|r| r.code).collect();
        let nodes: Vec<Option<&str>> = chunk.iter().map(|r| r.event.node_id.as_deref()).collect();
        let (payloads, payload_texts): (Vec<_>, Vec<_>) = chunk
            .iter()
            .map(|r| json_or_text(Some(r.event.payload.as_str())))
            .unzip();
        let (extras, extra_texts): (Vec<_>, Vec<_>) = chunk
            .iter()
            .map(|r| json_or_text(r.event.extra.as_ref().map(|e| e.get())))
            .unzip();
        let n = client.execute(
            statement,
            &[
                &keys,
                &seqs,
                &ts,
                &codes,
                &nodes,
                &payloads,
                &extras,
                &payload_texts,
                &extra_texts,
            ],
        )?;
        written += usize::try_from(n).unwrap_or(usize::MAX);
    }
    Ok(written)
}

impl WriteDb for PgWriteDb {
    fn reconcile(&mut self, now: i64) -> Result<Vec<String>> {
        let rows = self.client.query(
            "UPDATE runs SET status = 'abandoned', finished_at = GREATEST(last_event_at, $1) \
             WHERE status = 'running' RETURNING id",
            &[&now],
        )?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
    }

    fn insert_chunk(&self) -> usize {
        PG_INSERT_CHUNK
    }

    fn begin(&mut self) -> Result<()> {
        if self.client.is_closed() {
            self.reconnect()?;
        }
        match self.client.batch_execute("BEGIN") {
            Ok(()) => Ok(()),
            // The connection died since the last batch: once more on a new one.
            Err(e) if self.client.is_closed() || e.is_closed() => {
                tracing::warn!(error = %e, "the PostgreSQL connection was lost; reconnecting");
                self.reconnect()?;
                Ok(self.client.batch_execute("BEGIN")?)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn commit(&mut self) -> Result<()> {
        Ok(self.client.batch_execute("COMMIT")?)
    }

    fn rollback(&mut self) {
        if let Err(e) = self.client.batch_execute("ROLLBACK") {
            tracing::debug!(error = %e, "rollback failed");
        }
    }

    fn load_types(&mut self) -> Result<HashMap<String, i64>> {
        let rows = self
            .client
            .query("SELECT code, name FROM event_types", &[])?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, String>(1), r.get::<_, i64>(0)))
            .collect())
    }

    fn intern_type(&mut self, name: &str) -> Result<i64> {
        self.client.execute(
            "INSERT INTO event_types(name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&name],
        )?;
        Ok(self
            .client
            .query_one("SELECT code FROM event_types WHERE name = $1", &[&name])?
            .get(0))
    }

    fn find_run(&mut self, run_id: &str) -> Result<Option<FoundRun>> {
        let sql = format!("SELECT key, {SUMMARY_COLUMNS} FROM runs WHERE id = $1");
        let Some(row) = self.client.query_opt(&sql, &[&run_id])? else {
            return Ok(None);
        };
        let key: i64 = row.get(0);
        let mut summary = summary_from_row(&row, 1)?;
        // The stored rows, not the run row, say which seqs are taken.
        let max_seq: Option<i64> = self
            .client
            .query_one("SELECT MAX(seq) FROM events WHERE run_key = $1", &[&key])?
            .get(0);
        summary.last_seq = max_seq.and_then(|v| u64::try_from(v).ok());
        let nodes = self
            .client
            .query(
                "SELECT DISTINCT node_id FROM events WHERE run_key = $1 AND node_id IS NOT NULL",
                &[&key],
            )?
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<HashSet<_>>();
        Ok(Some(FoundRun {
            key,
            summary,
            nodes,
        }))
    }

    fn create_run(
        &mut self,
        run_id: &str,
        app: &str,
        ts: i64,
        claim: Option<&str>,
        source: &str,
    ) -> Result<i64> {
        Ok(self
            .client
            .query_one(
                "INSERT INTO runs(id, app, name, status, started_at, last_event_at, claim, source, \
                   instance_id) \
                 VALUES ($1, $2, $2, 'running', $3, $3, $4, $5, $6) RETURNING key",
                &[&run_id, &app, &ts, &claim, &source, &self.instance_id],
            )?
            .get(0))
    }

    fn insert_new(&mut self, rows: &[EventRow<'_>]) -> Result<usize> {
        insert_rows(&mut self.client, &self.insert_rows, rows)
    }

    fn insert_one(&mut self, row: EventRow<'_>) -> Result<bool> {
        let ev = row.event;
        let (payload, payload_text) = json_or_text(Some(ev.payload.as_str()));
        let (extra, extra_text) = json_or_text(ev.extra.as_ref().map(|e| e.get()));
        let n = self.client.execute(
            &self.insert_one,
            &[
                &row.key,
                &seq_of(&row),
                &ev.ts,
                &row.code,
                &ev.node_id.as_deref(),
                &payload,
                &extra,
                &payload_text,
                &extra_text,
            ],
        )?;
        Ok(n == 1)
    }

    fn hold_start(&mut self, key: i64, pause_id: &str, before_seq: u64) -> Result<Option<i64>> {
        let before = i64::try_from(before_seq).unwrap_or(i64::MAX);
        let row = self.client.query_opt(
            "SELECT p.ts FROM events p WHERE p.run_key = $1 \
               AND p.type = (SELECT code FROM event_types WHERE name = 'exec.paused') \
               AND p.payload ->> 'pauseId' = $2 \
               AND NOT EXISTS (SELECT 1 FROM events r WHERE r.run_key = $1 AND r.seq < $3 \
                 AND r.type = (SELECT code FROM event_types WHERE name = 'exec.resumed') \
                 AND r.payload ->> 'pauseId' = $2) \
             ORDER BY p.seq DESC LIMIT 1",
            &[&key, &pause_id, &before],
        )?;
        Ok(row.map(|r| r.get(0)))
    }

    fn write_run(&mut self, key: i64, s: &RunSummary) -> Result<()> {
        let meta = s.meta.as_ref().map(|m| m.to_string());
        let sdk = s.sdk.as_ref().map(|m| m.to_string());
        let count = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let last_seq = s.last_seq.and_then(|v| i64::try_from(v).ok());
        let tags = crate::threads::tags_to_column(&s.tags);
        self.client.execute(
            &self.write_run,
            &[
                &key,
                &s.app,
                &s.name,
                &s.status.as_str(),
                &s.started_at,
                &s.finished_at,
                &s.last_event_at,
                &meta,
                &sdk,
                &count(s.counts.events),
                &count(s.counts.nodes),
                &count(s.counts.errors),
                &count(s.usage.input_tokens),
                &count(s.usage.output_tokens),
                &last_seq,
                &self.instance_id,
                &s.held_ms,
                &s.thread_id,
                &s.user_id,
                &tags,
            ],
        )?;
        Ok(())
    }

    fn abandon(&mut self, run_id: &str, at: i64) -> Result<bool> {
        // An instance abandons only the runs it still owns: when the app reconnected to
        // another instance, which wrote the run since, the run is that instance's now.
        let n = self.client.execute(
            "UPDATE runs SET status = 'abandoned', finished_at = $2 \
             WHERE id = $1 AND status = 'running' \
               AND ($3::text IS NULL OR instance_id IS NULL OR instance_id = $3)",
            &[&run_id, &at, &self.instance_id],
        )?;
        Ok(n > 0)
    }

    fn run_key(&mut self, run_id: &str) -> Result<Option<i64>> {
        Ok(self
            .client
            .query_opt("SELECT key FROM runs WHERE id = $1", &[&run_id])?
            .map(|r| r.get(0)))
    }

    fn delete_key(&mut self, key: i64) -> Result<()> {
        self.client
            .execute("DELETE FROM events WHERE run_key = $1", &[&key])?;
        self.client
            .execute("DELETE FROM runs WHERE key = $1", &[&key])?;
        Ok(())
    }

    fn prune_victims(
        &mut self,
        retention: Retention,
        now: i64,
        limit: u32,
    ) -> Result<Vec<(i64, String)>> {
        let cutoff = now.saturating_sub(i64::from(retention.keep_days) * 86_400_000);
        let keep_runs = i64::from(retention.keep_runs);
        let keep_days = i64::from(retention.keep_days);
        let rows = self.client.query(
            "SELECT key, id FROM runs WHERE status <> 'running' AND ( \
               ($1::int8 > 0 AND key NOT IN \
                  (SELECT key FROM runs ORDER BY started_at DESC, key DESC LIMIT $1::int8)) \
               OR ($2::int8 > 0 AND source <> 'import' \
                   AND COALESCE(finished_at, last_event_at) < $3::int8)) \
             ORDER BY started_at, key LIMIT $4::int8",
            &[&keep_runs, &keep_days, &cutoff, &i64::from(limit)],
        )?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1)))
            .collect())
    }

    fn load_summary(&mut self, run_id: &str) -> Result<Option<RunSummary>> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE id = $1");
        match self.client.query_opt(&sql, &[&run_id])? {
            Some(row) => Ok(Some(summary_from_row(&row, 0)?)),
            None => Ok(None),
        }
    }

    fn announces(&self) -> bool {
        true
    }

    fn announce(&mut self, runs: Vec<(String, Vec<u64>)>, deleted: &[String]) -> Result<()> {
        let runs = runs
            .into_iter()
            .map(|(id, seqs)| AnnouncedRun {
                id,
                seqs: ranges(seqs),
            })
            .collect();
        let texts = payloads(&self.writer_id, &self.schema, runs, deleted.to_vec());
        if texts.is_empty() {
            return Ok(());
        }
        self.client.execute(&self.notify, &[&CHANNEL, &texts])?;
        Ok(())
    }

    fn abandon_orphans(&mut self, live: &[String], at: i64) -> Result<Vec<String>> {
        let rows = self.client.query(
            "UPDATE runs SET status = 'abandoned', finished_at = $2 \
             WHERE status = 'running' AND (instance_id IS NULL OR NOT (instance_id = ANY($1))) \
             RETURNING id",
            &[&live, &at],
        )?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
    }
}

impl std::fmt::Debug for PgWriteDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgWriteDb")
    }
}
