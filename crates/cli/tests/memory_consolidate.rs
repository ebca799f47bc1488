//! `mindgate memory consolidate` against the built binary and a stand-in chat endpoint on
//! 127.0.0.1: off (a clear error) without a chat model, quarantined records with one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use mindgate_memory::{
    Actor, MemoryStore, Message, MessageContentValue, OpenOptions, Scope, SessionMemory,
    SqliteMemory,
};
use mindgate_testkit::chat_stand_in::{Answer, ChatStandIn};
use serde_json::Value;

fn consolidate(home: &Path, chat: Option<(&str, Option<&str>)>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mindgate"));
    cmd.args(["memory", "consolidate"])
        .args(args)
        .env("MINDGATE_HOME", home);
    for var in [
        "MINDGATE_EMBEDDER",
        "MINDGATE_MINILM_DIR",
        "MINDGATE_EMBED_URL",
        "MINDGATE_CHAT_URL",
        "MINDGATE_CHAT_MODEL",
        "MINDGATE_CHAT_API_KEY",
        "MINDGATE_CHAT_TIMEOUT_SECS",
    ] {
        cmd.env_remove(var);
    }
    if let Some((url, key)) = chat {
        cmd.env("MINDGATE_CHAT_URL", url)
            .env("MINDGATE_CHAT_MODEL", "stand-in");
        if let Some(key) = key {
            cmd.env("MINDGATE_CHAT_API_KEY", key);
        }
    }
    cmd.output().unwrap()
}

/// A session of two messages in the home's memory store (builtin embedder, as the binary
/// opens it).
fn seed(home: &Path) {
    let embedder = mindgate_embed::select(&mindgate_embed::EmbedderConfig::new(home)).unwrap();
    let store = SqliteMemory::open(
        &home.join("memory.db"),
        OpenOptions::default().embedder(std::sync::Arc::from(embedder)),
    )
    .unwrap();
    let scope = Scope::user("ana").with_session("trip");
    for text in [
        "I moved to Tbilisi last spring.",
        "Tbilisi is lovely in May.",
    ] {
        let message = Message::User {
            content: MessageContentValue::Text(text.to_owned()),
            user_id: None,
        };
        store
            .session()
            .push(&scope, &message, Actor::Agent)
            .unwrap();
    }
    assert_eq!(store.metadata("ana").unwrap().message_count, 2);
}

#[test]
fn without_a_chat_model_consolidation_is_off_with_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    seed(home.path());
    let out = consolidate(home.path(), None, &["--session", "trip"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("consolidation is off"), "{stderr}");
    assert!(stderr.contains("MINDGATE_CHAT_URL"), "{stderr}");
}

#[test]
fn consolidate_writes_quarantined_records_and_reports_them() {
    let home = tempfile::tempdir().unwrap();
    seed(home.path());
    let stand_in = ChatStandIn::start(vec![
        Answer::Completion(
            r#"{"summary": "Ana talks about her move to Tbilisi.",
                "facts": [{"text": "Ana lives in Tbilisi", "subject": "Ana",
                           "predicate": "lives_in", "object": "Tbilisi", "evidence": ["m1"]}]}"#
                .to_owned(),
        ),
        Answer::Completion(
            r#"{"insights": [{"text": "Ana is settling into Tbilisi", "cites": ["f1", "e1"]}]}"#
                .to_owned(),
        ),
    ])
    .unwrap();
    let out = consolidate(
        home.path(),
        Some((stand_in.url(), Some("sk-cli"))),
        &["--session", "trip", "--user", "ana", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["messages"], 2);
    assert_eq!(report["facts"][0]["provenance"], "extraction");
    assert_eq!(report["facts"][0]["status"], "quarantined");
    assert_eq!(report["episodes"][0]["status"], "quarantined");
    assert_eq!(report["insights"][0]["provenance"], "reflection");
    assert_eq!(report["insights"][0]["status"], "quarantined");
    let cites = report["insights"][0]["cites"].as_array().unwrap();
    assert_eq!(cites[0], report["facts"][0]["id"]);
    assert_eq!(cites[1], report["episodes"][0]["id"]);
    let requests = stand_in.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer sk-cli"))
    );

    // The text view of a second run: nothing new.
    let out = consolidate(
        home.path(),
        Some((stand_in.url(), None)),
        &["--session", "trip"],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing new to consolidate"));
}
