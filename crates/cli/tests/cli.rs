//! Integration tests of `mindgate schema` and `mindgate check-frames`, run
//! against the built binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn mindgate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mindgate"))
}

fn protocol_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../protocol/tests/fixtures")
        .join(name)
}

/// A scratch file under cargo's per-target temporary directory.
fn scratch(name: &str, contents: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mindgate-cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

fn run_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn check_file(path: &Path) -> Output {
    mindgate().arg("check-frames").arg(path).output().unwrap()
}

#[test]
fn schema_prints_the_golden_draft_2020_12_schema() {
    let out = mindgate().arg("schema").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let golden = std::fs::read_to_string(protocol_fixture("schema.golden.json")).unwrap();
    assert!(
        stdout == golden,
        "`mindgate schema` differs from crates/protocol/tests/fixtures/schema.golden.json \
         (regenerate with UPDATE_GOLDEN=1 cargo test -p mindgate-protocol --test golden)"
    );
    let schema: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["oneOf"].as_array().map(Vec::len), Some(16));
}

#[test]
fn good_capture_exits_zero_with_a_verdict_per_line() {
    let path = protocol_fixture("graphmind-ai-0.5.1.jsonl");
    let frames = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    let out = check_file(&path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = stdout_lines(&out);
    assert_eq!(lines.len(), frames + 1);
    for (i, line) in lines[..frames].iter().enumerate() {
        assert_eq!(line, &format!("{}: ok", i + 1));
    }
    assert_eq!(
        lines[frames],
        format!("{frames} frames: {frames} ok, 0 unknown-type, 0 version-mismatch, 0 invalid")
    );
}

#[test]
fn viewer_capture_is_good_too() {
    let out = check_file(&protocol_fixture("graphmind-ai-0.5.1.viewer.jsonl"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

const BAD_CAPTURE: &str = concat!(
    r#"{"gm":1,"seq":1,"ts":0,"runId":"*","type":"mode.set","payload":{"mode":"step"}}"#,
    "\n",
    r#"{"gm":2,"seq":2,"ts":0,"runId":"*","type":"mode.set","payload":{"mode":"step"}}"#,
    "\n",
    "\n",
    "not json at all\n",
    r#"{"gm":1,"seq":3,"ts":0,"runId":"r1","type":"node.token","payload":{"nodeId":"n"}}"#,
    "\r\n",
    r#"{"gm":1,"seq":4,"ts":0,"runId":"r1","type":"node.teleported","payload":{}}"#,
    "\n",
    "[1,2,3]\n",
    r#"{"gm":1,"seq":-5,"ts":0,"runId":"r1","type":"mode.set","payload":{"mode":"run"}}"#,
);

fn expect_bad_capture_verdicts(out: &Output) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = stdout_lines(out);
    let expected_prefixes = [
        "1: ok",
        "2: version-mismatch: 2",
        "4: invalid: not JSON",
        "5: invalid: invalid 'node.token' payload: missing field `deltas` [payload: missing field `deltas`]",
        "6: unknown-type",
        "7: invalid: envelope is not an object",
        "8: invalid: missing or invalid 'seq'",
    ];
    assert_eq!(lines.len(), expected_prefixes.len() + 1, "{lines:#?}");
    for (line, prefix) in lines.iter().zip(expected_prefixes) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}"
        );
    }
    assert_eq!(
        lines.last().unwrap(),
        "7 frames: 1 ok, 1 unknown-type, 1 version-mismatch, 4 invalid"
    );
}

#[test]
fn bad_capture_exits_one_with_a_verdict_per_line_and_a_summary() {
    let path = scratch("bad.jsonl", BAD_CAPTURE.as_bytes());
    expect_bad_capture_verdicts(&check_file(&path));
}

#[test]
fn dash_reads_standard_input() {
    let mut cmd = mindgate();
    cmd.args(["check-frames", "-"]);
    expect_bad_capture_verdicts(&run_with_stdin(cmd, BAD_CAPTURE.as_bytes()));

    let good = std::fs::read(protocol_fixture("graphmind-ai-0.5.1.jsonl")).unwrap();
    let mut cmd = mindgate();
    cmd.args(["check-frames", "-"]);
    let out = run_with_stdin(cmd, &good);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn a_version_mismatch_alone_fails_the_check() {
    let path = scratch(
        "v2.jsonl",
        br#"{"gm":2,"seq":0,"ts":0,"runId":"*","type":"hello","payload":{}}"#,
    );
    let out = check_file(&path);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_lines(&out),
        [
            "1: version-mismatch: 2",
            "1 frames: 0 ok, 0 unknown-type, 1 version-mismatch, 0 invalid"
        ]
    );
}

#[test]
fn unknown_types_alone_pass_the_check() {
    let path = scratch(
        "future.jsonl",
        br#"{"gm":1,"seq":0,"ts":0,"runId":"r","type":"node.future","payload":{"x":1}}"#,
    );
    let out = check_file(&path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout_lines(&out)[0], "1: unknown-type");
}

#[test]
fn invalid_utf8_lines_are_invalid_not_fatal() {
    let mut bytes = b"{\"gm\":1,\"seq\":0,\"ts\":0,\"runId\":\"r\xff\",\"type\":\"mode.set\",\"payload\":{\"mode\":\"run\"}}\n".to_vec();
    bytes.extend_from_slice(
        br#"{"gm":1,"seq":1,"ts":0,"runId":"r","type":"mode.set","payload":{"mode":"run"}}"#,
    );
    let path = scratch("utf8.jsonl", &bytes);
    let out = check_file(&path);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = stdout_lines(&out);
    assert!(
        lines[0].starts_with("1: invalid: not UTF-8"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "2: ok");
}

#[test]
fn empty_input_is_zero_frames() {
    let path = scratch("empty.jsonl", b"\n\n");
    let out = check_file(&path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout_lines(&out),
        ["0 frames: 0 ok, 0 unknown-type, 0 version-mismatch, 0 invalid"]
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let out = check_file(Path::new("/nonexistent/mindgate/frames.jsonl"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent/mindgate/frames.jsonl"),
        "{stderr}"
    );
}

/// `--db postgres://…` used to create a SQLite file under `./postgres:`. Now `serve`
/// takes it as the PostgreSQL run store: an unreachable one stops the start with a clear
/// error (no password shown); other schemes are refused before anything touches the disk
/// (`mcp --db mysql://…`); neither creates a file. (The other run commands on an
/// unreachable database: `postgres_runs.rs`.)
#[test]
fn db_urls_create_no_file_and_an_unreachable_postgres_is_a_clear_error() {
    let cwd = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mindgate-cli-tests")
        .join(format!("db-url-{}", std::process::id()));
    std::fs::create_dir_all(&cwd).unwrap();
    let home = cwd.join("home");
    // A loopback port nobody listens on (bound, then released).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("postgres://user:secret@127.0.0.1:{closed}/mindgate");
    for (args, code, said) in [
        (
            vec!["serve", "--no-open", "--port", "0", "--db"],
            2,
            // (the cluster's check may come first: either names the database, hidden
            // password)
            format!("database postgres://user:***@127.0.0.1:{closed}/mindgate"),
        ),
        (
            vec!["mcp", "--db", "mysql://h/m", "--memory-db"],
            2,
            "'mysql:' URLs are not supported".to_owned(),
        ),
    ] {
        let mut child = mindgate()
            .args(&args)
            .arg(&url)
            .current_dir(&cwd)
            .env("MINDGATE_HOME", &home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Without the check `serve` would start and serve forever: bound the wait.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?} accepted the URL and kept running");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&said), "{args:?}: {stderr}");
        if args[0] == "serve" {
            // (clap echoes a refused value itself; the store's errors never show it)
            assert!(!stderr.contains("secret"), "{args:?}: {stderr}");
        }
        let left: Vec<_> = std::fs::read_dir(&cwd)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|name| name != "home")
            .collect();
        assert!(left.is_empty(), "{args:?} created {left:?}");
        assert!(!home.join("mindgate.db").exists(), "{args:?}");
    }
}

/// `MINDGATE_TOKEN` gives `serve` its control token (a team hub's instances share one);
/// one that is short or not URL-safe stops the start, naming the variable and never the
/// value.
#[test]
fn a_bad_mindgate_token_stops_serve_without_showing_it() {
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mindgate-cli-tests")
        .join(format!("token-{}", std::process::id()));
    for bad in [
        "short-secret",
        "a-long-enough-secret with a space",
        "secret&token=x-0123456789",
    ] {
        let out = mindgate()
            .args(["serve", "--no-open", "--port", "0", "--otlp-port", "0"])
            .env("MINDGATE_HOME", &home)
            .env("MINDGATE_TOKEN", bad)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("MINDGATE_TOKEN must be 16 to 256"),
            "{stderr}"
        );
        assert!(!stderr.contains(bad), "the token was shown: {stderr}");
    }
}
