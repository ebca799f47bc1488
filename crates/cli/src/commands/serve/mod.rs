//! `mindgate serve`: run the viewer server until Ctrl-C / SIGTERM.

use std::process::ExitCode;

use anyhow::Context;
use mindgate_home::{Home, env};
use mindgate_server::ServeConfig;

mod banner;
mod mcp_mount;

use super::tasks;
use crate::args::ServeArgs;
use crate::db_arg::RunDb;

/// Starts the server, prints the viewer URL, and serves until a shutdown signal.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let filter = tracing_subscriber::EnvFilter::try_from_env(env::MINDGATE_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(crate::log_colour::stderr_colour())
        .try_init();
    let home = Home::from_env();
    let mut config = ServeConfig::new(home.root());
    config.port = args.port;
    config.host = args.host;
    config.allow_remote = args.allow_remote;
    config.allowed_hosts = args.allowed_hosts.clone();
    config.token = shared_token()?;
    config.retention = mindgate_store::Retention {
        keep_runs: args.keep_runs,
        keep_days: args.keep_days,
    };
    config.abandon_grace = std::time::Duration::from_secs(args.abandon_grace);
    config.hold_unwatched = args.hold_unwatched;
    config.otlp_port = (args.otlp_port != 0).then_some(args.otlp_port);
    config.otlp.quiet_ms = i64::try_from(args.otlp_quiet.saturating_mul(1_000)).unwrap_or(i64::MAX);
    match &args.db {
        Some(RunDb::File(path)) => config.db_path = path.clone(),
        Some(RunDb::Postgres(url)) => config.postgres = Some((**url).clone()),
        None => {}
    }
    config.task_graph = tasks::discovery_config(&args.discovery);
    config.memory_user = args.memory_user.clone();
    if let Some(db) = &args.memory_db {
        config.memory_db = db.clone();
    }
    config.memory_chat = mindgate_memory::consolidate::chat::config_from_env()
        .transpose()
        .context("memory consolidation is configured wrongly")?;
    config.mcp = Some(mcp_mount::mount());
    config.demo = Some(mindgate_server::DemoLauncher::new(demo_thread));
    if !args.host.is_loopback() {
        if !args.allow_remote {
            anyhow::bail!(
                "refusing to listen on {} (not loopback): pass --allow-remote to expose Mindgate to the network",
                args.host
            );
        }
        eprintln!(
            "mindgate: WARNING: listening on {} — reachable from the network; every request needs the token",
            args.host
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(async move {
        let db = config.database();
        let server = mindgate_server::start(config)
            .await
            .with_context(|| format!("cannot start the server (database {db})"))?;
        let ingest_url = if args.allow_remote {
            server.ingest_url_with_token()
        } else {
            server.ingest_url()
        };
        let (otlp, otlp_traces) = match server.otlp_addr {
            Some(addr) => (
                format!("http://{addr}"),
                format!("http://{addr} (OTEL_EXPORTER_OTLP_ENDPOINT; /v1/traces)"),
            ),
            None => (
                server.base_url(),
                format!("{}/v1/traces", server.base_url()),
            ),
        };
        print!(
            "{}",
            banner::startup(&banner::Endpoints {
                viewer: &server.url,
                ingest: &ingest_url,
                otlp: &otlp,
                otlp_traces: &otlp_traces,
                database: &server.database.to_string(),
            })
        );
        if !server.reconciled.is_empty() {
            println!(
                "{} run(s) left running by a previous server were marked abandoned",
                server.reconciled.len()
            );
        }
        if !args.no_open {
            open_browser(&server.url);
        }
        if args.demo {
            start_demo(ingest_url);
        }
        shutdown_signal().await;
        eprintln!("mindgate: shutting down, flushing events…");
        server.stop().await.context("shutdown failed")?;
        Ok(ExitCode::SUCCESS)
    });
    // Connections left behind at the shutdown deadline end with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served
}

/// Runs the SDK's scripted demo agent on its own thread against this server.
fn start_demo(ingest_url: String) {
    if let Err(err) = demo_thread(ingest_url) {
        eprintln!("mindgate: cannot start the demo: {err}");
    }
}

/// The thread that runs the SDK's scripted demo agent against `ingest_url` (for
/// `serve --demo` and the viewer's "Run the demo", `POST /api/demo`).
fn demo_thread(ingest_url: String) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mindgate-demo".to_owned())
        .spawn(move || {
            let options = mindgate_sdk::demo::DemoOptions {
                url: Some(ingest_url),
                ..mindgate_sdk::demo::DemoOptions::default()
            };
            match mindgate_sdk::demo::run_demo(options, |line| eprintln!("demo: {line}")) {
                Ok(report) => eprintln!("demo: finished {} run(s)", report.runs.len()),
                Err(err) => eprintln!("demo: could not run: {err}"),
            }
        })
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        tracing::debug!("no browser opener available; open the URL yourself");
    }
}

/// The control token from `MINDGATE_TOKEN`, checked: a team hub's instances share it.
fn shared_token() -> anyhow::Result<Option<String>> {
    let Some(token) = mindgate_home::env::value(mindgate_home::env::MINDGATE_TOKEN) else {
        return Ok(None);
    };
    // URL-safe characters only: the token also travels in `?token=` and `#token=`.
    let url_safe = token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    if !(16..=256).contains(&token.len()) || !url_safe {
        anyhow::bail!(
            "{} must be 16 to 256 characters of A-Z, a-z, 0-9, '-', '.', '_' or '~' (it is {} bytes{})",
            mindgate_home::env::MINDGATE_TOKEN,
            token.len(),
            if url_safe {
                ""
            } else {
                ", with other characters"
            }
        );
    }
    Ok(Some(token))
}
