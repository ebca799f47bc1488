//! The store's contract suites run on every backend: SQLite in a temporary directory,
//! and PostgreSQL in a throwaway schema (`mindgate_testkit::PgSchema`) of the database
//! `MINDGATE_TEST_POSTGRES_URL` names (`scripts/test.sh` starts a throwaway cluster and
//! sets it). Without that variable the PostgreSQL cases print `skipped: <why>` (and fail
//! when `MINDGATE_TEST_REQUIRE_SERVICES=1`).
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use mindgate_store::{
    CommitHook, Database, OpenReport, PostgresUrl, RunStore, Writer, WriterConfig,
};
use mindgate_testkit::PgSchema;

/// A backend the contract runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file.
    Sqlite,
    /// PostgreSQL, from `MINDGATE_TEST_POSTGRES_URL`.
    Postgres,
}

/// A fresh, empty store of one backend, removed when dropped.
pub struct TestDb {
    /// The store's database.
    pub database: Database,
    /// The SQLite file's directory.
    pub dir: tempfile::TempDir,
    schema: Option<PgSchema>,
}

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
                let schema = PgSchema::create("mg_store_test")?;
                let url = PostgresUrl::parse(schema.url()).expect("test url");
                Some(TestDb {
                    database: Database::Postgres(Box::new(url)),
                    dir,
                    schema: Some(schema),
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
