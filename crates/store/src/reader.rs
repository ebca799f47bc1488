//! The synchronous read API, shared by the HTTP server and the MCP server.

mod annotate;
mod dataset;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mindgate_pricing::{Cost, PriceTable, TokenCounts};
use rusqlite::{Connection, OptionalExtension, Row, params};

pub use crate::backend::read::{DEFAULT_EVENT_PAGE, MAX_EVENT_PAGE};
use crate::backend::read::{escape_like, raw};
use crate::error::{Result, StoreError};
use crate::model::{
    Counts, ErrorHit, EventHit, EventPage, RunFilter, RunList, RunState, RunSummary, StoredEvent,
    UsageTotals, run_duration_ms, run_work_ms,
};
use crate::pg::reader::PgReader;
use crate::projection::{NodeDetail, RunGraph, RunProjection, project};
use crate::schema;
use mindgate_pg::{Database, PostgresUrl};

/// Most run costs a [`RunStore`] keeps (it forgets them all when full).
pub(crate) const COST_CACHE_RUNS: usize = 2_048;

/// A run's tokens and cost, kept by run id with the run state they were read at
/// (event count, last `seq`): a finished run is read once, a growing one again when it grew.
#[derive(Debug, Default)]
pub(crate) struct CostCache {
    pub(crate) runs: Mutex<HashMap<String, CachedCost>>,
}

/// The run state (event count, last `seq`) a cost was read at, the tokens and the cost.
type CachedCost = ((u64, Option<u64>), TokenCounts, Cost);

/// Read access to a Mindgate database. Thread-safe; blocking (call it from a
/// blocking context in async code).
pub struct RunStore {
    backend: ReadBackend,
    /// The prices runs are costed with (the built-in table unless
    /// [`RunStore::with_prices`] set another).
    pub(crate) prices: Arc<PriceTable>,
    /// Run costs already read, by run state (see `crate::cost`).
    pub(crate) costs: CostCache,
}

/// Where a [`RunStore`] reads.
enum ReadBackend {
    /// A SQLite file: a few connections, each used by one read at a time.
    Sqlite {
        path: PathBuf,
        conns: Vec<Mutex<Connection>>,
        next: AtomicUsize,
    },
    /// A PostgreSQL database: a bounded pool.
    Postgres(Box<PgReader>),
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            ReadBackend::Sqlite { path, .. } => {
                f.debug_struct("RunStore").field("path", path).finish()
            }
            ReadBackend::Postgres(pg) => f
                .debug_struct("RunStore")
                .field("database", &pg.url().to_string())
                .finish(),
        }
    }
}

const SUMMARY_COLUMNS: &str = "id, app, name, status, started_at, finished_at, last_event_at, \
     source, meta_json, sdk_json, event_count, node_count, error_count, input_tokens, \
     output_tokens, last_seq, held_ms, thread_id, user_id, tags_json";

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<RunSummary> {
    let status: String = r.get(3)?;
    let started_at: i64 = r.get(4)?;
    let finished_at: Option<i64> = r.get(5)?;
    let last_event_at: i64 = r.get(6)?;
    let meta: Option<String> = r.get(8)?;
    let sdk: Option<String> = r.get(9)?;
    let duration_ms = run_duration_ms(started_at, finished_at, crate::now_ms());
    let held_ms: i64 = r.get::<_, i64>(16)?.max(0);
    Ok(RunSummary {
        id: r.get(0)?,
        app: r.get(1)?,
        name: r.get(2)?,
        status: RunState::parse(&status).unwrap_or(RunState::Abandoned),
        started_at,
        finished_at,
        duration_ms: Some(duration_ms),
        held_ms,
        work_ms: Some(run_work_ms(duration_ms, held_ms)),
        counts: Counts {
            events: r.get::<_, i64>(10)?.max(0) as u64,
            nodes: r.get::<_, i64>(11)?.max(0) as u64,
            errors: r.get::<_, i64>(12)?.max(0) as u64,
        },
        usage: UsageTotals {
            input_tokens: r.get::<_, i64>(13)?.max(0) as u64,
            output_tokens: r.get::<_, i64>(14)?.max(0) as u64,
        },
        cost: None,
        source: r.get(7)?,
        thread_id: r.get(17)?,
        user_id: r.get(18)?,
        tags: crate::threads::tags_from_column(r.get_ref(19)?.as_str_or_null().ok().flatten()),
        meta: meta.and_then(|m| serde_json::from_str(&m).ok()),
        sdk: sdk.and_then(|m| serde_json::from_str(&m).ok()),
        last_seq: r.get::<_, Option<i64>>(15)?.map(|v| v.max(0) as u64),
        last_event_at,
    })
}

/// Loads one run summary with an existing connection.
pub(crate) fn load_summary(conn: &Connection, run_id: &str) -> Result<Option<RunSummary>> {
    let sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([run_id], summary_from_row)
        .optional()?)
}

fn type_names(conn: &Connection) -> Result<HashMap<i64, String>> {
    let mut stmt = conn.prepare_cached("SELECT code, name FROM event_types")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut map = HashMap::new();
    for row in rows {
        let (code, name) = row?;
        map.insert(code, name);
    }
    Ok(map)
}

impl RunStore {
    /// Opens read access to the database another part of this process writes.
    /// The file must exist (the [`crate::Writer`] creates it).
    pub fn open(path: &Path) -> Result<RunStore> {
        Self::open_with(path, false, 4)
    }

    /// Opens a database read-only (e.g. while `mindgate serve` writes it).
    pub fn open_read_only(path: &Path) -> Result<RunStore> {
        Self::open_with(path, true, 2)
    }

    fn open_with(path: &Path, read_only: bool, pool: usize) -> Result<RunStore> {
        let mut conns = Vec::with_capacity(pool);
        for _ in 0..pool.max(1) {
            conns.push(Mutex::new(schema::open_reader(path, read_only)?));
        }
        Ok(RunStore {
            backend: ReadBackend::Sqlite {
                path: path.to_path_buf(),
                conns,
                next: AtomicUsize::new(0),
            },
            prices: Arc::new(PriceTable::builtin()),
            costs: CostCache::default(),
        })
    }

    /// Opens read access to `database`: a SQLite file (which must exist: the
    /// [`crate::Writer`] creates it), or a PostgreSQL database (which must be
    /// migrated: `mindgate migrate`, or the writer, does it). A PostgreSQL database
    /// that cannot be reached is [`StoreError::Unreachable`].
    pub fn open_database(database: &Database) -> Result<RunStore> {
        match database {
            Database::Sqlite(path) => Self::open(path),
            Database::Postgres(url) => Self::open_postgres(url),
        }
    }

    /// Opens read access to a PostgreSQL run store.
    pub fn open_postgres(url: &PostgresUrl) -> Result<RunStore> {
        Ok(RunStore {
            backend: ReadBackend::Postgres(Box::new(PgReader::open(url)?)),
            prices: Arc::new(PriceTable::builtin()),
            costs: CostCache::default(),
        })
    }

    /// The database this store reads.
    pub fn database(&self) -> Database {
        match &self.backend {
            ReadBackend::Sqlite { path, .. } => Database::Sqlite(path.clone()),
            ReadBackend::Postgres(pg) => Database::Postgres(Box::new(pg.url().clone())),
        }
    }

    /// Checks that the database answers now (a cheap query), for readiness probes.
    pub fn ping(&self) -> Result<()> {
        match &self.backend {
            ReadBackend::Sqlite { .. } => self.with_conn(|conn| {
                conn.query_row("SELECT 1", [], |_| Ok(()))?;
                Ok(())
            }),
            ReadBackend::Postgres(pg) => pg.ping(),
        }
    }

    /// The SQLite file, when this store is one.
    pub(crate) fn sqlite_path(&self) -> Option<PathBuf> {
        match &self.backend {
            ReadBackend::Sqlite { path, .. } => Some(path.clone()),
            ReadBackend::Postgres(_) => None,
        }
    }

    /// The PostgreSQL reader, when this store is one.
    pub(crate) fn postgres(&self) -> Option<&PgReader> {
        match &self.backend {
            ReadBackend::Postgres(pg) => Some(pg),
            ReadBackend::Sqlite { .. } => None,
        }
    }

    /// This store, costing runs with `prices` (the built-in table with the user's
    /// `prices.toml` over it, see `mindgate_pricing::PriceTable::load`).
    pub fn with_prices(mut self, prices: PriceTable) -> RunStore {
        self.prices = Arc::new(prices);
        self.costs = CostCache::default();
        self
    }

    /// The prices runs are costed with.
    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }

    /// The database file (empty for a PostgreSQL store: see [`RunStore::database`]).
    pub fn path(&self) -> &Path {
        match &self.backend {
            ReadBackend::Sqlite { path, .. } => path,
            ReadBackend::Postgres(_) => Path::new(""),
        }
    }

    /// Runs `f` on a SQLite reading connection. Only the SQLite paths call it: every
    /// public read dispatches a PostgreSQL store to [`PgReader`] first.
    pub(crate) fn with_conn<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let ReadBackend::Sqlite { conns, next, .. } = &self.backend else {
            return Err(StoreError::Corrupt {
                run_id: String::new(),
                message: "a SQLite read on a PostgreSQL store".to_owned(),
            });
        };
        let n = conns.len();
        let start = next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            if let Ok(guard) = conns[(start + i) % n].try_lock() {
                return f(&guard);
            }
        }
        let guard = conns[start % n]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&guard)
    }

    /// Runs, newest first, each with its cost.
    pub fn list_runs(&self, filter: &RunFilter) -> Result<RunList> {
        let mut list = self.list_runs_without_cost(filter)?;
        for run in &mut list.runs {
            run.cost = Some(self.usage_of(run)?.1);
        }
        Ok(list)
    }

    /// Runs, newest first, without reading their costs.
    pub(crate) fn list_runs_without_cost(&self, filter: &RunFilter) -> Result<RunList> {
        if let Some(pg) = self.postgres() {
            return pg.list_runs(filter);
        }
        let limit = filter.effective_limit();
        self.with_conn(|conn| {
            let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE 1=1");
            let mut args: Vec<rusqlite::types::Value> = Vec::new();
            if let Some(before) = filter.before {
                sql.push_str(" AND started_at < ?");
                args.push(before.into());
            }
            if let Some(status) = filter.status {
                sql.push_str(" AND status = ?");
                args.push(status.as_str().to_owned().into());
            }
            if let Some(app) = &filter.app {
                sql.push_str(" AND app = ?");
                args.push(app.clone().into());
            }
            if let Some(thread) = &filter.thread {
                sql.push_str(" AND thread_id = ?");
                args.push(thread.clone().into());
            }
            if let Some(user) = &filter.user {
                sql.push_str(" AND user_id = ?");
                args.push(user.clone().into());
            }
            if let Some(tag) = &filter.tag {
                sql.push_str(" AND EXISTS (SELECT 1 FROM json_each(runs.tags_json) WHERE value = ?)");
                args.push(tag.clone().into());
            }
            crate::annotations::sqlite_run_filter(filter, &mut sql, &mut args);
            if let Some(q) = filter.q.as_deref().filter(|q| !q.is_empty()) {
                sql.push_str(
                    " AND (id LIKE ?1q ESCAPE '\\' OR name LIKE ?1q ESCAPE '\\' OR app LIKE ?1q ESCAPE '\\')",
                );
                let pattern = escape_like(q);
                sql = sql.replace("?1q", "?");
                args.push(pattern.clone().into());
                args.push(pattern.clone().into());
                args.push(pattern.into());
            }
            sql.push_str(" ORDER BY started_at DESC, key DESC LIMIT ?");
            args.push((i64::from(limit) + 1).into());
            let mut stmt = conn.prepare(&sql)?;
            let mut runs = stmt
                .query_map(rusqlite::params_from_iter(args), summary_from_row)?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let more = runs.len() > limit as usize;
            runs.truncate(limit as usize);
            let next_before = if more {
                runs.last().map(|r| r.started_at)
            } else {
                None
            };
            Ok(RunList { runs, next_before })
        })
    }

    /// One run.
    /// One run, without its cost (cheap: one row).
    pub fn get_run(&self, run_id: &str) -> Result<Option<RunSummary>> {
        if let Some(pg) = self.postgres() {
            return pg.get_run(run_id);
        }
        self.with_conn(|conn| load_summary(conn, run_id))
    }

    /// The ids of stored runs that start with `prefix` (`""` matches none), in byte order,
    /// at most `limit`: what a command line resolves a shortened run id with.
    pub fn run_ids_with_prefix(&self, prefix: &str, limit: u32) -> Result<Vec<String>> {
        if prefix.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(pg) = self.postgres() {
            return pg.run_ids_with_prefix(prefix, limit);
        }
        // Ids in byte order: those with the prefix follow the first id not below it.
        self.with_conn(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT id FROM runs WHERE id >= ?1 ORDER BY id LIMIT ?2")?;
            let rows = stmt.query_map(params![prefix, limit], |r| r.get::<_, String>(0))?;
            let mut ids = Vec::new();
            for id in rows {
                let id = id?;
                if !id.starts_with(prefix) {
                    break;
                }
                ids.push(id);
            }
            Ok(ids)
        })
    }

    /// One run with its cost (reads the run's usage events).
    pub fn get_run_with_cost(&self, run_id: &str) -> Result<Option<RunSummary>> {
        let Some(mut run) = self.get_run(run_id)? else {
            return Ok(None);
        };
        run.cost = Some(self.usage_of(&run)?.1);
        Ok(Some(run))
    }

    fn run_key(conn: &Connection, run_id: &str) -> Result<Option<i64>> {
        Ok(conn
            .prepare_cached("SELECT key FROM runs WHERE id = ?1")?
            .query_row([run_id], |r| r.get(0))
            .optional()?)
    }

    /// Events of a run with `seq > after_seq` (all when `None`), in `seq` order.
    /// `limit` defaults to 1,000 and is capped at 5,000. `None` if the run does not exist.
    pub fn events(
        &self,
        run_id: &str,
        after_seq: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Option<EventPage>> {
        if let Some(pg) = self.postgres() {
            return pg.events(run_id, after_seq, limit);
        }
        let limit = limit.unwrap_or(DEFAULT_EVENT_PAGE).clamp(1, MAX_EVENT_PAGE);
        self.with_conn(|conn| {
            let Some(key) = Self::run_key(conn, run_id)? else {
                return Ok(None);
            };
            let names = type_names(conn)?;
            let after = after_seq.map_or(-1, |s| i64::try_from(s).unwrap_or(i64::MAX));
            let mut stmt = conn.prepare_cached(
                "SELECT seq, ts, type, node_id, payload, extra FROM events \
                 WHERE run_key = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            )?;
            let mut events = Vec::new();
            let rows = stmt.query_map(params![key, after, i64::from(limit) + 1], EventRow::read)?;
            for row in rows {
                events.push(row?.into_event(run_id, &names)?);
            }
            let has_more = events.len() > limit as usize;
            events.truncate(limit as usize);
            let next_after_seq = events.last().map(|e| e.seq).or(after_seq);
            Ok(Some(EventPage {
                events,
                next_after_seq,
                has_more,
            }))
        })
    }

    /// Every event of a run in `seq` order (`None` if the run does not exist).
    pub fn all_events(&self, run_id: &str) -> Result<Option<Vec<StoredEvent>>> {
        self.events_where(run_id, None)
    }

    fn events_where(
        &self,
        run_id: &str,
        node_id: Option<&str>,
    ) -> Result<Option<Vec<StoredEvent>>> {
        if let Some(pg) = self.postgres() {
            return pg.events_where(run_id, node_id);
        }
        self.with_conn(|conn| {
            let Some(key) = Self::run_key(conn, run_id)? else {
                return Ok(None);
            };
            let names = type_names(conn)?;
            let mut out = Vec::new();
            let sql = if node_id.is_some() {
                "SELECT seq, ts, type, node_id, payload, extra FROM events \
                 WHERE run_key = ?1 AND (node_id = ?2 OR node_id IS NULL) ORDER BY seq"
            } else {
                "SELECT seq, ts, type, node_id, payload, extra FROM events \
                 WHERE run_key = ?1 AND ?2 IS NULL ORDER BY seq"
            };
            let mut stmt = conn.prepare_cached(sql)?;
            let rows = stmt.query_map(params![key, node_id], EventRow::read)?;
            for row in rows {
                out.push(row?.into_event(run_id, &names)?);
            }
            Ok(Some(out))
        })
    }

    /// The logical graph of a run (`None` if the run does not exist).
    ///
    /// Streams the run's events from SQLite into a graph-only projection, one
    /// row at a time: memory follows the size of the graph, not of the events
    /// (inputs, outputs and tool arguments are never held).
    pub fn graph(&self, run_id: &str) -> Result<Option<RunGraph>> {
        if let Some(pg) = self.postgres() {
            let mut projection = RunProjection::for_graph(run_id);
            let found = pg.for_each_event(run_id, None, |type_name, seq, ts, payload| {
                projection.apply_event(type_name, seq, ts, payload);
            })?;
            return Ok(found.map(|()| projection.into_graph()));
        }
        self.with_conn(|conn| {
            let Some(key) = Self::run_key(conn, run_id)? else {
                return Ok(None);
            };
            let names = type_names(conn)?;
            let mut projection = RunProjection::for_graph(run_id);
            let mut stmt = conn.prepare_cached(
                "SELECT seq, ts, type, payload FROM events WHERE run_key = ?1 ORDER BY seq",
            )?;
            let mut rows = stmt.query([key])?;
            while let Some(row) = rows.next()? {
                let seq: i64 = row.get(0)?;
                let ts: i64 = row.get(1)?;
                let code: i64 = row.get(2)?;
                let payload = row.get_ref(3)?.as_str().map_err(|e| StoreError::Corrupt {
                    run_id: run_id.to_owned(),
                    message: format!("payload of seq {seq} is not text: {e}"),
                })?;
                let type_name = names.get(&code).map_or("", String::as_str);
                projection.apply_event(type_name, seq.max(0) as u64, ts, payload);
            }
            Ok(Some(projection.into_graph()))
        })
    }

    /// Streams run `run_id`'s events (`(seq, ts, type, node, payload)`, in `seq` order)
    /// into `apply`, holding none of them: the whole-run folds (the projection of
    /// [`RunStore::projection`], the diff) read big runs this way. `None` if the run does
    /// not exist.
    pub(crate) fn for_each_event(
        &self,
        run_id: &str,
        mut apply: impl FnMut(u64, i64, &str, Option<&str>, &str),
    ) -> Result<Option<()>> {
        if let Some(pg) = self.postgres() {
            return pg.for_each_event_of_nodes(run_id, apply);
        }
        self.with_conn(|conn| {
            let Some(key) = Self::run_key(conn, run_id)? else {
                return Ok(None);
            };
            let names = type_names(conn)?;
            let mut stmt = conn.prepare_cached(
                "SELECT seq, ts, type, node_id, payload FROM events WHERE run_key = ?1 ORDER BY seq",
            )?;
            let mut rows = stmt.query([key])?;
            while let Some(row) = rows.next()? {
                let seq: i64 = row.get(0)?;
                let ts: i64 = row.get(1)?;
                let code: i64 = row.get(2)?;
                let node = row.get_ref(3)?.as_str_or_null().ok().flatten();
                let payload = row.get_ref(4)?.as_str().map_err(|e| StoreError::Corrupt {
                    run_id: run_id.to_owned(),
                    message: format!("payload of seq {seq} is not text: {e}"),
                })?;
                let type_name = names.get(&code).map_or("", String::as_str);
                apply(seq.max(0) as u64, ts, type_name, node, payload);
            }
            Ok(Some(()))
        })
    }

    /// Run `run_id` folded into its full projection (inputs, outputs, pauses: what
    /// [`project`] builds from [`RunStore::all_events`]), streamed from the database
    /// without holding its events. `None` if the run does not exist.
    pub fn projection(&self, run_id: &str) -> Result<Option<RunProjection>> {
        let mut projection = RunProjection::for_detail(run_id);
        let found = self.for_each_event(run_id, |seq, ts, type_name, _, payload| {
            projection.apply_event(type_name, seq, ts, payload);
        })?;
        Ok(found.map(|()| projection))
    }

    /// Every instance of one node in full (`None` if the run or node does not exist).
    pub fn node_detail(&self, run_id: &str, node_id: &str) -> Result<Option<NodeDetail>> {
        let Some(events) = self.events_where(run_id, Some(node_id))? else {
            return Ok(None);
        };
        Ok(project(run_id, &events).node(node_id))
    }

    /// Events whose text contains `query` (case-insensitive), the newest stored first:
    /// on SQLite through the search index file up to its watermark plus a scan of the
    /// events stored after it ([`crate::search`]), so a stored event is found at once; a
    /// word search on PostgreSQL.
    pub fn search_events(
        &self,
        query: &str,
        run_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<EventHit>> {
        let limit = limit.clamp(1, 1_000);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(pg) = self.postgres() {
            return pg.search_events(query, run_id, limit);
        }
        let db = self.path().to_path_buf();
        self.with_conn(|conn| {
            let names = type_names(conn)?;
            if query.chars().count() >= crate::search::MIN_INDEXED_QUERY_CHARS {
                let q = crate::search::sqlite_query::Query {
                    names: &names,
                    text: query,
                    run_id,
                    limit,
                };
                return crate::search::sqlite_query::search(conn, &db, &q);
            }
            // Too short for a trigram: scan the payloads.
            let pattern = escape_like(query);
            let mut stmt = conn.prepare_cached(
                "SELECT r.id, e.seq, e.ts, e.type, e.node_id, e.payload FROM events e \
                 JOIN runs r ON r.key = e.run_key \
                 WHERE (?1 IS NULL OR r.id = ?1) AND e.payload LIKE ?2 ESCAPE '\\' \
                 ORDER BY r.started_at DESC, e.seq DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![run_id, pattern, i64::from(limit)], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })?;
            let mut hits = Vec::new();
            for row in rows {
                let (run, seq, ts, code, node_id, payload) = row?;
                let type_name = names.get(&code).cloned().unwrap_or_default();
                hits.push(crate::search::hit(
                    run, seq, ts, type_name, node_id, &payload, query,
                ));
            }
            Ok(hits)
        })
    }

    /// How far the search index is behind the stored events: on SQLite the writer's
    /// transactions queued after the index's watermark (`Some(0)`: caught up; `None`:
    /// the index file is missing or being built, and a search scans every event); on
    /// PostgreSQL `Some(0)` (its index is written with the events).
    pub fn search_index_pending(&self) -> Result<Option<u64>> {
        if self.postgres().is_some() {
            return Ok(Some(0));
        }
        let db = self.path().to_path_buf();
        self.with_conn(|conn| crate::search::sqlite_query::pending(conn, &db))
    }

    /// The most recent `node.error` events across runs, newest first.
    pub fn recent_errors(&self, limit: u32) -> Result<Vec<ErrorHit>> {
        let limit = limit.clamp(1, 1_000) as usize;
        if let Some(pg) = self.postgres() {
            return pg.recent_errors(limit);
        }
        self.with_conn(|conn| {
            let mut runs_stmt = conn.prepare_cached(
                "SELECT key, id, name FROM runs WHERE error_count > 0 ORDER BY started_at DESC LIMIT 200",
            )?;
            let runs = runs_stmt
                .query_map([], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
                })?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let code: Option<i64> = conn
                .query_row(
                    "SELECT code FROM event_types WHERE name = 'node.error'",
                    [],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(code) = code else {
                return Ok(Vec::new());
            };
            let mut hits = Vec::new();
            let mut stmt = conn.prepare_cached(
                "SELECT seq, ts, node_id, payload FROM events WHERE run_key = ?1 AND type = ?2 \
                 ORDER BY seq DESC",
            )?;
            for (key, id, name) in runs {
                let rows = stmt.query_map(params![key, code], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                })?;
                for row in rows {
                    let (seq, ts, node_id, payload) = row?;
                    let v: serde_json::Value =
                        serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null);
                    let err = &v["error"];
                    hits.push(ErrorHit {
                        run_id: id.clone(),
                        run_name: name.clone(),
                        seq: seq.max(0) as u64,
                        ts,
                        node_id,
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
        })
    }

    /// The claim token stored with a run: `None` if the run does not exist,
    /// `Some(None)` if it exists without a claim.
    pub fn run_claim(&self, run_id: &str) -> Result<Option<Option<String>>> {
        if let Some(pg) = self.postgres() {
            return pg.run_claim(run_id);
        }
        self.with_conn(|conn| {
            Ok(conn
                .prepare_cached("SELECT claim FROM runs WHERE id = ?1")?
                .query_row([run_id], |r| r.get::<_, Option<String>>(0))
                .optional()?)
        })
    }

    /// Total events stored (all runs).
    pub fn total_events(&self) -> Result<u64> {
        if let Some(pg) = self.postgres() {
            return pg.total_events();
        }
        self.with_conn(|conn| {
            let n: i64 =
                conn.query_row("SELECT COALESCE(SUM(event_count), 0) FROM runs", [], |r| {
                    r.get(0)
                })?;
            Ok(n.max(0) as u64)
        })
    }
}

/// One row of `SELECT seq, ts, type, node_id, payload, extra FROM events`.
struct EventRow {
    seq: i64,
    ts: i64,
    code: i64,
    node_id: Option<String>,
    payload: String,
    extra: Option<String>,
}

impl EventRow {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(EventRow {
            seq: r.get(0)?,
            ts: r.get(1)?,
            code: r.get(2)?,
            node_id: r.get(3)?,
            payload: r.get(4)?,
            extra: r.get(5)?,
        })
    }

    fn into_event(self, run_id: &str, names: &HashMap<i64, String>) -> Result<StoredEvent> {
        let seq = self.seq;
        let payload = raw(self.payload).ok_or_else(|| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("payload of seq {seq} is not JSON"),
        })?;
        Ok(StoredEvent {
            run_id: run_id.to_owned(),
            seq: seq.max(0) as u64,
            ts: self.ts,
            type_name: names.get(&self.code).cloned().unwrap_or_default(),
            node_id: self.node_id,
            payload,
            extra: self.extra.and_then(raw),
        })
    }
}
