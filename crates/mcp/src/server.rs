//! The MCP server: tool routing, lazy database access, transports.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mindgate_home::{DEFAULT_PORT, Home};
use mindgate_store::{Database, RunStore};
use mindgate_taskgraph::DiscoveryConfig;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::control::{self, HttpControl, PauseControl, ServerEndpoint};
use crate::error::ToolError;
use crate::output::{Links, ToolOutput, bound_error_data, bound_result, to_result};
use crate::params::{
    AnnotateArgs, DatasetAddArgs, DatasetListArgs, DatasetShowArgs, DiffRunsArgs, FindErrorsArgs,
    GetNodeArgs, GetRunArgs, GetTaskGraphArgs, GetThreadArgs, GetUsageArgs, ListAnnotationsArgs,
    ListPausesArgs, ListRunsArgs, ListTasksArgs, ListThreadsArgs, ResumeArgs, SearchEventsArgs,
    SearchTasksArgs,
};
use crate::{runs, tasks};
use mindgate_memory::agent::LazyMemory;

/// Names of the tools offered only with validation allowed.
pub const VALIDATE_TOOLS: [&str; 2] = ["fact_validate", "fact_reject"];

/// Names of the tools offered only with control allowed.
pub const CONTROL_TOOLS: [&str; 2] = ["list_pauses", "resume"];

/// What the MCP server reads and where it links to.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// Mindgate's home (token files of running servers live in `<home>/run/`).
    pub home: PathBuf,
    /// The run database: a SQLite file (opened read-only) or a PostgreSQL database,
    /// opened on first use (and again on the next call when that failed).
    pub database: Database,
    /// Where coding-agent sessions are looked for.
    pub discovery: DiscoveryConfig,
    /// Viewer port for deep links and control. `None`: the port of the
    /// running server found in `<home>/run/`, else [`mindgate_home::DEFAULT_PORT`].
    pub port: Option<u16>,
    /// Offer `list_pauses` and `resume` (otherwise they are not listed).
    pub allow_control: bool,
    /// A fixed server to send control requests to (set when the tools are
    /// mounted inside `mindgate serve` itself); `None`: find it from the token files.
    pub control_endpoint: Option<ServerEndpoint>,
    /// The referee the control tools use (set by `mindgate serve` to its hub,
    /// in process). `None`: [`HttpControl`] to `control_endpoint` or to the
    /// server found from the token files.
    pub control: Option<Arc<dyn PauseControl>>,
    /// The memory store of the memory tools (`mindgate serve` passes its own); `None`:
    /// `<home>/memory.db`, opened on first use.
    pub memory: Option<Arc<LazyMemory>>,
    /// The one user the memory tools act for (`--memory-user`): a call naming another
    /// `userId` is refused, another user's record ids are not found. `None`: each call
    /// names its `userId` and nothing separates users.
    pub memory_user: Option<String>,
    /// Offer `fact_validate` and `fact_reject` (otherwise they are not listed).
    pub allow_validate: bool,
}

impl McpConfig {
    /// Defaults for `home`: database `<home>/mindgate.db`, sessions from the
    /// agents' usual homes (and their environment variables), read-only.
    pub fn new(home: &Path) -> Self {
        McpConfig {
            home: home.to_path_buf(),
            database: Database::Sqlite(Home::at(home).run_db()),
            discovery: DiscoveryConfig::from_env(),
            port: None,
            allow_control: false,
            control_endpoint: None,
            control: None,
            memory: None,
            memory_user: None,
            allow_validate: false,
        }
    }
}

pub(crate) struct Shared {
    pub(crate) config: McpConfig,
    store: Mutex<Option<Arc<RunStore>>>,
    catalog: tasks::TaskCatalog,
    pub(crate) memory: Arc<LazyMemory>,
}

impl Shared {
    /// The built-in prices with `<home>/prices.toml` over them.
    fn load_prices(&self) -> Result<mindgate_pricing::PriceTable, ToolError> {
        mindgate_pricing::PriceTable::load(&Home::at(&self.config.home).prices_file()).map_err(
            |e| ToolError::BadPrices {
                message: mindgate_errors::error_chain(&e),
            },
        )
    }

    /// The prices the run store costs with (the server's, when it shares its store), else
    /// the home's.
    pub(crate) fn prices(&self) -> Result<mindgate_pricing::PriceTable, ToolError> {
        if let Some(store) = self
            .store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            return Ok(store.prices().clone());
        }
        self.load_prices()
    }

    fn store(&self) -> Result<Arc<RunStore>, ToolError> {
        let mut slot = self.store.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let database = &self.config.database;
        let unavailable = |message: String| ToolError::NoDatabase {
            database: database.to_string(),
            message,
        };
        if let Some(path) = database.sqlite_path()
            && !path.exists()
        {
            return Err(unavailable(
                "it does not exist yet; `mindgate serve` creates it when it first starts"
                    .to_owned(),
            ));
        }
        let prices = self.load_prices()?;
        let opened = match database {
            Database::Sqlite(path) => RunStore::open_read_only(path),
            Database::Postgres(url) => RunStore::open_postgres(url),
        };
        let store = opened
            .map_err(|e| unavailable(mindgate_errors::error_chain(&e)))?
            .with_prices(prices);
        let store = Arc::new(store);
        *slot = Some(store.clone());
        Ok(store)
    }

    pub(crate) fn links(&self) -> Links {
        let port = self
            .config
            .port
            .or_else(|| self.config.control_endpoint.as_ref().map(|e| e.port))
            .or_else(|| {
                control::find_server(&self.config.home, None)
                    .ok()
                    .map(|e| e.port)
            })
            .unwrap_or(DEFAULT_PORT);
        Links::for_port(port)
    }

    fn control(&self) -> Arc<dyn PauseControl> {
        if let Some(c) = &self.config.control {
            return c.clone();
        }
        match &self.config.control_endpoint {
            Some(ep) => Arc::new(HttpControl::fixed(ep.clone())),
            None => Arc::new(HttpControl::discover(&self.config.home, self.config.port)),
        }
    }
}

/// Mindgate's MCP server: read-only tools over runs and task graphs, plus the
/// control tools when allowed. Cheap to clone (state is shared).
#[derive(Clone)]
pub struct MindgateMcp {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
    /// This session's watch of the server's gates (see [`PauseControl::watch`]).
    _watching: Option<Arc<control::Watching>>,
}

impl std::fmt::Debug for MindgateMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MindgateMcp")
            .field("database", &self.shared.config.database)
            .field("allow_control", &self.shared.config.allow_control)
            .finish()
    }
}

fn now_ms() -> i64 {
    mindgate_store::now_ms()
}

#[tool_router]
impl MindgateMcp {
    /// A server over `config`; the database is opened read-only on first use.
    pub fn new(config: McpConfig) -> Self {
        Self::build(config, None)
    }

    /// A server reading through an already open store (e.g. the one `mindgate
    /// serve` holds), so the MCP tools and the HTTP API share one read API.
    pub fn with_store(config: McpConfig, store: Arc<RunStore>) -> Self {
        Self::build(config, Some(store))
    }

    fn build(config: McpConfig, store: Option<Arc<RunStore>>) -> Self {
        let mut tool_router = Self::tool_router() + Self::memory_router();
        if !config.allow_control {
            for name in CONTROL_TOOLS {
                tool_router.remove_route(name);
            }
        }
        if !config.allow_validate {
            for name in VALIDATE_TOOLS {
                tool_router.remove_route(name);
            }
        }
        let catalog = tasks::TaskCatalog::new(config.discovery.clone());
        let memory = config.memory.clone().unwrap_or_else(|| {
            Arc::new(LazyMemory::new(
                &config.home,
                mindgate_memory::MemoryDb::Sqlite(Home::at(&config.home).memory_db()),
            ))
        });
        MindgateMcp {
            shared: Arc::new(Shared {
                config,
                store: Mutex::new(store),
                catalog,
                memory,
            }),
            tool_router,
            _watching: None,
        }
    }

    /// A copy for one client session: with control, it counts as somebody watching
    /// the server's gates for as long as the session lives.
    pub fn for_session(&self) -> Self {
        let watching = self
            .shared
            .config
            .allow_control
            .then(|| self.shared.control().watch())
            .flatten()
            .map(Arc::new);
        MindgateMcp {
            shared: self.shared.clone(),
            tool_router: self.tool_router.clone(),
            _watching: watching,
        }
    }

    /// The names of the tools this server lists, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_router
            .list_all()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// The tool definitions (name, description, input schema) this server lists.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    pub(crate) async fn blocking(
        &self,
        f: impl FnOnce(&Shared) -> Result<ToolOutput, ToolError> + Send + 'static,
    ) -> CallToolResult {
        let shared = self.shared.clone();
        let joined = tokio::task::spawn_blocking(move || f(&shared)).await;
        to_result(joined.unwrap_or_else(|e| {
            Err(ToolError::read(
                mindgate_errors::ErrorCode::Internal,
                format!("tool task failed: {e}"),
            ))
        }))
    }

    async fn run_tool(
        &self,
        f: impl FnOnce(&RunStore, &Links) -> Result<ToolOutput, ToolError> + Send + 'static,
    ) -> CallToolResult {
        self.blocking(move |shared| {
            let store = shared.store()?;
            f(&store, &shared.links())
        })
        .await
    }

    async fn with_catalog(
        &self,
        f: impl FnOnce(&tasks::TaskCatalog) -> Result<ToolOutput, ToolError> + Send + 'static,
    ) -> CallToolResult {
        self.blocking(move |shared| f(&shared.catalog)).await
    }

    /// Lists recorded agent runs, newest first, with status, duration, counts,
    /// tokens and a viewer link. Filter by status, app or a text query.
    #[tool(
        name = "list_runs",
        description = "List recorded agent runs (newest first) with status, duration, event/node/error counts, token usage and a viewer deep link. Filter by status (running|ok|error|aborted|abandoned), app, or a text query on id/name/app; page with `before`.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn list_runs(&self, Parameters(args): Parameters<ListRunsArgs>) -> CallToolResult {
        self.run_tool(move |s, l| runs::list_runs(s, &args, l))
            .await
    }

    /// One run: summary, logical graph, errors, slowest nodes and token usage.
    #[tool(
        name = "get_run",
        description = "Open one run: its summary, the logical node graph (tree of agent/llm/tool nodes with status and duration), every node error, the slowest executions, token usage by node, nodes paused now, and deep links. Use get_node for inputs and outputs.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn get_run(&self, Parameters(args): Parameters<GetRunArgs>) -> CallToolResult {
        self.run_tool(move |s, l| runs::get_run(s, &args, l)).await
    }

    /// One node of a run: its executions with inputs, outputs and errors previewed.
    #[tool(
        name = "get_node",
        description = "Inspect one node of a run: its latest executions (instances) with input, output, full error (name, message, stack), streamed text, tool arguments, usage and gate pauses. Values are previewed (default 2000 characters each; raise maxChars up to 20000, or pick instances / instanceId).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn get_node(&self, Parameters(args): Parameters<GetNodeArgs>) -> CallToolResult {
        self.run_tool(move |s, l| runs::get_node(s, &args, l)).await
    }

    /// Two runs compared node by node, and where they part.
    #[tool(
        name = "diff_runs",
        description = "Compare two recorded runs node by node (aligned by node id): instance counts, status, durations, tokens and cost side by side, what differs in each node's input and output (JSON paths with both values), nodes only one run has, and the first divergence (the earliest difference recorded in run A). Read-only; returns deep links to the viewer's diff view and to each node.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn diff_runs(&self, Parameters(args): Parameters<DiffRunsArgs>) -> CallToolResult {
        self.run_tool(move |s, l| crate::diff::diff_runs(s, &args, l))
            .await
    }

    /// Recent failed nodes and failed runs with their error messages.
    #[tool(
        name = "find_errors",
        description = "Find recent failures: failed nodes (node.error events, newest first, with error class and message) and runs that finished with status error, each with a deep link. Optionally only since a time (epoch ms, RFC 3339, or 30m / 2h / 7d ago).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn find_errors(
        &self,
        Parameters(args): Parameters<FindErrorsArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| runs::find_errors(s, &args, l, now_ms()))
            .await
    }

    /// Threads: the runs of one conversation, grouped and totalled.
    #[tool(
        name = "list_threads",
        description = "List threads — runs of one conversation, grouped by their run meta threadId, conversationId or sessionId (OpenTelemetry gen_ai.conversation.id / session.id) — latest active first, each with its run count, first and last start, user, summed duration, work time, tokens, cost and errors, and a deep link. Filter by user (meta userId) or tag (meta tags).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn list_threads(
        &self,
        Parameters(args): Parameters<ListThreadsArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| crate::threads::list_threads(s, &args, l))
            .await
    }

    /// An agent's annotation of a run or a node instance.
    #[tool(
        name = "annotate",
        description = "Annotate a run or one node instance: thumbs up/down (verdict), a score (0-1, or any number with scoreName), labels and a comment. Stored with the run and marked as an agent's annotation (a person sees who wrote it). Needs runId; nodeId (and instanceId) to annotate one node.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn annotate(&self, Parameters(args): Parameters<AnnotateArgs>) -> CallToolResult {
        self.run_tool(move |s, l| crate::annotations::annotate(s, &args, l))
            .await
    }

    /// An agent's example for a dataset, from a run or a node instance.
    #[tool(
        name = "dataset_add",
        description = "Add an example to a dataset (made when absent; every edit makes a new version): taken from a run (its agent input and final output) or, with nodeId (and instanceId), from one node instance (its input as input, its output as expected), with optional metadata. Recorded as an agent's example.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn dataset_add(
        &self,
        Parameters(args): Parameters<DatasetAddArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| crate::datasets::dataset_add(s, &args, l))
            .await
    }

    /// The datasets.
    #[tool(
        name = "dataset_list",
        description = "List the datasets (named, versioned collections of examples taken from runs) at their newest versions: name, version, number of examples.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn dataset_list(
        &self,
        Parameters(args): Parameters<DatasetListArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| crate::datasets::dataset_list(s, &args, l))
            .await
    }

    /// One version of a dataset.
    #[tool(
        name = "dataset_show",
        description = "Show one version of a dataset (the newest by default) with its first 50 examples: id, input, expected output, metadata, and the run (and node instance) each was taken from.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn dataset_show(
        &self,
        Parameters(args): Parameters<DatasetShowArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| crate::datasets::dataset_show(s, &args, l))
            .await
    }

    /// Annotations of a run, a node or a label.
    #[tool(
        name = "list_annotations",
        description = "List the annotations of a run (optionally one node) or carrying a label, oldest first: verdict, score, labels, comment, check results, and whether a person or an agent wrote each.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn list_annotations(
        &self,
        Parameters(args): Parameters<ListAnnotationsArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| crate::annotations::list_annotations(s, &args, l))
            .await
    }

    /// One thread's runs in order, with its totals.
    #[tool(
        name = "get_thread",
        description = "Open a thread: its totals (runs, duration, work time, tokens, cost, errors) and its runs in the order they started, each with status, counts and a deep link. Read-only.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn get_thread(&self, Parameters(args): Parameters<GetThreadArgs>) -> CallToolResult {
        self.run_tool(move |s, l| crate::threads::get_thread(s, &args, l))
            .await
    }

    /// Events whose payload contains a text.
    #[tool(
        name = "search_events",
        description = "Search the payloads of recorded events (inputs, outputs, errors, streamed tokens) for a text, across all runs or one run. Returns run id, seq, event type, node, a snippet around the match and a deep link.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn search_events(
        &self,
        Parameters(args): Parameters<SearchEventsArgs>,
    ) -> CallToolResult {
        self.run_tool(move |s, l| runs::search_events(s, &args, l))
            .await
    }

    /// Coding-agent sessions (tasks) found on this machine.
    #[tool(
        name = "list_tasks",
        description = "List coding-agent sessions (tasks) found on this machine — DeepSeek Harness, pi, Claude Code and Codex CLI — newest first, with title, status, live flag, duration and counts of turns, steps, tools, errors and files changed.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn list_tasks(&self, Parameters(args): Parameters<ListTasksArgs>) -> CallToolResult {
        self.with_catalog(move |c| tasks::list_tasks(c, &args))
            .await
    }

    /// Full-text search over the coding-agent sessions.
    #[tool(
        name = "search_tasks",
        description = "Search the text of every coding-agent session on this machine — user messages, the model's replies, tool arguments and tool output (case-insensitive substring) — and get each hit's session, node, turn, a snippet and a viewer link. Open a hit's session with get_task_graph.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn search_tasks(
        &self,
        Parameters(args): Parameters<SearchTasksArgs>,
    ) -> CallToolResult {
        self.blocking(move |shared| {
            let index = Home::at(&shared.config.home).session_search_db();
            tasks::search_tasks(&shared.catalog, &index, &args, &shared.links())
        })
        .await
    }

    /// Token usage and cost across the coding-agent sessions.
    #[tool(
        name = "get_usage",
        description = "Token usage and cost of every coding-agent session on this machine (subagent sessions counted once), grouped by day, week, month, session, agent, model or project: input, cache writes, cache reads and output tokens, the cost priced with Mindgate's price table, and the models that have no price (never guessed). since: a span such as 7d, a date or an RFC 3339 time; tz: IANA zone for days.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn get_usage(&self, Parameters(args): Parameters<GetUsageArgs>) -> CallToolResult {
        self.blocking(move |shared| {
            let prices = shared.prices()?;
            tasks::get_usage(&shared.catalog, &args, &prices)
        })
        .await
    }

    /// A coding session's task graph summary.
    #[tool(
        name = "get_task_graph",
        description = "Open a coding-agent session's task graph: status, counts, tokens, the critical path (longest chain of turns, LLM steps and tool calls, with durations), failures with their error text, retried and slowest steps, files changed and most used tools. detail: \"full\" adds the node list.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn get_task_graph(
        &self,
        Parameters(args): Parameters<GetTaskGraphArgs>,
    ) -> CallToolResult {
        self.blocking(move |shared| {
            let prices = shared.prices()?;
            tasks::get_task_graph(&shared.catalog, &args, &prices)
        })
        .await
    }

    /// Gates held right now (needs a running server and control allowed).
    #[tool(
        name = "list_pauses",
        description = "List the gates (breakpoints, error pauses, loop guards) held right now by a running `mindgate serve`, with run, node, gate point, reason and a deep link.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub async fn list_pauses(
        &self,
        Parameters(args): Parameters<ListPausesArgs>,
    ) -> CallToolResult {
        let shared = self.shared.clone();
        let r = async move {
            let control = shared.control();
            let links = Links::for_port(control.port()?);
            control::list_pauses(control.as_ref(), &args, &links).await
        }
        .await;
        to_result(r)
    }

    /// Releases a held gate through the running server.
    #[tool(
        name = "resume",
        description = "Release a held gate of a live run through the running `mindgate serve`: continue, retry (re-run the node), inject (use `output` instead of running / instead of the error) or abort the run. The first release wins; others get `taken`.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn resume(&self, Parameters(args): Parameters<ResumeArgs>) -> CallToolResult {
        let shared = self.shared.clone();
        let r = async move {
            let control = shared.control();
            control::resume(control.as_ref(), &args).await
        }
        .await;
        to_result(r)
    }
}

/// Instructions sent to clients at initialisation.
pub const INSTRUCTIONS: &str = "Mindgate records AI-agent runs (a graph of agent, llm and tool nodes) in a local database and reads coding-agent sessions as task graphs. Start with list_runs or find_errors, open a run with get_run, and inspect a failing node's input, output and error with get_node. For coding sessions use list_tasks and get_task_graph. Agent memory: remember facts with fact_remember, recall them with fact_search (and recall_episodes, conversation_search, procedure_search), correct them with fact_supersede or fact_forget, keep notes in working blocks (block_append, block_replace, block_rethink); facts you distilled yourself pass provenance `extraction` and wait in quarantine for a person. Links point at the local viewer (`mindgate serve`).";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MindgateMcp {
    /// Routes the call, then bounds what comes back — including rmcp's own
    /// argument errors, which quote the offending input.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let call = ToolCallContext::new(self, request, context);
        match self.tool_router.call(call).await {
            Ok(CallToolResponse::Complete(r)) => Ok(CallToolResponse::Complete(bound_result(r))),
            Ok(other) => Ok(other),
            Err(e) => Err(bound_error_data(e)),
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mindgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
