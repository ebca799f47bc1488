//! Where a test's store lives: an SQLite file in a temporary directory, or a schema of its
//! own in the PostgreSQL database `MINDGATE_TEST_POSTGRES_URL` names (dropped at the end).
//! Opening the same place twice opens the same store, so a test can reopen it with
//! another embedder.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use mindgate_memory::{Memory, MemoryDb, OpenOptions, Result};

/// The variable naming the throwaway PostgreSQL server.
pub const URL_VAR: &str = "MINDGATE_TEST_POSTGRES_URL";

/// The backends a case runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// One store's place.
pub struct Place {
    pub db: MemoryDb,
    _dir: Option<tempfile::TempDir>,
    drop_schema: Option<(String, String)>,
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Some((url, schema)) = &self.drop_schema
            && let Ok(mut client) = ::postgres::Client::connect(url, ::postgres::NoTls)
        {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
    }
}

impl Place {
    /// A fresh place, or `None` (with a "skipped" line) when PostgreSQL is asked for
    /// without the variable.
    pub fn new(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                Some(Self {
                    db: MemoryDb::File(dir.path().join("memory.db")),
                    _dir: Some(dir),
                    drop_schema: None,
                })
            }
            Backend::Postgres => {
                let Some(url) = std::env::var(URL_VAR).ok().filter(|v| !v.trim().is_empty()) else {
                    println!("skipped: {URL_VAR} not set");
                    return None;
                };
                let schema = format!("mgops_{:016x}", rand::random::<u64>());
                let mut admin = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
                admin
                    .batch_execute(&format!("CREATE SCHEMA {schema}"))
                    .unwrap();
                let sep = if url.contains('?') { '&' } else { '?' };
                let scoped = format!("{url}{sep}options=-c%20search_path%3D{schema}");
                Some(Self {
                    db: MemoryDb::Postgres(scoped),
                    _dir: None,
                    drop_schema: Some((url, schema)),
                })
            }
        }
    }

    /// Opens the store (checking the embedder).
    pub fn open(&self, options: OpenOptions) -> Result<Memory> {
        Memory::open(&self.db, options)
    }

    /// Opens the store without the embedder check, for re-embedding it.
    pub fn open_for_reembed(&self, options: OpenOptions) -> Result<Memory> {
        Memory::open_for_reembed(&self.db, options)
    }
}

/// Generates `mod $case { fn sqlite(); fn postgres(); }` running `$case(backend)`.
#[macro_export]
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[test]
                fn sqlite() {
                    super::$case($crate::places::Backend::Sqlite);
                }
                #[test]
                fn postgres() {
                    super::$case($crate::places::Backend::Postgres);
                }
            }
        )*
    };
}
