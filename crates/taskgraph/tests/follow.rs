//! `Follower`: a plain DSH session file that grows is tailed, and the incrementally kept graph
//! equals a fresh read of the grown file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use mindgate_taskgraph::discover::load_tree;
use mindgate_taskgraph::follow::Follower;
use mindgate_taskgraph::{
    Agent, BuildOptions, DiscoveryConfig, IncrementalGraph, SessionLocation, load_tree_followable,
};

const SESSION: &str = "tests/fixtures/dsh/--Users-kevin-Desktop-Nothing-Napkin--/s-live";

#[test]
fn a_growing_dsh_file_is_tailed_into_the_same_graph_as_a_fresh_read() {
    let from = std::fs::read_dir(SESSION)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a plain session file");
    let text = std::fs::read_to_string(&from).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 6, "fixture too short");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s-live");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(from.file_name().unwrap());
    let half = lines.len() / 2;
    std::fs::write(&file, lines[..half].join("\n") + "\n").unwrap();
    // Written just now: live.
    let window = Duration::from_secs(3600);
    let mut f = Follower::open(&dir, Agent::Dsh, "--w--", window).unwrap();
    assert_eq!(f.file(), file.as_path());
    let before = f.events().len();
    assert!(!f.update().unwrap(), "nothing appended yet");
    // The rest, with the last line split across two writes.
    let rest = lines[half..].join("\n") + "\n";
    let (a, b) = rest.split_at(rest.len() - 5);
    append(&file, a);
    assert!(f.update().unwrap());
    append(&file, b);
    assert!(f.update().unwrap());
    assert!(f.events().len() > before);
    assert_eq!(f.generation(), 0, "appended, never rebuilt");
    let changes = f.take_changes();
    assert!(!changes.nodes.is_empty());
    let fresh = Follower::open(&dir, Agent::Dsh, "--w--", window).unwrap();
    assert_eq!(f.events(), fresh.events());
    assert_eq!(f.graph().graph(), fresh.graph().graph());
}

/// A follower opened over a session already read (the server's cache) tails from the file's
/// length when it was read: lines the file gained between that stamp and the read, and a
/// last line that was still being written, are applied once, not twice or never.
#[test]
fn a_follower_over_a_session_read_earlier_applies_each_line_once() {
    let from = std::fs::read_dir(SESSION)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a plain session file");
    let text = std::fs::read_to_string(&from).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s-live");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(from.file_name().unwrap());
    let third = lines.len() / 3;
    // The stamp sees a third of the lines and half of the next one.
    let (cut_a, cut_b) = lines[third].split_at(lines[third].len() / 2);
    std::fs::write(&file, lines[..third].join("\n") + "\n" + cut_a).unwrap();
    let stamp = mindgate_taskgraph::follow::stamp(&dir, Agent::Dsh);
    // The read happens after two more lines arrived.
    append(&file, &(cut_b.to_owned() + "\n" + lines[third + 1] + "\n"));
    let session = mindgate_taskgraph::read_session_as(&dir, Agent::Dsh).unwrap();
    let window = Duration::from_secs(3600);
    let mut f = Follower::from_session(&session, stamp, &dir, Agent::Dsh, "--w--", window).unwrap();
    assert!(!f.streaming());
    assert_eq!(f.events(), session.events.as_slice());
    // The lines the read had already seen come round again in the tail: skipped.
    f.update().unwrap();
    assert_eq!(f.events(), session.events.as_slice());
    append(&file, &(lines[third + 2..].join("\n") + "\n"));
    assert!(f.update().unwrap());
    assert_eq!(f.generation(), 0, "appended, never rebuilt");
    let fresh = Follower::open(&dir, Agent::Dsh, "--w--", window).unwrap();
    assert_eq!(f.events(), fresh.events());
    assert_eq!(f.graph().graph(), fresh.graph().graph());
}

/// A follower going on from the graph the loader built to be followed (the server's cache
/// hands it over) has the graph one that builds its own has, and tails the file the same; a
/// graph built with other options is not taken.
#[test]
fn a_follower_goes_on_from_the_graph_the_loader_built() {
    let from = std::fs::read_dir(SESSION)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a plain session file");
    let text = std::fs::read_to_string(&from).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s-live");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(from.file_name().unwrap());
    let half = lines.len() / 2;
    std::fs::write(&file, lines[..half].join("\n") + "\n").unwrap();
    let window = Duration::from_secs(3600);
    // "Now" just after the last event: the fixture's session reads as live.
    let last = mindgate_taskgraph::read_session_as(&dir, Agent::Dsh)
        .unwrap()
        .events
        .iter()
        .map(|e| e.time_ms)
        .max()
        .unwrap();
    let config = DiscoveryConfig {
        live_window: window,
        now: Some(UNIX_EPOCH + Duration::from_millis(last as u64 + 1000)),
        ..DiscoveryConfig::empty()
    };
    let loc = SessionLocation {
        agent: Agent::Dsh,
        path: dir.clone(),
        workspace: Some("--w--".into()),
    };
    let stamp = mindgate_taskgraph::follow::stamp(&dir, Agent::Dsh);
    let (session, tree, built) = load_tree_followable(&loc, &config).unwrap();
    assert_eq!(
        tree,
        load_tree(&loc, &config).unwrap().1,
        "the same tree as a plain load"
    );
    let built = built.expect("a live session's graph as built");
    assert_eq!(built.graph(), &tree.graph);
    let ws = tree.graph.workspace.clone();
    let own = Follower::from_session(&session, stamp, &dir, Agent::Dsh, &ws, window).unwrap();
    let mut f =
        Follower::from_built(&session, stamp, &dir, Agent::Dsh, &ws, window, Some(built)).unwrap();
    assert_eq!(f.graph().graph(), own.graph().graph());
    assert_eq!(f.events(), own.events());
    append(&file, &(lines[half..].join("\n") + "\n"));
    assert!(f.update().unwrap());
    assert_eq!(f.generation(), 0, "appended, never rebuilt");
    let fresh = Follower::open(&dir, Agent::Dsh, &ws, window).unwrap();
    assert_eq!(f.events(), fresh.events());
    assert_eq!(f.graph().graph(), fresh.graph().graph());
    // A graph built for another workspace is not gone on from.
    let other = BuildOptions {
        workspace: Some("--elsewhere--".into()),
        ..f.graph().options().clone()
    };
    let mut elsewhere = IncrementalGraph::new(other);
    elsewhere.append(&session.events);
    let g = Follower::from_built(
        &session,
        stamp,
        &dir,
        Agent::Dsh,
        &ws,
        window,
        Some(elsewhere),
    )
    .unwrap();
    assert_eq!(g.graph().graph(), own.graph().graph());
}

fn append(file: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A subagent's file that grows while its parent's file stands still changes what the
/// follower shows: the child's graph, the parent's subagent summary, a new generation — the
/// same as a fresh open of the grown files.
#[test]
fn a_growing_subagent_file_refreshes_the_children_and_the_parent_summary() {
    let fixtures = Path::new("tests/fixtures/claude/-work-napkin");
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("-work-napkin");
    let subagents = ws.join("c-main/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let main = ws.join("c-main.jsonl");
    std::fs::copy(fixtures.join("c-main.jsonl"), &main).unwrap();
    let child = subagents.join("agent-a1.jsonl");
    std::fs::copy(fixtures.join("c-main/subagents/agent-a1.jsonl"), &child).unwrap();

    let window = Duration::from_secs(3600);
    let mut f = Follower::open(&main, Agent::ClaudeCode, "-work-napkin", window).unwrap();
    assert_eq!(f.children().len(), 1, "the subagent is a child");
    let output_before = f.children()[0].graph.summary.tokens.output;
    assert!(!f.update().unwrap(), "nothing changed yet");

    // The subagent answers once more; the parent's file is not touched.
    let parent_len = std::fs::metadata(&main).unwrap().len();
    append(
        &child,
        &(r#"{"parentUuid":"u104","isSidechain":true,"cwd":"/work/napkin","sessionId":"c-main","type":"assistant","uuid":"u105","timestamp":"2026-08-24T19:34:30.000Z","requestId":"req_msg_s3","message":{"id":"msg_s3","type":"message","role":"assistant","model":"claude-opus-4-1","content":[{"type":"text","text":"One more check"}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":40}},"agentId":"a1"}"#.to_owned() + "\n"),
    );
    assert_eq!(std::fs::metadata(&main).unwrap().len(), parent_len);
    assert!(f.update().unwrap(), "the child's growth is a change");
    assert_eq!(f.generation(), 1, "the parent is followed afresh");
    assert_eq!(
        f.children()[0].graph.summary.tokens.output,
        output_before + 40,
        "the child's tokens count the new answer"
    );
    let fresh = Follower::open(&main, Agent::ClaudeCode, "-work-napkin", window).unwrap();
    assert_eq!(
        f.graph().graph(),
        fresh.graph().graph(),
        "the parent's summary of the child too"
    );
    assert_eq!(f.children(), fresh.children());
    assert!(
        !f.update().unwrap(),
        "and then nothing until the next change"
    );
}
