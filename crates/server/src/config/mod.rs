//! Server configuration, defaults and the environment variables that set them.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mindgate_home::{DEFAULT_HOST, DEFAULT_PORT, Home};
use mindgate_store::{Retention, WriterConfig};

pub mod http;

/// How long a run whose app disconnected stays `running` before it is `abandoned`.
pub const DEFAULT_ABANDON_GRACE: Duration = Duration::from_secs(15);
/// How long a new ingest connection may take to say `hello`.
pub const DEFAULT_HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How often finished runs beyond the retention limits are pruned (also once on start).
pub const PRUNE_EVERY: Duration = Duration::from_secs(3_600);
/// How long a stopping server waits for open connections (a half-sent request,
/// an app holding a gate) before it closes them and flushes the store.
pub const DEFAULT_SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);
/// How long a resume request waits for the app's `exec.resumed` / `exec.refused`.
pub const DEFAULT_RESUME_WAIT: Duration = Duration::from_secs(2);

/// The OTLP/HTTP port exporters send to by default (`OTEL_EXPORTER_OTLP_ENDPOINT`
/// `http://127.0.0.1:4318`).
pub const DEFAULT_OTLP_PORT: u16 = 4318;

/// Everything `serve` needs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Address to bind.
    pub host: IpAddr,
    /// Port to bind (0 = any free port).
    pub port: u16,
    /// Remote access: allows a non-loopback bind address, requires the token on
    /// every request but the viewer's static files, and accepts the `Host`
    /// names in [`ServeConfig::allowed_hosts`] besides the loopback ones.
    pub allow_remote: bool,
    /// With [`ServeConfig::allow_remote`]: the `Host` names (`name` on the bound
    /// port, or `name:port`) remote clients may use. A specific bind address
    /// is added by [`crate::start`]; other names are refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Home directory (token files live in `<home>/run/`).
    pub home: PathBuf,
    /// SQLite database file (unused when [`ServeConfig::postgres`] is set).
    pub db_path: PathBuf,
    /// A PostgreSQL database for the runs instead of the SQLite file (migrated on start;
    /// no file lock: the database referees its own writers).
    pub postgres: Option<mindgate_store::PostgresUrl>,
    /// Grace before a disconnected app's unfinished runs become `abandoned`.
    pub abandon_grace: Duration,
    /// Deadline for the first `hello` frame.
    pub hello_timeout: Duration,
    /// How long a delivered resume waits for the app's answer before it is
    /// reported `resumed` anyway.
    pub resume_wait: Duration,
    /// How long [`crate::RunningServer::stop`] waits for open connections
    /// before it closes them.
    pub shutdown_deadline: Duration,
    /// Fixed control token (random per start when `None`).
    pub token: Option<String>,
    /// Write `<home>/run/serve-<port>.json`.
    pub write_token_file: bool,
    /// Writer tuning.
    pub writer: WriterConfig,
    /// Finished runs kept; pruned on start and every [`PRUNE_EVERY`].
    pub retention: Retention,
    /// Where `/task-graph/api/*` looks for coding-agent sessions.
    pub task_graph: mindgate_taskgraph::DiscoveryConfig,
    /// Connection caps and the header-read / idle timeout.
    pub http: http::HttpLimits,
    /// The agent-memory database (`<home>/memory.db`, or a PostgreSQL database; never
    /// pruned with runs).
    pub memory_db: mindgate_memory::MemoryDb,
    /// The user memory routes and `/mcp` memory tools use when a request names none.
    pub memory_user: Option<String>,
    /// The chat model `POST /api/memory/sessions/{id}/consolidate` asks (`None`:
    /// consolidation is off and the route answers 503 `unavailable`). The binary sets it
    /// from `MINDGATE_CHAT_*`.
    pub memory_chat: Option<mindgate_memory::consolidate::ChatConfig>,
    /// The OTLP/HTTP port (`POST /v1/traces` alone; the main port serves it too): `None`
    /// serves OTLP on the main port only. A taken [`DEFAULT_OTLP_PORT`] is warned about and
    /// skipped; any other taken port stops the start.
    pub otlp_port: Option<u16>,
    /// Live rules of OTLP traces (the quiet timeout that finishes a run whose root span
    /// never came).
    pub otlp: mindgate_otlp::TrackerConfig,
    /// The service served at `/mcp` (behind the guard, with the token on every
    /// request); `None` leaves `/mcp` unserved. The binary mounts the MCP tools here.
    pub mcp: Option<crate::extensions::Mount>,
    /// How `POST /api/demo` starts the scripted demo agent against this server (the
    /// binary supplies it); `None`: the route answers `503 unavailable`.
    pub demo: Option<crate::extensions::DemoLauncher>,
    /// How many runs, and how many of their nodes and instances, the `/ws/ui`
    /// run graphs hold at once (`docs/http-api.md#limits`).
    pub live_graphs: crate::live_graphs::LiveGraphBounds,
    /// Heartbeat and failure detection of the instances sharing a PostgreSQL database
    /// (unused on SQLite).
    pub cluster: mindgate_cluster::ClusterConfig,
    /// Keep gates held only by pause on error while nobody with control watches
    /// (`serve --hold-unwatched`); otherwise they are continued after `unwatched_grace`.
    pub hold_unwatched: bool,
    /// How long a default gate stays held unwatched ([`crate::hub::UNWATCHED_GRACE`]).
    pub unwatched_grace: Duration,
}

impl ServeConfig {
    /// The run database: [`ServeConfig::postgres`] when set, else the SQLite file.
    pub fn database(&self) -> mindgate_store::Database {
        match &self.postgres {
            Some(url) => mindgate_store::Database::Postgres(Box::new(url.clone())),
            None => mindgate_store::Database::Sqlite(self.db_path.clone()),
        }
    }

    /// Defaults for `home`: [`DEFAULT_HOST`]:[`DEFAULT_PORT`], database `<home>/mindgate.db`.
    pub fn new(home: &Path) -> ServeConfig {
        ServeConfig {
            host: DEFAULT_HOST,
            port: DEFAULT_PORT,
            allow_remote: false,
            allowed_hosts: Vec::new(),
            home: home.to_path_buf(),
            db_path: Home::at(home).run_db(),
            postgres: None,
            abandon_grace: DEFAULT_ABANDON_GRACE,
            hello_timeout: DEFAULT_HELLO_TIMEOUT,
            resume_wait: DEFAULT_RESUME_WAIT,
            shutdown_deadline: DEFAULT_SHUTDOWN_DEADLINE,
            token: None,
            write_token_file: true,
            writer: WriterConfig::default(),
            retention: Retention::default(),
            task_graph: mindgate_taskgraph::DiscoveryConfig::from_env(),
            http: http::HttpLimits::from_env(),
            memory_db: mindgate_memory::MemoryDb::Sqlite(Home::at(home).memory_db()),
            memory_user: None,
            memory_chat: None,
            otlp_port: Some(DEFAULT_OTLP_PORT),
            otlp: mindgate_otlp::TrackerConfig::default(),
            mcp: None,
            demo: None,
            live_graphs: crate::live_graphs::LiveGraphBounds::default(),
            cluster: mindgate_cluster::ClusterConfig::default(),
            hold_unwatched: false,
            unwatched_grace: crate::hub::UNWATCHED_GRACE,
        }
    }

    /// Settings for tests: any free loopback port, short grace and hello timeout.
    pub fn for_tests(home: &Path) -> ServeConfig {
        ServeConfig {
            port: 0,
            abandon_grace: Duration::from_millis(300),
            hello_timeout: Duration::from_millis(500),
            task_graph: mindgate_taskgraph::DiscoveryConfig::empty(),
            http: http::HttpLimits::default(),
            otlp_port: None,
            cluster: mindgate_cluster::ClusterConfig {
                heartbeat: Duration::from_millis(200),
                stale_after: Duration::from_millis(1_500),
                resync_every: Duration::from_secs(15),
            },
            ..ServeConfig::new(home)
        }
    }
}
