//! [`Database`]: where a store lives, an embedded SQLite file or a PostgreSQL database.
//! The run store and the memory store name theirs with this one type.

use std::path::{Path, PathBuf};

use crate::error::BadPostgresUrl;
use crate::url::{PostgresUrl, is_postgres_url};

/// Where a store lives.
#[derive(Clone, PartialEq, Eq)]
pub enum Database {
    /// An embedded SQLite file (created on first open).
    Sqlite(PathBuf),
    /// A PostgreSQL database (migrated on open).
    Postgres(Box<PostgresUrl>),
}

impl Database {
    /// A `postgres://` / `postgresql://` URL (any case) as [`Database::Postgres`], checked;
    /// anything else as a SQLite file path.
    pub fn from_value(value: &str) -> Result<Self, BadPostgresUrl> {
        if is_postgres_url(value) {
            PostgresUrl::parse(value).map(|url| Database::Postgres(Box::new(url)))
        } else {
            Ok(Database::Sqlite(PathBuf::from(value)))
        }
    }

    /// The SQLite file, when this is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Database::Sqlite(path) => Some(path),
            Database::Postgres(_) => None,
        }
    }

    /// The PostgreSQL database, when this is one.
    pub fn postgres_url(&self) -> Option<&PostgresUrl> {
        match self {
            Database::Sqlite(_) => None,
            Database::Postgres(url) => Some(url),
        }
    }

    /// Whether this is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }
}

/// Shows the file path, or the URL without its password.
impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::Sqlite(path) => write!(f, "{}", path.display()),
            Database::Postgres(url) => write!(f, "{url}"),
        }
    }
}

/// Never shows a password.
impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Database({self})")
    }
}
