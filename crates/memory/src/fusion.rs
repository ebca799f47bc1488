//! Fusion of ranked lists: reciprocal rank fusion, and score fusion over min-max
//! normalised scores.

use std::collections::HashMap;

/// The RRF constant.
pub const RRF_K: f64 = 60.0;

/// Fuses ranked lists of ids: each id scores Σ 1/(k + rank) over the lists it appears in
/// (rank from 1). The result is ordered by score, highest first; ties keep first-seen
/// order (lists in the order given, each from its top).
pub fn reciprocal_rank_fusion<T: Copy + Eq + std::hash::Hash>(
    lists: &[&[T]],
    k: f64,
) -> Vec<(T, f64)> {
    let weighted: Vec<(&[T], f64)> = lists.iter().map(|l| (*l, 1.0)).collect();
    weighted_reciprocal_rank_fusion(&weighted, k)
}

/// [`reciprocal_rank_fusion`] with a weight per list: each id scores
/// Σ weight/(k + rank).
pub fn weighted_reciprocal_rank_fusion<T: Copy + Eq + std::hash::Hash>(
    lists: &[(&[T], f64)],
    k: f64,
) -> Vec<(T, f64)> {
    let mut order: Vec<(T, f64)> = Vec::new();
    let mut index: HashMap<T, usize> = HashMap::new();
    for (list, weight) in lists {
        for (rank, id) in list.iter().enumerate() {
            let add = weight / (k + rank as f64 + 1.0);
            match index.get(id) {
                Some(&i) => order[i].1 += add,
                None => {
                    index.insert(*id, order.len());
                    order.push((*id, add));
                }
            }
        }
    }
    // A stable sort keeps first-seen order among equal scores.
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    order
}

/// Fuses scored lists (`(id, score)`, best first) by their min-max normalised scores:
/// each id scores Σ weight · (s − min) / (max − min) over the lists it appears in, min and
/// max taken over that list (a list whose scores are all equal gives each of its ids the
/// full weight; non-finite scores count as the list's minimum). The result is ordered by
/// score, highest first; ties keep first-seen order.
pub fn weighted_score_fusion<T: Copy + Eq + std::hash::Hash>(
    lists: &[(&[(T, f64)], f64)],
) -> Vec<(T, f64)> {
    let mut order: Vec<(T, f64)> = Vec::new();
    let mut index: HashMap<T, usize> = HashMap::new();
    for (list, weight) in lists {
        for (id, norm) in min_max_normalised(list) {
            let add = weight * norm;
            match index.get(&id) {
                Some(&i) => order[i].1 += add,
                None => {
                    index.insert(id, order.len());
                    order.push((id, add));
                }
            }
        }
    }
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    order
}

/// A list's scores min-max normalised over the list, in its order: `(s − min) / (max −
/// min)`, 1 for every id when all scores are equal, 0 for a non-finite score (it counts
/// as the minimum).
pub fn min_max_normalised<T: Copy>(list: &[(T, f64)]) -> Vec<(T, f64)> {
    let finite = || list.iter().map(|x| x.1).filter(|s| s.is_finite());
    let min = finite().fold(f64::INFINITY, f64::min);
    let max = finite().fold(f64::NEG_INFINITY, f64::max);
    let span = max - min;
    list.iter()
        .map(|&(id, score)| {
            let norm = if !score.is_finite() {
                0.0
            } else if span > 0.0 {
                (score - min) / span
            } else {
                1.0
            };
            (id, norm)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuses_and_breaks_ties_by_first_seen() {
        let lexical = [1, 2, 3];
        let vector = [3, 4, 1];
        let fused = reciprocal_rank_fusion(&[&lexical, &vector], 60.0);
        let ids: Vec<i32> = fused.iter().map(|(id, _)| *id).collect();
        // 1: 1/61 + 1/63, 3: 1/63 + 1/61 (tie, 1 seen first), 2: 1/62, 4: 1/62 (tie).
        assert_eq!(ids, vec![1, 3, 2, 4]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
        assert_eq!(fused[0].1, fused[1].1);
        assert!(reciprocal_rank_fusion::<i32>(&[&[], &[]], 60.0).is_empty());
        // A lighter second list breaks the 1/3 tie towards the first list's order.
        let w = weighted_reciprocal_rank_fusion(&[(&lexical[..], 1.0), (&vector[..], 0.5)], 60.0);
        let ids: Vec<i32> = w.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![1, 3, 2, 4]);
        assert!((w[0].1 - (1.0 / 61.0 + 0.5 / 63.0)).abs() < 1e-12);
        assert!(w[0].1 > w[1].1);
        assert!((w[3].1 - 0.5 / 62.0).abs() < 1e-12);
    }

    #[test]
    fn score_fusion_normalises_each_list() {
        // Lexical scores 10 / 6 / 2 → 1, 0.5, 0; cosines 0.9 / 0.5 → 1, 0.
        let lexical = [(1, 10.0), (2, 6.0), (3, 2.0)];
        let vector = [(3, 0.9), (4, 0.5)];
        let fused = weighted_score_fusion(&[(&lexical[..], 1.0), (&vector[..], 1.0)]);
        assert_eq!(fused, vec![(1, 1.0), (3, 1.0), (2, 0.5), (4, 0.0)]);
        // A lighter vector list: 3 drops below 1 and 2.
        let fused = weighted_score_fusion(&[(&lexical[..], 1.0), (&vector[..], 0.25)]);
        let ids: Vec<i32> = fused.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![1, 2, 3, 4]);
        assert!((fused[2].1 - 0.25).abs() < 1e-12);
        // One candidate (or equal scores) gets the full weight; NaN counts as the minimum.
        let single = [(7, 3.0)];
        let odd = [(8, f64::NAN), (9, 1.0), (10, 0.0)];
        let fused = weighted_score_fusion(&[(&single[..], 0.5), (&odd[..], 1.0)]);
        assert_eq!(fused, vec![(9, 1.0), (7, 0.5), (8, 0.0), (10, 0.0)]);
        assert!(weighted_score_fusion::<i32>(&[(&[], 1.0)]).is_empty());
    }
}
