//! A task-graph build fed a DSH session's events while they are read.
//!
//! Reading a large session is decoding, splitting and parsing on two threads; building its
//! graph used to wait for the whole read. [`StreamedBuild`] is the read's
//! [`EventSink`]: each zstd frame's events are applied to an [`IncrementalGraph`] on the
//! reading thread as soon as they are in order, while the other thread parses the next
//! lines. The graph it leaves is the graph [`build_session_tree`](super::build_session_tree)
//! makes, because it is that build — the same events, in the same order, into the same
//! incremental graph, refreshed once at the end — or it is not used at all:
//! [`StreamedBuild::into_graph`] gives nothing when the events read were not the session's
//! final events in order (see [`parse_zstd_feeding`](crate::parse::dsh::parse_zstd_feeding)),
//! and [`IncrementalGraph::settle`] refuses a graph made with other options.

use super::{BuildOptions, IncrementalGraph};
use crate::event::{Event, EventKind};
use crate::parse::dsh::EventSink;
use crate::session::Agent;
use crate::text::workspace_slug;

/// A root session's graph built while its events are read (see the module).
pub(crate) struct StreamedBuild {
    graph: Option<IncrementalGraph>,
    /// About how many events the session holds, as the reader estimates (room reserved up
    /// front).
    events_hint: usize,
    /// The workspace when the header names no working directory.
    fallback_workspace: Option<String>,
    /// The events did not start with a usable header: nothing is built.
    given_up: bool,
}

impl StreamedBuild {
    /// A build for a session found in `fallback_workspace`.
    pub(crate) fn new(fallback_workspace: Option<String>) -> Self {
        Self {
            graph: None,
            events_hint: 0,
            fallback_workspace,
            given_up: false,
        }
    }

    /// The graph fed so far when the read says it was fed the session whole (`fed_whole`).
    pub(crate) fn into_graph(self, fed_whole: bool) -> Option<IncrementalGraph> {
        self.graph.filter(|_| fed_whole && !self.given_up)
    }

    /// The graph the session's header starts: the options
    /// [`load_tree`](crate::discover::load_tree) builds a DSH root session with (its id, the
    /// workspace its working directory names; liveness and children are settled at the end).
    fn start(&self, first: &Event) -> Option<IncrementalGraph> {
        let EventKind::Session(header) = &first.kind else {
            return None;
        };
        if header.id.is_empty() {
            return None;
        }
        let options = BuildOptions {
            session_id: Some(header.id.clone()),
            workspace: header
                .cwd
                .as_deref()
                .map(workspace_slug)
                .or_else(|| self.fallback_workspace.clone()),
            agent: Some(Agent::Dsh),
            ..BuildOptions::default()
        };
        let mut graph = IncrementalGraph::new(options);
        // The hint is the most events the file's size suggests (19 % high on the reference
        // session): the lists get that room (unused room costs nothing), the hash tables
        // room for 3/4 of it (a table reserved for more than it gets has more buckets than
        // it needs, all touched by its inserts; one reserved short grows once).
        graph.reserve_lists(self.events_hint);
        graph.reserve_tables(self.events_hint / 4 * 3);
        Some(graph)
    }
}

impl EventSink for StreamedBuild {
    fn expect(&mut self, events: usize) {
        self.events_hint = events;
    }

    fn feed(&mut self, events: &[Event]) {
        if self.given_up {
            return;
        }
        if self.graph.is_none() {
            self.graph = events.first().and_then(|first| self.start(first));
        }
        match &mut self.graph {
            Some(graph) => graph.feed(events),
            None => self.given_up = true,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::graph::build_graph;
    use crate::parse::dsh::parse_zstd_feeding;
    use crate::synth::{dsh_jsonl, session_events, zstd_frames};

    /// Reads `jsonl` (as zstd frames of 5 lines) while a [`StreamedBuild`] is fed; the graph
    /// it leaves, settled with the options a build after the read uses, and the session.
    fn streamed(jsonl: &[u8]) -> (Option<crate::graph::TaskGraph>, crate::session::Session) {
        let zstd = zstd_frames(jsonl, 5).unwrap();
        let mut build = StreamedBuild::new(None);
        let (session, whole) = parse_zstd_feeding(&zstd, "s.jsonl.zstd", usize::MAX, &mut build)
            .expect("within the limit");
        let graph = build.into_graph(whole).map(|mut g| {
            assert!(g.settle(&options(&session)), "made with the same options");
            g.finish()
        });
        (graph, session)
    }

    fn options(session: &crate::session::Session) -> BuildOptions {
        BuildOptions {
            session_id: Some(session.id.clone()),
            workspace: session.cwd().map(workspace_slug),
            agent: Some(Agent::Dsh),
            ..BuildOptions::default()
        }
    }

    #[test]
    fn a_session_read_in_order_is_built_while_read() {
        let jsonl = dsh_jsonl(&session_events(800));
        let (graph, session) = streamed(&jsonl);
        let graph = graph.expect("built while read");
        assert_eq!(graph, build_graph(&session.events, &options(&session)));
        assert!(graph.nodes.len() > 100, "{} nodes", graph.nodes.len());
    }

    #[test]
    fn a_read_that_changes_fed_events_leaves_no_graph() {
        let jsonl = dsh_jsonl(&session_events(300));
        let lines: Vec<&[u8]> = jsonl.split_inclusive(|b| *b == b'\n').collect();
        let mut swapped = lines.clone();
        swapped.swap(100, 120);
        let mut twice = lines.clone();
        twice.insert(50, lines[49]);
        let seed: &[u8] = b"{\"type\":\"session/end-seed\",\"seq\":60,\"time\":1,\"data\":{}}\n";
        let mut fork = lines.clone();
        fork.insert(61, seed);
        let mut late = lines.clone();
        let header = late.remove(0);
        late.insert(10, header);
        for (what, lines) in [
            ("out of order", swapped),
            ("a line twice", twice),
            ("a fork", fork),
            ("no header", lines[1..].to_vec()),
            ("a late header", late),
        ] {
            let (graph, _) = streamed(&lines.concat());
            assert!(graph.is_none(), "{what}: built again after the read");
        }
    }
}
