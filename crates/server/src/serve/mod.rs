//! Wiring: start-up in named steps ([`startup`]), the router ([`routes`]), the accept
//! loop ([`listener`]), and graceful shutdown ([`shutdown`]).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;

use mindgate_home::Home;
use tokio_util::sync::CancellationToken;

use crate::config::ServeConfig;
use crate::error::ServerError;

pub mod db_lock;
pub(crate) mod listener;
mod routes;
mod shutdown;
mod startup;

pub use routes::router;

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
    startup::check_exposure(&mut config)?;
    // 0. The prices runs are costed with: a bad `prices.toml` stops the start, naming its line.
    let prices = mindgate_pricing::PriceTable::load(&Home::at(&config.home).prices_file())?;
    // 1. The ports: a busy one ends the start here, before any database work.
    let (listener, addr) = startup::bind_main(&config).await?;
    let otlp_listener = startup::bind_otlp(&config).await?;
    let otlp_addr = otlp_listener.as_ref().and_then(|l| l.local_addr().ok());
    // 2. The database lock: one server per SQLite file.
    let database = config.database();
    let db_lock = startup::lock_database(&database, addr)?;
    // 2b. The cluster: instances on one PostgreSQL database share gates, breakpoints
    // and the mode.
    let joined = crate::cluster::join(&database, addr, config.cluster).await?;
    let leave = crate::cluster::LeaveOnError::new(joined.as_ref());
    // 3. The database.
    let instance_id = joined.as_ref().map(|j| j.cluster.instance_id().to_owned());
    let opened = match startup::open_store(&database, &config, instance_id, prices).await {
        Ok(opened) => opened,
        Err(e) => {
            leave.leave();
            return Err(e);
        }
    };
    // 4. The tokens and their files.
    let tokens = match startup::write_token_files(&config, addr) {
        Ok(tokens) => tokens,
        Err(e) => {
            let _ = opened.writer.close();
            leave.leave();
            return Err(e);
        }
    };
    // 5. The shared state, the cluster handed to the hub, the background tasks.
    let shutdown = CancellationToken::new();
    let state = startup::build_state(
        config,
        addr,
        &tokens,
        opened.store,
        &opened.writer,
        opened.feed,
        &shutdown,
    );
    if let Some(joined) = joined {
        crate::cluster::attach(&state, joined);
    }
    startup::spawn_background(&state, otlp_listener.zip(otlp_addr));
    // 6. Serving, until the stop.
    let app = router(state.clone());
    let release = shutdown::Release {
        follower: opened.follower,
        token_files: [
            (tokens.file.clone(), tokens.owned),
            (tokens.agent_file.clone(), tokens.owned_agent),
        ],
        db_lock,
    };
    let handle = shutdown::spawn_serving(state, listener, app, release);
    tracing::info!(%addr, "mindgate serving");
    Ok(RunningServer {
        addr,
        otlp_addr,
        token: tokens.token,
        agent_token: tokens.agent_token,
        agent_token_file: tokens.agent_file,
        url: tokens.url,
        db_path: opened.writer.path().to_path_buf(),
        database,
        token_file: tokens.file,
        reconciled: opened.report.reconciled,
        shutdown,
        handle,
    })
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
