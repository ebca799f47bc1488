//! `mindgate memory embedder import|status` against the built binary, each in a fresh
//! Mindgate home. The MiniLM cases need `MINDGATE_TEST_MINILM_DIR` (set by
//! `scripts/test.sh`) and print `skipped: <why>` without it (failing when
//! `MINDGATE_TEST_REQUIRE_SERVICES=1`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// `mindgate memory embedder <args>` with `home` as the Mindgate home and none of the
/// embedder variables of the caller's environment.
fn embedder(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mindgate"));
    cmd.args(["memory", "embedder"]).args(args);
    cmd.env("MINDGATE_HOME", home);
    for var in [
        "MINDGATE_EMBEDDER",
        "MINDGATE_MINILM_DIR",
        "MINDGATE_EMBED_URL",
        "MINDGATE_EMBED_MODEL",
        "MINDGATE_EMBED_API_KEY",
        "MINDGATE_EMBED_DIM",
        "MINDGATE_EMBED_INPUT_TYPE",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn status_json(mut cmd: Command) -> (Output, Value) {
    let out = cmd.output().unwrap();
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", stdout(&out)));
    (out, value)
}

#[test]
fn status_of_a_fresh_home_is_the_builtin_embedder() {
    let home = tempfile::tempdir().unwrap();
    let out = embedder(home.path(), &["status"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("active embedder: builtin:ngram-v1@512"),
        "{text}"
    );
    assert!(text.contains("imported models"), "{text}");
    assert!(text.contains("none"), "{text}");

    let (out, value) = status_json(embedder(home.path(), &["status", "--json"]));
    assert!(out.status.success());
    assert_eq!(value["active"]["id"], "builtin:ngram-v1@512");
    assert_eq!(value["active"]["kind"], "builtin");
    assert_eq!(value["imported"], Value::Array(vec![]));
    assert_eq!(
        value["modelsDir"],
        home.path().join("models").display().to_string()
    );
}

#[test]
fn asking_for_an_embedder_that_is_not_there_fails_with_a_hint() {
    let home = tempfile::tempdir().unwrap();
    let out = embedder(home.path(), &["status", "--embedder", "minilm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("mindgate memory embedder import"),
        "{}",
        stdout(&out)
    );

    let out = embedder(home.path(), &["status", "--embedder", "bert"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("builtin, minilm or openai"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_openai_endpoint_from_the_environment_is_selected() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = embedder(home.path(), &["status", "--json"]);
    // With the dimension given, status needs no request to name the embedder.
    cmd.env("MINDGATE_EMBED_URL", "http://127.0.0.1:9/v1")
        .env("MINDGATE_EMBED_MODEL", "nomic-embed-text")
        .env("MINDGATE_EMBED_DIM", "768");
    let (out, value) = status_json(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(value["active"]["id"], "openai:nomic-embed-text@768");
    assert!(
        value["active"]["reason"]
            .as_str()
            .unwrap()
            .contains("http://127.0.0.1:9/v1/embeddings")
    );

    let mut incomplete = embedder(home.path(), &["status"]);
    incomplete.env("MINDGATE_EMBED_URL", "http://127.0.0.1:9/v1");
    let out = incomplete.output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("MINDGATE_EMBED_MODEL"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn import_refuses_what_is_not_a_known_model_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let source = tempfile::tempdir().unwrap();
    std::fs::write(
        source.path().join("config.json"),
        r#"{"hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 1, "vocab_size": 9}"#,
    )
    .unwrap();
    std::fs::write(source.path().join("tokenizer.json"), r#"{"model": {}}"#).unwrap();
    std::fs::write(source.path().join("model.safetensors"), b"other weights").unwrap();
    let out = embedder(home.path(), &["import"])
        .arg(source.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a model Mindgate knows"),
        "{}",
        stderr(&out)
    );
    let leftovers: Vec<_> = std::fs::read_dir(home.path().join("models"))
        .unwrap()
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let out = embedder(home.path(), &["import", "/nonexistent/model"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/nonexistent/model"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn imported_minilm_becomes_the_active_embedder() {
    let Some(model) =
        mindgate_testkit::services::service_var(mindgate_testkit::services::MINILM_DIR_VAR)
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let out = embedder(home.path(), &["import"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("imported all-MiniLM-L6-v2"),
        "{}",
        stdout(&out)
    );

    let (out, value) = status_json(embedder(home.path(), &["status", "--json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(value["active"]["id"], "minilm:all-MiniLM-L6-v2@384");
    assert_eq!(value["imported"][0]["name"], "all-MiniLM-L6-v2");
    assert_eq!(
        value["imported"][0]["weightsSha256"],
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    );

    let (_, value) = status_json(embedder(
        home.path(),
        &["status", "--json", "--embedder", "builtin"],
    ));
    assert_eq!(value["active"]["id"], "builtin:ngram-v1@512");
}
