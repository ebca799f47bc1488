//! Interop: the Gemini CLI and OpenCode readers over the genuine sessions in
//! `../shared/data/real-sessions/{gemini,opencode}` (`MINDGATE_REAL_SESSIONS` overrides the
//! folder); skipped when absent. The expected figures are computed here, independently of the
//! readers, straight from the raw files (JSON for Gemini, SQL over a copy of the database for
//! OpenCode).
//!
//! Token convention: `input` = every input token that was not a cache read, `cache_read`
//! apart, `total = input + output + cache_read` (Gemini: input − cached + tool, output +
//! thoughts; OpenCode: input + cache.write, output + reasoning).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mindgate_taskgraph::{
    Agent, BuildOptions, GraphTree, NodeMeta, NodeType, Status, TaskGraph, build_session_tree,
    read_session, read_session_as,
};
use serde_json::Value;

fn folder() -> Option<PathBuf> {
    let dir = std::env::var_os("MINDGATE_REAL_SESSIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real-sessions")
        });
    dir.is_dir().then_some(dir)
}

/// Calls, failed attempts, cancelled calls, (input, output, cache_read) of one graph.
fn figures(g: &TaskGraph) -> (usize, usize, usize, (u64, u64, u64)) {
    let (mut calls, mut failed, mut cancelled) = (0, 0, 0);
    for n in &g.nodes {
        if let NodeMeta::Tool(m) = &n.meta {
            calls += m.attempts.len();
            failed += m
                .attempts
                .iter()
                .filter(|a| a.status == Status::Failed)
                .count();
            cancelled += m
                .attempts
                .iter()
                .filter(|a| a.status == Status::Cancelled)
                .count();
        }
    }
    let t = g.summary.tokens;
    assert_eq!(t.total, t.input + t.output + t.cache_read);
    (calls, failed, cancelled, (t.input, t.output, t.cache_read))
}

/// The final message list of a raw Gemini file, computed without the reader: the single
/// JSON's `messages`, or the JSON Lines records with re-appended ids replaced in place.
fn gemini_messages(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return v["messages"].as_array().cloned().unwrap_or_default();
    }
    let mut order: Vec<String> = Vec::new();
    let mut by_id: HashMap<String, Value> = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(list) = v.pointer("/$set/messages").and_then(Value::as_array) {
            order.clear();
            by_id.clear();
            for m in list {
                let id = m["id"].as_str().unwrap().to_owned();
                order.push(id.clone());
                by_id.insert(id, m.clone());
            }
        } else if v.get("type").is_some() {
            let id = v["id"].as_str().unwrap().to_owned();
            if by_id.insert(id.clone(), v).is_none() {
                order.push(id);
            }
        }
    }
    order
        .into_iter()
        .map(|id| by_id.remove(&id).unwrap())
        .collect()
}

#[test]
fn gemini_sessions_match_an_independent_count() {
    let Some(dir) = folder().map(|d| d.join("gemini")).filter(|d| d.is_dir()) else {
        println!("skipped: ../shared/data/real-sessions/gemini not present");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let s = read_session_as(&f, Agent::Gemini).unwrap();
        assert!(s.warnings.is_empty(), "{name}: {:?}", s.warnings);
        let t = build_session_tree(&s, &BuildOptions::default());
        let g = &t.graph;
        common::check_critical_path(g).unwrap();
        let msgs = gemini_messages(&f);
        let calls: Vec<&Value> = msgs
            .iter()
            .flat_map(|m| m["toolCalls"].as_array().into_iter().flatten())
            .collect();
        let status = |s: &str| calls.iter().filter(|c| c["status"] == s).count();
        let (mut input, mut output, mut cached) = (0, 0, 0);
        for m in msgs.iter().filter(|m| m["type"] == "gemini") {
            let t = &m["tokens"];
            let n = |k: &str| t[k].as_u64().unwrap_or(0);
            input += n("input") - n("cached") + n("tool");
            output += n("output") + n("thoughts");
            cached += n("cached");
            // Gemini's own total is the same sum.
            if t.is_object() {
                assert_eq!(
                    n("total"),
                    n("input") + n("tool") + n("output") + n("thoughts")
                );
            }
        }
        let users = msgs.iter().filter(|m| m["type"] == "user").count();
        let got = figures(g);
        assert_eq!(got.0, calls.len(), "{name}: calls");
        assert_eq!(got.1, status("error"), "{name}: failed calls");
        assert_eq!(got.2, status("cancelled"), "{name}: cancelled calls");
        assert_eq!(got.3, (input, output, cached), "{name}: tokens");
        assert_eq!(g.summary.counts.phases as usize, users, "{name}: turns");
        assert!(
            g.start_time.is_some_and(|t| t > 1_600_000_000_000),
            "{name}"
        );
        assert_ne!(g.status, Status::Pending, "{name}");
        // Every failed call is a failed node with the tool's error text.
        for c in calls.iter().filter(|c| c["status"] == "error") {
            let id = format!("tool-{}", c["id"].as_str().unwrap());
            let n = g
                .node(&id)
                .unwrap_or_else(|| panic!("{name}: no node {id}"));
            assert_eq!(n.status, Status::Failed, "{name}: {id}");
        }
    }
}

#[test]
fn gemini_shapes_of_the_real_files() {
    let Some(dir) = folder().map(|d| d.join("gemini")).filter(|d| d.is_dir()) else {
        println!("skipped: ../shared/data/real-sessions/gemini not present");
        return;
    };
    let find = |part: &str| {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains(part))
            .unwrap()
    };
    // The JSON Lines form is detected from its content and its cancelled call never ran.
    let jsonl = find("e435870b");
    let s = read_session(&jsonl).unwrap();
    assert_eq!(s.agent, Agent::Gemini);
    let g = build_session_tree(&s, &BuildOptions::default()).graph;
    assert!(models_of(&g).len() >= 2, "two models: {:?}", models_of(&g));
    // The 2.3 MB session: a model switch, fileDiff displays, edits that ran.
    let big = read_session(&find("daa0ceb2")).unwrap();
    let g = build_session_tree(&big, &BuildOptions::default()).graph;
    assert!(g.summary.counts.code_changes > 50);
    assert!(models_of(&g).len() >= 2);
    // The subagent file keeps its summary as title and says it is a subagent.
    let sub = read_session(&find("a41f5459")).unwrap();
    assert_eq!(sub.header.delegation_depth, 1);
    let g = build_session_tree(&sub, &BuildOptions::default()).graph;
    assert_eq!(g.title, "Find Gemini CLI hook config location.");
}

fn models_of(g: &TaskGraph) -> std::collections::BTreeSet<String> {
    g.nodes
        .iter()
        .filter_map(|n| match &n.meta {
            NodeMeta::Agent(m) => m.model.clone(),
            _ => None,
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

fn walk<'a>(t: &'a GraphTree, out: &mut Vec<&'a TaskGraph>) {
    out.push(&t.graph);
    for c in &t.children {
        walk(c, out);
    }
}

#[test]
fn opencode_database_matches_sql_sums() {
    let Some(dir) = folder()
        .map(|d| d.join("opencode/op30mmd__JulesGuiCs__1629936e"))
        .filter(|d| d.join("opencode.db").is_file())
    else {
        println!("skipped: ../shared/data/real-sessions/opencode not present");
        return;
    };
    // The oracle reads its own writable copy; the reader reads the original read-only files.
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&dir, tmp.path());
    let conn = rusqlite::Connection::open(tmp.path().join("opencode.db")).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM message", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 195, "the oracle sees the WAL");
    let mut per_session: HashMap<String, (u64, u64, u64, usize, usize)> = HashMap::new();
    let mut st = conn
        .prepare("SELECT session_id, data FROM message")
        .unwrap();
    for row in st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
    {
        let (sid, data) = row.unwrap();
        let v: Value = serde_json::from_str(&data).unwrap();
        let t = &v["tokens"];
        let n = |p: &str| t.pointer(p).and_then(Value::as_u64).unwrap_or(0);
        let e = per_session.entry(sid).or_default();
        e.0 += n("/input") + n("/cache/write");
        e.1 += n("/output") + n("/reasoning");
        e.2 += n("/cache/read");
    }
    let mut st = conn.prepare("SELECT session_id, data FROM part").unwrap();
    for row in st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
    {
        let (sid, data) = row.unwrap();
        let v: Value = serde_json::from_str(&data).unwrap();
        if v["type"] == "tool" {
            let e = per_session.entry(sid).or_default();
            e.3 += 1;
            e.4 += usize::from(v["state"]["status"] == "error");
        }
    }
    let mut config = mindgate_taskgraph::DiscoveryConfig::empty();
    config.opencode_data = Some(dir.clone());
    let found = mindgate_taskgraph::scan_sessions(&config);
    assert!(found.skipped.is_empty(), "{:?}", found.skipped);
    // 9 sessions, 3 of them subagents (listed too, and read as their parents' children).
    assert_eq!(found.sessions.len(), 9);
    let mut seen = 0;
    let mut failed_edits = 0;
    for loc in &found.sessions {
        let s = read_session_as(&loc.path, Agent::OpenCode).unwrap();
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let t = build_session_tree(&s, &BuildOptions::default());
        let mut graphs = Vec::new();
        walk(&t, &mut graphs);
        // Each session once: its own location (children are checked where they are listed).
        assert_eq!(graphs.len(), 1 + s.children.len());
        for g in graphs.into_iter().take(1) {
            seen += 1;
            common::check_critical_path(g).unwrap();
            let want = per_session[g.session_id.as_str()];
            let got = figures(g);
            assert_eq!(got.3, (want.0, want.1, want.2), "{}: tokens", g.session_id);
            assert_eq!(got.0, want.3, "{}: calls", g.session_id);
            assert_eq!(got.1, want.4, "{}: failed calls", g.session_id);
            failed_edits += g
                .nodes
                .iter()
                .filter(|n| n.node_type == NodeType::Code && n.status == Status::Failed)
                .count();
        }
        // Each `task` call of a parent links its explore subagent.
        for n in &t.graph.nodes {
            if let NodeMeta::Tool(m) = &n.meta
                && n.node_type == NodeType::Subagent
            {
                assert!(m.child_session.is_some(), "{} unlinked", n.id);
            }
        }
    }
    assert_eq!(seen, 9);
    assert_eq!(failed_edits, 2);
}

#[test]
fn opencode_storage_tree_reads() {
    let Some(dir) = folder()
        .map(|d| d.join("opencode/theoneand33__.local-opencode"))
        .filter(|d| d.is_dir())
    else {
        println!("skipped: ../shared/data/real-sessions/opencode not present");
        return;
    };
    let mut config = mindgate_taskgraph::DiscoveryConfig::empty();
    config.opencode_data = Some(dir.clone());
    let found = mindgate_taskgraph::scan_sessions(&config);
    assert_eq!(found.sessions.len(), 1);
    let s = read_session(&found.sessions[0].path).unwrap();
    assert_eq!(s.agent, Agent::OpenCode);
    let g = build_session_tree(&s, &BuildOptions::default()).graph;
    assert_eq!(g.title, "Building Linux proprietary software scanner CLI");
    assert_eq!(g.summary.counts.phases, 1);
    assert_eq!(figures(&g).0, 1);
    assert!(g.nodes.iter().any(|n| n.node_type == NodeType::Plan));
}
