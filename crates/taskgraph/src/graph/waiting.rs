//! Time the agent spent waiting for the person, told apart from time it worked, and the
//! "hot" rule of the critical path. One implementation for every view (page, CLI, HTTP, MCP).
//!
//! - A tool-like node the person **rejected** at a permission prompt (Claude Code's "The user
//!   doesn't want to proceed with this tool use", Codex's "rejected by user") spent its whole
//!   time on that prompt: [`WaitKind::Permission`].
//! - A tool-like node that **never ran** (`CANCELLED`: the person interrupted the turn, or the
//!   session ended on an unanswered prompt) was waiting too: [`WaitKind::Interrupted`].
//! - The gap between a turn's end and the next turn's start is the person's reply:
//!   [`WaitKind::UserReply`].
//!
//! Waiting nodes weigh 0 on the critical path, so neither the path nor its hot nodes are
//! waiting; the waiting is reported beside it as segments ([`WaitSegment`]).

use super::model::{Node, NodeMeta, NodeType, Status};
pub use super::model::{WaitKind, WaitSegment};

/// Phrases with which agents record that the person refused a tool call.
const REJECTION_MARKERS: [&str; 4] = [
    "the user doesn't want to proceed with this tool use",
    "tool use was rejected",
    "rejected by user",
    "request interrupted by user",
];

/// Whether a tool result's text says the person refused the call.
pub fn is_user_rejection(text: &str) -> bool {
    let head: String = text.chars().take(300).collect::<String>().to_lowercase();
    REJECTION_MARKERS.iter().any(|m| head.contains(m))
}

/// How tool-like node `n` waited for the person, if its time was waiting rather than work.
pub fn node_wait_kind(n: &Node) -> Option<WaitKind> {
    if !n.node_type.is_tool_like() {
        return None;
    }
    match n.status {
        Status::Cancelled => Some(WaitKind::Interrupted),
        Status::Failed => match &n.meta {
            NodeMeta::Tool(m) if m.error.as_deref().is_some_and(is_user_rejection) => {
                Some(WaitKind::Permission)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The wait segment of node `n` (a tool that waited, or a phase after a reply gap of
/// `gap_ms` > 0).
pub fn node_wait_segment(n: &Node, gap_before_ms: i64) -> Option<WaitSegment> {
    if n.node_type == NodeType::Phase {
        return (gap_before_ms > 0).then(|| WaitSegment {
            kind: WaitKind::UserReply,
            node_id: n.id.clone(),
            start_time: n.start_time.map(|s| s - gap_before_ms),
            duration_ms: gap_before_ms,
        });
    }
    let kind = node_wait_kind(n)?;
    (n.duration_ms > 0).then(|| WaitSegment {
        kind,
        node_id: n.id.clone(),
        start_time: n.start_time,
        duration_ms: n.duration_ms,
    })
}

/// The hot nodes of a path, given each path node's agent-time weight in path order: the
/// nodes taken longest first (ties: earlier first) until they cover 80 % of the path's agent
/// time, capped at 10 % of the path's nodes (the cap wins; at least one when the path has
/// any agent time). Returned as positions into the path, in path order.
pub fn hot_positions(weights: &[i64]) -> Vec<usize> {
    let total: i64 = weights.iter().map(|w| (*w).max(0)).sum();
    if total <= 0 {
        return Vec::new();
    }
    let cap = (weights.len() / 10).max(1);
    let mut order: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0).collect();
    order.sort_by(|&a, &b| weights[b].cmp(&weights[a]).then(a.cmp(&b)));
    let mut covered = 0i64;
    let mut hot = Vec::new();
    for i in order {
        // Stop once 80 % is covered (integer form of covered / total >= 0.8).
        if hot.len() >= cap || covered * 10 >= total * 8 {
            break;
        }
        covered += weights[i];
        hot.push(i);
    }
    hot.sort_unstable();
    hot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_covers_eighty_percent_longest_first() {
        // 20 nodes: cap 2. Two nodes carry 90 %: both hot, nothing else.
        let mut w = vec![1i64; 20];
        w[3] = 500;
        w[7] = 400;
        assert_eq!(hot_positions(&w), vec![3, 7]);
    }

    #[test]
    fn cap_wins_over_coverage() {
        // 10 equal nodes: 80 % would need 8, the cap allows 1.
        assert_eq!(hot_positions(&[10; 10]), vec![0]);
    }

    #[test]
    fn stops_once_covered() {
        // 30 nodes, cap 3; one node holds 85 %: only it.
        let mut w = vec![0i64; 30];
        w[5] = 85;
        w[6] = 10;
        w[9] = 5;
        assert_eq!(hot_positions(&w), vec![5]);
    }

    #[test]
    fn empty_and_weightless_paths_have_no_hot_nodes() {
        assert!(hot_positions(&[]).is_empty());
        assert!(hot_positions(&[0, 0, 0]).is_empty());
        assert_eq!(hot_positions(&[0, 3]), vec![1]);
    }

    #[test]
    fn rejection_texts() {
        assert!(is_user_rejection(
            "The user doesn't want to proceed with this tool use. The tool use was rejected"
        ));
        assert!(is_user_rejection(
            "[Request interrupted by user for tool use]"
        ));
        assert!(!is_user_rejection("error: file not found"));
    }
}
