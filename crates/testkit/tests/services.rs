//! The skip rule, run in a child process of this test binary: without the test
//! PostgreSQL a test says `skipped: <why>` on stderr and passes, but with
//! `MINDGATE_TEST_REQUIRE_SERVICES=1` it fails instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use mindgate_testkit::PgSchema;
use mindgate_testkit::services::{POSTGRES_URL_VAR, REQUIRE_SERVICES_VAR};

/// Makes a schema when the test PostgreSQL is set (and drops it); otherwise skips.
#[test]
fn a_schema_or_a_skip() {
    if let Some(schema) = PgSchema::create("mg_testkit") {
        assert!(
            schema
                .url()
                .contains(&format!("search_path%3D{}", schema.name()))
        );
        schema
            .admin_execute(&format!("CREATE TABLE {}.t (x INT)", schema.name()))
            .unwrap();
    }
}

/// This binary running only [`a_schema_or_a_skip`], without the test PostgreSQL.
fn run_probe(require: Option<&str>) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "a_schema_or_a_skip",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove(POSTGRES_URL_VAR)
    .env_remove(REQUIRE_SERVICES_VAR);
    if let Some(value) = require {
        cmd.env(REQUIRE_SERVICES_VAR, value);
    }
    cmd.output().unwrap()
}

#[test]
fn a_missing_service_skips_aloud_and_fails_when_required() {
    let skipped = run_probe(None);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{stderr}");
    assert!(
        stderr.contains("skipped: MINDGATE_TEST_POSTGRES_URL not set"),
        "{stderr}"
    );
    let required = run_probe(Some("1"));
    let stderr = String::from_utf8_lossy(&required.stderr);
    assert!(
        !required.status.success(),
        "a required service may not skip: {stderr}"
    );
    assert!(
        stderr.contains(
            "MINDGATE_TEST_REQUIRE_SERVICES=1 but this test would be skipped: MINDGATE_TEST_POSTGRES_URL not set"
        ),
        "{stderr}"
    );
}
