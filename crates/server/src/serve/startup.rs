//! The steps of [`super::start`] before the server serves, in their order: the exposure
//! rules, the ports, the database lock, the store, the token files, the shared state and
//! the background tasks.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use mindgate_home::{Home, token_file};
use mindgate_pricing::PriceTable;
use mindgate_store::{CommitHook, Committed, Database, Follower, OpenReport, RunStore, Writer};
use tokio::net::TcpListener;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::db_lock;
use crate::config::ServeConfig;
use crate::error::ServerError;
use crate::hub::Hub;
use crate::state::{AppState, FEED_CAPACITY, Stats};

/// Refuses a non-loopback address without `allow_remote`, and a wildcard one without
/// allowed hosts; a specific remote address becomes an allowed host itself.
pub(super) fn check_exposure(config: &mut ServeConfig) -> Result<(), ServerError> {
    if !config.host.is_loopback() && !config.allow_remote {
        return Err(ServerError::RemoteNotAllowed(config.host));
    }
    if config.allow_remote {
        if config.host.is_unspecified() && config.allowed_hosts.is_empty() {
            return Err(ServerError::NoAllowedHosts(config.host));
        }
        if !config.host.is_unspecified() && !config.host.is_loopback() {
            config.allowed_hosts.push(match config.host {
                IpAddr::V6(v6) => format!("[{v6}]"),
                v4 => v4.to_string(),
            });
        }
    }
    Ok(())
}

/// Binds the main port: a busy one ends the start here, before any database work, naming
/// the server that holds it when its token file says so.
pub(super) async fn bind_main(
    config: &ServeConfig,
) -> Result<(TcpListener, SocketAddr), ServerError> {
    let bind = SocketAddr::new(config.host, config.port);
    let listener = match TcpListener::bind(bind).await {
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
    Ok((listener, addr))
}

/// Binds the OTLP port: `None` when it is off, or when the default port is taken by
/// another program (warned: the main port still takes `/v1/traces`).
pub(super) async fn bind_otlp(config: &ServeConfig) -> Result<Option<TcpListener>, ServerError> {
    let Some(port) = config.otlp_port else {
        return Ok(None);
    };
    let bind = SocketAddr::new(config.host, port);
    match TcpListener::bind(bind).await {
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

/// One server per SQLite file: the lock, held until the store is flushed and closed (a
/// PostgreSQL database referees its own writers: `None`).
pub(super) fn lock_database(
    database: &Database,
    addr: SocketAddr,
) -> Result<Option<db_lock::DbLock>, ServerError> {
    match database {
        Database::Sqlite(path) => Ok(Some(db_lock::acquire(
            path,
            db_lock::LockHolder {
                pid: std::process::id(),
                port: addr.port(),
            },
        )?)),
        Database::Postgres(_) => Ok(None),
    }
}

/// The opened run store: the writer, what opening it found, the read side (priced), the
/// commit feed and, on PostgreSQL, the follower of the other instances' commits.
pub(super) struct OpenedStore {
    pub(super) writer: Writer,
    pub(super) report: OpenReport,
    pub(super) store: RunStore,
    pub(super) feed: broadcast::Sender<Arc<Committed>>,
    pub(super) follower: Option<Follower>,
}

/// Opens the database: the writer (its commits go into the feed; live events are built
/// only while somebody listens; in a cluster its runs are stamped with `instance_id`), the
/// read side and the feed relay. A failure closes what was opened.
pub(super) async fn open_store(
    database: &Database,
    config: &ServeConfig,
    instance_id: Option<String>,
    prices: PriceTable,
) -> Result<OpenedStore, ServerError> {
    let (feed, _) = broadcast::channel::<Arc<Committed>>(FEED_CAPACITY);
    let hook_feed = feed.clone();
    let hook: CommitHook = Box::new(move |c| {
        let _ = hook_feed.send(Arc::new(c));
    });
    let mut writer_config = config.writer.clone();
    let listeners = feed.clone();
    writer_config.events_wanted = Some(Arc::new(move || listeners.receiver_count() > 0));
    writer_config.instance_id = instance_id;
    let database = database.clone();
    let relayed = feed.clone();
    tokio::task::spawn_blocking(move || {
        let (writer, report) = Writer::open_database(&database, writer_config, Some(hook))?;
        let opened = RunStore::open_database(&database).and_then(|store| {
            let follower = crate::cluster::feed_relay::start(&database, &writer, &relayed)?;
            Ok((store, follower))
        });
        match opened {
            Ok((store, follower)) => Ok(OpenedStore {
                writer,
                report,
                store: store.with_prices(prices),
                feed: relayed,
                follower,
            }),
            Err(e) => {
                let _ = writer.close();
                Err(e.into())
            }
        }
    })
    .await
    .map_err(|e| ServerError::Serve(std::io::Error::other(e.to_string())))?
}

/// The two tokens of this start and their files: the control token (a person's) and the
/// agent token derived from it ([`crate::guard::principal`]).
pub(super) struct Tokens {
    pub(super) token: String,
    pub(super) agent_token: String,
    pub(super) url: String,
    /// What this server wrote, so a stop removes a file only while it is still its own.
    pub(super) owned: token_file::TokenFile,
    pub(super) owned_agent: token_file::TokenFile,
    pub(super) file: Option<PathBuf>,
    pub(super) agent_file: Option<PathBuf>,
}

/// Makes (or takes from the configuration) the control token, derives the agent token
/// and writes both token files when the configuration asks for them.
pub(super) fn write_token_files(
    config: &ServeConfig,
    addr: SocketAddr,
) -> Result<Tokens, ServerError> {
    let token = config.token.clone().unwrap_or_else(crate::hub::new_token);
    let url = format!("http://{addr}/#token={token}");
    let owned = token_file::TokenFile {
        port: addr.port(),
        pid: std::process::id(),
        token: token.clone(),
        url: url.clone(),
    };
    let agent_token = crate::guard::principal::agent_token_for(&token);
    let owned_agent = token_file::TokenFile {
        port: addr.port(),
        pid: std::process::id(),
        token: agent_token.clone(),
        url: format!("http://{addr}"),
    };
    let (file, agent_file) = if config.write_token_file {
        let home = Home::at(&config.home);
        let path = token_file::write(&home, &owned)?;
        (
            Some(path),
            Some(token_file::write_agent(&home, &owned_agent)?),
        )
    } else {
        (None, None)
    };
    Ok(Tokens {
        token,
        agent_token,
        url,
        owned,
        owned_agent,
        file,
        agent_file,
    })
}

/// The state every handler shares, over the opened store and this start's tokens.
pub(super) fn build_state(
    config: ServeConfig,
    addr: SocketAddr,
    tokens: &Tokens,
    store: RunStore,
    writer: &Writer,
    feed: broadcast::Sender<Arc<Committed>>,
    shutdown: &CancellationToken,
) -> AppState {
    let task_graphs = Arc::new(crate::task_graph::TaskGraphs::new(
        config.task_graph.clone(),
        shutdown.clone(),
        store.prices().clone(),
        mindgate_home::Home::at(&config.home).session_search_db(),
    ));
    let live_graphs = Arc::new(crate::live_graphs::LiveGraphs::new(config.live_graphs));
    let memory = Arc::new(mindgate_memory::agent::LazyMemory::new(
        &config.home,
        config.memory_db.clone(),
    ));
    let otlp = Arc::new(crate::otlp_traces::OtlpTraces::new(config.otlp));
    AppState {
        hub: Arc::new(Hub::new()),
        store: Arc::new(store),
        writer: writer.clone(),
        feed,
        token: Arc::from(tokens.token.as_str()),
        agent_token: Arc::from(tokens.agent_token.as_str()),
        config: Arc::new(config),
        port: addr.port(),
        shutdown: shutdown.clone(),
        tasks: TaskTracker::new(),
        stats: Arc::new(Stats::default()),
        graph_reads: Arc::default(),
        live_graphs,
        memory,
        memory_changed: Arc::default(),
        otlp,
        task_graphs,
    }
}

/// The hold-unwatched setting (flag or saved), then the tasks that run beside the
/// requests: the sweeper of unwatched gates, the pruner, the OTLP trace expirer and the
/// OTLP port's accept loop.
pub(super) fn spawn_background(state: &AppState, otlp: Option<(TcpListener, SocketAddr)>) {
    let saved = crate::hub::viewer_settings::load(&state.config.home);
    state
        .hub
        .set_hold_unwatched(state.config.hold_unwatched || saved.hold_unwatched);
    crate::hub::sweeper::spawn(
        state.hub.clone(),
        state.config.unwatched_grace,
        &state.shutdown,
        &state.tasks,
    );
    spawn_pruner(state);
    crate::otlp::spawn_expirer(state);
    if let Some((listener, addr)) = otlp {
        let app = crate::otlp::port_router(state.clone(), addr.port());
        let limits = state.config.http;
        let stop = state.shutdown.clone();
        state.tasks.spawn(async move {
            if let Err(e) = super::listener::serve(listener, app, limits, stop).await {
                tracing::warn!(error = %e, "the OTLP port stopped serving");
            }
        });
        tracing::info!(%addr, "OTLP/HTTP traces accepted (POST /v1/traces)");
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
