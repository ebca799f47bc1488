//! The cluster tables, their numbered migrations, and the reads every thread shares.

use std::time::Duration;

use mindgate_pg::{MigrateError, MigrationLock, Migrations, PostgresUrl};
use postgres::Client;
use serde_json::Value;

use crate::{ClusterError, DebugState, RemotePause, Result};

/// Migration 1: instances, held gates, the shared debug state.
const MIGRATION_1: &str = r#"
CREATE TABLE mindgate_instances (
    id TEXT PRIMARY KEY,
    addr TEXT NOT NULL,
    version TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE mindgate_pauses (
    run_id TEXT NOT NULL,
    pause_id TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    view JSONB NOT NULL,
    -- 'held', or 'resuming' once a resume won the referee
    state TEXT NOT NULL DEFAULT 'held',
    request JSONB,
    requested_by TEXT,
    ticket TEXT,
    PRIMARY KEY (run_id, pause_id)
);
CREATE INDEX mindgate_pauses_instance ON mindgate_pauses (instance_id);
CREATE TABLE mindgate_debug (
    id INT PRIMARY KEY CHECK (id = 1),
    breakpoints JSONB NOT NULL,
    mode TEXT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
"#;

/// Migration 2: when somebody with control last watched through an instance (a viewer
/// page with the token, an MCP client with control), for the release of unwatched gates.
const MIGRATION_2: &str =
    "ALTER TABLE mindgate_instances ADD COLUMN IF NOT EXISTS watched_at TIMESTAMPTZ";

/// The cluster's migrations, for [`mindgate_pg`]'s locked runner (the lock key is the
/// one earlier builds took, so old and new instances starting together still agree).
const MIGRATIONS: Migrations<'static> = Migrations {
    table: "mindgate_cluster_migrations",
    lock: MigrationLock::NameHash("mindgate_cluster_migrations"),
    steps: &[MIGRATION_1, MIGRATION_2],
};

/// Opens one connection (TLS as the URL says), with an error that names the database
/// (never its password) and the cause.
pub(crate) fn connect(url: &PostgresUrl) -> Result<Client> {
    Ok(mindgate_pg::connect(url)?)
}

/// Applies the missing migrations in one transaction, under an advisory lock so that
/// instances starting together apply each once.
pub(crate) fn migrate(client: &mut Client) -> Result<()> {
    MIGRATIONS.run(client).map_err(|e| match e {
        MigrateError::SchemaTooNew { found, supported } => {
            ClusterError::SchemaTooNew { found, supported }
        }
        MigrateError::Sql(e) => ClusterError::Sql(e),
    })?;
    Ok(())
}

/// `stale` as seconds for `make_interval(secs => …)`.
pub(crate) fn secs(stale: Duration) -> f64 {
    stale.as_secs_f64()
}

fn decode_debug(breakpoints: &str, mode: &str) -> Result<DebugState> {
    let breakpoints = serde_json::from_str(breakpoints)
        .map_err(|e| ClusterError::Malformed(format!("breakpoints: {e}")))?;
    let mode = serde_json::from_value(Value::String(mode.to_owned()))
        .map_err(|e| ClusterError::Malformed(format!("mode {mode:?}: {e}")))?;
    Ok(DebugState { breakpoints, mode })
}

pub(crate) fn encode_mode(state: &DebugState) -> String {
    serde_json::to_value(state.mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "run".to_owned())
}

/// The shared debug state.
pub(crate) fn debug_state(client: &mut impl postgres::GenericClient) -> Result<Option<DebugState>> {
    let row = client.query_opt(
        "SELECT breakpoints::text, mode FROM mindgate_debug WHERE id = 1",
        &[],
    )?;
    row.map(|r| decode_debug(r.get::<_, &str>(0), r.get::<_, &str>(1)))
        .transpose()
}

/// The shared debug state, its row locked until the transaction ends.
pub(crate) fn debug_state_for_update(
    client: &mut impl postgres::GenericClient,
) -> Result<Option<DebugState>> {
    let row = client.query_opt(
        "SELECT breakpoints::text, mode FROM mindgate_debug WHERE id = 1 FOR UPDATE",
        &[],
    )?;
    row.map(|r| decode_debug(r.get::<_, &str>(0), r.get::<_, &str>(1)))
        .transpose()
}

/// The shared debug state, writing `default` first when there is none.
pub(crate) fn debug_state_or_default(
    client: &mut Client,
    default: &DebugState,
) -> Result<DebugState> {
    let breakpoints = serde_json::to_string(&default.breakpoints)
        .map_err(|e| ClusterError::Malformed(e.to_string()))?;
    client.execute(
        "INSERT INTO mindgate_debug (id, breakpoints, mode) VALUES (1, $1::text::jsonb, $2) \
         ON CONFLICT (id) DO NOTHING",
        &[&breakpoints, &encode_mode(default)],
    )?;
    debug_state(client)?.ok_or_else(|| ClusterError::Malformed("no debug state row".to_owned()))
}

/// The gates held by the other live instances.
pub(crate) fn remote_pauses(
    client: &mut Client,
    me: &str,
    stale: Duration,
) -> Result<Vec<RemotePause>> {
    let rows = client.query(
        "SELECT p.run_id, p.pause_id, p.instance_id, p.view::text FROM mindgate_pauses p \
         JOIN mindgate_instances i ON i.id = p.instance_id \
         WHERE p.instance_id <> $1 AND p.state = 'held' \
           AND i.heartbeat_at > now() - make_interval(secs => $2)",
        &[&me, &secs(stale)],
    )?;
    Ok(rows
        .iter()
        .map(|r| RemotePause {
            run_id: r.get(0),
            pause_id: r.get(1),
            instance: r.get(2),
            view: parse_json(r.get(3)),
        })
        .collect())
}

/// One held gate of another instance.
pub(crate) fn remote_pause(
    client: &mut Client,
    run_id: &str,
    pause_id: &str,
) -> Result<Option<RemotePause>> {
    let row = client.query_opt(
        "SELECT instance_id, view::text FROM mindgate_pauses \
         WHERE run_id = $1 AND pause_id = $2 AND state = 'held'",
        &[&run_id, &pause_id],
    )?;
    Ok(row.map(|r| RemotePause {
        run_id: run_id.to_owned(),
        pause_id: pause_id.to_owned(),
        instance: r.get(0),
        view: parse_json(r.get(1)),
    }))
}

/// The resume recorded on a gate: `(request, requester, ticket)`.
pub(crate) fn recorded_resume(
    client: &mut Client,
    run_id: &str,
    pause_id: &str,
    me: &str,
) -> Result<Option<(Value, String, String)>> {
    let row = client.query_opt(
        "SELECT request::text, requested_by, ticket FROM mindgate_pauses \
         WHERE run_id = $1 AND pause_id = $2 AND instance_id = $3 AND state = 'resuming' \
           AND request IS NOT NULL",
        &[&run_id, &pause_id, &me],
    )?;
    Ok(row.and_then(|r| {
        let requester: Option<String> = r.get(1);
        let ticket: Option<String> = r.get(2);
        Some((parse_json(r.get(0)), requester?, ticket?))
    }))
}

/// A stored JSON text (written by this crate, so it parses; `null` if it does not).
fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A JSON value as the text bound to a `$n::text::jsonb` parameter.
pub(crate) fn json_text(value: &Value) -> String {
    value.to_string()
}
