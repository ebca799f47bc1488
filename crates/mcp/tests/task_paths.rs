//! `get_task_graph` reads only discovered sessions or regular files under the
//! configured session roots, within size caps, in bounded time (issue #10).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mindgate_mcp::output_limits::MAX_ERROR_CHARS;
use mindgate_mcp::params::{GetTaskGraphArgs, ListTasksArgs};
use mindgate_mcp::{McpConfig, MindgateMcp};
use mindgate_taskgraph::DiscoveryConfig;
use mindgate_taskgraph::bounded::MAX_DECODED_BYTES;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use serde_json::Value;

const GOOD: &str = r#"{"type":"session","version":1,"id":"good-1","createdAt":1000,"cwd":"/w","delegationDepth":0}
{"type":"user/message","seq":1,"time":1000,"data":{"text":"hi"}}
{"type":"turn/start","seq":2,"time":1000,"data":{"turn":1}}
{"type":"turn/end","seq":3,"time":1800,"data":{"turn":1,"reason":{"kind":"completed"}}}
"#;

/// A zstd frame of RLE blocks decoding to `blocks` × 128 KiB (a few bytes each).
fn rle_bomb(blocks: usize) -> Vec<u8> {
    const BLOCK: u32 = 128 * 1024;
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38];
    for i in 0..blocks {
        let header = (BLOCK << 3) | (1 << 1) | u32::from(i + 1 == blocks);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(b'x');
    }
    out
}

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    server: MindgateMcp,
}

fn write(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(path, bytes).unwrap_or_else(|e| panic!("{e}"));
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().join("sessions");
    let outside = dir.path().join("elsewhere");
    write(&root.join("good").join("session.jsonl"), GOOD.as_bytes());
    let blocks = MAX_DECODED_BYTES / (128 * 1024) + 8;
    write(
        &root.join("bomb").join("session.jsonl.zstd"),
        &rle_bomb(blocks),
    );
    // Well-formed sessions outside every root; `secret` is linked from the root, `other` not.
    write(
        &outside.join("other").join("session.jsonl"),
        GOOD.replace("good-1", "other-1").as_bytes(),
    );
    write(
        &outside.join("secret").join("session.jsonl"),
        GOOD.replace("good-1", "secret-1").as_bytes(),
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("fifo.jsonl"))
            .status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
        symlink("/dev/zero", root.join("zero.jsonl")).unwrap_or_else(|e| panic!("{e}"));
        // A link out of the root to a file that is no session: never discovered.
        symlink("/etc/passwd", root.join("passwd.jsonl")).unwrap_or_else(|e| panic!("{e}"));
        // The user's own link to a session kept elsewhere: discovered, so readable.
        symlink(outside.join("secret"), root.join("linked")).unwrap_or_else(|e| panic!("{e}"));
    }
    let home = dir.path().join("home");
    let mut config = McpConfig::new(&home);
    config.discovery = DiscoveryConfig {
        extra_paths: vec![root.clone()],
        ..DiscoveryConfig::empty()
    };
    config.port = Some(4999);
    World {
        _dir: dir,
        root,
        outside,
        server: MindgateMcp::new(config),
    }
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn code(r: &CallToolResult) -> Option<String> {
    r.structured_content
        .as_ref()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
}

async fn graph(server: &MindgateMcp, id: &str) -> CallToolResult {
    let call = server.get_task_graph(Parameters(GetTaskGraphArgs {
        id: id.to_owned(),
        detail: None,
    }));
    tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap_or_else(|_| panic!("get_task_graph {id} did not answer"))
}

fn assert_refused(r: &CallToolResult, id: &str, why: &str) {
    assert_eq!(r.is_error, Some(true), "{id}: {}", text(r));
    assert_eq!(code(r).as_deref(), Some("forbidden"), "{id}: {}", text(r));
    let t = text(r);
    assert!(t.contains(why), "{id}: {t}");
    assert!(
        t.chars().count() <= MAX_ERROR_CHARS + 10,
        "{id}: {} chars",
        t.len()
    );
}

#[tokio::test]
async fn paths_outside_the_session_roots_are_refused_before_reading() {
    let w = world();
    for id in ["/etc/passwd", "/dev/zero", "/proc/self/environ"] {
        assert_refused(
            &graph(&w.server, id).await,
            id,
            "outside the session folders",
        );
    }
    let outside = w.outside.join("other").display().to_string();
    assert_refused(&graph(&w.server, &outside).await, &outside, "outside");
    // `..` cannot climb out either.
    let climb = format!("{}/../elsewhere/other", w.root.display());
    assert_refused(&graph(&w.server, &climb).await, &climb, "outside");
}

#[cfg(unix)]
#[tokio::test]
async fn special_files_and_symlinks_out_of_a_root_are_refused() {
    let w = world();
    let zero = w.root.join("zero.jsonl").display().to_string();
    assert_refused(&graph(&w.server, &zero).await, &zero, "outside");
    let passwd = w.root.join("passwd.jsonl").display().to_string();
    assert_refused(&graph(&w.server, &passwd).await, &passwd, "outside");
    let fifo = w.root.join("fifo.jsonl").display().to_string();
    assert_refused(&graph(&w.server, &fifo).await, &fifo, "not a regular file");
}

#[tokio::test]
async fn a_zstd_bomb_under_a_root_is_a_bounded_error() {
    let w = world();
    let bomb = w.root.join("bomb").display().to_string();
    let r = graph(&w.server, &bomb).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("byte limit"), "{}", text(&r));
}

#[tokio::test]
async fn allowed_sessions_still_open_by_id_and_by_path_and_the_list_skips_the_rest() {
    let w = world();
    let listed = tokio::time::timeout(
        Duration::from_secs(30),
        w.server.list_tasks(Parameters(ListTasksArgs::default())),
    )
    .await
    .unwrap_or_else(|_| panic!("list_tasks did not answer"));
    assert_eq!(listed.is_error, Some(false), "{}", text(&listed));
    let mut ids: Vec<String> = listed
        .structured_content
        .as_ref()
        .and_then(|v| v["tasks"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| t["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    let expected: &[&str] = if cfg!(unix) {
        &["good-1", "secret-1"]
    } else {
        &["good-1"]
    };
    assert_eq!(ids, expected);
    #[cfg(unix)]
    for id in [
        "secret-1".to_owned(),
        w.root.join("linked").display().to_string(),
    ] {
        let r = graph(&w.server, &id).await;
        assert_eq!(r.is_error, Some(false), "{id}: {}", text(&r));
    }
    for id in [
        "good-1".to_owned(),
        "good".to_owned(),
        w.root.join("good").display().to_string(),
        w.root
            .join("good")
            .join("session.jsonl")
            .display()
            .to_string(),
    ] {
        let r = graph(&w.server, &id).await;
        assert_eq!(r.is_error, Some(false), "{id}: {}", text(&r));
        assert_eq!(
            r.structured_content.as_ref().map(|v| v["taskId"].clone()),
            Some(Value::from("good-1")),
            "{id}"
        );
    }
}
