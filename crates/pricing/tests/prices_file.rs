//! The user's `prices.toml`: it overrides and extends the built-in table; a bad file is a
//! clear error naming its line and changes nothing.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;

use mindgate_pricing::{Cost, PriceSource, PriceTable, PricesFileError, TokenCounts};

fn million_input() -> TokenCounts {
    TokenCounts {
        input: 1_000_000,
        ..TokenCounts::default()
    }
}

#[test]
fn a_file_overrides_a_builtin_price_and_adds_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prices.toml");
    std::fs::write(
        &path,
        "# my negotiated prices\n[models.\"gpt-4o\"]\ninput = 2.0\noutput = 8.0\n\n[models.\"Local-Llama\"]\ninput = 0.0\noutput = 0.0\ncache_read = 0.0\n",
    )
    .unwrap();
    let table = PriceTable::load(&path).unwrap();

    let gpt = table.lookup("openai/gpt-4o-2024-08-06").unwrap();
    assert_eq!((gpt.key, gpt.source), ("gpt-4o", PriceSource::File));
    assert_eq!(gpt.price.input, 2.0);
    // Cache prices left out are the input price.
    assert_eq!(gpt.price.cache_read, 2.0);
    assert_eq!(gpt.price.cache_write, 2.0);

    let llama = table.lookup("ollama/local-llama").unwrap();
    assert_eq!(llama.key, "local-llama");

    // Built-in entries the file does not name stay.
    let mini = table.lookup("gpt-4o-mini").unwrap();
    assert_eq!(mini.source, PriceSource::Builtin);

    let mut cost = Cost::default();
    cost.add(&table, Some("gpt-4o"), &million_input());
    assert_eq!(cost.usd(), Some(2.0));
}

#[test]
fn a_missing_file_is_the_builtin_table() {
    let dir = tempfile::tempdir().unwrap();
    let table = PriceTable::load(&dir.path().join("prices.toml")).unwrap();
    assert_eq!(table, PriceTable::builtin());
}

fn invalid(text: &str) -> (usize, String) {
    match PriceTable::builtin().with_file_text(text, Path::new("/h/prices.toml")) {
        Err(PricesFileError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected an invalid-file error, got {other:?}"),
    }
}

#[test]
fn a_bad_line_is_named() {
    let (line, message) = invalid("[models.\"gpt-4o\"]\ninput = 2.0\noutput = ten\n");
    assert_eq!(line, 3, "{message}");
    let err = PriceTable::builtin()
        .with_file_text("[models.x]\ninput = 1\n", Path::new("/h/prices.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("price file /h/prices.toml, line 1:"),
        "{err}"
    );
    assert!(err.contains("output"), "a missing field is named: {err}");
}

#[test]
fn an_unknown_key_is_refused() {
    let (line, message) =
        invalid("[models.\"gpt-4o\"]\ninput = 2.0\noutput = 8.0\ncached_input = 1.0\n");
    assert_eq!(line, 4, "{message}");
    assert!(message.contains("cached_input"), "{message}");
    let (line, message) = invalid("currency = \"EUR\"\n");
    assert_eq!(line, 1);
    assert!(message.contains("currency"), "{message}");
}

#[test]
fn a_negative_price_is_refused_with_its_model_line() {
    let (line, message) = invalid("\n\n[models.\"a\"]\ninput = 1.0\noutput = -3.0\n");
    assert_eq!(line, 3, "{message}");
    assert!(message.contains("output"), "{message}");
}

#[test]
fn an_unknown_model_is_not_priced() {
    let table = PriceTable::builtin();
    assert!(table.lookup("gpt-4o-mini-tts").is_none());
    assert!(table.lookup("llama3:70b").is_none());
    let mut cost = Cost::default();
    cost.add(&table, Some("llama3:70b"), &million_input());
    assert_eq!(cost.usd(), None);
    assert_eq!(cost.unpriced_models, ["llama3:70b"]);
}

#[test]
fn builtin_models_of_each_provider_match_their_api_names() {
    let table = PriceTable::builtin();
    for (name, key) in [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-2025-04-14", "gpt-4.1"),
        ("o3-mini-2025-01-31", "o3-mini"),
        ("gpt-5", "gpt-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("anthropic/claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("google/gemini-1.5-pro", "gemini-1.5-pro"),
    ] {
        assert_eq!(table.lookup(name).map(|m| m.key), Some(key), "{name}");
    }
}
