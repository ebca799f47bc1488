//! The memory model's JSON Schema: pinned by a golden file, a valid draft 2020-12 schema,
//! and it accepts what the store writes.
//!
//! Regenerate after a reviewed contract change with
//! `UPDATE_GOLDEN=1 cargo test -p mindgate-memory --test golden`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use mindgate_memory::schema::{json_schema, json_schema_string};
use mindgate_memory::*;
use serde_json::{Value, json};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memory-schema.golden.json")
}

#[test]
fn schema_matches_the_golden_file() {
    mindgate_testkit::golden::assert_golden(
        &golden_path(),
        &json_schema_string(),
        "the memory JSON Schema",
        "cargo test -p mindgate-memory --test golden",
    );
}

#[test]
fn schema_is_valid_draft_2020_12_with_the_seed_names() {
    let schema = json_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
        panic!("not a valid draft 2020-12 schema: {e}");
    }
    let fact = &schema["$defs"]["Fact"]["properties"];
    for key in [
        "text",
        "validFrom",
        "validTo",
        "supersedes",
        "supersededBy",
        "provenance",
        "status",
        "importance",
        "userId",
        "createdAt",
        "deletedAt",
    ] {
        assert!(fact.get(key).is_some(), "Fact.{key} missing");
    }
    let opts = &schema["$defs"]["MemorySearchOptions"]["properties"];
    for key in [
        "query",
        "topK",
        "tags",
        "dateRange",
        "includeArchived",
        "includeQuarantined",
        "asOf",
        "knownAt",
    ] {
        assert!(opts.get(key).is_some(), "MemorySearchOptions.{key} missing");
    }
}

fn def_validator(name: &str) -> jsonschema::Validator {
    let mut schema = json_schema();
    schema["$ref"] = json!(format!("#/$defs/{name}"));
    schema.as_object_mut().unwrap().remove("anyOf");
    jsonschema::draft202012::new(&schema).unwrap()
}

#[test]
fn stored_records_validate_and_round_trip() {
    let store = SqliteMemory::open_in_memory(
        OpenOptions::default().embedder(Arc::new(common::TestEmbedder::new())),
    )
    .unwrap();
    let mut f = NewFact::new(Scope::user("u"), "Ana lives in Porto");
    f.subject = Some("Ana".into());
    f.valid_from = Some("2024-01-01".into());
    f.meta.tags = vec!["home".into()];
    let fact = store.semantic().remember(f).unwrap();
    let value = serde_json::to_value(&fact).unwrap();
    assert_eq!(value["kind"], "semantic");
    assert_eq!(value["validFrom"], "2024-01-01T00:00:00.000Z");
    let v = def_validator("Fact");
    assert!(
        v.is_valid(&value),
        "{:?}",
        v.iter_errors(&value)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let hit = &store
        .search(&MemorySearchOptions::new("u", "Porto"))
        .unwrap()[0];
    let hv = serde_json::to_value(hit).unwrap();
    let v = def_validator("MemoryHit");
    assert!(
        v.is_valid(&hv),
        "{:?}",
        v.iter_errors(&hv)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let back: MemoryHit = serde_json::from_value(hv).unwrap();
    assert_eq!(&back, hit);
    let opts: MemorySearchOptions = serde_json::from_value(
        json!({"query": "q", "topK": 5, "includeQuarantined": true, "knownAt": "2024-01-01"}),
    )
    .unwrap();
    assert_eq!(opts.top_k, Some(5));
    let bad: Value = json!({"record": {"kind": "semantic"}, "score": 1});
    assert!(serde_json::from_value::<MemoryHit>(bad).is_err());
}
