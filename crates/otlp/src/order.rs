//! Parents first: the order in which one request's spans of a trace are started.
//!
//! A span whose parent is in the same request starts after it (and ends before it), so
//! a whole trace in one batch gets stable node ids. Linear in the number of spans: each
//! span's depth (how many of its ancestors are in the request) is computed once, walking
//! up only to the first ancestor whose depth is known, and the spans are then bucketed by
//! depth, keeping the order they came in within a depth. Parents that form a cycle are
//! broken deterministically: the first span of the cycle reached (in the order sent) is
//! treated as having no parent in the request.

use std::collections::HashMap;

/// Depth not computed yet.
const UNSEEN: usize = usize::MAX;
/// On the walk being made (seeing it again closes a cycle).
const ON_WALK: usize = usize::MAX - 1;

/// How a walk up the parents ended.
enum WalkEnd {
    /// At a span without a parent in the request.
    Root,
    /// At an ancestor whose depth is known.
    Known,
    /// At a span already on this walk: the cycle is broken there.
    Cycle(usize),
}

/// The depth of each span: 0 for a span whose parent is not in the list, else one more
/// than its parent's. `ids[i]` is span `i`'s id, `parents[i]` its parent's (`None` for
/// none); a span that is its own parent has none.
pub fn depths(ids: &[u64], parents: &[Option<u64>]) -> Vec<usize> {
    let index: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let parent_index: Vec<Option<usize>> = parents
        .iter()
        .enumerate()
        .map(|(i, p)| p.and_then(|p| index.get(&p).copied()).filter(|&p| p != i))
        .collect();
    let mut depth = vec![UNSEEN; ids.len()];
    let mut walk: Vec<usize> = Vec::new();
    for start in 0..ids.len() {
        if depth[start] != UNSEEN {
            continue;
        }
        walk.clear();
        let mut at = start;
        let end = loop {
            match depth[at] {
                ON_WALK => break WalkEnd::Cycle(at),
                UNSEEN => {}
                _ => break WalkEnd::Known,
            }
            depth[at] = ON_WALK;
            walk.push(at);
            match parent_index[at] {
                Some(p) => at = p,
                None => break WalkEnd::Root,
            }
        };
        let broken = match end {
            WalkEnd::Cycle(at) => {
                depth[at] = 0;
                Some(at)
            }
            WalkEnd::Root | WalkEnd::Known => None,
        };
        // From the top of the walk down: each span one deeper than its parent.
        for &span in walk.iter().rev() {
            if Some(span) == broken {
                continue;
            }
            depth[span] = match parent_index[span] {
                Some(p) if depth[p] < ON_WALK => depth[p] + 1,
                _ => 0,
            };
        }
    }
    depth
}

/// The indexes of the spans in start order: by depth, then as sent.
pub fn parents_first(ids: &[u64], parents: &[Option<u64>]) -> Vec<usize> {
    let depth = depths(ids, parents);
    let deepest = depth.iter().copied().max().unwrap_or(0);
    let mut count = vec![0usize; deepest + 2];
    for &d in &depth {
        count[d + 1] += 1;
    }
    for d in 1..count.len() {
        count[d] += count[d - 1];
    }
    let mut order = vec![0usize; depth.len()];
    for (i, &d) in depth.iter().enumerate() {
        order[count[d]] = i;
        count[d] += 1;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_come_first_and_ties_keep_the_order_sent() {
        // 3 -> 2 -> 1 (root), 4 -> 1, 5's parent is elsewhere.
        let ids = [3, 2, 5, 1, 4];
        let parents = [Some(2), Some(1), Some(99), None, Some(1)];
        assert_eq!(depths(&ids, &parents), vec![2, 1, 0, 0, 1]);
        assert_eq!(parents_first(&ids, &parents), vec![2, 3, 1, 4, 0]);
    }

    #[test]
    fn a_cycle_is_broken_at_the_first_span_reached() {
        // 1 -> 2 -> 3 -> 1, and 4 -> 3.
        let ids = [1, 2, 3, 4];
        let parents = [Some(2), Some(3), Some(1), Some(3)];
        let d = depths(&ids, &parents);
        assert_eq!(d, vec![0, 2, 1, 2]);
        assert_eq!(parents_first(&ids, &parents), vec![0, 2, 1, 3]);
    }

    #[test]
    fn a_self_parent_is_a_depth_zero_span() {
        assert_eq!(depths(&[7, 8], &[Some(7), Some(7)]), vec![0, 1]);
    }

    #[test]
    fn a_long_cycle_takes_linear_time() {
        let n = 250_000u64;
        let ids: Vec<u64> = (1..=n).collect();
        let parents: Vec<Option<u64>> = (1..=n).map(|i| Some(i % n + 1)).collect();
        let order = parents_first(&ids, &parents);
        assert_eq!(order.len(), n as usize);
        // Span 1 is where the cycle is broken; its parent chain follows in reverse.
        assert_eq!(order[0], 0);
        assert_eq!(order[1], n as usize - 1);
    }
}
