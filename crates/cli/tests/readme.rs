//! The README's "Connect your agent" blocks for coding agents and memory, run exactly as
//! printed: `mindgate tasks` lists the sessions in an agent's home, and the `mcpServers` entry
//! starts an MCP server that answers `initialize`, offers the memory tools and remembers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mindgate_testkit::{FixtureHome, readme};
use serde_json::{Value, json};

/// How long the MCP server may take to answer one request.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// The agents' home variables: cleared, or set to the test's own homes.
const AGENT_HOMES: [&str; 6] = [
    "DSH_HOME",
    "PI_CODING_AGENT_DIR",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "XDG_DATA_HOME",
];

/// A README command line as a process: `mindgate` is this build's binary.
fn command(line: &str) -> Command {
    let mut words = line.split_whitespace();
    assert_eq!(
        words.next(),
        Some("mindgate"),
        "not a mindgate command: {line}"
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mindgate"));
    cmd.args(words);
    for var in AGENT_HOMES {
        cmd.env_remove(var);
    }
    cmd
}

#[test]
fn the_coding_agents_block_lists_the_sessions_in_an_agents_home() {
    let block = readme::block("tasks");
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        ["mindgate tasks"],
        "the block changed: update this test"
    );
    let home = FixtureHome::new();
    // A machine with Claude Code's sessions in its home and no other agent's.
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../taskgraph/tests/fixtures/claude");
    mindgate_testkit::copy_fixture_tree(&fixtures, &home.path().join("claude/projects"));
    let mut cmd = command(lines[0]);
    for var in AGENT_HOMES {
        let dir = home.path().join(var.to_lowercase());
        std::fs::create_dir_all(&dir).unwrap();
        cmd.env(var, dir);
    }
    let out = cmd
        .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
        .env("MINDGATE_HOME", home.path().join("mindgate"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("claude_code"), "{stdout}");
    assert!(stdout.contains("c-main"), "{stdout}");
}

/// Reads the server's stdout lines on a thread, so every wait is bounded.
fn lines_of(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn answer(lines: &mpsc::Receiver<String>, id: u64) -> Value {
    loop {
        let line = lines
            .recv_timeout(ANSWER_TIMEOUT)
            .unwrap_or_else(|e| panic!("no answer to request {id}: {e}"));
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON from the MCP server: {line:?}: {e}"));
        if message["id"] == id {
            return message;
        }
    }
}

#[test]
fn the_mcp_servers_entry_starts_a_server_that_answers_initialize() {
    let entry: Value = serde_json::from_str(&readme::block("mcp")).unwrap();
    let server = &entry["mcpServers"]["mindgate"];
    let program = server["command"].as_str().unwrap();
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let home = FixtureHome::new();
    let mut child = command(&format!("{program} {}", args.join(" ")))
        .env("MINDGATE_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines_of(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "readme-test", "version": "1"}}}),
    );
    let init = answer(&lines, 1);
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    assert!(init["result"]["serverInfo"]["name"].is_string(), "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = answer(&lines, 2);
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for tool in [
        "fact_remember",
        "fact_search",
        "list_runs",
        "get_task_graph",
    ] {
        assert!(names.contains(&tool), "{tool} not offered: {names:?}");
    }
    // The agent remembers for the entry's user without naming one (trusted or quarantined).
    let user = args
        .windows(2)
        .find(|pair| pair[0] == "--memory-user")
        .map(|pair| pair[1])
        .expect("the entry names its --memory-user");
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "fact_remember", "arguments": {"text": "Prefers window seats."}}}),
    );
    let remembered = answer(&lines, 3);
    assert_eq!(remembered["result"]["isError"], false, "{remembered}");
    let fact = &remembered["result"]["structuredContent"]["fact"];
    assert_eq!(fact["text"], "Prefers window seats.", "{remembered}");
    assert_eq!(fact["userId"], user, "{remembered}");
    let _ = child.kill();
    let _ = child.wait();
}
