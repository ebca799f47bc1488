//! [`PostgresUrl`]: a checked `postgres://` URL with its TLS settings. Its `Display` and
//! `Debug` never show the password.

use std::path::PathBuf;
use std::time::Duration;

use percent_encoding::percent_decode_str;

use crate::error::BadPostgresUrl;
use crate::tls::{RootSource, SslMode, Tls};

/// How long a connection attempt may take unless the URL sets `connect_timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A checked PostgreSQL connection URL and how to secure its connections.
#[derive(Clone)]
pub struct PostgresUrl {
    /// The URL as given, scheme in lower case (password included).
    url: String,
    config: postgres::Config,
    tls: Tls,
}

impl PartialEq for PostgresUrl {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
    }
}

impl Eq for PostgresUrl {}

/// True when `value` starts with `postgres://` or `postgresql://` (any case): it names a
/// PostgreSQL database, whether or not the rest of it is valid.
pub fn is_postgres_url(value: &str) -> bool {
    let lower = value.get(..13).unwrap_or(value).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

impl PostgresUrl {
    /// Checks a `postgres://` / `postgresql://` URL (the scheme in any case; libpq's URL
    /// form: host, port, user, password, database and parameters such as
    /// `connect_timeout=5`, `options=-csearch_path%3Dname`, `sslmode=verify-full` and
    /// `sslrootcert=/path/ca.pem`). A host is required. The CA file of `sslrootcert` (or
    /// the system's roots for `verify-ca` / `verify-full` without it) is read now, so a
    /// missing file is refused here rather than at the first connection.
    pub fn parse(url: &str) -> Result<PostgresUrl, BadPostgresUrl> {
        if !is_postgres_url(url) {
            return Err(BadPostgresUrl::new(
                "it must start with postgres:// or postgresql://",
            ));
        }
        // The client library takes the scheme in lower case only.
        let (scheme, rest) = url.split_once("://").unwrap_or((url, ""));
        let normalized = format!("{}://{rest}", scheme.to_ascii_lowercase());
        let (driver_url, ssl) = split_ssl_params(&normalized)?;
        let mut config: postgres::Config = driver_url
            .parse()
            .map_err(|e: postgres::Error| BadPostgresUrl::new(e.to_string()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_hosts().is_empty() {
            return Err(BadPostgresUrl::new("it names no host"));
        }
        let tls = Tls::new(ssl.mode, ssl.root)?;
        config.ssl_mode(tls.mode().driver_mode());
        Ok(PostgresUrl {
            url: normalized,
            config,
            tls,
        })
    }

    /// The URL as given (password included: do not log it).
    pub fn as_secret_str(&self) -> &str {
        &self.url
    }

    /// The client configuration (TLS mode set; the connector is [`crate::connect`]'s).
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// The `sslmode` in force (`prefer` when the URL does not say, as libpq).
    pub fn ssl_mode(&self) -> SslMode {
        self.tls.mode()
    }

    pub(crate) fn tls(&self) -> &Tls {
        &self.tls
    }

    /// The same database with `schema` first on the search path (a throwaway schema of
    /// a test or a benchmark).
    pub fn with_search_path(&self, schema: &str) -> PostgresUrl {
        let mut out = self.clone();
        out.config.options(&format!("-c search_path={schema}"));
        let separator = if out.url.contains('?') { '&' } else { '?' };
        out.url = format!("{}{separator}options=-csearch_path%3D{schema}", out.url);
        out
    }

    /// `host:port/database` (never the user or the password), for messages.
    pub fn target(&self) -> String {
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let user = self.config.get_user().unwrap_or("");
        let db = self.config.get_dbname().unwrap_or(user);
        format!("{}:{port}/{db}", self.hosts().join(","))
    }

    fn hosts(&self) -> Vec<String> {
        self.config
            .get_hosts()
            .iter()
            .map(|h| match h {
                postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect()
    }
}

/// Shows `postgres://user:***@host:port/database`: the password never.
impl std::fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "postgres://")?;
        if let Some(user) = self.config.get_user().filter(|u| !u.is_empty()) {
            write!(f, "{user}")?;
            if self.config.get_password().is_some() {
                write!(f, ":***")?;
            }
            write!(f, "@")?;
        }
        write!(f, "{}", self.target())
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgresUrl({self}, sslmode={})", self.tls.mode())
    }
}

/// The TLS parameters of a URL, which the driver does not take.
struct SslParams {
    mode: Option<SslMode>,
    root: Option<RootSource>,
}

/// Takes `sslmode` and `sslrootcert` out of the URL's query (the driver knows only
/// `disable|prefer|require` and no root certificate); the rest is left for the driver.
fn split_ssl_params(url: &str) -> Result<(String, SslParams), BadPostgresUrl> {
    let mut ssl = SslParams {
        mode: None,
        root: None,
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), ssl));
    };
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| BadPostgresUrl::new(format!("{key}: not UTF-8")))?;
        match key {
            "sslmode" => ssl.mode = Some(value.parse()?),
            "sslrootcert" if value == "system" => ssl.root = Some(RootSource::System),
            "sslrootcert" if value.is_empty() => {
                return Err(BadPostgresUrl::new("sslrootcert names no file"));
            }
            "sslrootcert" => ssl.root = Some(RootSource::File(PathBuf::from(&*value))),
            _ => kept.push(pair),
        }
    }
    let driver_url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((driver_url, ssl))
}
