//! The run commands on a PostgreSQL run store, with the real binary: `export` from SQLite,
//! `import` into PostgreSQL and `export` back (the same JSON), `diff` on PostgreSQL equal
//! to `diff` on SQLite, `export --html`, `--new-id`, an OTLP dump, a failing import that
//! leaves nothing behind, `mcp` answering run tools from PostgreSQL, and `MINDGATE_DB`.
//!
//! Each test works in a schema of its own inside `MINDGATE_TEST_POSTGRES_URL`
//! (`scripts/test.sh` starts a throwaway cluster); without it they print
//! `skipped: MINDGATE_TEST_POSTGRES_URL not set` (and fail when
//! `MINDGATE_TEST_REQUIRE_SERVICES=1`). The unreachable-database test
//! needs no PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mindgate_testkit::{ServeProcess, frames};
use serde_json::{Value, json};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mindgate"))
}

/// Runs `mindgate` with `home` as its home and `MINDGATE_DB` unset unless `env_db`.
fn mindgate(args: &[&str], home: &Path, env_db: Option<&str>) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env(mindgate_home::env::MINDGATE_HOME, home)
        .env_remove("MINDGATE_DB");
    if let Some(db) = env_db {
        cmd.env("MINDGATE_DB", db);
    }
    cmd.output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{:?}", text(&out));
    text(&out).0
}

/// A schema of the test's own in the test database, dropped at the end.
struct PgSchema {
    _schema: mindgate_testkit::PgSchema,
    /// The URL whose connections use the schema.
    url: String,
}

impl PgSchema {
    fn new() -> Option<PgSchema> {
        let schema = mindgate_testkit::PgSchema::create("mg_cli_test")?;
        let url = schema.url().to_owned();
        Some(PgSchema {
            _schema: schema,
            url,
        })
    }

    /// `(runs, events)` stored in the schema (0, 0 before the store is migrated).
    fn rows(&self) -> (i64, i64) {
        let mut client = mindgate_testkit::pg_client(&self.url);
        let exists: bool = client
            .query_one("SELECT to_regclass('runs') IS NOT NULL", &[])
            .unwrap()
            .get(0);
        if !exists {
            return (0, 0);
        }
        let count = |client: &mut postgres::Client, table: &str| -> i64 {
            client
                .query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])
                .unwrap()
                .get(0)
        };
        (count(&mut client, "runs"), count(&mut client, "events"))
    }
}

/// `every_event` with the LLM step's input changed: the runs part at `llm:m`.
fn changed_run(run: &str) -> Vec<String> {
    frames::every_event(run)
        .into_iter()
        .map(|f| f.replace(r#""input":{"p":1}"#, r#""input":{"p":2,"extra":true}"#))
        .collect()
}

/// Every line of a JSON Lines text, parsed (`jsonb` orders keys its own way).
fn parsed(jsonl: &str) -> Vec<Value> {
    jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A SQLite database holding runs `r1` and `r2` (they part at `llm:m`), sent by an app to
/// a real `mindgate serve`; and their exports.
struct Fixture {
    dir: tempfile::TempDir,
    home: PathBuf,
    sqlite: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let sqlite = dir.path().join("a.db");
        let server = ServeProcess::start(bin(), &["--db", sqlite.to_str().unwrap()]);
        server.ingest("r1", &frames::every_event("r1"));
        server.ingest("r2", &changed_run("r2"));
        assert!(server.stop().success());
        let fixture = Fixture { dir, home, sqlite };
        for run in ["r1", "r2"] {
            let file = fixture.file(&format!("{run}.jsonl"));
            ok(fixture.run(
                &[
                    "export",
                    run,
                    "--jsonl",
                    &file,
                    "--db",
                    &fixture.sqlite_db(),
                ],
                None,
            ));
        }
        fixture
    }

    fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    fn sqlite_db(&self) -> String {
        self.sqlite.to_str().unwrap().to_owned()
    }

    fn run(&self, args: &[&str], env_db: Option<&str>) -> Output {
        mindgate(args, &self.home, env_db)
    }
}

#[test]
fn runs_exported_from_sqlite_import_into_postgres_and_read_back_the_same() {
    let Some(pg) = PgSchema::new() else { return };
    let f = Fixture::new();
    let copy_db = f.file("copy.db");
    for run in ["r1", "r2"] {
        let file = f.file(&format!("{run}.jsonl"));
        ok(f.run(&["import", &file, "--db", &copy_db], None));
        let said = ok(f.run(&["import", &file, "--db", &pg.url], None));
        assert!(
            said.contains(&format!("imported run {run} (13 events) into postgres://")),
            "{said}"
        );
        assert!(!said.contains("search_path"), "{said}");
    }
    assert_eq!(pg.rows(), (2, 26));

    // Exported back from PostgreSQL (the database from MINDGATE_DB): the same JSON as
    // from the SQLite copy, and the original's events.
    let from_pg = ok(f.run(&["export", "r1", "--jsonl", "-"], Some(&pg.url)));
    let from_copy = ok(f.run(&["export", "r1", "--jsonl", "-", "--db", &copy_db], None));
    assert_eq!(parsed(&from_pg), parsed(&from_copy));
    let original = std::fs::read_to_string(f.file("r1.jsonl")).unwrap();
    let (original, from_pg) = (parsed(&original), parsed(&from_pg));
    assert_eq!(original[1..], from_pg[1..]);
    assert_eq!(from_pg[0]["run"]["source"], "import");
    let mut header = original[0].clone();
    header["run"]["source"] = json!("import");
    assert_eq!(header, from_pg[0]);

    // diff on PostgreSQL = diff on SQLite: the table (exit 1: they diverge) and the JSON.
    let on_pg = f.run(&["diff", "r1", "r2", "--db", &pg.url], None);
    let on_sqlite = f.run(&["diff", "r1", "r2", "--db", &copy_db], None);
    assert_eq!(on_pg.status.code(), Some(1), "{:?}", text(&on_pg));
    assert_eq!(on_sqlite.status.code(), Some(1));
    assert_eq!(text(&on_pg).0, text(&on_sqlite).0);
    assert!(text(&on_pg).0.contains("first divergence: llm:m (input"));
    let json_of = |db: &str| -> Value {
        let out = f.run(&["diff", "r1", "r2", "--json", "--db", db], None);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(json_of(&pg.url), json_of(&copy_db));
    let missing = f.run(&["diff", "r1", "zz"], Some(&pg.url));
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing).1.contains("run zz not found in postgres://"),
        "{:?}",
        text(&missing)
    );

    // The page, from PostgreSQL.
    let page = f.file("r1.html");
    ok(f.run(&["export", "r1", "--html", &page, "--db", &pg.url], None));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("\"r1\""), "the page names its run");

    // The same id again is refused; --new-id finds the free copies.
    let r1 = f.file("r1.jsonl");
    let again = f.run(&["import", &r1, "--db", &pg.url], None);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again).1.contains("run r1 already exists"),
        "{:?}",
        text(&again)
    );
    for copy in ["r1-copy", "r1-copy-2"] {
        let said = ok(f.run(&["import", &r1, "--new-id"], Some(&pg.url)));
        assert!(said.contains(&format!("imported run {copy} ")), "{said}");
    }
    assert_eq!(pg.rows(), (4, 52));

    // `mindgate runs` and run-id prefixes on PostgreSQL: the same list as the SQLite copy's
    // ids; `r1-copy-` resolves by prefix, `r1-c` is ambiguous.
    let listed: Value =
        serde_json::from_str(&ok(f.run(&["runs", "--json"], Some(&pg.url)))).unwrap();
    let mut ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["r1", "r1-copy", "r1-copy-2", "r2"]);
    let copy = ok(f.run(&["export", "r1-copy-", "--jsonl", "-"], Some(&pg.url)));
    assert!(copy.contains("\"id\":\"r1-copy-2\""), "{copy}");
    let ambiguous = f.run(&["export", "r1-c", "--jsonl", "-"], Some(&pg.url));
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(
        text(&ambiguous).1.contains("r1-copy, r1-copy-2"),
        "{:?}",
        text(&ambiguous)
    );

    // `mindgate mcp` reads the same store (MINDGATE_DB): its run tools answer.
    let mut mcp = McpStdio::start(&f.home, &pg.url);
    let runs = mcp.call("list_runs", json!({}));
    let listed = mcp_text(&runs);
    for run in ["r1", "r2", "r1-copy", "r1-copy-2"] {
        assert!(
            listed.contains(&format!("- {run} \"all\"")),
            "{run}: {listed}"
        );
    }
    let diff = mcp.call("diff_runs", json!({"runA": "r1", "runB": "r2"}));
    assert!(mcp_text(&diff).contains("llm:m"), "{diff}");
    let run = mcp.call("get_run", json!({"runId": "r1-copy"}));
    assert_eq!(run["result"]["isError"], json!(false), "{run}");
    assert!(mcp_text(&run).contains("llm:m"), "{run}");
    mcp.stop();
}

#[test]
fn a_failing_import_leaves_no_run_behind_on_postgres() {
    let Some(pg) = PgSchema::new() else { return };
    let f = Fixture::new();
    let lines: Vec<String> = std::fs::read_to_string(f.file("r1.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // Past one multi-row insert (2,048 rows) before the bad line, so rows were sent
    // inside the transaction when it fails.
    let template: Value = serde_json::from_str(&lines[3]).unwrap();
    let mut broken = lines.clone();
    for seq in 1_000..4_000u64 {
        let mut event = template.clone();
        event["seq"] = json!(seq);
        broken.push(event.to_string());
    }
    broken.push("{\"gm\":1,\"oops\"".to_owned());
    broken.push(lines[4].clone());
    let broken_file = f.file("broken.jsonl");
    std::fs::write(&broken_file, broken.join("\n")).unwrap();
    let out = f.run(&["import", &broken_file, "--db", &pg.url], None);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    let bad_line = lines.len() + 3_000 + 1;
    assert!(
        text(&out)
            .1
            .contains(&format!("line {bad_line}: invalid event")),
        "{:?}",
        text(&out)
    );
    assert_eq!(pg.rows(), (0, 0));

    // A file that ends early (fewer events than its header counts): nothing either.
    let short_file = f.file("short.jsonl");
    std::fs::write(&short_file, lines[..lines.len() - 1].join("\n")).unwrap();
    let out = f.run(&["import", &short_file], Some(&pg.url));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("incomplete"), "{:?}", text(&out));
    let out = f.run(&["export", "r1", "--jsonl", "-", "--db", &pg.url], None);
    assert!(
        text(&out).1.contains("run r1 not found"),
        "{:?}",
        text(&out)
    );
    assert_eq!(pg.rows(), (0, 0));
}

fn otlp_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../otlp/tests/fixtures")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

/// An OTLP dump goes into PostgreSQL as runs, and the import leaves the runs other
/// instances are receiving `running` (SQLite's import, which holds the file's lock,
/// marks runs left `running` abandoned; on a shared database they are live).
#[test]
fn an_otlp_dump_imports_into_postgres_beside_live_runs() {
    let Some(pg) = PgSchema::new() else { return };
    let f = Fixture::new();
    // A run another instance is receiving: stored `running`.
    let mut lines: Vec<Value> = parsed(&std::fs::read_to_string(f.file("r1.jsonl")).unwrap());
    lines[0]["run"]["status"] = json!("running");
    lines[0]["run"]["finishedAt"] = Value::Null;
    let live = f.file("live.jsonl");
    let body: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&live, body.join("\n")).unwrap();
    ok(f.run(&["import", &live, "--db", &pg.url], None));

    for (file, spans) in [("pydantic_ai.jsonl", 5), ("vercel_ai.json", 4)] {
        let said = ok(f.run(&["import", &otlp_fixture(file)], Some(&pg.url)));
        assert!(
            said.contains(&format!("imported 1 trace(s) as runs ({spans} spans")),
            "{said}"
        );
    }
    let exported = ok(f.run(
        &[
            "export",
            "otlp-0af7651916cd43dd8448eb211c80319c",
            "--jsonl",
            "-",
        ],
        Some(&pg.url),
    ));
    let header = &parsed(&exported)[0]["run"];
    assert_eq!(
        (header["source"].as_str(), header["status"].as_str()),
        (Some("import"), Some("ok"))
    );
    assert_eq!(header["meta"]["source"], "otlp");
    let live = ok(f.run(&["export", "r1", "--jsonl", "-", "--db", &pg.url], None));
    assert_eq!(parsed(&live)[0]["run"]["status"], "running");
    let (runs, _) = pg.rows();
    assert_eq!(runs, 3);
}

/// An unreachable PostgreSQL database: one line naming it (password `***`), exit 2, for
/// every run command; `mcp` answers its run tools with the same reason.
#[test]
fn an_unreachable_database_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("postgres://user:secret@127.0.0.1:{closed}/mindgate");
    let shown = format!(
        "cannot reach the PostgreSQL database postgres://user:***@127.0.0.1:{closed}/mindgate"
    );
    let export = dir.path().join("r.jsonl");
    std::fs::write(
        &export,
        r#"{"format":"mindgate.run","version":1,"run":{"id":"r","status":"ok","startedAt":1,"lastEventAt":1,"counts":{"events":0,"nodes":0,"errors":0}}}"#,
    )
    .unwrap();
    let export = export.to_str().unwrap();
    let otlp = otlp_fixture("vercel_ai.json");
    for args in [
        vec!["export", "r", "--jsonl", "-"],
        vec!["export", "r", "--html", "r.html"],
        vec!["diff", "a", "b"],
        vec!["import", export],
        vec!["import", export, "--new-id"],
        vec!["import", &otlp],
    ] {
        for env_db in [false, true] {
            let mut all = args.clone();
            if !env_db {
                all.extend(["--db", &url]);
            }
            let out = mindgate(&all, &home, env_db.then_some(url.as_str()));
            let (_, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{all:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{all:?}: {stderr}");
            assert!(stderr.contains(&shown), "{all:?}: {stderr}");
            assert!(!stderr.contains("secret"), "{all:?}: {stderr}");
        }
    }
    assert!(!home.join("mindgate.db").exists());

    let mut mcp = McpStdio::start(&home, &url);
    let answer = mcp.call("list_runs", json!({}));
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    let said = mcp_text(&answer);
    assert!(said.contains(&shown), "{said}");
    assert!(!said.contains("secret"), "{said}");
    mcp.stop();
}

/// `mindgate mcp` over stdio, its run database from `MINDGATE_DB`, spoken to line by line.
struct McpStdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    next_id: u64,
}

impl McpStdio {
    fn start(home: &Path, db: &str) -> McpStdio {
        let mut child = Command::new(bin())
            .arg("mcp")
            .env(mindgate_home::env::MINDGATE_HOME, home)
            .env("MINDGATE_DB", db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut mcp = McpStdio {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "cli-test", "version": "0"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == json!(id) {
                return answer;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    fn stop(mut self) {
        drop(self.stdin);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.wait();
    }
}

/// The text content of a tool call's answer.
fn mcp_text(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
