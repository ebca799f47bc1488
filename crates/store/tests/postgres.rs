//! What only the PostgreSQL backend has: numbered migrations, a newer schema refused,
//! a clear error for an unreachable database, a reader refused before migration.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use mindgate_store::{Database, PostgresUrl, RunStore, StoreError, Writer, WriterConfig, migrate};

mod common;
use common::{Backend, TestDb};

#[test]
fn migrations_apply_once_and_a_reader_needs_them() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    let err = RunStore::open_database(&db.database).expect_err("not migrated");
    assert!(matches!(err, StoreError::NotMigrated { .. }), "{err}");
    assert!(err.to_string().contains("mindgate migrate"), "{err}");
    let first = migrate(&db.database).expect("migrate");
    assert_eq!(
        (first.from, first.applied.as_slice()),
        (0, &[1, 2, 3, 4, 5, 6, 7][..])
    );
    let again = migrate(&db.database).expect("migrate again");
    assert!(again.applied.is_empty(), "{again:?}");
    assert_eq!(again.from, again.to);
    RunStore::open_database(&db.database).expect("reader after migrate");
}

#[test]
fn a_newer_schema_is_refused_unchanged() {
    let Some(db) = TestDb::new(Backend::Postgres) else {
        return;
    };
    migrate(&db.database).expect("migrate");
    let mut client = mindgate_testkit::pg_client(&db.postgres_url());
    client
        .batch_execute("INSERT INTO mindgate_run_migrations(version) VALUES (99)")
        .expect("bump");
    let err =
        Writer::open_database(&db.database, WriterConfig::default(), None).expect_err("refused");
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
    let err = RunStore::open_database(&db.database).expect_err("refused");
    assert!(matches!(err, StoreError::SchemaTooNew { found: 99, .. }));
}

#[test]
fn an_unreachable_database_is_a_clear_error_without_the_password() {
    // A loopback port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let url =
        PostgresUrl::parse(&format!("postgres://mg:s3cret@127.0.0.1:{port}/runs")).expect("url");
    let database = Database::Postgres(Box::new(url));
    let err =
        Writer::open_database(&database, WriterConfig::default(), None).expect_err("unreachable");
    assert!(matches!(err, StoreError::Unreachable { .. }), "{err}");
    let shown = mindgate_errors::error_chain(&err);
    assert!(shown.contains(&format!("127.0.0.1:{port}/runs")), "{shown}");
    assert!(!shown.contains("s3cret"), "{shown}");
    assert_eq!(err.code(), mindgate_errors::ErrorCode::Unavailable);
}
