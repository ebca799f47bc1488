//! The child (subagent) sessions of a followed session: their graphs (the overview counts
//! their time and tokens in the parent's totals), their summaries (a subagent node's
//! `child_session`), and the stamps of their files, so a child that grows while its parent's
//! file stands still is seen.

use std::path::PathBuf;

use crate::graph::{BuildOptions, ChildSummary, GraphTree, build_session_tree};
use crate::session::{Agent, Session};

use super::{Stamp, stamp};

/// A followed session's children as last read.
#[derive(Debug, Default)]
pub(super) struct Children {
    /// The child sessions' graphs (with their own children), in the session's child order.
    pub(super) trees: Vec<GraphTree>,
    /// How many direct children the session had.
    pub(super) count: usize,
    /// Every file-backed child session (recursively) with its stamp when read.
    files: Vec<ChildFile>,
}

/// One child session kept in a file of its own.
#[derive(Debug, Clone, PartialEq)]
struct ChildFile {
    path: PathBuf,
    agent: Agent,
    stamp: Stamp,
}

impl Children {
    /// The children of `session` built with `base` (the parent's options), and their
    /// summaries for the parent's build options.
    pub(super) fn of(session: &Session, base: &BuildOptions) -> (Children, Vec<ChildSummary>) {
        let (trees, summaries) = session
            .children
            .iter()
            .map(|c| {
                let opts = BuildOptions {
                    session_id: None,
                    task_id: Some(session.id.clone()),
                    children: Vec::new(),
                    ..base.clone()
                };
                let tree = build_session_tree(c, &opts);
                let summary = ChildSummary::of_session(c, &tree.graph);
                (tree, summary)
            })
            .unzip();
        let children = Children {
            trees,
            count: session.children.len(),
            files: child_files(session),
        };
        (children, summaries)
    }

    /// Whether a child's file changed (grew, shrank, was replaced or removed) since it was
    /// read.
    pub(super) fn changed(&self) -> bool {
        self.files
            .iter()
            .any(|f| stamp(&f.path, f.agent) != f.stamp)
    }
}

/// The stamps of `session`'s file-backed child sessions (recursively), in child order: a
/// view that keeps a session read can tell that a child changed though the session's own
/// file did not.
pub fn children_stamp(session: &Session) -> Vec<Stamp> {
    child_files(session)
        .into_iter()
        .map(|f| stamp(&f.path, f.agent))
        .collect()
}

fn child_files(session: &Session) -> Vec<ChildFile> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Session, &Session)> = session
        .children
        .iter()
        .rev()
        .map(|c| (session, c))
        .collect();
    while let Some((parent, child)) = stack.pop() {
        // Children kept inside their parent's file change with it (Claude Code sidechains).
        if !child.path.as_os_str().is_empty() && child.path != parent.path {
            out.push(ChildFile {
                path: child.path.clone(),
                agent: child.agent,
                stamp: stamp(&child.path, child.agent),
            });
        }
        stack.extend(child.children.iter().rev().map(|c| (child, c)));
    }
    out
}
