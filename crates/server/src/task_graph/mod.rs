//! `/task-graph/api/*`: coding-agent sessions (DSH, pi, Claude Code, Codex) as task graphs.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /task-graph/api/status` | homes searched, session and live counts, `session_reads` (whole reads of session files so far, the task list's included) |
//! | `GET /task-graph/api/tasks` | `{tasks: [TaskSummary…]}`, newest first |
//! | `GET /task-graph/api/task?id=…` | the task graph (the seed's JSON, exactly `build_graph`'s output) |
//! | `GET /task-graph/api/events?id=…&afterSeq=…&limit=…` | `{events, last_seq, more}`: trajectory events after `afterSeq` |
//! | `GET /task-graph/api/event?id=…&seq=…` | `{seq, events}`: the events carrying that `seq` (line formats may put several on one line) |
//! | `GET /task-graph/api/live?id=…` | Server-Sent Events: `graph` (the whole graph) on connect and after every growth of the session file, `events` (the new trajectory events) after every growth; with `view=overview`: `overview` (the whole overview) on connect, then `overview_delta` (top-level fields and only the changed turns) |
//! | `GET /task-graph/api/task/overview`, `/task/turn`, `/task/timeline` | the page's views: see [`views`] |
//! | `GET /task-graph/api/usage?by=…&since=…&tz=…` | tokens and cost across every session: see [`usage`] |
//! | `GET /task-graph/api/search?q=…&limit=…` | full-text search of every session, each hit naming its node: see [`search`] |
//!
//! `id` is a session id or a unique prefix of one; never a path (the API does not read files
//! outside the discovered homes). Errors are `{"error": "…"}`: 400 for bad or ambiguous
//! parameters, 404 for unknown ids.
//!
//! Live sessions are watched with `notify` (their subagents' files, in folders of their own,
//! are checked once a second); each growth is applied to an
//! [`IncrementalGraph`](mindgate_taskgraph::IncrementalGraph), see [`live`].

mod event_ids;
mod live;
mod search;
mod usage;
mod views;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::Stream;
use mindgate_taskgraph::discover::{load_tree, load_tree_followable};
use mindgate_taskgraph::follow::{Stamp, children_stamp};
use mindgate_taskgraph::{
    Catalog, DiscoveryConfig, Error as TgError, Event, GraphTree, IdMatch, IncrementalGraph,
    Session, TaskGraph, TaskOverview, TaskSummary, TurnIndex, match_task_id,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::ApiError;

use live::Live;

/// Most events one `/events` answer carries when `limit` is not given.
pub const DEFAULT_EVENTS_LIMIT: usize = 2_000;
/// Upper bound of `limit`.
pub const MAX_EVENTS_LIMIT: usize = 50_000;
/// Sessions (with their built graphs) kept in memory between requests.
const SESSION_CACHE: usize = 8;

/// Everything the task-graph routes share.
pub(crate) struct TaskGraphs {
    catalog: Mutex<Catalog>,
    cache: Mutex<Vec<Cached>>,
    /// Held while a session is read into the cache, so requests that arrive together (the
    /// page's overview and its live feed) read a big session once, not each.
    loading: Mutex<()>,
    live: Mutex<HashMap<PathBuf, Weak<Live>>>,
    shutdown: CancellationToken,
    /// Prices of the overview's cost figures.
    prices: mindgate_pricing::PriceTable,
    /// Times a session file was read and parsed whole for these routes (the cache's misses,
    /// a live feed's reader catching up): `/status` reports it, with the catalog's reads (the
    /// task list's), as `session_reads`.
    reads: AtomicU64,
    /// The session search index file (opened at the first search).
    search_db: PathBuf,
    search: OnceLock<Arc<mindgate_store::search::sessions::SessionIndex>>,
}

/// A session read from disk and its graph, valid while the file's size and mtime hold.
#[derive(Clone)]
struct Cached {
    path: PathBuf,
    stamp: Stamp,
    /// The stamps of the session's child files when read: a child that grew makes the
    /// entry stale though the session's own file did not change.
    children_stamp: Vec<Stamp>,
    session: Arc<Session>,
    /// The graph's JSON, serialised when first asked for (the overview, a turn and the
    /// timeline never need the whole graph as text; at 100,000 events it is tens of MB).
    graph: Arc<OnceLock<Arc<str>>>,
    /// The overview, made when first asked for (a live view opened from this read shares it
    /// while its graph is this one: the page's fetch and its feed's first message).
    overview: Arc<OnceLock<Arc<TaskOverview>>>,
    /// The overview's JSON, made when first asked for.
    overview_text: Arc<OnceLock<Arc<str>>>,
    /// The typed graph with its children's (the overview, a turn, the timeline).
    tree: Arc<GraphTree>,
    /// A live session's graph as built, which the live view goes on from (taken by the first
    /// one) instead of building the graph again.
    follow: Arc<Mutex<Option<IncrementalGraph>>>,
    /// The graph's turns indexed, made when a turn is first opened.
    turns: Arc<OnceLock<Arc<TurnIndex>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The task-graph routes over the server's sessions.
pub(crate) fn router<S>(tg: Arc<TaskGraphs>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/task-graph/api/status", get(status))
        .route("/task-graph/api/tasks", get(tasks))
        .route("/task-graph/api/task", get(task))
        .route("/task-graph/api/task/overview", get(views::overview))
        .route("/task-graph/api/task/turn", get(views::turn))
        .route("/task-graph/api/task/timeline", get(views::timeline))
        .route("/task-graph/api/usage", get(usage::usage))
        .route("/task-graph/api/search", get(search::search))
        .route("/task-graph/api/events", get(events))
        .route("/task-graph/api/event", get(event))
        .route("/task-graph/api/live", get(live_feed))
        .with_state(tg)
}

type Tg = State<Arc<TaskGraphs>>;

impl TaskGraphs {
    /// The routes' state over `config`'s homes; live feeds end when `shutdown` is cancelled.
    pub(crate) fn new(
        config: DiscoveryConfig,
        shutdown: CancellationToken,
        prices: mindgate_pricing::PriceTable,
        search_db: PathBuf,
    ) -> Self {
        Self {
            catalog: Mutex::new(Catalog::new(config)),
            cache: Mutex::new(Vec::new()),
            loading: Mutex::new(()),
            live: Mutex::new(HashMap::new()),
            shutdown,
            prices,
            reads: AtomicU64::new(0),
            search_db,
            search: OnceLock::new(),
        }
    }

    fn config(&self) -> DiscoveryConfig {
        lock(&self.catalog).config().clone()
    }

    /// Rescans the homes (re-reading only changed sessions).
    fn refresh(&self) -> Vec<TaskSummary> {
        lock(&self.catalog).refresh().to_vec()
    }

    /// Resolves an id (exact, else unique prefix) among the discovered sessions; rescans once
    /// when it is not known yet.
    fn find(&self, id: &str) -> Result<TaskSummary, ApiError> {
        let id = id.trim();
        if id.is_empty() {
            return Err(ApiError::bad_request("missing query parameter `id`"));
        }
        let known = lock(&self.catalog).tasks().to_vec();
        match match_id(&known, id) {
            Ok(t) => Ok(t),
            Err(_) => match_id(&self.refresh_for(id), id),
        }
    }

    /// Rescans the homes for `id`: the sessions the rescan reads that `id` names (exactly or
    /// as a prefix) go to the cache, so the route that asked reads its session once, not once
    /// for the task list and again for itself (at 100,000 events each read is ~0.3 s).
    fn refresh_for(&self, id: &str) -> Vec<TaskSummary> {
        let (tasks, read) = {
            let mut catalog = lock(&self.catalog);
            let (tasks, read) = catalog.refresh_keeping(|s| s.id.starts_with(id));
            (tasks.to_vec(), read)
        };
        // More than a few would only push other sessions out of the cache.
        if read.len() <= 2 {
            for r in read {
                self.cache_insert(&r.summary.path, r.stamp, r.session, r.tree, r.graph);
            }
        }
        tasks
    }

    /// The session and its graph JSON, from the cache when the file did not change.
    fn load(&self, t: &TaskSummary) -> Result<(Arc<Session>, Arc<str>), ApiError> {
        let c = self.load_cached(t)?;
        if let Some(g) = c.graph.get() {
            return Ok((c.session, g.clone()));
        }
        let text: Arc<str> = serde_json::to_string(&c.tree.graph)
            .map_err(|e| ApiError::internal(e.to_string()))?
            .into();
        Ok((c.session, c.graph.get_or_init(|| text).clone()))
    }

    /// The session read from disk (its events), from the cache when the file did not change.
    fn load_session(&self, t: &TaskSummary) -> Result<Arc<Session>, ApiError> {
        self.load_cached(t).map(|c| c.session)
    }

    /// The typed graph tree of a task read from disk, from the cache when the file did not
    /// change.
    fn load_tree(&self, t: &TaskSummary) -> Result<Arc<GraphTree>, ApiError> {
        self.load_cached(t).map(|c| c.tree)
    }

    fn load_cached(&self, t: &TaskSummary) -> Result<Cached, ApiError> {
        let stamp = mindgate_taskgraph::follow::stamp(&t.path, t.agent);
        let cached = || {
            let hit = lock(&self.cache)
                .iter()
                .find(|c| c.path == t.path && c.stamp == stamp)
                .cloned();
            // The children's files are checked outside the cache's lock.
            hit.filter(|c| children_stamp(&c.session) == c.children_stamp)
        };
        if let Some(c) = cached() {
            return Ok(c);
        }
        let _loading = lock(&self.loading);
        if let Some(c) = cached() {
            return Ok(c);
        }
        let loc = t.location();
        let config = self.config();
        self.count_read();
        let (session, tree, follow) = load_tree_followable(&loc, &config).map_err(tg_error)?;
        Ok(self.cache_insert(&t.path, stamp, session, tree, follow))
    }

    /// Caches a session read when its file had `stamp` (replacing an older read of `path`),
    /// with its graph as built when it is live (`follow`).
    fn cache_insert(
        &self,
        path: &Path,
        stamp: Stamp,
        session: Session,
        tree: GraphTree,
        follow: Option<IncrementalGraph>,
    ) -> Cached {
        let session = Arc::new(session);
        let c = Cached {
            path: path.to_path_buf(),
            stamp,
            children_stamp: children_stamp(&session),
            session,
            graph: Arc::new(OnceLock::new()),
            overview: Arc::new(OnceLock::new()),
            overview_text: Arc::new(OnceLock::new()),
            tree: Arc::new(tree),
            turns: Arc::new(OnceLock::new()),
            follow: Arc::new(Mutex::new(follow)),
        };
        let mut cache = lock(&self.cache);
        cache.retain(|old| old.path != c.path);
        if cache.len() >= SESSION_CACHE {
            cache.remove(0);
        }
        cache.push(c.clone());
        c
    }

    /// The typed graph of a task (an id, else a unique prefix, resolved as
    /// `/task-graph/api/task` resolves it), read from disk and built as `mindgate taskgraph`
    /// builds it: archived mode, children linked. Blocking: call it off the async runtime.
    pub(crate) fn typed_graph(&self, id: &str) -> Result<TaskGraph, ApiError> {
        let t = self.find(id)?;
        self.count_read();
        let (_, tree) = load_tree(&t.location(), &self.config()).map_err(tg_error)?;
        Ok(tree.graph)
    }

    /// Counts one whole read of a session file.
    fn count_read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }

    /// The running live view of a session, if one is being watched.
    fn live_of(&self, path: &PathBuf) -> Option<Arc<Live>> {
        lock(&self.live).get(path).and_then(Weak::upgrade)
    }

    fn live_count(&self) -> usize {
        lock(&self.live)
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

fn match_id(tasks: &[TaskSummary], id: &str) -> Result<TaskSummary, ApiError> {
    match match_task_id(tasks, id, |t| t.id.as_str()) {
        IdMatch::One(t) => Ok(t.clone()),
        IdMatch::None => Err(ApiError::not_found(format!(
            "no task session with id `{id}`"
        ))),
        IdMatch::Many(many) => Err(ApiError::bad_request(format!(
            "`{id}` matches {} task sessions ({}); give more of the id",
            many.len(),
            many.iter()
                .take(5)
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A task-graph error as an answer, with the code the crate gives it (a FIFO, a device or an
/// oversized file in place of a session is the client's `bad_request` / `too_large`).
fn tg_error(e: TgError) -> ApiError {
    let message = match &e {
        TgError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            format!("{e} (the session file is gone)")
        }
        _ => mindgate_errors::error_chain(&e),
    };
    ApiError::new(e.code(), message)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
}

fn json_text(body: Arc<str>) -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

/// Query of the routes that name a session.
#[derive(Debug, Default, Deserialize)]
struct IdQuery {
    id: Option<String>,
    #[serde(rename = "afterSeq", alias = "after_seq")]
    after_seq: Option<String>,
    seq: Option<String>,
    limit: Option<String>,
    /// A turn: its phase id (`phase-3`) or number.
    turn: Option<String>,
    /// `/live`'s view: `graph` (default) or `overview`.
    view: Option<String>,
}

impl IdQuery {
    fn id(&self) -> Result<String, ApiError> {
        match self.id.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => Ok(id.to_owned()),
            _ => Err(ApiError::bad_request("missing query parameter `id`")),
        }
    }
}

fn parse_u64(name: &str, v: Option<&str>) -> Result<Option<u64>, ApiError> {
    match v.map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => s.parse().map(Some).map_err(|_| {
            ApiError::bad_request(format!(
                "query parameter `{name}` must be a non-negative integer, got `{s}`"
            ))
        }),
    }
}

/// Reads the query leniently so malformed parameters get a JSON 400, not axum's text.
fn query(q: Result<Query<IdQuery>, axum::extract::rejection::QueryRejection>) -> IdQuery {
    q.map(|Query(q)| q).unwrap_or_default()
}

async fn status(State(tg): Tg) -> Result<Response, ApiError> {
    let tg2 = tg.clone();
    let tasks = blocking(move || Ok(tg2.refresh())).await?;
    let config = tg.config();
    let mut agents = serde_json::Map::new();
    for t in &tasks {
        let n = agents
            .get(t.agent.as_str())
            .and_then(Value::as_u64)
            .unwrap_or(0);
        agents.insert(t.agent.as_str().to_owned(), json!(n + 1));
    }
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    Ok(axum::Json(json!({
        "ok": true,
        "version": env!("CARGO_PKG_VERSION"),
        "sessions": tasks.len(),
        "live": tasks.iter().filter(|t| t.live).count(),
        "watching": tg.live_count(),
        "session_reads": tg.reads.load(Ordering::Relaxed) + lock(&tg.catalog).reads(),
        "agents": agents,
        "homes": {
            "dsh": path(&config.dsh_sessions),
            "pi": path(&config.pi_sessions),
            "claude_code": path(&config.claude_projects),
            "codex": path(&config.codex_sessions),
            "gemini": path(&config.gemini_sessions),
            "opencode": path(&config.opencode_data),
        },
        "extra_paths": config.extra_paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "live_window_ms": config.live_window.as_millis() as u64,
    }))
    .into_response())
}

async fn tasks(State(tg): Tg) -> Result<Response, ApiError> {
    let tasks = blocking(move || Ok(tg.refresh())).await?;
    Ok(axum::Json(json!({ "count": tasks.len(), "tasks": tasks })).into_response())
}

async fn task(
    State(tg): Tg,
    q: Result<Query<IdQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let id = query(q).id()?;
    let body = blocking(move || {
        let t = tg.find(&id)?;
        if let Some(l) = tg.live_of(&t.path) {
            return Ok(l.graph_json());
        }
        tg.load(&t).map(|(_, g)| g)
    })
    .await?;
    Ok(json_text(body))
}

async fn events(
    State(tg): Tg,
    q: Result<Query<IdQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q);
    let id = q.id()?;
    let after = parse_u64("afterSeq", q.after_seq.as_deref())?;
    let limit = parse_u64("limit", q.limit.as_deref())?.map_or(DEFAULT_EVENTS_LIMIT, |l| {
        (l as usize).clamp(1, MAX_EVENTS_LIMIT)
    });
    let body = blocking(move || {
        let t = tg.find(&id)?;
        let session = tg.load_session(&t)?;
        Ok(events_page(&t.id, &session.events, after, limit))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

/// Events with `seq > after` (all when `after` is `None`), at most `limit` of them; never
/// splits the events of one `seq` across pages.
fn events_page(id: &str, all: &[Event], after: Option<u64>, limit: usize) -> Value {
    let start = match after {
        Some(a) => all.partition_point(|e| e.seq <= a),
        None => 0,
    };
    let mut end = (start + limit).min(all.len());
    while end < all.len() && end > start && all[end].seq == all[end - 1].seq {
        end += 1;
    }
    let page = &all[start..end];
    let last_seq = page.last().map(|e| e.seq).or(after);
    json!({
        "session_id": id,
        "after_seq": after,
        "last_seq": last_seq,
        "more": end < all.len(),
        "total": all.len(),
        "events": page,
    })
}

async fn event(
    State(tg): Tg,
    q: Result<Query<IdQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q);
    let id = q.id()?;
    let Some(seq) = parse_u64("seq", q.seq.as_deref())? else {
        return Err(ApiError::bad_request("missing query parameter `seq`"));
    };
    let body = blocking(move || {
        let t = tg.find(&id)?;
        let session = tg.load_session(&t)?;
        let all = &session.events;
        let start = all.partition_point(|e| e.seq < seq);
        let end = all.partition_point(|e| e.seq <= seq);
        if start == end {
            return Err(ApiError::not_found(format!(
                "session `{}` has no event with seq {seq}",
                t.id
            )));
        }
        Ok(json!({
            "session_id": t.id,
            "seq": seq,
            "event": all[start],
            "events": &all[start..end],
        }))
    })
    .await?;
    Ok(axum::Json(body).into_response())
}

async fn live_feed(
    State(tg): Tg,
    q: Result<Query<IdQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, std::convert::Infallible>>>, ApiError> {
    let q = query(q);
    let id = q.id()?;
    let overview = match q.view.as_deref().map(str::trim) {
        None | Some("") | Some("graph") => false,
        Some("overview") => true,
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "query parameter `view` must be `graph` or `overview`, got `{v}`"
            )));
        }
    };
    let tg2 = tg.clone();
    let t = blocking(move || tg2.find(&id)).await?;
    let mut sub = live::subscribe(&tg, &t).await?;
    if overview {
        sub.overview = Some(live::OverviewFeed::new(tg.prices.clone()));
    }
    Ok(Sse::new(sub.into_stream(tg.shutdown.clone())).keep_alive(KeepAlive::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mindgate_taskgraph::{EventKind, TurnEndKind, TurnReason};

    fn ev(seq: u64) -> Event {
        Event::new(seq, 0, EventKind::TurnStart { turn: 1 })
    }

    #[test]
    fn pages_never_split_a_seq() {
        let all = vec![
            ev(1),
            ev(2),
            ev(2),
            Event::new(
                3,
                0,
                EventKind::TurnEnd {
                    turn: 1,
                    reason: TurnReason::new(TurnEndKind::Completed),
                },
            ),
        ];
        let p = events_page("s", &all, None, 2);
        assert_eq!(p["events"].as_array().map(Vec::len), Some(3));
        assert_eq!(p["last_seq"], 2);
        assert_eq!(p["more"], true);
        let p = events_page("s", &all, Some(2), 10);
        assert_eq!(p["events"].as_array().map(Vec::len), Some(1));
        assert_eq!(p["more"], false);
        let p = events_page("s", &all, Some(9), 10);
        assert_eq!(p["events"].as_array().map(Vec::len), Some(0));
        assert_eq!(p["last_seq"], 9);
    }
}
