//! A DSH session's graph built while its events are read (what `load_tree` and
//! `load_tree_followable` do with a zstd file) is exactly the graph built after the read
//! (`build_session_tree` over the session read): on the fixtures with a child session, on a
//! synthetic session cut into many frames (archived and live), and on every shape that makes
//! the read change what it already handed on — lines out of order, a line twice, a fork's
//! replayed events, a header missing, late, without id or without working directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mindgate_taskgraph::discover::{SessionLocation, load_tree, load_tree_followable};
use mindgate_taskgraph::graph::{BuildOptions, build_session_tree, build_session_tree_followable};
use mindgate_taskgraph::synth::{dsh_jsonl, session_events, zstd_frames};
use mindgate_taskgraph::text::workspace_slug;
use mindgate_taskgraph::{Agent, DiscoveryConfig, read_session_as};

/// The synthetic session's events start at this time (see `synth::session_events`).
const SYNTH_START_MS: i64 = 1_787_600_000_000;

/// A discovery configuration whose "now" is `now_ms`.
fn config_at(now_ms: i64) -> DiscoveryConfig {
    let mut cfg = DiscoveryConfig::from_lookup(|_| None, None);
    cfg.now = Some(SystemTime::UNIX_EPOCH + Duration::from_millis(now_ms as u64));
    cfg
}

/// What `load_tree` must give: the session read, its tree built after the read with the
/// options discovery uses (live when its last event is within the live window of "now"; the
/// files were just written, so their modification time is recent for any earlier "now").
fn expected(loc: &SessionLocation, cfg: &DiscoveryConfig) -> (BuildOptions, PathBuf) {
    let session = read_session_as(&loc.path, loc.agent).unwrap();
    let now_ms = cfg
        .now
        .unwrap()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let last = session.events.iter().map(|e| e.time_ms).max();
    let window = cfg.live_window.as_millis() as i64;
    let options = BuildOptions {
        live: last.is_none_or(|t| now_ms - t <= window),
        workspace: session
            .cwd()
            .map(workspace_slug)
            .or_else(|| loc.workspace.clone()),
        ..BuildOptions::default()
    };
    (options, loc.path.clone())
}

/// Checks both loaders against the build after the read.
fn assert_same_as_built_after_read(loc: &SessionLocation, cfg: &DiscoveryConfig, what: &str) {
    let (options, path) = expected(loc, cfg);
    let session = read_session_as(&path, loc.agent).unwrap();
    let want = build_session_tree(&session, &options);
    let (read, got) = load_tree(loc, cfg).unwrap();
    assert_eq!(read.events, session.events, "{what}: events");
    assert_eq!(got, want, "{what}: load_tree");

    let (want_tree, want_follow) = build_session_tree_followable(&session, &options);
    let (_, got_tree, got_follow) = load_tree_followable(loc, cfg).unwrap();
    assert_eq!(got_tree, want_tree, "{what}: load_tree_followable");
    assert_eq!(
        got_follow.as_ref().map(|g| g.graph()),
        want_follow.as_ref().map(|g| g.graph()),
        "{what}: the followable graph"
    );
    assert_eq!(options.live, want_follow.is_some(), "{what}: liveness");
}

/// Writes `lines` as a v0 `session.jsonl.zstd` in `<root>/<workspace>/<name>/`, a few lines
/// a frame (many chunks, so both reading threads take part).
fn write_session(root: &Path, name: &str, lines: &[Vec<u8>]) -> SessionLocation {
    let dir = root.join("--work-synthetic--").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl: Vec<u8> = lines.concat();
    std::fs::write(
        dir.join("session.jsonl.zstd"),
        zstd_frames(&jsonl, 7).unwrap(),
    )
    .unwrap();
    SessionLocation {
        agent: Agent::Dsh,
        path: dir,
        workspace: Some("--work-synthetic--".into()),
    }
}

/// The synthetic session's lines (header first), each with its newline.
fn synthetic_lines(events: usize) -> Vec<Vec<u8>> {
    dsh_jsonl(&session_events(events))
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn fixture_session_with_a_child_is_built_the_same_while_read() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = "--Users-kevin-Desktop-Nothing-Napkin--";
    let from = Path::new("tests/fixtures/dsh").join(ws);
    for name in ["s-main", "s-child"] {
        let to = tmp.path().join(ws).join(name);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(from.join(name)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
    let loc = SessionLocation {
        agent: Agent::Dsh,
        path: tmp.path().join(ws).join("s-main"),
        workspace: Some(ws.into()),
    };
    let session = read_session_as(&loc.path, Agent::Dsh).unwrap();
    assert!(!session.children.is_empty(), "the fixture has a child");
    let last = session.events.iter().map(|e| e.time_ms).max().unwrap();
    // Live (just after its last event) and archived (a day later).
    assert_same_as_built_after_read(&loc, &config_at(last + 1_000), "s-main live");
    assert_same_as_built_after_read(&loc, &config_at(last + 86_400_000), "s-main archived");
}

#[test]
fn synthetic_session_is_built_the_same_while_read_live_and_archived() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = synthetic_lines(3_000);
    let loc = write_session(tmp.path(), "plain", &lines);
    let last = read_session_as(&loc.path, Agent::Dsh)
        .unwrap()
        .events
        .iter()
        .map(|e| e.time_ms)
        .max()
        .unwrap();
    assert_same_as_built_after_read(&loc, &config_at(last + 1_000), "live");
    assert_same_as_built_after_read(&loc, &config_at(last + 86_400_000), "archived");
}

#[test]
fn shapes_the_read_reorders_or_drops_are_built_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = synthetic_lines(600);
    let cfg = config_at(SYNTH_START_MS + 365 * 86_400_000);
    let mut cases: Vec<(&str, Vec<Vec<u8>>)> = Vec::new();

    let mut swapped = lines.clone();
    swapped.swap(200, 260);
    cases.push(("lines out of seq order", swapped));

    let mut twice = lines.clone();
    twice.insert(301, lines[300].clone());
    cases.push(("a line twice", twice));

    let mut fork = lines.clone();
    let seed = br#"{"type":"session/end-seed","seq":150,"time":1787600000000,"data":{}}"#;
    fork.insert(151, [&seed[..], b"\n"].concat());
    cases.push(("a fork's replayed events", fork));

    cases.push(("no header", lines[1..].to_vec()));

    let mut late = lines.clone();
    let header = late.remove(0);
    late.insert(40, header);
    cases.push(("a late header", late));

    let text = |l: &[u8]| String::from_utf8(l.to_vec()).unwrap();
    let mut no_id = lines.clone();
    no_id[0] = text(&lines[0])
        .replacen("\"id\":\"synthetic\"", "\"id\":\"\"", 1)
        .into_bytes();
    assert_ne!(no_id[0], lines[0], "the header names its id");
    cases.push(("a header without id", no_id));

    let mut no_cwd = lines.clone();
    no_cwd[0] = text(&lines[0])
        .replacen("\"cwd\":\"/work/synthetic\"", "\"x\":0", 1)
        .into_bytes();
    assert_ne!(
        no_cwd[0], lines[0],
        "the header names its working directory"
    );
    cases.push(("a header without working directory", no_cwd));

    for (i, (what, lines)) in cases.iter().enumerate() {
        let loc = write_session(tmp.path(), &format!("case-{i}"), lines);
        assert_same_as_built_after_read(&loc, &cfg, what);
    }
}
