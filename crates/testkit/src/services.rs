//! Tests that need a service (the test PostgreSQL, the MiniLM model files) and the one
//! rule for when it is missing: the test prints `skipped: <why>` on stderr and returns,
//! never a silent pass; and when `MINDGATE_TEST_REQUIRE_SERVICES=1` (set by
//! `scripts/test.sh` once it has provisioned them) a missing service fails the test.
//!
//! [`PgSchema`] is the throwaway schema every PostgreSQL suite uses: made in the database
//! `MINDGATE_TEST_POSTGRES_URL` names, dropped with the value. [`TlsCluster`] is a
//! throwaway cluster of its own that accepts only TLS, for the TLS tests.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test PostgreSQL (`scripts/test.sh` starts a throwaway cluster
/// and sets it).
pub const POSTGRES_URL_VAR: &str = "MINDGATE_TEST_POSTGRES_URL";

/// The variable naming the MiniLM model directory (`scripts/test.sh` downloads it).
pub const MINILM_DIR_VAR: &str = "MINDGATE_TEST_MINILM_DIR";

/// The variable naming the MiniLM wheel (`scripts/test.sh` downloads it).
pub const MINILM_WHEEL_VAR: &str = "MINDGATE_TEST_MINILM_WHEEL";

/// When `1`, a missing service fails the test instead of skipping it.
pub const REQUIRE_SERVICES_VAR: &str = "MINDGATE_TEST_REQUIRE_SERVICES";

/// Whether a missing service must fail the test ([`REQUIRE_SERVICES_VAR`] is `1`).
pub fn services_required() -> bool {
    std::env::var(REQUIRE_SERVICES_VAR).is_ok_and(|v| v.trim() == "1")
}

/// Says the calling test is skipped because `why` (on stderr: `skipped: <why>`); panics
/// instead when services are required, so CI cannot pass a suite it provisioned by
/// skipping it.
#[track_caller]
pub fn skip(why: &str) {
    if services_required() {
        panic!("{REQUIRE_SERVICES_VAR}=1 but this test would be skipped: {why}");
    }
    eprintln!("skipped: {why}");
}

/// The non-empty value of the service variable `var`, or `None` after [`skip`] said it
/// is not set.
#[track_caller]
pub fn service_var(var: &str) -> Option<String> {
    let value = std::env::var(var).ok().filter(|v| !v.trim().is_empty());
    if value.is_none() {
        skip(&format!("{var} not set"));
    }
    value
}

/// The test PostgreSQL's URL, or `None` after [`skip`].
#[track_caller]
pub fn postgres_url() -> Option<String> {
    service_var(POSTGRES_URL_VAR)
}

/// A throwaway schema in the test PostgreSQL, dropped (with everything in it) with the
/// value.
#[derive(Debug)]
pub struct PgSchema {
    admin: String,
    name: String,
    url: String,
    /// The login role that owns the schema, when made with [`PgSchema::create_with_role`].
    role: Option<String>,
}

impl PgSchema {
    /// A fresh schema named `<prefix>_<pid>_<n>_<random>`, or `None` after [`skip`] when
    /// the test PostgreSQL is not set. Panics when it is set but refuses (a broken
    /// service is a failure, not a skip).
    #[track_caller]
    pub fn create(prefix: &str) -> Option<PgSchema> {
        let admin = postgres_url()?;
        let name = fresh_name(prefix);
        if let Err(e) = admin_sql(&admin, &format!("CREATE SCHEMA {name}")) {
            panic!("{POSTGRES_URL_VAR}: cannot create schema {name}: {e}");
        }
        let url = with_search_path(&admin, &name);
        Some(PgSchema {
            admin,
            name,
            url,
            role: None,
        })
    }

    /// Like [`PgSchema::create`], but the schema is owned by a login role of the same
    /// name, and [`PgSchema::url`] connects as that role, so a test can shut it out
    /// ([`PgSchema::shut_out`]) and let it in again. Role and schema go with the value.
    #[track_caller]
    pub fn create_with_role(prefix: &str) -> Option<PgSchema> {
        let admin = postgres_url()?;
        let name = fresh_name(prefix);
        let sql = format!("CREATE ROLE {name} LOGIN; CREATE SCHEMA {name} AUTHORIZATION {name};");
        if let Err(e) = admin_sql(&admin, &sql) {
            panic!("{POSTGRES_URL_VAR}: cannot create role and schema {name}: {e}");
        }
        let url = with_search_path(&with_user(&admin, &name), &name);
        Some(PgSchema {
            admin,
            name: name.clone(),
            url,
            role: Some(name),
        })
    }

    /// Refuses new connections of the schema's role and ends the open ones (a database
    /// that went away, as far as the code under test can tell).
    ///
    /// # Panics
    ///
    /// When the schema has no role of its own, or the test PostgreSQL refuses.
    #[track_caller]
    pub fn shut_out(&self) {
        let role = self.owned_role();
        let sql = format!(
            "ALTER ROLE {role} NOLOGIN; SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE usename = '{role}'"
        );
        if let Err(e) = admin_sql(&self.admin, &sql) {
            panic!("cannot shut out {role}: {e}");
        }
    }

    /// Lets the schema's role log in again after [`PgSchema::shut_out`].
    ///
    /// # Panics
    ///
    /// When the schema has no role of its own, or the test PostgreSQL refuses.
    #[track_caller]
    pub fn let_in(&self) {
        let role = self.owned_role();
        if let Err(e) = admin_sql(&self.admin, &format!("ALTER ROLE {role} LOGIN")) {
            panic!("cannot let {role} in: {e}");
        }
    }

    #[track_caller]
    fn owned_role(&self) -> &str {
        match &self.role {
            Some(role) => role,
            None => panic!("schema {} was made without a role of its own", self.name),
        }
    }

    /// The URL whose connections work in this schema (it is first on the search path).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The test database's URL (no search path).
    pub fn admin_url(&self) -> &str {
        &self.admin
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `sql` in the test database (outside the schema unless it names it).
    pub fn admin_execute(&self, sql: &str) -> Result<(), String> {
        admin_sql(&self.admin, sql)
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let mut sql = format!("DROP SCHEMA IF EXISTS {} CASCADE;", self.name);
        if let Some(role) = &self.role {
            sql = format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \
                 '{role}'; {sql} DROP ROLE IF EXISTS {role};"
            );
        }
        if let Err(e) = admin_sql(&self.admin, &sql) {
            eprintln!("could not drop test schema {}: {e}", self.name);
        }
    }
}

/// A connection to `url` made the way Mindgate makes them ([`mindgate_pg::connect`]: the
/// URL's TLS settings and connect timeout), for a test's own statements.
///
/// # Panics
///
/// When the URL is not a PostgreSQL URL or the database refuses (the driver's explanation
/// in the message). Like any blocking client it must not be made on an async runtime's
/// worker thread.
#[track_caller]
pub fn pg_client(url: &str) -> postgres::Client {
    match try_pg_client(url) {
        Ok(client) => client,
        Err(e) => panic!("cannot connect to the test PostgreSQL: {e}"),
    }
}

fn try_pg_client(url: &str) -> Result<postgres::Client, String> {
    let url = mindgate_pg::PostgresUrl::parse(url).map_err(|e| e.to_string())?;
    mindgate_pg::connect(&url).map_err(|e| e.to_string())
}

/// Runs `sql` on a connection of its own, on a thread of its own (a blocking client
/// cannot run on an async runtime's worker, where async tests drop their schemas).
fn admin_sql(url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        try_pg_client(&url)?
            .batch_execute(&sql)
            .map_err(|e| e.to_string())
    })
    .join()
    .map_err(|_| "the admin thread panicked".to_owned())?
}

/// `<prefix>_<pid>_<n>_<random>`: a schema (or role) name no other test run uses.
fn fresh_name(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}_{}_{}_{:08x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        rand_suffix()
    )
}

/// `url` with `schema` first on the search path of its connections.
fn with_search_path(url: &str, schema: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-csearch_path%3D{schema}")
}

/// `url` with `user` (and no password) instead of its own user.
fn with_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let host_and_rest = rest.split_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://{user}@{host_and_rest}")
}

/// 32 bits that differ between processes and calls (schema names of parallel runs).
fn rand_suffix() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish() as u32
}

/// A throwaway PostgreSQL that accepts only TLS (`scripts/pg-throwaway.sh start --tls`: a
/// CA and a server certificate for 127.0.0.1 made at start, `hostssl` lines only),
/// stopped and removed with the value.
#[derive(Debug)]
pub struct TlsCluster {
    vars: HashMap<String, String>,
}

impl TlsCluster {
    /// Starts one, or `None` after [`skip`] when the machine cannot (no PostgreSQL server
    /// binaries, no openssl).
    #[track_caller]
    pub fn start() -> Option<TlsCluster> {
        let out = Command::new("bash")
            .arg(throwaway_script())
            .args(["start", "--tls"])
            .output();
        let out = match out {
            Ok(out) if out.status.success() => out,
            Ok(out) => {
                let why = String::from_utf8_lossy(&out.stderr);
                skip(&format!("cannot start a TLS PostgreSQL: {}", why.trim()));
                return None;
            }
            Err(e) => {
                skip(&format!("cannot run scripts/pg-throwaway.sh: {e}"));
                return None;
            }
        };
        let vars = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Some(TlsCluster { vars })
    }

    fn var(&self, name: &str) -> &str {
        self.vars.get(name).map_or("", String::as_str)
    }

    /// The cluster's URL with user `postgres`, password `s3cret` (trust ignores it, so a
    /// test can check it never shows) and the query `params`.
    pub fn url(&self, params: &str) -> String {
        let base = self
            .var(POSTGRES_URL_VAR)
            .replacen("postgres@", "postgres:s3cret@", 1);
        format!("{base}?{params}")
    }

    /// The PEM file of the CA that signed the server's certificate.
    pub fn ca(&self) -> &str {
        self.var("MINDGATE_TEST_POSTGRES_CA")
    }

    /// The PEM file of a CA that signed nothing of this cluster's.
    pub fn wrong_ca(&self) -> &str {
        self.var("MINDGATE_TEST_POSTGRES_WRONG_CA")
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(throwaway_script())
            .args(["stop", self.var("MINDGATE_TEST_POSTGRES_DIR")])
            .status();
    }
}

/// `scripts/pg-throwaway.sh` of this repository.
fn throwaway_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-throwaway.sh")
}
