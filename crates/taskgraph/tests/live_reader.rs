//! Resumable readers: feeding a session file in arbitrary line-chunk splits gives exactly the
//! whole-file read's events, and the graph kept by `LiveGraph` equals a fresh build.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::{Path, PathBuf};

use mindgate_taskgraph::live::{Feed, LiveGraph, LiveReader};
use mindgate_taskgraph::{Agent, BuildOptions, Event, IncrementalGraph, build_graph, parse};
use proptest::prelude::*;

fn fixture_files() -> Vec<(Agent, PathBuf)> {
    let mut out = Vec::new();
    for (agent, dir) in [
        (Agent::Pi, common::PI),
        (Agent::ClaudeCode, common::CLAUDE),
        (Agent::Codex, common::CODEX),
        (Agent::Pi, "tests/fixtures/fidelity/pi"),
        (Agent::ClaudeCode, "tests/fixtures/fidelity/claude/-work-fx"),
        (Agent::Codex, "tests/fixtures/fidelity/codex"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (agent, f)));
    }
    if let Ok(rd) = std::fs::read_dir(Path::new(common::CLAUDE).join("c-main/subagents")) {
        // Subagent files have no sidechain lines: the main-file reader reads them the same.
        for e in rd {
            out.push((Agent::ClaudeCode, e.unwrap().path()));
        }
    }
    out
}

/// Cut points (byte offsets, increasing) from `cuts` (arbitrary numbers).
fn cut_points(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    v.push(len);
    v.sort_unstable();
    v.dedup();
    v
}

/// Feeds `bytes` as the file grows to each cut point; on divergence starts a new reader over
/// the file so far (what the server does). At every step committed ++ tail equals the
/// whole-file read of the complete lines so far. Returns the final events and how many times
/// the reader diverged.
fn feed_in_steps(agent: Agent, bytes: &[u8], cuts: &[usize]) -> (Vec<Event>, usize) {
    let mut r = LiveReader::new(agent, "f").unwrap();
    let mut committed: Vec<Event> = Vec::new();
    let mut diverged = 0;
    for cut in cut_points(bytes.len(), cuts) {
        match r.feed(&bytes[r.offset() as usize..cut]) {
            Feed::Events(ev) => committed.extend(ev),
            Feed::Diverged => {
                diverged += 1;
                r = LiveReader::new(agent, "f").unwrap();
                let Feed::Events(ev) = r.feed(&bytes[..cut]) else {
                    panic!("a fresh reader diverged")
                };
                committed = ev;
            }
        }
        let done = r.offset() as usize;
        assert_eq!(
            done,
            bytes[..cut]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1)
        );
        let mut now = committed.clone();
        now.extend(r.tail());
        let whole = parse::parse_bytes(agent, &bytes[..done], "f").events;
        assert_eq!(now, whole, "after {done} bytes");
    }
    let mut all = committed;
    all.extend(r.tail());
    (all, diverged)
}

/// Whether a fixture holds abandoned branches or an orphan entry re-attached to the entry
/// before it (the only reasons a fixture may diverge).
fn branches(agent: Agent, bytes: &[u8]) -> bool {
    let s = parse::parse_bytes(agent, bytes, "f");
    s.meta.contains_key("abandoned_branches")
        || s.warnings.iter().any(|w| w.message.contains("re-attached"))
}

/// Complete lines only (the whole-file reader also reads an unterminated last line).
fn complete(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)]
}

#[test]
fn every_fixture_line_by_line_equals_the_whole_file_read() {
    for (agent, path) in fixture_files() {
        let bytes = std::fs::read(&path).unwrap();
        let bytes = complete(&bytes);
        let n = bytes.iter().filter(|b| **b == b'\n').count();
        let cuts: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        let (got, diverged) = feed_in_steps(agent, bytes, &cuts);
        assert_eq!(diverged > 0, branches(agent, bytes), "{}", path.display());
        assert_eq!(
            got,
            parse::parse_bytes(agent, bytes, "f").events,
            "{}",
            path.display()
        );
        assert!(n > 2, "{}", path.display());
    }
}

fn live_graph_of(agent: Agent, bytes: &[u8], cuts: &[usize]) -> LiveGraph {
    let opts = BuildOptions {
        live: true,
        ..BuildOptions::default()
    };
    let mut r = LiveReader::new(agent, "f").unwrap();
    let mut g = LiveGraph::new(IncrementalGraph::new(opts.clone()), Vec::new(), Vec::new());
    for cut in cut_points(bytes.len(), cuts) {
        match r.feed(&bytes[r.offset() as usize..cut]) {
            Feed::Events(ev) => {
                g.update(ev, r.tail());
            }
            Feed::Diverged => {
                r = LiveReader::new(agent, "f").unwrap();
                let Feed::Events(ev) = r.feed(&bytes[..cut]) else {
                    panic!("a fresh reader diverged")
                };
                g = LiveGraph::new(IncrementalGraph::new(opts.clone()), ev, r.tail());
            }
        }
        let whole = parse::parse_bytes(agent, &bytes[..r.offset() as usize], "f").events;
        assert_eq!(g.events(), &whole[..]);
    }
    g
}

#[test]
fn live_graph_equals_a_fresh_build_after_every_line() {
    let opts = BuildOptions {
        live: true,
        ..BuildOptions::default()
    };
    for (agent, path) in fixture_files() {
        let bytes = std::fs::read(&path).unwrap();
        let bytes = complete(&bytes);
        let cuts: Vec<usize> = (0..bytes.len())
            .filter(|&i| bytes[i] == b'\n')
            .map(|i| i + 1)
            .collect();
        let g = live_graph_of(agent, bytes, &cuts);
        let fresh = build_graph(&parse::parse_bytes(agent, bytes, "f").events, &opts);
        let kept = g.graph().clone().finish();
        assert_eq!(
            serde_json::to_value(&kept).unwrap(),
            serde_json::to_value(&fresh).unwrap(),
            "{}",
            path.display()
        );
    }
}

#[test]
fn a_pi_branch_change_diverges() {
    let text = concat!(
        r#"{"type":"session","version":3,"id":"p","timestamp":"2026-08-24T10:00:00Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-08-24T10:00:01Z","message":{"role":"user","content":"a"}}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-08-24T10:00:02Z","message":{"role":"assistant","content":[],"stopReason":"stop"}}"#,
        "\n",
    );
    let edit = concat!(
        r#"{"type":"message","id":"u2","parentId":null,"timestamp":"2026-08-24T10:00:03Z","message":{"role":"user","content":"b"}}"#,
        "\n"
    );
    let mut r = LiveReader::new(Agent::Pi, "f").unwrap();
    assert!(matches!(r.feed(text.as_bytes()), Feed::Events(_)));
    assert_eq!(r.feed(edit.as_bytes()), Feed::Diverged);
}

#[test]
fn a_partial_line_waits_and_dsh_has_no_live_reader() {
    assert!(LiveReader::new(Agent::Dsh, "f").is_none());
    let mut r = LiveReader::new(Agent::Codex, "f").unwrap();
    let Feed::Events(ev) =
        r.feed(br#"{"timestamp":"2026-08-24T19:33:20.000Z","type":"session_meta","pay"#)
    else {
        panic!()
    };
    assert!(ev.is_empty() && r.offset() == 0 && r.tail().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_split_of_any_fixture_equals_the_whole_file_read(
        which in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let files = fixture_files();
        let (agent, path) = &files[which.index(files.len())];
        let bytes = std::fs::read(path).unwrap();
        let bytes = complete(&bytes);
        let (got, diverged) = feed_in_steps(*agent, bytes, &cuts);
        prop_assert_eq!(got, parse::parse_bytes(*agent, bytes, "f").events);
        prop_assert!(diverged == 0 || branches(*agent, bytes));
    }

    #[test]
    fn streaming_never_panics_on_jsonish_lines(
        lines in prop::collection::vec("[ -~]{0,40}|\\{\"type\":\"(user|assistant|message|event_msg|response_item|session)\",\"id\":\"[ab]\",\"parentId\":\"[ab]\"\\}", 0..20),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let text = lines.join("\n") + "\n";
        for agent in [Agent::Pi, Agent::ClaudeCode, Agent::Codex] {
            // Matches the whole-file read at every step (checked inside), diverging or not.
            let _ = feed_in_steps(agent, text.as_bytes(), &cuts);
        }
    }
}
