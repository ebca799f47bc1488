//! TLS against a real cluster: each test starts its own throwaway PostgreSQL that accepts
//! only TLS (`scripts/pg-throwaway.sh start --tls`: a CA and a server certificate made at
//! start, `hostssl` lines only) on 127.0.0.1. Without PostgreSQL or openssl on the
//! machine the tests print `skipped: <why>` (and fail when services are required).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mindgate_pg::{MigrationLock, Migrations, PoolSettings, PostgresUrl, SslMode, connect, pool};
use mindgate_testkit::services::TlsCluster;

/// Why connecting to `url` failed: the error and its causes, on one line.
fn refusal(url: &PostgresUrl) -> String {
    let err = connect(url).err().expect("refused");
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Whether the session `client` holds is encrypted, as the server sees it.
fn encrypted(client: &mut postgres::Client) -> bool {
    client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0)
}

#[test]
fn require_connects_encrypted() {
    let Some(cluster) = TlsCluster::start() else {
        return;
    };
    let url = PostgresUrl::parse(&cluster.url("sslmode=require")).unwrap();
    assert_eq!(url.ssl_mode(), SslMode::Require);
    let mut client = connect(&url).unwrap();
    assert!(encrypted(&mut client));
    // The default (prefer) encrypts too when the server offers TLS.
    let mut prefer = connect(&PostgresUrl::parse(&cluster.url("")).unwrap()).unwrap();
    assert!(encrypted(&mut prefer));
}

#[test]
fn verify_full_with_the_clusters_ca_connects_and_migrates_through_the_pool() {
    let Some(cluster) = TlsCluster::start() else {
        return;
    };
    let ca = cluster.ca();
    let url = PostgresUrl::parse(&cluster.url(&format!(
        "sslmode=verify-full&sslrootcert={ca}&application_name=tls-test"
    )))
    .unwrap();
    let mut client = connect(&url).unwrap();
    assert!(encrypted(&mut client));
    let migrations = Migrations {
        table: "tls_test_migrations",
        lock: MigrationLock::Key(42),
        steps: &["CREATE TABLE tls_test (id BIGINT)"],
    };
    assert_eq!(migrations.run(&mut client).unwrap(), vec![1]);
    assert_eq!(migrations.run(&mut client).unwrap(), Vec::<i64>::new());
    let settings = PoolSettings {
        max_size: 2,
        min_idle: Some(1),
        wait: std::time::Duration::from_secs(10),
    };
    let mut pooled = pool(&url, settings).unwrap().get().unwrap();
    assert!(encrypted(&mut pooled));
    // verify-ca checks the chain only; `require` with a root file is verify-ca (as libpq).
    for params in [
        format!("sslmode=verify-ca&sslrootcert={ca}"),
        format!("sslmode=require&sslrootcert={ca}"),
    ] {
        let url = PostgresUrl::parse(&cluster.url(&params)).unwrap();
        assert_eq!(url.ssl_mode(), SslMode::VerifyCa, "{params}");
        assert!(encrypted(&mut connect(&url).unwrap()), "{params}");
    }
}

#[test]
fn verify_full_with_a_wrong_ca_is_a_clear_error() {
    let Some(cluster) = TlsCluster::start() else {
        return;
    };
    let wrong = cluster.wrong_ca();
    for mode in ["verify-full", "verify-ca"] {
        let url = PostgresUrl::parse(&cluster.url(&format!("sslmode={mode}&sslrootcert={wrong}")))
            .unwrap();
        let err = refusal(&url);
        assert!(
            err.starts_with(
                "cannot reach the PostgreSQL database postgres://postgres:***@127.0.0.1:"
            ),
            "{err}"
        );
        assert!(err.contains("UnknownIssuer"), "{err}");
        assert!(
            err.contains(&format!(
                "sslmode={mode}: the server's certificate is not signed by a trusted CA; name its CA with sslrootcert=/path/ca.pem"
            )),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
}

#[test]
fn disable_against_a_tls_only_cluster_is_a_clear_error() {
    let Some(cluster) = TlsCluster::start() else {
        return;
    };
    let url = PostgresUrl::parse(&cluster.url("sslmode=disable")).unwrap();
    let err = refusal(&url);
    assert!(err.contains("no encryption"), "{err}");
    assert!(
        err.contains("sslmode=disable: the server accepts only encrypted connections; use sslmode=require or stronger"),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
}
