//! Where a test's store lives: an SQLite file in a temporary directory, or a schema of its
//! own in the PostgreSQL database `MINDGATE_TEST_POSTGRES_URL` names (dropped at the end).
//! Opening the same place twice opens the same store, so a test can reopen it with
//! another embedder.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use mindgate_memory::{Memory, MemoryDb, OpenOptions, Result};

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
    _schema: Option<mindgate_testkit::PgSchema>,
}

impl Place {
    /// A fresh place, or `None` (with a "skipped" line) when PostgreSQL is asked for
    /// without the variable.
    pub fn new(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                Some(Self {
                    db: MemoryDb::Sqlite(dir.path().join("memory.db")),
                    _dir: Some(dir),
                    _schema: None,
                })
            }
            Backend::Postgres => {
                let schema = mindgate_testkit::PgSchema::create("mgops")?;
                let url = mindgate_pg::PostgresUrl::parse(schema.url()).unwrap();
                Some(Self {
                    db: MemoryDb::Postgres(Box::new(url)),
                    _dir: None,
                    _schema: Some(schema),
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
