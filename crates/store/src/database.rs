//! Which database a store lives in: an embedded SQLite file (the default) or a
//! PostgreSQL database shared by several Mindgate instances.

use std::path::{Path, PathBuf};

/// Where the run store lives.
#[derive(Clone, PartialEq, Eq)]
pub enum Database {
    /// An embedded SQLite file (created on first open).
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://` or `postgresql://` URL; migrated on open).
    Postgres(Box<PostgresUrl>),
}

impl Database {
    /// The SQLite file, when this is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Database::Sqlite(path) => Some(path),
            Database::Postgres(_) => None,
        }
    }

    /// Whether this is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }
}

/// What [`migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// The schema version before.
    pub from: i64,
    /// The schema version now.
    pub to: i64,
    /// The migrations applied now, in order (empty when the schema was current).
    pub applied: Vec<i64>,
}

/// Brings `database`'s run-store schema up to this build's, creating it when absent
/// (a SQLite file is created; a PostgreSQL database gets the numbered migrations it
/// lacks, each once, even with several instances starting together). A schema newer
/// than this build is refused unchanged.
pub fn migrate(database: &Database) -> crate::Result<MigrateReport> {
    match database {
        Database::Sqlite(path) => {
            let existed = path.exists();
            let from = if existed {
                crate::schema::user_version(path)?
            } else {
                0
            };
            drop(crate::schema::open_writer(path)?);
            let to = crate::SCHEMA_VERSION;
            Ok(MigrateReport {
                from,
                to,
                applied: ((from + 1)..=to).collect(),
            })
        }
        Database::Postgres(url) => {
            let mut client = crate::pg::connect(url)?;
            let from = crate::pg::schema::version(&mut client)?;
            let applied = crate::pg::schema::migrate(&mut client)?;
            Ok(MigrateReport {
                from,
                to: crate::pg::schema::LATEST,
                applied,
            })
        }
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

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Database({self})")
    }
}

/// A checked PostgreSQL connection URL. Its `Display` and `Debug` hide the password.
#[derive(Clone)]
pub struct PostgresUrl {
    url: String,
    config: postgres::Config,
}

impl PartialEq for PostgresUrl {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
    }
}

impl Eq for PostgresUrl {}

/// How long a connection attempt may take unless the URL sets `connect_timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why a PostgreSQL URL was refused.
#[derive(Debug, thiserror::Error)]
#[error("not a PostgreSQL URL (postgres://user@host:port/database): {reason}")]
pub struct BadPostgresUrl {
    reason: String,
}

impl PostgresUrl {
    /// Checks a `postgres://` / `postgresql://` URL (libpq's URL form: host, port, user,
    /// password, database, and parameters such as `options=-csearch_path%3Dname` or
    /// `connect_timeout=5`).
    pub fn parse(url: &str) -> Result<PostgresUrl, BadPostgresUrl> {
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
            return Err(BadPostgresUrl {
                reason: "it must start with postgres:// or postgresql://".to_owned(),
            });
        }
        // The client library takes the scheme in lower case only.
        let (scheme, rest) = url.split_once("://").unwrap_or((url, ""));
        let normalized = format!("{}://{rest}", scheme.to_ascii_lowercase());
        let mut config: postgres::Config =
            normalized
                .parse()
                .map_err(|e: postgres::Error| BadPostgresUrl {
                    reason: e.to_string(),
                })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_hosts().is_empty() {
            return Err(BadPostgresUrl {
                reason: "it names no host".to_owned(),
            });
        }
        Ok(PostgresUrl {
            url: normalized,
            config,
        })
    }

    /// The URL as given (password included: do not log it).
    pub fn as_secret_str(&self) -> &str {
        &self.url
    }

    /// The client configuration (for other crates that open their own connections to
    /// the same database, such as the cluster's).
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }
}

impl std::fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .map(|h| match h {
                postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let ports = self.config.get_ports();
        let port = ports.first().copied().unwrap_or(5432);
        let user = self.config.get_user().unwrap_or("");
        let db = self.config.get_dbname().unwrap_or(user);
        write!(f, "postgres://")?;
        if !user.is_empty() {
            write!(f, "{user}")?;
            if self.config.get_password().is_some() {
                write!(f, ":***")?;
            }
            write!(f, "@")?;
        }
        write!(f, "{}:{port}/{db}", hosts.join(","))
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgresUrl({self})")
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_url_shows_without_its_password() {
        let url = PostgresUrl::parse("postgres://mg:s3cret@db.internal:6543/runs").expect("url");
        let shown = url.to_string();
        assert_eq!(shown, "postgres://mg:***@db.internal:6543/runs");
        assert!(!format!("{:?}", Database::Postgres(Box::new(url))).contains("s3cret"));
    }

    #[test]
    fn other_schemes_and_hostless_urls_are_refused() {
        for bad in ["mysql://h/m", "postgres:///m", "sqlite:x.db"] {
            assert!(PostgresUrl::parse(bad).is_err(), "{bad}");
        }
        assert!(PostgresUrl::parse("postgresql://localhost/m").is_ok());
    }
}
