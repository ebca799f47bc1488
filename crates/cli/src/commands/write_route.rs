//! Where a command that writes the run store (`annotate`, `check`, `dataset`) writes: the
//! one rule.
//!
//! * A SQLite file a running `mindgate serve` holds (its `<db>.lock`): through that
//!   server's HTTP API, with the control token from its token file in the Mindgate home
//!   (`run/serve-<port>.json`), so the server that owns the file does the write and its
//!   viewers see it at once.
//! * A SQLite file nobody holds: directly, holding the lock while writing (the schema is
//!   brought up to date first).
//! * A PostgreSQL database: directly (the database referees its writers).

use std::time::Duration;

use anyhow::{Context as _, bail};
use mindgate_home::{Home, token_file};
use mindgate_server::ServerError;
use mindgate_server::db_lock::{self, DbLock, LockHolder};
use mindgate_store::{Database, RunStore};
use serde_json::Value;

/// How long a request to the running server may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest answer read from the server.
const MAX_ANSWER_BYTES: u64 = 256 * 1024 * 1024;

/// Where the writes of one command go.
pub(crate) enum WriteRoute {
    /// Through the running server that holds the file.
    Server(ServerClient),
    /// Directly into the database (the lock held while writing, for a SQLite file).
    Direct {
        /// The store, opened read-write.
        store: RunStore,
        _lock: Option<DbLock>,
    },
}

/// A client of the running server's HTTP API with its control token.
pub(crate) struct ServerClient {
    port: u16,
    base: String,
    token: String,
    agent: ureq::Agent,
}

impl WriteRoute {
    /// The route for `db` by the rule above.
    pub(crate) fn for_database(db: &Database, home: &Home) -> anyhow::Result<WriteRoute> {
        let Database::Sqlite(path) = db else {
            mindgate_store::migrate(db)?;
            return Ok(WriteRoute::Direct {
                store: RunStore::open_database(db)?,
                _lock: None,
            });
        };
        let me = LockHolder {
            pid: std::process::id(),
            port: 0,
        };
        match db_lock::acquire(path, me) {
            Ok(lock) => {
                mindgate_store::migrate(db)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                let store = RunStore::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                Ok(WriteRoute::Direct {
                    store,
                    _lock: Some(lock),
                })
            }
            Err(ServerError::DatabaseInUse {
                holder: Some(holder),
                ..
            }) if holder.port != 0 => {
                let file = token_file::read(home, holder.port).with_context(|| {
                    format!(
                        "{} is held by mindgate serve on port {} (pid {}), but its token file \
                         is not in {}: set MINDGATE_HOME to the server's home",
                        path.display(),
                        holder.port,
                        holder.pid,
                        home.run_dir().display()
                    )
                })?;
                Ok(WriteRoute::Server(ServerClient::new(file.port, file.token)))
            }
            Err(e) => Err(anyhow::anyhow!("{e}; try again when it is free")),
        }
    }
}

impl ServerClient {
    /// The server's port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    fn new(port: u16, token: String) -> ServerClient {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(REQUEST_TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        ServerClient {
            port,
            base: format!("http://127.0.0.1:{port}"),
            token,
            agent,
        }
    }

    /// Sends `body` (JSON) with `method` to `path`; the answer's JSON, or an error with
    /// the server's message.
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let body = body.map(|b| ("application/json", b.to_string()));
        let text = self.send_text(method, path, body)?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Sends `body` (its content type and text) with `method` to `path`; the answer's
    /// text, or an error with the server's message.
    pub(crate) fn send_text(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, String)>,
    ) -> anyhow::Result<String> {
        let url = format!("{}{path}", self.base);
        let auth = format!("Bearer {}", self.token);
        let sent = match (method, body) {
            ("POST", Some((kind, b))) => self
                .agent
                .post(&url)
                .header("Authorization", &auth)
                .content_type(kind)
                .send(b),
            ("PATCH", Some((kind, b))) => self
                .agent
                .patch(&url)
                .header("Authorization", &auth)
                .content_type(kind)
                .send(b),
            ("DELETE", _) => self
                .agent
                .delete(&url)
                .header("Authorization", &auth)
                .call(),
            _ => self.agent.get(&url).header("Authorization", &auth).call(),
        };
        let mut response = sent.with_context(|| format!("request to {url} failed"))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .with_context(|| format!("cannot read the answer of {url}"))?;
        if !(200..300).contains(&status) {
            let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let message = value
                .get("error")
                .and_then(Value::as_str)
                .map_or_else(|| text.trim().to_owned(), str::to_owned);
            bail!("the server answered {status}: {message}");
        }
        Ok(text)
    }
}
