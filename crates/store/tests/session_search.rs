//! Issue 31 item 5: the session search index. Over fixture sessions of every agent (and the
//! genuine transcripts in `../shared/data/real-sessions` when present): a piece of each
//! agent's tool output is found at its tool node, user and model text are found, the index is
//! kept incrementally (unchanged sessions are not read again, a grown session is), a search
//! sees only the caller's sessions, and two handles (`serve` and the CLI) sync one file at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use mindgate_store::search::sessions::SessionIndex;
use mindgate_taskgraph::{
    BuildOptions, Catalog, DiscoveryConfig, EventKind, NodeMeta, TaskSummary, build_session_tree,
};
use mindgate_testkit::copy_fixture_tree;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures")
}

/// Copies of every agent's fixture home (so a test may grow or remove files).
fn homes(dir: &Path) -> DiscoveryConfig {
    copy_fixture_tree(&fixtures(), dir);
    DiscoveryConfig {
        dsh_sessions: Some(dir.join("dsh")),
        pi_sessions: Some(dir.join("pi")),
        claude_projects: Some(dir.join("claude")),
        codex_sessions: Some(dir.join("codex")),
        gemini_sessions: Some(dir.join("gemini/tmp")),
        opencode_data: Some(dir.join("opencode")),
        ..DiscoveryConfig::empty()
    }
}

fn tasks(config: &DiscoveryConfig) -> Vec<TaskSummary> {
    let mut c = Catalog::new(config.clone());
    c.refresh().to_vec()
}

/// A word of a tool output of `task` and the tool node that holds it, read independently:
/// the first result with a word of six characters or more, and the node whose attempts name
/// its call.
fn a_tool_output(task: &TaskSummary, config: &DiscoveryConfig) -> Option<(String, String)> {
    let (session, _) = mindgate_taskgraph::discover::load_tree(&task.location(), config).ok()?;
    let graph = build_session_tree(&session, &BuildOptions::default()).graph;
    for e in &session.events {
        let EventKind::ToolResult {
            call_id, output, ..
        } = &e.kind
        else {
            continue;
        };
        // Its longest word (a rare one, so a search's first hits can hold it).
        let Some(word) = output
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 6)
            .max_by_key(|w| (w.chars().count(), *w))
        else {
            continue;
        };
        let node = graph.nodes.iter().find(|n| match &n.meta {
            NodeMeta::Tool(m) => m.attempts.iter().any(|a| &a.call_id == call_id),
            _ => false,
        })?;
        return Some((word.to_owned(), node.id.to_string()));
    }
    None
}

#[test]
fn a_tool_output_of_every_agent_is_found_at_its_node() {
    let tmp = tempfile::tempdir().unwrap();
    let config = homes(&tmp.path().join("homes"));
    let listed = tasks(&config);
    let index = SessionIndex::open(&tmp.path().join("index.db")).unwrap();
    let report = index.sync(&listed, &config).unwrap();
    assert_eq!(report.indexed, listed.len(), "{report:?}");
    let mut agents = HashSet::new();
    for t in &listed {
        let Some((word, node)) = a_tool_output(t, &config) else {
            continue;
        };
        let hits = index.search(&word, &listed, 500).unwrap();
        assert!(
            hits.iter()
                .any(|h| h.session_id == t.id && h.node_id == node && h.kind == "tool_output"),
            "{}: `{word}` not found at {node}: {hits:?}",
            t.id
        );
        for h in &hits {
            let m = h.mark.expect("every hit marks its match");
            let marked: String = h.snippet.chars().skip(m[0]).take(m[1] - m[0]).collect();
            assert_eq!(marked.to_lowercase(), word.to_lowercase());
        }
        agents.insert(t.agent.as_str());
    }
    for a in ["dsh", "pi", "claude_code", "codex", "gemini", "opencode"] {
        assert!(
            agents.contains(a),
            "no tool output of {a} checked: {agents:?}"
        );
    }
}

#[test]
fn user_and_model_text_are_found_and_short_queries_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let config = homes(&tmp.path().join("homes"));
    let listed = tasks(&config);
    let index = SessionIndex::open(&tmp.path().join("index.db")).unwrap();
    index.sync(&listed, &config).unwrap();
    let t = listed.iter().find(|t| t.id == "c-main").unwrap();
    let (_, texts) = {
        let (s, tree) = mindgate_taskgraph::discover::load_tree(&t.location(), &config).unwrap();
        let texts = mindgate_taskgraph::search_text::session_texts(&s, &tree.graph);
        (s, texts)
    };
    // What the person wrote, found whatever its case.
    let asked = texts
        .iter()
        .find(|x| x.kind == mindgate_taskgraph::search_text::TextKind::User)
        .expect("the Claude fixture has a user message");
    let hits = index
        .search(&asked.text.to_uppercase(), &listed, 50)
        .unwrap();
    assert!(
        hits.iter().any(|h| h.session_id == "c-main"
            && h.kind == "user"
            && h.node_id == asked.node_id
            && h.turn.is_some()),
        "{hits:?}"
    );
    let said = texts
        .iter()
        .find(|x| x.kind == mindgate_taskgraph::search_text::TextKind::Assistant)
        .expect("the Claude fixture has model text");
    let probe: String = said.text.chars().take(20).collect();
    let hits = index.search(&probe, &listed, 50).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.kind == "assistant" && h.node_id == said.node_id)
    );
    // One or two characters: answered by a scan, still marked.
    let hits = index.search("ok", &listed, 5).unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.mark.is_some()));
    // Nothing for text that is nowhere.
    assert!(
        index
            .search("zz-not-in-any-session-zz", &listed, 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn the_index_is_incremental_and_sees_only_the_callers_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let config = homes(&tmp.path().join("homes"));
    let listed = tasks(&config);
    let index = SessionIndex::open(&tmp.path().join("index.db")).unwrap();
    index.sync(&listed, &config).unwrap();
    let again = index.sync(&listed, &config).unwrap();
    assert_eq!((again.indexed, again.unchanged), (0, listed.len()));
    // The pi session grows by a tool result: only it is read again, and the new text is found.
    let pi = listed.iter().find(|t| t.id == "pi-main").unwrap();
    let last_id = {
        let text = std::fs::read_to_string(&pi.path).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        v["id"].clone()
    };
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&pi.path)
        .unwrap();
    writeln!(
        f,
        r#"{{"type":"message","id":"grown1","parentId":{last_id},"timestamp":"2026-08-24T19:35:00.000Z","message":{{"role":"user","content":[{{"type":"text","text":"please add quokkaflavour to the uploader"}}],"timestamp":1787600100000}}}}"#
    )
    .unwrap();
    drop(f);
    let listed = tasks(&config);
    let grown = index.sync(&listed, &config).unwrap();
    assert_eq!(
        (grown.indexed, grown.unchanged),
        (1, listed.len() - 1),
        "{grown:?}"
    );
    let hits = index.search("quokkaflavour", &listed, 5).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].session_id, "pi-main");
    // A caller listing only the Codex sessions sees only those.
    let codex: Vec<TaskSummary> = listed
        .iter()
        .filter(|t| t.agent.as_str() == "codex")
        .cloned()
        .collect();
    assert!(index.search("quokkaflavour", &codex, 5).unwrap().is_empty());
    // Its sync removes nothing the other caller listed, and a removed file is forgotten.
    assert_eq!(index.sync(&codex, &config).unwrap().removed, 0);
    std::fs::remove_file(&pi.path).unwrap();
    let listed = tasks(&config);
    assert_eq!(index.sync(&listed, &config).unwrap().removed, 1);
    let (files, _) = index.counts().unwrap();
    assert_eq!(files as usize, listed.len());
}

#[test]
fn two_handles_sync_one_index_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let config = homes(&tmp.path().join("homes"));
    let listed = tasks(&config);
    let path = tmp.path().join("index.db");
    let a = SessionIndex::open(&path).unwrap();
    let b = SessionIndex::open(&path).unwrap();
    std::thread::scope(|s| {
        let ja = s.spawn(|| a.sync(&listed, &config));
        let jb = s.spawn(|| b.sync(&listed, &config));
        ja.join().unwrap().unwrap();
        jb.join().unwrap().unwrap();
    });
    let (files, texts) = a.counts().unwrap();
    assert_eq!(files as usize, listed.len());
    // Each session's rows once, whichever handle wrote last.
    let c = SessionIndex::open(&tmp.path().join("fresh.db")).unwrap();
    c.sync(&listed, &config).unwrap();
    assert_eq!(c.counts().unwrap(), (files, texts));
}

#[test]
fn real_sessions_tool_output_is_found() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions");
    if !dir.is_dir() {
        println!("skipped: ../shared/data/real-sessions not present");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let opencode = tmp.path().join("opencode");
    copy_fixture_tree(
        &dir.join("opencode/op30mmd__JulesGuiCs__1629936e"),
        &opencode,
    );
    let config = DiscoveryConfig {
        extra_paths: ["claude", "codex", "pi", "gemini"]
            .iter()
            .map(|a| dir.join(a))
            .collect(),
        opencode_data: Some(opencode),
        ..DiscoveryConfig::empty()
    };
    let listed = tasks(&config);
    let index = SessionIndex::open(&tmp.path().join("index.db")).unwrap();
    let report = index.sync(&listed, &config).unwrap();
    assert_eq!(report.failed, 0, "{report:?}");
    let mut agents = HashSet::new();
    for t in &listed {
        let Some((word, node)) = a_tool_output(t, &config) else {
            continue;
        };
        let hits = index.search(&word, &listed, 500).unwrap();
        if hits.len() == 500 {
            continue; // a common word: its node may be past the first 500
        }
        assert!(
            hits.iter()
                .any(|h| h.session_id == t.id && h.node_id == node),
            "{}: `{word}` not found at {node}",
            t.id
        );
        agents.insert(t.agent.as_str());
    }
    for a in ["pi", "claude_code", "codex", "gemini", "opencode"] {
        assert!(agents.contains(a), "no {a} tool output found: {agents:?}");
    }
}
