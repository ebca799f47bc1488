//! Mindgate's one PostgreSQL seam. Every crate that talks to PostgreSQL (the run store,
//! the memory store, the cluster) goes through it:
//!
//! - [`PostgresUrl`]: a checked `postgres://` URL (scheme in any case, a host required,
//!   a default connect timeout, `sslmode` and `sslrootcert`); never shows its password;
//! - [`connect`] and [`pool`]: connections over rustls as the URL's [`SslMode`] says,
//!   with errors ([`ConnectError`]) that name the database and say what to change;
//! - [`Migrations`]: the locked migration runner (each crate keeps its own list);
//! - [`Database`]: where a store lives, a SQLite file or a PostgreSQL database.

mod connect;
mod error;
mod location;
mod migrate;
mod tls;
mod url;

pub use connect::{
    ConnectCause, ConnectError, Pool, PoolError, PoolSettings, PooledClient, connect, pool,
};
pub use error::BadPostgresUrl;
pub use location::Database;
pub use migrate::{MigrateError, MigrationLock, Migrations};
pub use tls::SslMode;
pub use url::{DEFAULT_CONNECT_TIMEOUT, PostgresUrl, is_postgres_url};
