//! The PostgreSQL side of [`crate::RunStore`]: the same reads as the SQLite side,
//! over a bounded pool of connections.

use std::time::Duration;

use mindgate_pg::{Pool, PoolSettings, PooledClient, PostgresUrl};
use postgres::Row;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;

use crate::backend::read::{
    DEFAULT_EVENT_PAGE, MAX_EVENT_PAGE, absent, escape_like, push_arg, raw,
};
use crate::error::{Result, StoreError};
use crate::json_scan::minify;
use crate::model::{
    Counts, ErrorHit, EventHit, EventPage, RunFilter, RunList, RunState, RunSummary, StoredEvent,
    UsageTotals, run_duration_ms, run_work_ms,
};
use crate::threads::ThreadFilter;

/// Connections the readers of one process may hold.
pub const POOL_SIZE: u32 = 8;
/// Longest a read waits for a free connection before it fails as unavailable.
pub const POOL_WAIT: Duration = Duration::from_secs(5);

pub(crate) const SUMMARY_COLUMNS: &str = "id, app, name, status, started_at, finished_at, \
     last_event_at, source, meta_json, sdk_json, event_count, node_count, error_count, \
     input_tokens, output_tokens, last_seq, held_ms, thread_id, user_id, tags_json";

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn count(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A run summary from [`SUMMARY_COLUMNS`] starting at column `at`.
pub(crate) fn summary_from_row(r: &Row, at: usize) -> Result<RunSummary> {
    let status: String = r.try_get(at + 3)?;
    let started_at: i64 = r.try_get(at + 4)?;
    let finished_at: Option<i64> = r.try_get(at + 5)?;
    let last_event_at: i64 = r.try_get(at + 6)?;
    let meta: Option<String> = r.try_get(at + 8)?;
    let sdk: Option<String> = r.try_get(at + 9)?;
    let duration_ms = run_duration_ms(started_at, finished_at, crate::now_ms());
    let held_ms = r.try_get::<_, i64>(at + 16)?.max(0);
    Ok(RunSummary {
        id: r.try_get(at)?,
        app: r.try_get(at + 1)?,
        name: r.try_get(at + 2)?,
        status: RunState::parse(&status).unwrap_or(RunState::Abandoned),
        started_at,
        finished_at,
        duration_ms: Some(duration_ms),
        held_ms,
        work_ms: Some(run_work_ms(duration_ms, held_ms)),
        counts: Counts {
            events: count(r.try_get(at + 10)?),
            nodes: count(r.try_get(at + 11)?),
            errors: count(r.try_get(at + 12)?),
        },
        usage: UsageTotals {
            input_tokens: count(r.try_get(at + 13)?),
            output_tokens: count(r.try_get(at + 14)?),
        },
        cost: None,
        source: r.try_get(at + 7)?,
        thread_id: r.try_get(at + 17)?,
        user_id: r.try_get(at + 18)?,
        tags: crate::threads::tags_from_column(r.try_get::<_, Option<&str>>(at + 19)?),
        meta: meta.and_then(|m| serde_json::from_str(&m).ok()),
        sdk: sdk.and_then(|m| serde_json::from_str(&m).ok()),
        last_seq: r.try_get::<_, Option<i64>>(at + 15)?.map(count),
        last_event_at,
    })
}

/// Read access to a PostgreSQL run store.
pub(crate) struct PgReader {
    /// `None` only while dropping (see the `Drop` impl).
    pool: Option<Pool>,
    url: PostgresUrl,
    /// Per-run claims (a connection of their own, made on first use).
    claims: super::run_lock::PgRunClaims,
}

/// Closing a `postgres::Client` blocks on the client's own runtime, which tokio refuses
/// on an async worker thread (the last `Arc<RunStore>` is often dropped there): the pool
/// is dropped on a thread of its own.
impl Drop for PgReader {
    fn drop(&mut self) {
        let Some(pool) = self.pool.take() else {
            return;
        };
        let closing = std::thread::Builder::new()
            .name("mindgate-store-pg-close".to_owned())
            .spawn(move || drop(pool));
        match closing {
            Ok(handle) => {
                if handle.join().is_err() {
                    tracing::debug!("closing the PostgreSQL pool panicked");
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot start a thread to close the PostgreSQL pool")
            }
        }
    }
}

const EVENT_COLUMNS: &str = "e.seq, e.ts, t.name, e.node_id, \
     COALESCE(e.payload_text, e.payload::text), COALESCE(e.extra_text, e.extra::text)";

impl PgReader {
    /// Connects (a clear error when the database cannot be reached) and checks that
    /// the schema exists and is not newer than this build.
    pub(crate) fn open(url: &PostgresUrl) -> Result<PgReader> {
        let mut client = super::connect(url)?;
        let found = super::schema::MIGRATIONS.version(&mut client)?;
        let supported = super::schema::MIGRATIONS.latest();
        if found > supported {
            return Err(StoreError::SchemaTooNew { found, supported });
        }
        if found == 0 {
            return Err(StoreError::NotMigrated {
                database: url.to_string(),
            });
        }
        drop(client);
        let pool = mindgate_pg::pool(
            url,
            PoolSettings {
                max_size: POOL_SIZE,
                min_idle: Some(1),
                wait: POOL_WAIT,
            },
        )?;
        Ok(PgReader {
            pool: Some(pool),
            url: url.clone(),
            claims: super::run_lock::PgRunClaims::new(url.clone()),
        })
    }

    /// The database.
    pub(crate) fn url(&self) -> &PostgresUrl {
        &self.url
    }

    pub(crate) fn conn(&self) -> Result<PooledClient> {
        match &self.pool {
            Some(pool) => Ok(pool.get()?),
            None => Err(StoreError::WriterGone),
        }
    }

    /// The per-run claims of this process.
    pub(crate) fn claims(&self) -> &super::run_lock::PgRunClaims {
        &self.claims
    }

    /// The `seq`s in `first..=last` that run `run_id` does not hold (see
    /// [`crate::RunStore::missing_seqs`]).
    pub(crate) fn missing_seqs(&self, run_id: &str, first: u64, last: u64) -> Result<Vec<u64>> {
        let mut conn = self.conn()?;
        let Some(key) = Self::run_key(&mut conn, run_id)? else {
            return Ok((first..=last).collect());
        };
        let (first, last) = (as_i64(first), as_i64(last));
        let n: i64 = conn
            .query_one(
                "SELECT COUNT(*) FROM events WHERE run_key = $1 AND seq BETWEEN $2 AND $3",
                &[&key, &first, &last],
            )?
            .get(0);
        if n == last - first + 1 {
            return Ok(Vec::new());
        }
        let rows = conn.query(
            "SELECT seq FROM events WHERE run_key = $1 AND seq BETWEEN $2 AND $3",
            &[&key, &first, &last],
        )?;
        let held: Vec<u64> = rows.iter().map(|r| count(r.get(0))).collect();
        Ok(absent(count(first), count(last), held))
    }

    /// Whether the database answers now.
    pub(crate) fn ping(&self) -> Result<()> {
        self.conn()?.simple_query("SELECT 1")?;
        Ok(())
    }

    pub(crate) fn list_runs(&self, filter: &RunFilter) -> Result<RunList> {
        let limit = filter.effective_limit();
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE true");
        let mut args: Vec<Box<dyn ToSql + Sync>> = Vec::new();
        if let Some(before) = filter.before {
            push_arg(&mut sql, &mut args, " AND started_at < ?", Box::new(before));
        }
        if let Some(status) = filter.status {
            push_arg(
                &mut sql,
                &mut args,
                " AND status = ?",
                Box::new(status.as_str()),
            );
        }
        if let Some(app) = &filter.app {
            push_arg(&mut sql, &mut args, " AND app = ?", Box::new(app.clone()));
        }
        if let Some(thread) = &filter.thread {
            push_arg(
                &mut sql,
                &mut args,
                " AND thread_id = ?",
                Box::new(thread.clone()),
            );
        }
        if let Some(user) = &filter.user {
            push_arg(
                &mut sql,
                &mut args,
                " AND user_id = ?",
                Box::new(user.clone()),
            );
        }
        if let Some(tag) = &filter.tag {
            push_arg(
                &mut sql,
                &mut args,
                " AND tags_json::jsonb @> jsonb_build_array(?::text)",
                Box::new(tag.clone()),
            );
        }
        crate::annotations::pg_run_filter(filter, &mut sql, &mut args);
        if let Some(q) = filter.q.as_deref().filter(|q| !q.is_empty()) {
            push_arg(
                &mut sql,
                &mut args,
                " AND (id ILIKE ? OR name ILIKE ? OR app ILIKE ?)",
                Box::new(escape_like(q)),
            );
        }
        push_arg(
            &mut sql,
            &mut args,
            " ORDER BY started_at DESC, key DESC LIMIT ?",
            Box::new(i64::from(limit) + 1),
        );
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref()).collect();
        let rows = self.conn()?.query(&sql, &params)?;
        let mut runs = rows
            .iter()
            .map(|r| summary_from_row(r, 0))
            .collect::<Result<Vec<_>>>()?;
        let more = runs.len() > limit as usize;
        runs.truncate(limit as usize);
        let next_before = if more {
            runs.last().map(|r| r.started_at)
        } else {
            None
        };
        Ok(RunList { runs, next_before })
    }

    /// A page of thread ids, the latest started first (see [`crate::RunStore::list_threads`]).
    pub(crate) fn thread_ids(&self, filter: &ThreadFilter) -> Result<Vec<(String, i64)>> {
        let mut sql = "SELECT thread_id, MAX(started_at) AS last FROM runs \
                       WHERE thread_id IS NOT NULL"
            .to_owned();
        let mut args: Vec<Box<dyn ToSql + Sync>> = Vec::new();
        if let Some(user) = &filter.user {
            push_arg(
                &mut sql,
                &mut args,
                " AND thread_id IN (SELECT thread_id FROM runs WHERE user_id = ?)",
                Box::new(user.clone()),
            );
        }
        if let Some(tag) = &filter.tag {
            push_arg(
                &mut sql,
                &mut args,
                " AND thread_id IN (SELECT thread_id FROM runs \
                   WHERE tags_json::jsonb @> jsonb_build_array(?::text))",
                Box::new(tag.clone()),
            );
        }
        sql.push_str(" GROUP BY thread_id");
        if let Some(before) = filter.before {
            push_arg(
                &mut sql,
                &mut args,
                " HAVING MAX(started_at) < ?",
                Box::new(before),
            );
        }
        push_arg(
            &mut sql,
            &mut args,
            " ORDER BY last DESC, thread_id DESC LIMIT ?",
            Box::new(i64::from(filter.effective_limit()) + 1),
        );
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref()).collect();
        let rows = self.conn()?.query(&sql, &params)?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    pub(crate) fn get_run(&self, run_id: &str) -> Result<Option<RunSummary>> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE id = $1");
        match self.conn()?.query_opt(&sql, &[&run_id])? {
            Some(row) => Ok(Some(summary_from_row(&row, 0)?)),
            None => Ok(None),
        }
    }

    pub(crate) fn run_ids_with_prefix(&self, prefix: &str, limit: u32) -> Result<Vec<String>> {
        Ok(self
            .conn()?
            .query(
                "SELECT id FROM runs WHERE starts_with(id, $1) ORDER BY id COLLATE \"C\" LIMIT $2",
                &[&prefix, &i64::from(limit)],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn run_key(conn: &mut PooledClient, run_id: &str) -> Result<Option<i64>> {
        Ok(conn
            .query_opt("SELECT key FROM runs WHERE id = $1", &[&run_id])?
            .map(|r| r.get(0)))
    }

    pub(crate) fn events(
        &self,
        run_id: &str,
        after_seq: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Option<EventPage>> {
        let limit = limit.unwrap_or(DEFAULT_EVENT_PAGE).clamp(1, MAX_EVENT_PAGE);
        let mut conn = self.conn()?;
        let Some(key) = Self::run_key(&mut conn, run_id)? else {
            return Ok(None);
        };
        let after = after_seq.map_or(-1, |s| i64::try_from(s).unwrap_or(i64::MAX));
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events e JOIN event_types t ON t.code = e.type \
             WHERE e.run_key = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3"
        );
        let rows = conn.query(&sql, &[&key, &after, &(i64::from(limit) + 1)])?;
        let mut events = rows
            .iter()
            .map(|r| stored_event(run_id, r))
            .collect::<Result<Vec<_>>>()?;
        let has_more = events.len() > limit as usize;
        events.truncate(limit as usize);
        let next_after_seq = events.last().map(|e| e.seq).or(after_seq);
        Ok(Some(EventPage {
            events,
            next_after_seq,
            has_more,
        }))
    }

    pub(crate) fn events_where(
        &self,
        run_id: &str,
        node_id: Option<&str>,
    ) -> Result<Option<Vec<StoredEvent>>> {
        let mut conn = self.conn()?;
        let Some(key) = Self::run_key(&mut conn, run_id)? else {
            return Ok(None);
        };
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events e JOIN event_types t ON t.code = e.type \
             WHERE e.run_key = $1 AND ($2::text IS NULL OR e.node_id = $2 OR e.node_id IS NULL) \
             ORDER BY e.seq"
        );
        let mut out = Vec::new();
        let mut rows = conn.query_raw(&sql, [&key as &(dyn ToSql + Sync), &node_id])?;
        while let Some(row) = rows.next()? {
            out.push(stored_event(run_id, &row)?);
        }
        Ok(Some(out))
    }

    /// Streams a run's events (`(type, seq, ts, payload)`, in `seq` order, only the
    /// given types when `types` is set) into `apply`; `None` if the run does not exist.
    pub(crate) fn for_each_event(
        &self,
        run_id: &str,
        types: Option<&[&str]>,
        mut apply: impl FnMut(&str, u64, i64, &str),
    ) -> Result<Option<()>> {
        let mut conn = self.conn()?;
        let Some(key) = Self::run_key(&mut conn, run_id)? else {
            return Ok(None);
        };
        let types: Option<Vec<&str>> = types.map(<[&str]>::to_vec);
        let mut rows = conn.query_raw(
            "SELECT e.seq, e.ts, t.name, COALESCE(e.payload_text, e.payload::text) FROM events e \
             JOIN event_types t ON t.code = e.type \
             WHERE e.run_key = $1 AND ($2::text[] IS NULL OR t.name = ANY($2)) ORDER BY e.seq",
            [&key as &(dyn ToSql + Sync), &types],
        )?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.try_get(0)?;
            let ts: i64 = row.try_get(1)?;
            let name: &str = row.try_get(2)?;
            let payload: &str = row.try_get(3)?;
            apply(name, count(seq), ts, &minify(payload));
        }
        Ok(Some(()))
    }

    /// Streams a run's events with their node (`(seq, ts, type, node, payload)`, in
    /// `seq` order) into `apply`; `None` if the run does not exist.
    pub(crate) fn for_each_event_of_nodes(
        &self,
        run_id: &str,
        mut apply: impl FnMut(u64, i64, &str, Option<&str>, &str),
    ) -> Result<Option<()>> {
        let mut conn = self.conn()?;
        let Some(key) = Self::run_key(&mut conn, run_id)? else {
            return Ok(None);
        };
        let mut rows = conn.query_raw(
            "SELECT e.seq, e.ts, t.name, e.node_id, COALESCE(e.payload_text, e.payload::text) \
             FROM events e JOIN event_types t ON t.code = e.type \
             WHERE e.run_key = $1 ORDER BY e.seq",
            [&key as &(dyn ToSql + Sync)],
        )?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.try_get(0)?;
            let ts: i64 = row.try_get(1)?;
            let name: &str = row.try_get(2)?;
            let node: Option<&str> = row.try_get(3)?;
            let payload: &str = row.try_get(4)?;
            apply(count(seq), ts, name, node, &minify(payload));
        }
        Ok(Some(()))
    }

    pub(crate) fn search_events(
        &self,
        query: &str,
        run_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<EventHit>> {
        let rows = self.conn()?.query(
            &format!(
                "SELECT r.id, e.seq, e.ts, t.name, e.node_id, \
                 COALESCE(e.payload_text, e.payload::text) AS text FROM events e \
                 JOIN runs r ON r.key = e.run_key JOIN event_types t ON t.code = e.type \
                 WHERE ($1::text IS NULL OR r.id = $1) \
                 AND ({} @@ plainto_tsquery('simple', $2) \
                      OR (e.payload_text IS NOT NULL AND e.payload_text ILIKE $4)) \
                 ORDER BY r.started_at DESC, e.seq DESC LIMIT $3",
                super::schema::SEARCH_VECTOR
            ),
            &[&run_id, &query, &i64::from(limit), &escape_like(query)],
        )?;
        rows.iter()
            .map(|r| {
                let payload = minify(r.try_get::<_, &str>(5)?).into_owned();
                Ok(crate::search::hit(
                    r.try_get(0)?,
                    r.try_get(1)?,
                    r.try_get(2)?,
                    r.try_get(3)?,
                    r.try_get(4)?,
                    &payload,
                    query,
                ))
            })
            .collect()
    }

    pub(crate) fn recent_errors(&self, limit: usize) -> Result<Vec<ErrorHit>> {
        let mut conn = self.conn()?;
        let runs = conn.query(
            "SELECT key, id, name FROM runs WHERE error_count > 0 \
             ORDER BY started_at DESC LIMIT 200",
            &[],
        )?;
        let Some(code) = conn
            .query_opt(
                "SELECT code FROM event_types WHERE name = 'node.error'",
                &[],
            )?
            .map(|r| r.get::<_, i64>(0))
        else {
            return Ok(Vec::new());
        };
        let stmt = conn.prepare(
            "SELECT seq, ts, node_id, COALESCE(payload_text, payload::text) \
             FROM events WHERE run_key = $1 AND type = $2 ORDER BY seq DESC",
        )?;
        let mut hits = Vec::new();
        for run in &runs {
            let key: i64 = run.try_get(0)?;
            let id: String = run.try_get(1)?;
            let name: String = run.try_get(2)?;
            for row in conn.query(&stmt, &[&key, &code])? {
                let payload: &str = row.try_get(3)?;
                let v: serde_json::Value =
                    serde_json::from_str(payload).unwrap_or(serde_json::Value::Null);
                let err = &v["error"];
                hits.push(ErrorHit {
                    run_id: id.clone(),
                    run_name: name.clone(),
                    seq: count(row.try_get(0)?),
                    ts: row.try_get(1)?,
                    node_id: row.try_get(2)?,
                    name: err["name"].as_str().unwrap_or_default().to_owned(),
                    message: err["message"].as_str().unwrap_or_default().to_owned(),
                });
            }
            if hits.len() >= limit * 4 {
                break;
            }
        }
        hits.sort_by_key(|h| std::cmp::Reverse(h.ts));
        hits.truncate(limit);
        Ok(hits)
    }

    pub(crate) fn run_claim(&self, run_id: &str) -> Result<Option<Option<String>>> {
        Ok(self
            .conn()?
            .query_opt("SELECT claim FROM runs WHERE id = $1", &[&run_id])?
            .map(|r| r.get::<_, Option<String>>(0)))
    }

    pub(crate) fn total_events(&self) -> Result<u64> {
        let n: i64 = self
            .conn()?
            .query_one("SELECT COALESCE(SUM(event_count), 0)::int8 FROM runs", &[])?
            .get(0);
        Ok(count(n))
    }

    pub(crate) fn finished_ok_after(&self, run_id: &str, node_id: &str, seq: u64) -> Result<bool> {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        let rows = self.conn()?.query(
            "SELECT e.payload->>'status', e.payload_text FROM events e \
             JOIN runs r ON r.key = e.run_key JOIN event_types t ON t.code = e.type \
             WHERE r.id = $1 AND e.seq > $2 AND t.name = 'node.finished' AND e.node_id = $3 \
             AND (e.payload_text IS NOT NULL OR COALESCE(e.payload->>'status', 'ok') = 'ok') \
             ORDER BY e.seq",
            &[&run_id, &seq, &node_id],
        )?;
        for row in rows {
            let text: Option<&str> = row.try_get(1)?;
            let Some(text) = text else {
                return Ok(true); // a jsonb row: the query checked its status
            };
            let v: serde_json::Value =
                serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
            if v.get("status").is_none_or(|s| s.is_null() || s == "ok") {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The events stored in the given seq ranges (`(run id, lo, hi)`, inclusive), in the
/// order of the ranges and then by seq: how a follower reads what a commit announced.
pub(crate) fn events_in_ranges(
    client: &mut postgres::Client,
    ranges: &[(String, [u64; 2])],
) -> Result<Vec<StoredEvent>> {
    if ranges.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = ranges.iter().map(|(id, _)| id.as_str()).collect();
    let seq = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let lows: Vec<i64> = ranges.iter().map(|(_, r)| seq(r[0])).collect();
    let highs: Vec<i64> = ranges.iter().map(|(_, r)| seq(r[1])).collect();
    let sql = format!(
        "SELECT {EVENT_COLUMNS}, g.id FROM unnest($1::text[], $2::int8[], $3::int8[]) \
         WITH ORDINALITY AS g(id, lo, hi, n) \
         JOIN runs r ON r.id = g.id \
         JOIN events e ON e.run_key = r.key AND e.seq BETWEEN g.lo AND g.hi \
         JOIN event_types t ON t.code = e.type ORDER BY g.n, e.seq"
    );
    let rows = client.query(&sql, &[&ids, &lows, &highs])?;
    rows.iter()
        .map(|r| {
            let run_id: &str = r.try_get(6)?;
            stored_event(run_id, r)
        })
        .collect()
}

/// The summaries of the runs among `ids` that exist, in no particular order.
pub(crate) fn summaries(client: &mut postgres::Client, ids: &[String]) -> Result<Vec<RunSummary>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE id = ANY($1)");
    client
        .query(&sql, &[&ids])?
        .iter()
        .map(|r| summary_from_row(r, 0))
        .collect()
}

fn stored_event(run_id: &str, r: &Row) -> Result<StoredEvent> {
    let seq: i64 = r.try_get(0)?;
    let payload: &str = r.try_get(4)?;
    let extra: Option<&str> = r.try_get(5)?;
    let payload = raw(minify(payload).into_owned()).ok_or_else(|| StoreError::Corrupt {
        run_id: run_id.to_owned(),
        message: format!("payload of seq {seq} is not JSON"),
    })?;
    Ok(StoredEvent {
        run_id: run_id.to_owned(),
        seq: count(seq),
        ts: r.try_get(1)?,
        type_name: r.try_get(2)?,
        node_id: r.try_get(3)?,
        payload,
        extra: extra.and_then(|x| raw(minify(x).into_owned())),
    })
}
