//! Neighbour context: the records remembered just before and after a hit in the same
//! session share its score. A conversation's answer often sits one or two turns away from
//! the turn that matches the question ("what did X say when Y asked …", a reply that names
//! only "it"), so the best few fused candidates lend each of their neighbours a share of
//! their fused score, and a neighbour that did not match at all can enter the hits.
//!
//! Neighbours are records of the same user, kind and session (`sessionId`), nearest in
//! write order, at most [`DEFAULT_WINDOW`] (`MemoryConfig::neighbour_window`) on each
//! side, admitted by the search's own filter; a record remembered without a session has
//! none. A candidate with fused score `s` whose best neighbouring source scores `b` gets
//! `s + w · b · (1 − s)` (weight `w` in [0, 1]), so the score stays on the 0–1 scale, a
//! candidate without neighbouring sources keeps its score, and signal `neighbour` records
//! the share added. Measured on the LoCoMo dev half (crates/memory/README.md).

use std::collections::HashMap;

/// Share of a source's score its neighbours get when neither the search nor the store
/// says (`MemoryConfig::neighbour_weight`; 0 turns neighbour context off).
pub const DEFAULT_WEIGHT: f64 = 0.5;

/// Neighbours on each side of a source (`MemoryConfig::neighbour_window`).
pub const DEFAULT_WINDOW: usize = 2;

/// The best fused candidates whose neighbours are looked up.
pub const SOURCES: usize = 5;

/// The most neighbours looked up on each side, whatever the configuration says.
pub const MAX_WINDOW: usize = 10;

/// The fused order with the neighbours' shares: every candidate of `order` (`(rowid,
/// fused score in 0–1)`, best first) and every neighbour of `links` (`(source rowid,
/// neighbour rowid)`, sources among `order`), rescored `s + weight · b · (1 − s)` where
/// `b` is the best score of its sources, best first (ties keep `order`'s order, then the
/// order of `links`). A neighbour that gets no share (its sources score 0, or `weight` is
/// 0) is left out. Also answers the share added per rowid (only where it is above 0).
pub fn share(
    order: &[(i64, f64)],
    links: &[(i64, i64)],
    weight: f64,
) -> (Vec<(i64, f64)>, HashMap<i64, f64>) {
    let score: HashMap<i64, f64> = order.iter().copied().collect();
    let mut best: HashMap<i64, f64> = HashMap::new();
    let mut fresh: Vec<i64> = Vec::new();
    for &(source, neighbour) in links {
        let Some(&b) = score.get(&source) else {
            continue;
        };
        if !score.contains_key(&neighbour) && !best.contains_key(&neighbour) {
            fresh.push(neighbour);
        }
        let entry = best.entry(neighbour).or_insert(0.0);
        *entry = entry.max(b);
    }
    let mut shares = HashMap::new();
    let mut out: Vec<(i64, f64)> = Vec::with_capacity(order.len() + fresh.len());
    let candidates = order.iter().map(|&(id, s)| (id, s, true));
    let candidates = candidates.chain(fresh.into_iter().map(|id| (id, 0.0, false)));
    for (rowid, s, matched) in candidates {
        let b = best.get(&rowid).copied().unwrap_or(0.0);
        let add = (weight * b * (1.0 - s)).max(0.0);
        if add > 0.0 {
            shares.insert(rowid, add);
        } else if !matched {
            // A neighbour that gets no share has no evidence at all.
            continue;
        }
        out.push((rowid, (s + add).clamp(0.0, 1.0)));
    }
    // A stable sort keeps the earlier order among equal scores.
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    (out, shares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_share_the_best_sources_score() {
        // 1 matched best, 2 a little; 3 is 1's neighbour and matched nothing; 2 is also 1's
        // neighbour and rises above 4.
        let order = [(1, 1.0), (4, 0.5), (2, 0.4)];
        let links = [(1, 3), (1, 2), (2, 3)];
        let (out, shares) = share(&order, &links, 0.5);
        let ids: Vec<i64> = out.iter().map(|x| x.0).collect();
        assert_eq!(ids, vec![1, 2, 4, 3]);
        assert!((out[1].1 - (0.4 + 0.5 * 1.0 * 0.6)).abs() < 1e-12);
        // 3 takes its best source (1), not the sum of both.
        assert!((out[3].1 - 0.5).abs() < 1e-12);
        assert!((shares[&3] - 0.5).abs() < 1e-12);
        // The best candidate keeps its score and gets no share.
        assert_eq!(out[0], (1, 1.0));
        assert!(!shares.contains_key(&1));
        assert!(!shares.contains_key(&4));
    }

    #[test]
    fn weight_zero_or_no_links_changes_nothing() {
        let order = [(1, 1.0), (2, 0.3)];
        assert_eq!(share(&order, &[(1, 9)], 0.0).0, order.to_vec());
        let (out, shares) = share(&order, &[], 0.5);
        assert_eq!(out, order.to_vec());
        assert!(shares.is_empty());
        // A link whose source is no candidate lends nothing.
        assert_eq!(share(&order, &[(7, 2)], 1.0).0, order.to_vec());
    }
}
