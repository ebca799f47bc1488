//! The real binary on a PostgreSQL that accepts only TLS (`mindgate_testkit::services::
//! TlsCluster`: a CA and a server certificate made at start): the run store and the
//! memory store connect with `sslmode=verify-full` and the cluster's CA, and a wrong CA,
//! `sslmode=disable` or a missing CA file stop the command with the cause, password
//! hidden. Without PostgreSQL or openssl the test prints `skipped: <why>`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use mindgate_testkit::services::TlsCluster;

/// `mindgate ARGS` in `home`, with `MINDGATE_DB` unset.
fn mindgate(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mindgate"))
        .args(args)
        .env(mindgate_home::env::MINDGATE_HOME, home)
        .env_remove("MINDGATE_DB")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn run_and_memory_stores_reach_a_tls_only_postgres_and_refusals_say_why() {
    let Some(cluster) = TlsCluster::start() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let verified = cluster.url(&format!("sslmode=verify-full&sslrootcert={}", cluster.ca()));
    let migrated = mindgate(home.path(), &["migrate", "--db", &verified]);
    assert!(migrated.status.success(), "{}", stderr(&migrated));
    let runs = mindgate(home.path(), &["runs", "--json", "--db", &verified]);
    assert!(runs.status.success(), "{}", stderr(&runs));
    let memory = mindgate(
        home.path(),
        &["memory", "status", "--user", "ana", "--db", &verified],
    );
    assert!(memory.status.success(), "{}", stderr(&memory));

    let wrong = cluster.url(&format!(
        "sslmode=verify-full&sslrootcert={}",
        cluster.wrong_ca()
    ));
    let disabled = cluster.url("sslmode=disable");
    for (args, cause) in [
        (
            vec!["migrate", "--db", &wrong],
            "the server's certificate is not signed by a trusted CA",
        ),
        (
            vec!["memory", "status", "--user", "ana", "--db", &wrong],
            "the server's certificate is not signed by a trusted CA",
        ),
        (
            vec!["migrate", "--db", &disabled],
            "sslmode=disable: the server accepts only encrypted connections; use sslmode=require or stronger",
        ),
    ] {
        let out = mindgate(home.path(), &args);
        let said = stderr(&out);
        assert!(!out.status.success(), "{args:?}: {said}");
        assert!(
            said.contains("cannot reach the PostgreSQL database"),
            "{args:?}: {said}"
        );
        assert!(said.contains(cause), "{args:?}: {said}");
        assert!(!said.contains("s3cret"), "{args:?}: {said}");
    }
    let missing = cluster.url("sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
    let out = mindgate(home.path(), &["migrate", "--db", &missing]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("sslrootcert /nonexistent/ca.pem"),
        "{}",
        stderr(&out)
    );
}
