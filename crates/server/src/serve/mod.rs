//! Wiring: the router, start-up, and graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State, WebSocketUpgrade};
use axum::middleware;
use axum::response::Response;
use axum::routing::{get, post};
use mindgate_protocol::MAX_FRAME_BYTES;
use mindgate_store::{CommitHook, Committed, RunStore, Writer};
use serde::Deserialize;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::ServeConfig;
use crate::error::ServerError;
use crate::hub::{Hub, new_token};
use crate::state::{AppState, FEED_CAPACITY, Stats};
use mindgate_home::{Home, token_file};

use crate::{assets, feed, guard, ingest, otlp, runs_api};

pub mod db_lock;
pub(crate) mod listener;
pub(crate) mod mount;
pub(crate) mod panic_guard;

async fn ingest_ws(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    let tasks = state.tasks.clone();
    ws.max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .read_buffer_size(ingest::READ_BUFFER_BYTES)
        .on_upgrade(move |socket| tasks.track_future(ingest::handle(socket, state)))
}

/// Query of `/ws/ui`.
#[derive(Debug, Deserialize)]
struct UiQuery {
    token: Option<String>,
}

async fn ui_ws(
    State(state): State<AppState>,
    Query(q): Query<UiQuery>,
    ws: WebSocketUpgrade,
) -> Response {
    let token = q.token.as_deref();
    let authorized = token.is_some_and(|t| guard::token_matches(t, &state.token));
    // An agent with control (`mindgate mcp --allow-control`, which holds the agent token) can
    // release gates over HTTP, so its connection counts as somebody watching; the feed itself
    // stays read-only for it.
    let watcher = authorized || token.is_some_and(|t| guard::token_matches(t, &state.agent_token));
    let tasks = state.tasks.clone();
    ws.max_message_size(MAX_FRAME_BYTES)
        .read_buffer_size(ingest::READ_BUFFER_BYTES)
        .on_upgrade(move |socket| {
            tasks.track_future(feed::handle(socket, state, authorized, watcher))
        })
}

/// The whole HTTP surface over `state`.
pub fn router(state: AppState) -> Router {
    let mut routes = Router::new()
        .route("/health", get(runs_api::health))
        .route("/ready", get(runs_api::ready))
        .route("/ingest", get(ingest_ws))
        .route("/ws/ui", get(ui_ws))
        .route("/api/runs", get(runs_api::list_runs))
        .route(
            "/api/runs/{run_id}",
            get(runs_api::get_run).delete(runs_api::delete_run),
        )
        .route("/api/runs/{run_id}/events", get(runs_api::events))
        .route("/api/runs/{run_id}/graph", get(runs_api::graph))
        .route("/api/runs/{run_id}/report", get(runs_api::report))
        .route("/api/apps", get(runs_api::apps))
        .route("/api/runs/{run_id}/nodes/{node_id}", get(runs_api::node))
        .route(
            "/api/runs/{run_id}/pauses/{pause_id}",
            get(runs_api::get_pause),
        )
        .route(
            "/api/runs/{run_id}/pauses/{pause_id}/resume",
            post(runs_api::resume),
        )
        .route(
            "/api/runs/{run_id}/replay",
            post(crate::runs_api::replay::replay),
        )
        .route("/api/pauses", get(runs_api::pauses))
        .route("/api/debug", get(runs_api::debug))
        .route(
            "/api/breakpoints",
            post(runs_api::add_breakpoint).delete(runs_api::clear_breakpoint),
        )
        .route("/api/mode", axum::routing::put(runs_api::put_mode))
        .route(
            "/api/hold-unwatched",
            axum::routing::put(runs_api::put_hold_unwatched),
        )
        .route("/api/search", get(runs_api::search))
        .route("/api/errors", get(runs_api::errors))
        .route("/api/diff", get(crate::runs_api::diff::diff))
        .route("/api/demo", post(crate::runs_api::demo::start_demo))
        .merge(crate::otlp::routes())
        .merge(crate::task_graph::router(&state))
        .merge(
            crate::memory_api::router(&state).layer(middleware::from_fn_with_state(
                state.clone(),
                crate::memory_api::notify_changes,
            )),
        );
    if let Some(mcp) = &state.config.mcp {
        routes = routes.nest_service("/mcp", mcp.router(&state));
    }
    routes
        .method_not_allowed_fallback(runs_api::method_not_allowed)
        .fallback(assets::fallback)
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(crate::serve::panic_guard::layer())
        .with_state(state)
}

/// A started server.
#[derive(Debug)]
pub struct RunningServer {
    /// Bound address.
    pub addr: SocketAddr,
    /// The OTLP port's address, when it listens (`POST /v1/traces` also works on [`Self::addr`]).
    pub otlp_addr: Option<SocketAddr>,
    /// Control token.
    pub token: String,
    /// Viewer URL, token included (`http://127.0.0.1:4747/#token=…`).
    pub url: String,
    /// Database file (empty for a PostgreSQL database).
    pub db_path: PathBuf,
    /// The run database.
    pub database: mindgate_store::Database,
    /// Token file, when one was written.
    pub token_file: Option<PathBuf>,
    /// The agent token ([`crate::guard::principal`]): what agents send instead of [`Self::token`].
    pub agent_token: String,
    /// Agent token file (`<home>/run/agent-<port>.json`), when one was written.
    pub agent_token_file: Option<PathBuf>,
    /// Runs a previous process left `running`, now `abandoned`.
    pub reconciled: Vec<String>,
    shutdown: CancellationToken,
    handle: tokio::task::JoinHandle<Result<(), ServerError>>,
}

impl RunningServer {
    /// `ws://…/ingest` for apps.
    pub fn ingest_url(&self) -> String {
        format!("ws://{}/ingest", self.addr)
    }

    /// `http://…` base URL without the token.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `ws://…/ingest?token=…`: the ingest URL with the token, which apps need
    /// when remote access is on.
    pub fn ingest_url_with_token(&self) -> String {
        format!("ws://{}/ingest?token={}", self.addr, self.token)
    }

    /// Stops accepting work, closes every socket (waiting at most
    /// [`ServeConfig::shutdown_deadline`] for them), flushes the store, removes
    /// the token file if it is still this server's, releases the database
    /// lock, and waits for all of it.
    pub async fn stop(self) -> Result<(), ServerError> {
        self.shutdown.cancel();
        match self.handle.await {
            Ok(r) => r,
            Err(e) => Err(ServerError::Serve(std::io::Error::other(e.to_string()))),
        }
    }
}

/// Binds, locks the database, opens the store, writes the token file and
/// starts serving in the background.
///
/// The order matters: a start that cannot have the port, or whose database
/// another server holds, fails before it touches the database (so the running
/// server's live runs are not marked `abandoned` by a start that goes nowhere).
pub async fn start(mut config: ServeConfig) -> Result<RunningServer, ServerError> {
    if !config.host.is_loopback() && !config.allow_remote {
        return Err(ServerError::RemoteNotAllowed(config.host));
    }
    if config.allow_remote {
        if config.host.is_unspecified() && config.allowed_hosts.is_empty() {
            return Err(ServerError::NoAllowedHosts(config.host));
        }
        if !config.host.is_unspecified() && !config.host.is_loopback() {
            config.allowed_hosts.push(match config.host {
                std::net::IpAddr::V6(v6) => format!("[{v6}]"),
                v4 => v4.to_string(),
            });
        }
    }
    // 0. The prices runs are costed with: a bad `prices.toml` stops the start, naming its line.
    let prices = mindgate_pricing::PriceTable::load(&Home::at(&config.home).prices_file())?;
    // 1. The port: a busy one ends the start here, before any database work.
    let bind = SocketAddr::new(config.host, config.port);
    let listener = match tokio::net::TcpListener::bind(bind).await {
        Ok(l) => l,
        Err(source) if source.kind() == std::io::ErrorKind::AddrInUse => {
            return Err(ServerError::AddrInUse {
                addr: bind,
                holder: token_file::read(&Home::at(&config.home), config.port)
                    .filter(|_| config.port != 0),
            });
        }
        Err(source) => return Err(ServerError::Bind { addr: bind, source }),
    };
    let addr = listener
        .local_addr()
        .map_err(|source| ServerError::Bind { addr: bind, source })?;
    // 1b. The OTLP port.
    let otlp_listener = bind_otlp(&config).await?;
    let otlp_addr = otlp_listener.as_ref().and_then(|l| l.local_addr().ok());
    // 2. The database lock: one server per SQLite file (a PostgreSQL database
    // referees its own writers).
    let database = config.database();
    let db_lock = match &database {
        mindgate_store::Database::Sqlite(path) => Some(db_lock::acquire(
            path,
            db_lock::LockHolder {
                pid: std::process::id(),
                port: addr.port(),
            },
        )?),
        mindgate_store::Database::Postgres(_) => None,
    };
    // 2b. The cluster: instances on one PostgreSQL database share gates, breakpoints
    // and the mode (`mindgate_cluster`).
    let joined = match &database {
        mindgate_store::Database::Postgres(url) => {
            let url = (**url).clone();
            let (label, timings) = (addr.to_string(), config.cluster);
            let joined = tokio::task::spawn_blocking(move || {
                mindgate_cluster::Cluster::join(
                    &url,
                    &label,
                    crate::hub::VIEWER_VERSION,
                    timings,
                    crate::hub::default_debug_state(),
                )
            })
            .await
            .map_err(|e| ServerError::Serve(std::io::Error::other(e.to_string())))??;
            tracing::info!(instance = %joined.cluster.instance_id(), "joined the instances on the PostgreSQL database");
            Some(joined)
        }
        mindgate_store::Database::Sqlite(_) => None,
    };
    let leave_on_error = joined.as_ref().map(|j| j.cluster.clone());
    let leave = move || {
        if let Some(c) = leave_on_error {
            std::thread::spawn(move || c.leave());
        }
    };
    // 3. The database.
    let (feed, _) = broadcast::channel::<Arc<Committed>>(FEED_CAPACITY);
    let hook_feed = feed.clone();
    let hook: CommitHook = Box::new(move |c| {
        let _ = hook_feed.send(Arc::new(c));
    });
    let opened_database = database.clone();
    let mut writer_config = config.writer.clone();
    // Live events are only built while some viewer is connected.
    let listeners = feed.clone();
    writer_config.events_wanted = Some(Arc::new(move || listeners.receiver_count() > 0));
    // In a cluster the writer stamps its runs with this instance, and leaves the runs
    // of live instances alone at start.
    if let Some(j) = &joined {
        writer_config.instance_id = Some(j.cluster.instance_id().to_owned());
    }
    let relayed = feed.clone();
    let opened = tokio::task::spawn_blocking(move || {
        let (writer, report) = Writer::open_database(&opened_database, writer_config, Some(hook))?;
        let opened = RunStore::open_database(&opened_database).and_then(|store| {
            let follower = crate::cluster::feed_relay::start(&opened_database, &writer, &relayed)?;
            Ok((store, follower))
        });
        match opened {
            Ok((store, follower)) => {
                Ok::<_, ServerError>((writer, report, store.with_prices(prices), follower))
            }
            Err(e) => {
                let _ = writer.close();
                Err(e.into())
            }
        }
    })
    .await
    .map_err(|e| ServerError::Serve(std::io::Error::other(e.to_string())))
    .and_then(|r| r);
    let (writer, report, store, follower) = match opened {
        Ok(o) => o,
        Err(e) => {
            leave();
            return Err(e);
        }
    };
    let token = config.token.clone().unwrap_or_else(new_token);
    let url = format!("http://{addr}/#token={token}");
    let owned_token_file = token_file::TokenFile {
        port: addr.port(),
        pid: std::process::id(),
        token: token.clone(),
        url: url.clone(),
    };
    let agent_token = crate::guard::principal::agent_token_for(&token);
    let owned_agent_file = token_file::TokenFile {
        port: addr.port(),
        pid: std::process::id(),
        token: agent_token.clone(),
        url: format!("http://{addr}"),
    };
    let (token_file, agent_token_file) = if config.write_token_file {
        let home = Home::at(&config.home);
        match token_file::write(&home, &owned_token_file)
            .and_then(|path| Ok((path, token_file::write_agent(&home, &owned_agent_file)?)))
        {
            Ok((path, agent_path)) => (Some(path), Some(agent_path)),
            Err(e) => {
                let _ = writer.close();
                leave();
                return Err(e.into());
            }
        }
    } else {
        (None, None)
    };
    let shutdown = CancellationToken::new();
    let deadline = config.shutdown_deadline;
    let config_home = config.home.clone();
    let memory_db = config.memory_db.clone();
    let config_otlp = config.otlp;
    let task_graphs = Arc::new(crate::task_graph::TaskGraphs::new(
        config.task_graph.clone(),
        shutdown.clone(),
    ));
    let live_graphs = Arc::new(crate::feed::live_graph::LiveGraphs::new(config.live_graphs));
    let state = AppState {
        hub: Arc::new(Hub::new()),
        store: Arc::new(store),
        writer: writer.clone(),
        feed,
        token: Arc::from(token.as_str()),
        agent_token: Arc::from(agent_token.as_str()),
        config: Arc::new(config),
        port: addr.port(),
        shutdown: shutdown.clone(),
        tasks: TaskTracker::new(),
        stats: Arc::new(Stats::default()),
        graph_reads: Arc::default(),
        live_graphs,
        memory: Arc::new(mindgate_memory::agent::LazyMemory::new(
            &config_home,
            memory_db,
        )),
        memory_changed: Arc::default(),
        otlp: Arc::new(otlp::OtlpIngest::new(config_otlp)),
        task_graphs,
    };
    if let Some(joined) = joined {
        state.hub.join_cluster(joined.cluster, joined.debug);
        spawn_cluster_listener(&state, joined.events);
    }
    let saved = crate::hub::viewer_settings::load(&state.config.home);
    state
        .hub
        .set_hold_unwatched(state.config.hold_unwatched || saved.hold_unwatched);
    crate::hub::sweeper::spawn(&state);
    spawn_pruner(&state);
    otlp::spawn_expirer(&state);
    if let (Some(listener), Some(addr)) = (otlp_listener, otlp_addr) {
        let app = otlp::port_router(state.clone(), addr.port());
        let limits = state.config.http;
        let stop = shutdown.clone();
        state.tasks.spawn(async move {
            if let Err(e) = crate::serve::listener::serve(listener, app, limits, stop).await {
                tracing::warn!(error = %e, "the OTLP port stopped serving");
            }
        });
        tracing::info!(%addr, "OTLP/HTTP traces accepted (POST /v1/traces)");
    }
    let app = router(state.clone());
    let stop = shutdown.clone();
    let cleanup_file = token_file.clone();
    let cleanup_agent_file = agent_token_file.clone();
    let handle = tokio::spawn(async move {
        let limits = state.config.http;
        let serving = crate::serve::listener::serve(listener, app, limits, stop.clone());
        let tasks = state.tasks.clone();
        let drained = async move {
            let served = serving.await.map_err(ServerError::Serve);
            // Sockets are closing (they watch the same token); wait for them so
            // every event they received reaches the writer.
            tasks.close();
            tasks.wait().await;
            served
        };
        let served = tokio::select! {
            served = drained => served,
            () = async {
                stop.cancelled().await;
                tokio::time::sleep(deadline).await;
            } => {
                // A half-sent request or a client that ignores the close frame
                // must not hold the stop forever: leave them behind.
                tracing::warn!(
                    deadline_ms = deadline.as_millis() as u64,
                    "connections still open at the shutdown deadline; closing them"
                );
                Ok(())
            }
        };
        // The other instances see this one leave: its gates are released there.
        if let Some(cluster) = state.hub.cluster().cloned() {
            let _ = tokio::task::spawn_blocking(move || cluster.leave()).await;
        }
        // Everything handed to the writer is committed before it stops; the follower
        // of the other instances' commits stops with it (off the async workers).
        let w = state.writer.clone();
        let closed = tokio::task::spawn_blocking(move || {
            if let Some(follower) = follower {
                follower.stop();
            }
            w.close()
        })
        .await;
        for (path, owned) in [
            (cleanup_file, &owned_token_file),
            (cleanup_agent_file, &owned_agent_file),
        ] {
            if let Some(path) = path
                && token_file::remove_if_owned(&path, owned) == token_file::Removal::OwnedByAnother
            {
                tracing::info!(
                    path = %path.display(),
                    "token file now belongs to another server; left in place"
                );
            }
        }
        // Only now may another server have the database.
        drop(db_lock);
        tracing::info!("server stopped; store flushed");
        served?;
        match closed {
            Ok(r) => r.map_err(ServerError::from),
            Err(e) => Err(ServerError::Serve(std::io::Error::other(e.to_string()))),
        }
    });
    tracing::info!(%addr, "mindgate serving");
    Ok(RunningServer {
        addr,
        otlp_addr,
        token,
        agent_token,
        agent_token_file,
        url,
        db_path: state_db_path(&writer),
        database,
        token_file,
        reconciled: report.reconciled,
        shutdown,
        handle,
    })
}

/// Binds the OTLP port: `None` when it is off, or when the default port is taken by
/// another program (warned: the main port still takes `/v1/traces`).
async fn bind_otlp(config: &ServeConfig) -> Result<Option<tokio::net::TcpListener>, ServerError> {
    let Some(port) = config.otlp_port else {
        return Ok(None);
    };
    let bind = SocketAddr::new(config.host, port);
    match tokio::net::TcpListener::bind(bind).await {
        Ok(l) => Ok(Some(l)),
        Err(source)
            if source.kind() == std::io::ErrorKind::AddrInUse
                && port == crate::config::DEFAULT_OTLP_PORT =>
        {
            tracing::warn!(
                %bind,
                "the OTLP port is in use (another collector?); OTLP exporters can send to \
                 the main port's /v1/traces instead, or pick one with --otlp-port"
            );
            Ok(None)
        }
        Err(source) if source.kind() == std::io::ErrorKind::AddrInUse => {
            Err(ServerError::AddrInUse {
                addr: bind,
                holder: None,
            })
        }
        Err(source) => Err(ServerError::Bind { addr: bind, source }),
    }
}

/// Applies the cluster listener's events to the hub until the server stops.
fn spawn_cluster_listener(
    state: &AppState,
    mut events: tokio::sync::mpsc::UnboundedReceiver<mindgate_cluster::ClusterEvent>,
) {
    let orphans = state.clone();
    let state = state.clone();
    state.tasks.clone().spawn(async move {
        loop {
            let event = tokio::select! {
                _ = state.shutdown.cancelled() => return,
                e = events.recv() => e,
            };
            let Some(event) = event else { return };
            if let Some(live) = state.hub.on_cluster_event(event) {
                abandon_orphans(&state, live).await;
            }
        }
    });
    // The runs a stopped instance left `running` (and nobody took over) are abandoned now.
    let state = orphans;
    state.tasks.clone().spawn(async move {
        let Some(cluster) = state.hub.cluster().cloned() else {
            return;
        };
        match tokio::task::spawn_blocking(move || cluster.instances()).await {
            Ok(Ok(live)) => abandon_orphans(&state, live.into_iter().map(|i| i.id).collect()).await,
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot list the live instances"),
            Err(_) => {}
        }
    });
}

/// Marks `abandoned` the runs left `running` by instances not in `live`.
async fn abandon_orphans(state: &AppState, live: Vec<String>) {
    let writer = state.writer.clone();
    match tokio::task::spawn_blocking(move || writer.abandon_orphans(live)).await {
        Ok(Ok(runs)) if !runs.is_empty() => tracing::info!(
            count = runs.len(),
            "runs of instances that stopped marked abandoned"
        ),
        Ok(Err(e)) => {
            tracing::warn!(error = %mindgate_errors::error_chain(&e), "abandoning orphaned runs failed")
        }
        _ => {}
    }
}

/// Prunes finished runs beyond the retention limits now and every hour.
fn spawn_pruner(state: &AppState) {
    let retention = state.config.retention;
    if retention == mindgate_store::Retention::KEEP_ALL {
        return;
    }
    let state = state.clone();
    state.tasks.clone().spawn(async move {
        let mut every = tokio::time::interval(crate::config::PRUNE_EVERY);
        loop {
            tokio::select! {
                _ = state.shutdown.cancelled() => return,
                _ = every.tick() => {}
            }
            let writer = state.writer.clone();
            match tokio::task::spawn_blocking(move || writer.prune(retention)).await {
                Ok(Ok(gone)) if !gone.is_empty() => tracing::info!(
                    count = gone.len(),
                    keep_runs = retention.keep_runs,
                    keep_days = retention.keep_days,
                    "old runs pruned"
                ),
                Ok(Err(e)) => {
                    tracing::warn!(error = %mindgate_errors::error_chain(&e), "pruning old runs failed")
                }
                _ => {}
            }
        }
    });
}

fn state_db_path(writer: &Writer) -> PathBuf {
    writer.path().to_path_buf()
}

/// Runs a server until `shutdown` completes, then stops it gracefully.
pub async fn serve(
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let server = start(config).await?;
    shutdown.await;
    server.stop().await
}
