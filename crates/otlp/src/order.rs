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
const UNSEEN: u32 = u32::MAX;
/// On the walk being made (seeing it again closes a cycle).
const ON_WALK: u32 = u32::MAX - 1;
/// No parent in the list.
const NONE: u32 = u32::MAX;

/// How a walk up the parents ended.
enum WalkEnd {
    /// At a span without a parent in the list.
    Root,
    /// At an ancestor whose depth is known.
    Known,
    /// At a span already on this walk: the cycle is broken there.
    Cycle(usize),
}

/// The depth of each span: 0 for a span whose parent is not in the list, else one more
/// than its parent's. `ids[i]` is span `i`'s id, `parents[i]` its parent's (`0` for
/// none); a span that is its own parent has none. Indexes are `u32` (a request holds far
/// fewer spans), so the working set is about 20 bytes a span.
pub fn depths(ids: &[u64], parents: &[u64]) -> Vec<u32> {
    let mut index: HashMap<u64, u32> = HashMap::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        index.insert(*id, u32::try_from(i).unwrap_or(NONE));
    }
    let parent_index: Vec<u32> = parents
        .iter()
        .enumerate()
        .map(|(i, p)| match index.get(p) {
            Some(&at) if *p != 0 && at as usize != i => at,
            _ => NONE,
        })
        .collect();
    drop(index);
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
                NONE => break WalkEnd::Root,
                p => at = p as usize,
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
                NONE => 0,
                p if depth[p as usize] < ON_WALK => depth[p as usize] + 1,
                _ => 0,
            };
        }
    }
    depth
}

/// The indexes of spans in start order (by depth, then as sent); `ids` and `parents` as
/// for [`depths`].
pub(crate) fn parents_first(ids: &[u64], parents: &[u64]) -> Vec<u32> {
    order_by_depth(&depths(ids, parents))
}

/// Indexes bucketed by depth, keeping their order within a depth (a counting sort).
fn order_by_depth(depth: &[u32]) -> Vec<u32> {
    let deepest = depth.iter().copied().max().unwrap_or(0) as usize;
    let mut count = vec![0usize; deepest + 2];
    for &d in depth {
        count[d as usize + 1] += 1;
    }
    for d in 1..count.len() {
        count[d] += count[d - 1];
    }
    let mut order = vec![0u32; depth.len()];
    for (i, &d) in depth.iter().enumerate() {
        order[count[d as usize]] = u32::try_from(i).unwrap_or(u32::MAX);
        count[d as usize] += 1;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(ids: &[u64], parents: &[u64]) -> Vec<u32> {
        order_by_depth(&depths(ids, parents))
    }

    #[test]
    fn parents_come_first_and_ties_keep_the_order_sent() {
        // 3 -> 2 -> 1 (root), 4 -> 1, 5's parent is elsewhere.
        let ids = [3, 2, 5, 1, 4];
        let parents = [2, 1, 99, 0, 1];
        assert_eq!(depths(&ids, &parents), vec![2, 1, 0, 0, 1]);
        assert_eq!(order(&ids, &parents), vec![2, 3, 1, 4, 0]);
    }

    #[test]
    fn a_cycle_is_broken_at_the_first_span_reached() {
        // 1 -> 2 -> 3 -> 1, and 4 -> 3.
        let ids = [1, 2, 3, 4];
        let parents = [2, 3, 1, 3];
        let d = depths(&ids, &parents);
        assert_eq!(d, vec![0, 2, 1, 2]);
        assert_eq!(order(&ids, &parents), vec![0, 2, 1, 3]);
    }

    #[test]
    fn a_self_parent_is_a_depth_zero_span() {
        assert_eq!(depths(&[7, 8], &[7, 7]), vec![0, 1]);
    }

    #[test]
    fn a_long_cycle_takes_linear_time() {
        let n = 250_000u64;
        let ids: Vec<u64> = (1..=n).collect();
        let parents: Vec<u64> = (1..=n).map(|i| i % n + 1).collect();
        let sorted = order(&ids, &parents);
        assert_eq!(sorted.len(), n as usize);
        // Span 1 is where the cycle is broken; its parent chain follows in reverse.
        assert_eq!(sorted[0], 0);
        assert_eq!(sorted[1], n as u32 - 1);
    }
}
