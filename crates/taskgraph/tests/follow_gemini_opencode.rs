//! Live follow of Gemini CLI and OpenCode sessions: a `Follower` over a Gemini JSON Lines file
//! that grows (a reply re-appended with its tool call replaces the first copy), and over an
//! OpenCode database a running OpenCode writes to (rows only in the WAL), ends with the same
//! graph as a fresh read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use mindgate_taskgraph::follow::Follower;
use mindgate_taskgraph::{Agent, Status};

const WINDOW: Duration = Duration::from_secs(3600);

fn append(file: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_growing_gemini_file_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("proj/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let file = chats.join("session-2026-06-01T10-00-77777777.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"sessionId":"77777777-7777-4777-8777-777777777777","projectHash":"h","startTime":"2026-06-01T10:00:00.000Z","lastUpdated":"2026-06-01T10:00:00.000Z","kind":"main"}"#,
            "\n",
            r#"{"id":"u1","timestamp":"2026-06-01T10:00:01.000Z","type":"user","content":[{"text":"list the files"}]}"#,
            "\n",
            r#"{"id":"g1","timestamp":"2026-06-01T10:00:03.000Z","type":"gemini","content":"","tokens":{"input":10,"output":2,"cached":0,"thoughts":0,"tool":0,"total":12},"model":"gemini-2.5-pro"}"#,
            "\n",
        ),
    )
    .unwrap();
    let mut f = Follower::open(&file, Agent::Gemini, "proj", WINDOW).unwrap();
    assert!(!f.update().unwrap(), "nothing written yet");
    assert!(f.graph().graph().node("tool-ls_1").is_none());
    // The reply is re-appended with its call, then the next reply; the turn is still open in
    // between.
    append(
        &file,
        concat!(
            r#"{"id":"g1","timestamp":"2026-06-01T10:00:03.000Z","type":"gemini","content":"","tokens":{"input":10,"output":2,"cached":0,"thoughts":0,"tool":0,"total":12},"model":"gemini-2.5-pro","toolCalls":[{"id":"ls_1","name":"list_directory","args":{"dir_path":"."},"result":[{"functionResponse":{"id":"ls_1","name":"list_directory","response":{"output":"a.txt"}}}],"status":"success","timestamp":"2026-06-01T10:00:04.000Z"}]}"#,
            "\n",
        ),
    );
    assert!(f.update().unwrap());
    let g = f.graph().graph();
    assert_eq!(g.node("tool-ls_1").unwrap().status, Status::Success);
    append(
        &file,
        concat!(
            r#"{"$set":{"lastUpdated":"2026-06-01T10:00:05.000Z"}}"#,
            "\n",
            r#"{"id":"g2","timestamp":"2026-06-01T10:00:06.000Z","type":"gemini","content":"a.txt","tokens":{"input":20,"output":3,"cached":10,"thoughts":0,"tool":0,"total":23},"model":"gemini-2.5-pro"}"#,
            "\n",
        ),
    );
    assert!(f.update().unwrap());
    let fresh = Follower::open(&file, Agent::Gemini, "proj", WINDOW).unwrap();
    assert_eq!(f.events(), fresh.events());
    let t = f.graph().graph().summary.tokens;
    assert_eq!((t.input, t.output, t.cache_read), (20, 5, 10));
}

#[test]
fn an_opencode_database_being_written_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch(
            r#"PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
            CREATE TABLE session (id text PRIMARY KEY, project_id text, parent_id text, slug text,
              directory text, title text, version text, time_created integer, time_updated integer);
            CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer,
              time_updated integer, data text);
            CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text,
              time_created integer, time_updated integer, data text);
            INSERT INTO session VALUES ('ses_live', 'p', NULL, 's', '/w', 'live one', '1.15.4',
              1780000000000, 1780000000000);
            INSERT INTO message VALUES ('msg_1', 'ses_live', 1780000001000, 1780000001000,
              '{"role":"user","time":{"created":1780000001000}}');
            INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_live', 0, 0,
              '{"type":"text","text":"run the tests"}');"#,
        )
        .unwrap();
    let path = db.join("ses_live");
    let mut f = Follower::open(&path, Agent::OpenCode, "--w--", WINDOW).unwrap();
    assert_eq!(f.graph().graph().status, Status::Running);
    assert!(!f.update().unwrap(), "nothing written yet");
    // OpenCode answers: an assistant message whose bash call failed, then the final reply.
    writer
        .execute_batch(
            r#"INSERT INTO message VALUES ('msg_2', 'ses_live', 1780000002000, 1780000002000,
              '{"role":"assistant","modelID":"m","providerID":"p","time":{"created":1780000002000,"completed":1780000003000},"tokens":{"input":5,"output":6,"reasoning":1,"cache":{"read":100,"write":7}},"finish":"tool-calls"}');
            INSERT INTO part VALUES ('prt_2', 'msg_2', 'ses_live', 0, 0,
              '{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"error","input":{"command":"npm test"},"error":"exit 1","time":{"start":1780000003000,"end":1780000004000}}}');"#,
        )
        .unwrap();
    assert!(f.update().unwrap());
    assert_eq!(
        f.graph().graph().node("tool-call_1").unwrap().status,
        Status::Failed
    );
    writer
        .execute_batch(
            r#"INSERT INTO message VALUES ('msg_3', 'ses_live', 1780000005000, 1780000005000,
              '{"role":"assistant","modelID":"m","providerID":"p","time":{"created":1780000005000,"completed":1780000006000},"tokens":{"input":1,"output":2,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}');"#,
        )
        .unwrap();
    assert!(f.update().unwrap());
    let fresh = Follower::open(&path, Agent::OpenCode, "--w--", WINDOW).unwrap();
    assert_eq!(f.events(), fresh.events());
    let t = f.graph().graph().summary.tokens;
    assert_eq!((t.input, t.output, t.cache_read), (13, 9, 100));
    drop(writer);
}
