//! The store's contract suites run on every backend: SQLite in a temporary directory,
//! and PostgreSQL in a schema of its own inside the database `MINDGATE_TEST_POSTGRES_URL`
//! names (`scripts/test.sh` starts a throwaway cluster and sets it). Without that
//! variable the PostgreSQL cases print why they were skipped and pass.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::sync::atomic::{AtomicU32, Ordering};

use mindgate_store::{
    CommitHook, Database, OpenReport, PostgresUrl, RunStore, Writer, WriterConfig,
};

/// The variable naming the test PostgreSQL.
pub const POSTGRES_URL_VAR: &str = "MINDGATE_TEST_POSTGRES_URL";

/// A backend the contract runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file.
    Sqlite,
    /// PostgreSQL, from [`POSTGRES_URL_VAR`].
    Postgres,
}

/// A fresh, empty store of one backend, removed when dropped.
pub struct TestDb {
    /// The store's database.
    pub database: Database,
    /// The SQLite file's directory.
    pub dir: tempfile::TempDir,
    schema: Option<(String, String)>,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl TestDb {
    /// A fresh store, or `None` (after printing why) when the backend is not available.
    pub fn new(backend: Backend) -> Option<TestDb> {
        let dir = tempfile::tempdir().expect("tmp");
        match backend {
            Backend::Sqlite => Some(TestDb {
                database: Database::Sqlite(dir.path().join("db").join("m.db")),
                dir,
                schema: None,
            }),
            Backend::Postgres => {
                let Some(base) = std::env::var(POSTGRES_URL_VAR)
                    .ok()
                    .filter(|v| !v.trim().is_empty())
                else {
                    println!("skipped: {POSTGRES_URL_VAR} not set");
                    return None;
                };
                let schema = format!(
                    "mg_store_test_{}_{}_{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed),
                    mindgate_store::now_ms() % 1_000_000
                );
                let mut client = postgres::Client::connect(&base, postgres::NoTls)
                    .expect("connect to MINDGATE_TEST_POSTGRES_URL");
                client
                    .batch_execute(&format!("CREATE SCHEMA {schema}"))
                    .expect("create schema");
                let url = with_search_path(&base, &schema);
                Some(TestDb {
                    database: Database::Postgres(Box::new(
                        PostgresUrl::parse(&url).expect("test url"),
                    )),
                    dir,
                    schema: Some((base, schema)),
                })
            }
        }
    }

    /// Opens the writer.
    pub fn writer(&self, config: WriterConfig, hook: Option<CommitHook>) -> (Writer, OpenReport) {
        Writer::open_database(&self.database, config, hook).expect("writer")
    }

    /// Opens a reader.
    pub fn reader(&self) -> RunStore {
        RunStore::open_database(&self.database).expect("reader")
    }

    /// The writer (default config, no hook) and a reader.
    pub fn open(&self) -> (Writer, RunStore) {
        let (w, _) = self.writer(WriterConfig::default(), None);
        (w, self.reader())
    }

    /// The PostgreSQL URL of this store's schema (panics on SQLite).
    pub fn postgres_url(&self) -> String {
        match &self.database {
            Database::Postgres(url) => url.as_secret_str().to_owned(),
            Database::Sqlite(_) => panic!("not a PostgreSQL store"),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((base, schema)) = &self.schema
            && let Ok(mut client) = postgres::Client::connect(base, postgres::NoTls)
        {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
    }
}

/// `url` with `search_path` set to `schema` for every connection made from it.
pub fn with_search_path(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}

/// Defines `sqlite::NAME` and `postgres::NAME` tests calling `NAME(Backend)`.
#[macro_export]
macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(#[test] fn $name() { super::$name($crate::common::Backend::Sqlite) })*
        }
        mod on_postgres {
            $(#[test] fn $name() { super::$name($crate::common::Backend::Postgres) })*
        }
    };
}
