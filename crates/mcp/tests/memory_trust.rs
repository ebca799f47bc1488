//! Memory you can trust (issue 28) through the MCP tools: `fact_search` answers the
//! version valid at `asOf` even when it was superseded later, echoes the time filters it
//! applied and says why nothing came back.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;

use mindgate_mcp::{McpConfig, MindgateMcp};
use mindgate_memory::agent::{LazyMemory, RecallArgs};
use mindgate_memory::{
    Memory, MemoryStore, NewFact, OpenOptions, Scope, SemanticMemory, SqliteMemory,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use serde_json::Value;

fn ok(r: &CallToolResult) -> (&Value, String) {
    assert_eq!(r.is_error, Some(false), "unexpected tool error: {r:?}");
    let text = r.content[0].as_text().expect("text").text.clone();
    (
        r.structured_content.as_ref().expect("structured content"),
        text,
    )
}

/// An MCP server bound to ada over a fresh in-memory store.
fn server() -> (tempfile::TempDir, Arc<Memory>, MindgateMcp) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Memory::Sqlite(
        SqliteMemory::open_in_memory(OpenOptions::default()).unwrap(),
    ));
    let mut config = McpConfig::new(dir.path());
    config.memory = Some(Arc::new(LazyMemory::ready(store.clone())));
    config.memory_user = Some("ada".into());
    (dir, store, MindgateMcp::new(config))
}

fn recall(query: &str, as_of: Option<&str>) -> Parameters<RecallArgs> {
    Parameters(RecallArgs {
        query: query.into(),
        as_of: as_of.map(str::to_owned),
        ..RecallArgs::default()
    })
}

#[tokio::test]
async fn fact_search_as_of_answers_the_version_valid_then() {
    let (_dir, store, server) = server();
    let mut oslo = NewFact::new(Scope::user("ada"), "Ada lives in Oslo");
    oslo.valid_from = Some("2023-01-01".into());
    let oslo = store.semantic().remember(oslo).unwrap();
    let mut bergen = NewFact::new(Scope::user("ada"), "Ada lives in Bergen");
    bergen.valid_from = Some("2025-01-01".into());
    store
        .semantic()
        .supersede(&oslo.record.id, bergen, "moved")
        .unwrap();

    let r = server
        .fact_search(recall("Ada lives", Some("2024-06-01T00:00:00Z")))
        .await;
    let (v, text) = ok(&r);
    assert_eq!(v["hits"][0]["id"], oslo.record.id.as_str(), "{v}");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["asOf"], "2024-06-01T00:00:00.000Z");
    assert!(text.contains("asOf 2024-06-01T00:00:00.000Z"), "{text}");

    let r = server
        .fact_search(recall("Ada lives", Some("2022-06-01T00:00:00Z")))
        .await;
    let (v, text) = ok(&r);
    assert_eq!(v["hits"].as_array().unwrap().len(), 0, "{v}");
    assert!(
        text.contains("none was valid at asOf 2022-06-01T00:00:00.000Z"),
        "{text}"
    );
}
