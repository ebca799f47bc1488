//! The PostgreSQL backend of the run store: numbered migrations, the writer's
//! connection ([`writer::PgWriteDb`]) and the readers' bounded pool ([`reader::PgReader`]).
//! A run import's transaction is `transfer/pg_target.rs`, beside the SQLite one.
//!
//! Layout (migration 1): `runs` (one row per run with its counters, `bigserial` key),
//! `event_types` (interned type names) and `events` keyed `(run_key, seq)` with `jsonb`
//! payloads. Appends are multi-row `INSERT … SELECT FROM unnest(…)` with
//! `ON CONFLICT (run_key, seq) DO NOTHING`, so replays deduplicate exactly as
//! SQLite's `INSERT OR IGNORE` does. Payloads are read back minified; `jsonb` keeps
//! the keys in its own order (the values and their meaning are unchanged).

pub(crate) mod announce;
pub(crate) mod follow;
pub(crate) mod reader;
pub(crate) mod run_lock;
pub(crate) mod schema;
pub(crate) mod writer;

use mindgate_pg::PostgresUrl;
use postgres::Client;

use crate::error::Result;

/// Opens one connection (TLS as the URL says), with an error that names the database
/// (never its password) and the cause.
pub(crate) fn connect(url: &PostgresUrl) -> Result<Client> {
    Ok(mindgate_pg::connect(url)?)
}

/// The schema the store's tables live in (the first of the connection's search path).
pub(crate) fn current_schema(client: &mut Client) -> Result<String> {
    let schema: Option<String> = client.query_one("SELECT current_schema()", &[])?.get(0);
    Ok(schema.unwrap_or_default())
}
