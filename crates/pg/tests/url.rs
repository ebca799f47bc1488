//! The PostgreSQL URL: which URLs are taken, the TLS options, and that the password never
//! shows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use mindgate_pg::{DEFAULT_CONNECT_TIMEOUT, Database, PostgresUrl, SslMode, is_postgres_url};

#[test]
fn the_scheme_is_taken_in_any_case() {
    for url in [
        "postgres://mg@db.internal/runs",
        "postgresql://mg@db.internal/runs",
        "POSTGRES://mg:pw@db.internal/runs?connect_timeout=2",
        "PostgreSQL://mg@db.internal:6543/runs",
    ] {
        assert!(is_postgres_url(url), "{url}");
        let parsed = PostgresUrl::parse(url).expect(url);
        assert!(parsed.to_string().starts_with("postgres://mg"), "{parsed}");
        assert!(
            parsed.as_secret_str().starts_with("postgres"),
            "lower-case scheme"
        );
    }
    assert!(!is_postgres_url("mysql://h/m"));
    assert!(!is_postgres_url("postgres:x.db"));
}

#[test]
fn other_schemes_and_hostless_urls_are_refused_with_the_reason() {
    for (bad, reason) in [
        ("mysql://h/m", "must start with postgres://"),
        ("sqlite:x.db", "must start with postgres://"),
        ("postgres:///m", "names no host"),
        ("POSTGRES:///m?sslmode=require", "names no host"),
        ("postgres://h:notaport/m", "not a usable PostgreSQL URL"),
    ] {
        let err = PostgresUrl::parse(bad).expect_err(bad).to_string();
        assert!(err.contains(reason), "{bad}: {err}");
    }
}

#[test]
fn the_password_never_shows() {
    for url in [
        "postgres://mg:s3cret@db.internal:6543/runs",
        "POSTGRES://mg:s3cret@db.internal:6543/runs?sslmode=require&connect_timeout=3",
    ] {
        let parsed = PostgresUrl::parse(url).expect(url);
        assert_eq!(
            parsed.to_string(),
            "postgres://mg:***@db.internal:6543/runs"
        );
        let scoped = parsed.with_search_path("scratch");
        let database = Database::Postgres(Box::new(parsed.clone()));
        for shown in [
            format!("{parsed}"),
            format!("{parsed:?}"),
            format!("{database}"),
            format!("{database:?}"),
            format!("{scoped} {scoped:?}"),
            parsed.target(),
        ] {
            assert!(!shown.contains("s3cret"), "{shown}");
        }
        assert!(
            parsed.as_secret_str().contains("s3cret"),
            "kept for connecting"
        );
    }
}

#[test]
fn a_connect_timeout_applies_unless_the_url_sets_one() {
    let default = PostgresUrl::parse("postgres://h/m").unwrap();
    assert_eq!(
        default.config().get_connect_timeout(),
        Some(&DEFAULT_CONNECT_TIMEOUT)
    );
    let given = PostgresUrl::parse("postgres://h/m?connect_timeout=2").unwrap();
    assert_eq!(
        given.config().get_connect_timeout(),
        Some(&Duration::from_secs(2))
    );
}

#[test]
fn every_sslmode_is_taken_and_prefer_is_the_default() {
    let mode = |url: &str| PostgresUrl::parse(url).expect(url).ssl_mode();
    assert_eq!(mode("postgres://h/m"), SslMode::Prefer);
    for (given, expected) in [
        ("disable", SslMode::Disable),
        ("prefer", SslMode::Prefer),
        ("require", SslMode::Require),
        ("verify-ca", SslMode::VerifyCa),
        ("verify-full", SslMode::VerifyFull),
    ] {
        // verify-* without sslrootcert use the system's roots; this machine may have
        // none, which is a clear refusal of its own.
        match PostgresUrl::parse(&format!(
            "postgres://h/m?sslmode={given}&application_name=t"
        )) {
            Ok(url) => assert_eq!(url.ssl_mode(), expected, "{given}"),
            Err(e) => assert!(
                given.starts_with("verify") && e.to_string().contains("sslrootcert"),
                "{given}: {e}"
            ),
        }
    }
    let err = PostgresUrl::parse("postgres://h/m?sslmode=allow")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "sslmode=allow is not one of disable, prefer, require, verify-ca, verify-full"
        ),
        "{err}"
    );
}

#[test]
fn a_missing_or_empty_root_certificate_file_is_refused_naming_it() {
    let err =
        PostgresUrl::parse("postgres://h/m?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
            .unwrap_err()
            .to_string();
    assert!(err.contains("sslrootcert /nonexistent/ca.pem"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let err = PostgresUrl::parse(&format!(
        "postgres://h/m?sslmode=verify-ca&sslrootcert={}",
        empty.display()
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("no usable PEM certificate"), "{err}");
}

#[test]
fn a_database_value_is_a_url_or_a_file() {
    assert_eq!(
        Database::from_value("runs.db").unwrap().sqlite_path(),
        Some(std::path::Path::new("runs.db"))
    );
    let pg = Database::from_value("POSTGRES://mg:pw@h/m").unwrap();
    assert!(pg.is_postgres());
    assert!(Database::from_value("postgres:///m").is_err());
}
