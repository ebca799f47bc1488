//! Gemini CLI and OpenCode readers over fixtures of our own (`tests/fixtures/gemini/tmp`,
//! `tests/fixtures/opencode/storage`) that reproduce every shape the genuine files show, and
//! over SQLite databases built here from the storage fixture (WAL not checkpointed, read-only
//! files, corrupt and locked databases).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use mindgate_taskgraph::{
    Agent, BuildOptions, DiscoveryConfig, GraphTree, NodeMeta, NodeType, Session, Status,
    TaskGraph, build_session_tree, read_session, read_session_as, scan_sessions,
};
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn gemini_tmp() -> PathBuf {
    fixtures().join("gemini/tmp")
}

fn tree(s: &Session) -> GraphTree {
    let t = build_session_tree(s, &BuildOptions::default());
    common::check_critical_path(&t.graph).unwrap();
    t
}

fn tokens(g: &TaskGraph) -> (u64, u64, u64) {
    let t = g.summary.tokens;
    assert_eq!(t.total, t.input + t.output + t.cache_read);
    (t.input, t.output, t.cache_read)
}

fn phases(g: &TaskGraph) -> Vec<Status> {
    g.nodes
        .iter()
        .filter(|n| n.node_type == NodeType::Phase)
        .map(|n| n.status)
        .collect()
}

fn tool_calls(g: &TaskGraph) -> usize {
    g.nodes
        .iter()
        .filter(|n| matches!(n.meta, NodeMeta::Tool(_)))
        .count()
}

fn child_of(g: &TaskGraph, node: &str) -> Option<String> {
    match &g.node(node)?.meta {
        NodeMeta::Tool(m) => m.child_session.clone().flatten().map(|c| c.id),
        _ => None,
    }
}

fn gemini_file(part: &str) -> PathBuf {
    let mut out = Vec::new();
    let mut stack = vec![gemini_tmp()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains(part) {
                out.push(p);
            }
        }
    }
    assert_eq!(out.len(), 1, "{part}: {out:?}");
    out.remove(0)
}

#[test]
fn gemini_single_json_session() {
    let s = read_session(&gemini_file("T10-00-11111111")).unwrap();
    assert_eq!(s.agent, Agent::Gemini);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.id, "11111111-1111-4111-8111-111111111111");
    assert_eq!(
        s.meta["project"],
        "3f1c9b5e0a7d4c2b8e6f1a0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b"
    );
    // The top-level `kind: "subagent"` file beside it, within its time span, is its child.
    assert_eq!(s.children.len(), 1);
    assert_eq!(s.children[0].id, "22222222-2222-4222-8222-222222222222");
    assert_eq!(
        s.children[0].header.parent_session.as_deref(),
        Some(s.id.as_str())
    );
    let t = tree(&s);
    let g = &t.graph;
    assert_eq!(g.title, "fix the failing parser test");
    // input − cached + tool, output + thoughts, cached — summed over the four replies.
    assert_eq!(tokens(g), (1105, 230, 4300));
    assert_eq!(tool_calls(g), 5);
    assert_eq!(g.node("tool-read_file_1").unwrap().status, Status::Success);
    assert_eq!(g.node("tool-read_file_2").unwrap().status, Status::Failed);
    assert_eq!(g.summary.counts.code_changes, 1);
    assert_eq!(g.node("tool-replace_1").unwrap().node_type, NodeType::Code);
    assert_eq!(
        g.node("tool-run_shell_command_1").unwrap().node_type,
        NodeType::Test
    );
    // A usage error after a finished reply leaves the turn completed; an API error while
    // the agent was working ends its turn as an error.
    assert_eq!(phases(g), vec![Status::Success, Status::Failed]);
    // The investigator call is the subagent, linked to the child session.
    assert_eq!(
        g.node("tool-codebase_investigator_1").unwrap().node_type,
        NodeType::Subagent
    );
    assert_eq!(
        child_of(g, "tool-codebase_investigator_1").as_deref(),
        Some("22222222-2222-4222-8222-222222222222")
    );
    let models: std::collections::BTreeSet<String> = g
        .nodes
        .iter()
        .filter_map(|n| match &n.meta {
            NodeMeta::Agent(m) => m.model.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(models.len(), 2, "a model switch: {models:?}");
    let sub = &t.children[0].graph;
    assert_eq!(sub.title, "Find the callers of parse.");
    assert_eq!(tokens(sub), (600, 35, 100));
}

#[test]
fn gemini_json_lines_session() {
    let s = read_session(&gemini_file("08-23-44444444")).unwrap();
    assert_eq!(s.agent, Agent::Gemini);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let t = tree(&s);
    let g = &t.graph;
    // The reply written first without its tool call and re-appended with it is one step.
    let steps = g
        .nodes
        .iter()
        .filter(|n| n.node_type == NodeType::Agent)
        .count();
    assert_eq!(steps, 3);
    assert_eq!(tokens(g), (700, 135, 2300));
    assert_eq!(tool_calls(g), 2);
    // The call the user denied never ran; "Request cancelled." aborted its turn.
    assert_eq!(g.node("tool-mt5u63mc").unwrap().status, Status::Cancelled);
    assert_eq!(g.summary.counts.errors, 0);
    assert_eq!(phases(g), vec![Status::Cancelled, Status::Success]);
    // `chats/<parentId>/<id>.json` is a child, linked to the cli_help call.
    assert_eq!(s.children.len(), 1);
    assert_eq!(
        child_of(g, "tool-cli_help_1").as_deref(),
        Some("55555555-5555-4555-8555-555555555555")
    );
}

#[test]
fn gemini_set_messages_replaces_the_list() {
    let s = read_session(&gemini_file("T09-00-66666666")).unwrap();
    let g = tree(&s).graph;
    assert_eq!(g.title, "second attempt");
    assert_eq!(phases(&g), vec![Status::Success]);
    assert_eq!(tokens(&g), (100, 10, 20));
}

#[test]
fn gemini_discovery_keys_sessions_by_file() {
    let mut config = DiscoveryConfig::empty();
    config.gemini_sessions = Some(gemini_tmp());
    let found = scan_sessions(&config);
    assert!(found.skipped.is_empty(), "{:?}", found.skipped);
    let names: Vec<String> = found
        .sessions
        .iter()
        .map(|l| l.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // Subagent files are listed too (as children); the two A2A files are two sessions.
    assert_eq!(
        names,
        [
            "session-2026-03-01T10-00-11111111.json",
            "session-2026-03-01T10-00-22222222.json",
            "session-2026-05-02T10-00-a2a-serv.jsonl",
            "session-2026-05-02T11-00-a2a-serv.jsonl",
            "55555555-5555-4555-8555-555555555555.json",
            "session-2026-04-25T08-23-44444444.jsonl",
            "session-2026-05-01T09-00-66666666.jsonl",
        ]
    );
    let tasks = mindgate_taskgraph::discover(&config);
    assert_eq!(tasks.len(), 7);
    let ids: std::collections::HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 7, "ids are unique: {ids:?}");
    let parent_of = |id: &str| {
        tasks
            .iter()
            .find(|t| t.id == id)
            .and_then(|t| t.parent_session.clone())
    };
    assert_eq!(
        parent_of("22222222-2222-4222-8222-222222222222").as_deref(),
        Some("11111111-1111-4111-8111-111111111111")
    );
    assert_eq!(
        parent_of("55555555-5555-4555-8555-555555555555").as_deref(),
        Some("44444444-4444-4444-8444-444444444444")
    );
    assert_eq!(parent_of("11111111-1111-4111-8111-111111111111"), None);
    // The parent's totals count its subagent session once.
    let main = tasks.iter().find(|t| t.id.starts_with("11111111")).unwrap();
    assert_eq!(main.totals.subagent_sessions, 1);
    assert_eq!(main.totals.tokens.total, 1105 + 230 + 4300 + 600 + 35 + 100);
    assert!(ids.contains("session-2026-05-02T10-00-a2a-serv"));
    let jsonl = tasks.iter().find(|t| t.id.starts_with("44444444")).unwrap();
    assert_eq!(jsonl.workspace, "ticketing");
    assert_eq!(jsonl.agent, Agent::Gemini);
}

#[test]
fn homes_come_from_gemini_cli_home_and_xdg_data_home() {
    let env = |k: &str| match k {
        "GEMINI_CLI_HOME" => Some(PathBuf::from("/g")),
        "XDG_DATA_HOME" => Some(PathBuf::from("/x")),
        _ => None,
    };
    let c = DiscoveryConfig::from_lookup(env, Some(PathBuf::from("/home/u")));
    assert_eq!(c.gemini_sessions, Some(PathBuf::from("/g/.gemini/tmp")));
    assert_eq!(c.opencode_data, Some(PathBuf::from("/x/opencode")));
    let c = DiscoveryConfig::from_lookup(|_| None, Some(PathBuf::from("/home/u")));
    assert_eq!(
        c.gemini_sessions,
        Some(PathBuf::from("/home/u/.gemini/tmp"))
    );
    assert_eq!(
        c.opencode_data,
        Some(PathBuf::from("/home/u/.local/share/opencode"))
    );
}

#[test]
fn gemini_hostile_input_is_warned_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("p/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let cases: [(&str, &[u8]); 4] = [
        ("session-2026-01-01T00-00-aaaaaaaa.json", b"{\"sessionId\": \"x\", \"projectHash\": \"h\", \"messages\": [{\"type\": \"gemini\", \"toolCalls\": [7, {\"status\": 3}]}"),
        ("session-2026-01-01T00-00-bbbbbbbb.jsonl", b"{\"sessionId\":\"y\",\"projectHash\":\"h\"}\n{\"$set\": 5}\nnot json\n{\"$set\":{\"messages\":\"no\"}}\n{\"type\":\"gemini\",\"tokens\":{\"input\":1,\"cached\":9}}\n"),
        ("session-2026-01-01T00-00-cccccccc.json", b"\xff\xfe\x00"),
        ("session-2026-01-01T00-00-dddddddd.json", b"[]"),
    ];
    for (name, bytes) in cases {
        std::fs::write(chats.join(name), bytes).unwrap();
        let s = read_session_as(&chats.join(name), Agent::Gemini).unwrap();
        let _ = tree(&s);
    }
    // The JSON Lines file: every bad line is a warning; the good lines are read.
    let s = read_session_as(&chats.join(cases[1].0), Agent::Gemini).unwrap();
    assert!(s.warnings.len() >= 3, "{:?}", s.warnings);
    // cached larger than input does not underflow.
    assert_eq!(tokens(&tree(&s).graph), (0, 0, 9));
    // A FIFO named like a session is refused without blocking.
    #[cfg(unix)]
    {
        let fifo = chats.join("session-2026-01-01T00-00-eeeeeeee.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        assert!(read_session_as(&fifo, Agent::Gemini).is_err());
        let mut config = DiscoveryConfig::empty();
        config.gemini_sessions = Some(dir.path().to_path_buf());
        let found = scan_sessions(&config);
        assert!(found.sessions.iter().all(|l| l.path != fifo));
    }
}

// ----- OpenCode -------------------------------------------------------------------------------

const PARENT: &str = "ses_fixtureparent0001";
const CHILD: &str = "ses_fixturechild00002";

fn storage() -> PathBuf {
    fixtures().join("opencode")
}

/// What the parent session of the fixture must read as, from either store.
fn check_parent(s: &Session) {
    assert_eq!(s.agent, Agent::OpenCode);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.id, PARENT);
    assert_eq!(s.children.len(), 1);
    assert_eq!(s.children[0].id, CHILD);
    let t = tree(s);
    let g = &t.graph;
    assert_eq!(g.title, "Fix the login form");
    // input + cache.write, output + reasoning, cache.read.
    assert_eq!(tokens(g), (5369, 272, 10400));
    assert_eq!(tool_calls(g), 5);
    assert_eq!(g.node("tool-call_edit1").unwrap().status, Status::Failed);
    assert_eq!(g.node("tool-call_edit2").unwrap().status, Status::Success);
    // The message was aborted while its bash call was still running: it never finished.
    assert_eq!(g.node("tool-call_bash1").unwrap().status, Status::Cancelled);
    assert_eq!(phases(g), vec![Status::Success, Status::Cancelled]);
    assert_eq!(g.node("tool-call_todo1").unwrap().node_type, NodeType::Plan);
    assert_eq!(child_of(g, "tool-call_task1").as_deref(), Some(CHILD));
    let child = &t.children[0].graph;
    assert_eq!(tokens(child), (1430, 100, 0));
    // Its reply said `stop` with a call in the message: the turn is complete.
    assert_eq!(phases(child), vec![Status::Success]);
    assert_eq!(child.status, Status::Success);
    assert_eq!(child.title, "Find the form handler (@explore subagent)");
    let cost = s.meta["recorded_cost_usd"].as_f64().unwrap();
    assert!((cost - 0.0155).abs() < 1e-9, "{cost}");
}

#[test]
fn opencode_storage_tree() {
    let mut config = DiscoveryConfig::empty();
    config.opencode_data = Some(storage());
    let found = scan_sessions(&config);
    assert!(found.skipped.is_empty(), "{:?}", found.skipped);
    // The sub-session is its parent's child, and listed too, marked with its parent.
    assert_eq!(found.sessions.len(), 2);
    let parent = found
        .sessions
        .iter()
        .find(|l| l.path.ends_with(format!("{PARENT}.json")))
        .unwrap();
    let s = read_session(&parent.path).unwrap();
    check_parent(&s);
    let tasks = mindgate_taskgraph::discover(&config);
    assert_eq!(tasks.len(), 2);
    let child = tasks.iter().find(|t| t.id == CHILD).unwrap();
    assert_eq!(child.parent_session.as_deref(), Some(PARENT));
    let main = tasks.iter().find(|t| t.id == PARENT).unwrap();
    assert_eq!(main.workspace, "--work-app--");
    assert_eq!(main.totals.subagent_sessions, 1);
}

/// Every record of the storage fixture, as (table, row) for the database.
struct Rows {
    sessions: Vec<Value>,
    messages: Vec<Value>,
    parts: Vec<Value>,
}

fn json_files(dir: &Path, out: &mut Vec<Value>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else {
            out.push(serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap());
        }
    }
}

fn rows() -> Rows {
    let root = storage().join("storage");
    let mut r = Rows {
        sessions: Vec::new(),
        messages: Vec::new(),
        parts: Vec::new(),
    };
    json_files(&root.join("session"), &mut r.sessions);
    json_files(&root.join("message"), &mut r.messages);
    json_files(&root.join("part"), &mut r.parts);
    r
}

/// OpenCode's schema (the columns this reader uses) filled from the storage fixture; the
/// `data` columns leave out the ids, as OpenCode's do.
fn fill(conn: &rusqlite::Connection) {
    conn.execute_batch(
        "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
           slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL);
         CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
         CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
    )
    .unwrap();
    let r = rows();
    for s in &r.sessions {
        conn.execute(
            "INSERT INTO session VALUES (?1, ?2, ?3, 'slug', ?4, ?5, ?6, ?7, ?8)",
            rusqlite::params![
                s["id"].as_str(),
                s["projectID"].as_str(),
                s["parentID"].as_str(),
                s["directory"].as_str(),
                s["title"].as_str(),
                s["version"].as_str(),
                s["time"]["created"].as_i64(),
                s["time"]["updated"].as_i64(),
            ],
        )
        .unwrap();
    }
    let strip = |v: &Value| {
        let mut o = v.as_object().unwrap().clone();
        for k in ["id", "sessionID", "messageID"] {
            o.remove(k);
        }
        Value::Object(o).to_string()
    };
    for m in &r.messages {
        let t = m["time"]["created"].as_i64().unwrap();
        conn.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![m["id"].as_str(), m["sessionID"].as_str(), t, strip(m)],
        )
        .unwrap();
    }
    for p in &r.parts {
        conn.execute(
            "INSERT INTO part VALUES (?1, ?2, ?3, 0, 0, ?4)",
            rusqlite::params![
                p["id"].as_str(),
                p["messageID"].as_str(),
                p["sessionID"].as_str(),
                strip(p)
            ],
        )
        .unwrap();
    }
}

/// A WAL database whose rows are all still in `opencode.db-wal` (the writer stays open and
/// never checkpoints), as while OpenCode runs.
fn wal_db(dir: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(dir.join("opencode.db")).unwrap();
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        .unwrap();
    fill(&conn);
    assert!(
        std::fs::metadata(dir.join("opencode.db-wal"))
            .unwrap()
            .len()
            > 0,
        "the rows are in the WAL"
    );
    conn
}

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = ["opencode.db", "opencode.db-wal"]
        .iter()
        .map(|n| (n.to_string(), std::fs::read(dir.join(n)).unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn opencode_database_with_uncheckpointed_wal() {
    let dir = tempfile::tempdir().unwrap();
    let writer = wal_db(dir.path());
    let before = files_of(dir.path());
    let mut config = DiscoveryConfig::empty();
    config.opencode_data = Some(dir.path().to_path_buf());
    let found = scan_sessions(&config);
    assert!(found.skipped.is_empty(), "{:?}", found.skipped);
    let paths: Vec<&Path> = found.sessions.iter().map(|l| l.path.as_path()).collect();
    let db = dir.path().join("opencode.db");
    assert_eq!(paths, [db.join(CHILD).as_path(), db.join(PARENT).as_path()]);
    let s = read_session(&db.join(PARENT)).unwrap();
    check_parent(&s);
    // Nothing of the user's was written.
    assert_eq!(files_of(dir.path()), before);
    // The same graph as the storage tree's.
    let from_tree = mindgate_taskgraph::discover(&{
        let mut c = DiscoveryConfig::empty();
        c.opencode_data = Some(storage());
        c
    });
    let from_db = mindgate_taskgraph::discover(&config);
    let pick = |l: &[mindgate_taskgraph::TaskSummary]| {
        let t = l.iter().find(|t| t.id == PARENT).unwrap();
        (t.counts, t.status, t.totals)
    };
    assert_eq!(pick(&from_db), pick(&from_tree));
    drop(writer);
}

#[cfg(unix)]
#[test]
fn opencode_database_on_read_only_files() {
    use std::os::unix::fs::PermissionsExt;
    let live = tempfile::tempdir().unwrap();
    let writer = wal_db(live.path());
    // A snapshot of a running OpenCode's files (db, WAL and index), then read-only.
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("data");
    std::fs::create_dir(&ro).unwrap();
    for n in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
        std::fs::copy(live.path().join(n), ro.join(n)).unwrap();
        std::fs::set_permissions(ro.join(n), std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = files_of(&ro);
    let s = read_session(&ro.join("opencode.db").join(PARENT)).unwrap();
    check_parent(&s);
    assert_eq!(files_of(&ro), before);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    drop(writer);
}

#[test]
fn opencode_corrupt_database_is_a_clear_skip() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("opencode.db"),
        b"this is not a SQLite database at all, just text".repeat(200),
    )
    .unwrap();
    let mut config = DiscoveryConfig::empty();
    config.opencode_data = Some(dir.path().to_path_buf());
    let found = scan_sessions(&config);
    assert!(found.sessions.is_empty());
    assert_eq!(found.skipped.len(), 1);
    let reason = &found.skipped[0].reason;
    assert!(
        reason.contains("not a readable SQLite database"),
        "{reason}"
    );
    // A session path into it is an error too, not a panic.
    let err = read_session_as(&dir.path().join("opencode.db/ses_x"), Agent::OpenCode);
    assert!(err.is_err());
}

#[test]
fn opencode_locked_database_is_a_clear_skip() {
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("opencode.db")).unwrap();
    fill(&conn);
    // Another process holds the database exclusively (rollback journal, exclusive lock).
    conn.execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;")
        .unwrap();
    conn.execute("UPDATE session SET title = 'x'", []).unwrap();
    let mut config = DiscoveryConfig::empty();
    config.opencode_data = Some(dir.path().to_path_buf());
    let found = scan_sessions(&config);
    assert!(found.sessions.is_empty());
    assert_eq!(found.skipped.len(), 1, "{:?}", found.skipped);
    let reason = &found.skipped[0].reason;
    assert!(reason.contains("locked"), "{reason}");
    conn.execute_batch("ROLLBACK;").unwrap();
}
